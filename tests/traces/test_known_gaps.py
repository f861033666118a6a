"""Runs of the reference implementation that the validator once answered wrongly (VALIDATION.md,
"Known gaps"): each was rejected, bad input or unsupported though the implementation is correct.
Each test reproduces one with a concrete simulation run (seed and faults) and wants it accepted.
"""

from __future__ import annotations

import pytest
from isr.impl.core import messages as m
from isr.impl.sim.scenarios import TP0, Fault, run_random
from isr.impl.sim.world import World, sim_config
from isr.traces.format import header, merge
from isr.traces.validator.validate import Verdict, validate_events


def verdict(w: World, merged: bool = False) -> Verdict:
    """The run validated in the simulation's own order, or (``merged``) in the order of its
    Lamport clocks, as ``isr validate`` reads the written trace (traces.format.merge)."""
    head = w.trace_header()
    evs = [dict(e) for e in w.trace]
    return validate_events(head, merge([evs]) if merged else evs)


def accepted(w: World) -> None:
    """Accepted in both orders."""
    for merged in (False, True):
        v = verdict(w, merged)
        assert v.verdict == "accepted", (merged, v.reason, v.event, v.mismatches)


# ---- replication below the broker count -----------------------------------------------------
def test_crash_of_a_broker_outside_the_partition_does_not_apply_to_it() -> None:
    """t-0 lives on brokers 0 and 1; broker 2 crashes and restarts. Its BrokerCrash (an event
    without topic, so broker-wide) was sent to t-0 too, where broker 2 holds no replica: bad
    input. It must simply not apply there."""
    w = run_random("kip-320", [Fault(100, "crash", 2, 0, 50)], seed=1, records=6, replication=2)
    assert w.coord.assignments[("t", 0)] == (0, 1)
    assert any(e["action"] == "BrokerCrash" and e["node"] == 2 for e in w.trace)
    accepted(w)


# ---- every broker down past the session timeout, then restarted ------------------------------
@pytest.mark.parametrize("kind", ["crash-all", "power-all"])
@pytest.mark.parametrize("replication", [3, 2])
def test_every_broker_down_past_the_session_timeout(kind: str, replication: int) -> None:
    """Every broker dies for 800 ms (sessions expire with no controller to react), then they
    come back one by one. The first one back becomes controller with the partition state still
    naming the dead leader at the old epoch. Was rejected: (a) that leader, back in a new
    session, resumed its old epoch from the controller's first re-send; (b) its re-election was
    traced as a ControllerShrinkIsr of the dead followers (same leader, smaller ISR)."""
    for seed in range(3):
        w = run_random(
            "kip-320",
            [Fault(100, kind, 0, 0, 200)],
            seed=seed,
            records=6,
            replication=replication,
            flush_interval_batches=1,
        )
        accepted(w)


def test_partition_offline_then_back() -> None:
    """t-0 lives on brokers 0 and 1; both die past the session timeout, broker 2 (controller)
    records the partition offline (leader -1, leader epoch + 1, R9), then 0 and 1 come back and
    one of them is elected. The spec's controller writes nothing for an offline partition (its
    recorded leader stays the dead one), so the offline write shifts the epochs."""
    for seed in range(3):
        faults = [Fault(100, "crash", 0, 0, 200), Fault(100, "crash", 1, 0, 250)]
        w = run_random("kip-320", faults, seed=seed, records=6, replication=2)
        assert any(
            e["action"] == "ControllerElectLeader" and e["args"]["leader"] == -1 for e in w.trace
        )
        accepted(w)


# ---- a leader that is also the controller bounces as the only ISR member ---------------------
def test_controller_leader_bounce_as_only_isr_member() -> None:
    """Broker 0 leads t-0 and is controller; cut off from its followers it shrinks the ISR to
    {0}; then it restarts inside its session, a bounce no controller saw (KAFKA-1120). The new
    controller (0 again) re-elects it with a new epoch (a bounced leader) and the same ISR: that
    write was not traced (same leader, same ISR: neither an election nor a shrink by the old
    labelling)."""
    w = World(3, 1, 3, sim_config("kip-320", min_insync_replicas=1), seed=5)
    w.run_until(100)
    for i in range(4):
        w.at(100 + 25 * i, w.produce, TP0, f"r{i}")
    w.run_until(300)
    assert w.leader_of(TP0) == 0 and w.coord.controller == 0
    w.net.blocked |= {frozenset((0, 1)), frozenset((0, 2))}
    w.run_until(1_200)
    assert w.coord.states[TP0][0].isr == (0,)
    w.crash(0)
    w.restart(0, missed_bounce=True)
    w.net.blocked.clear()
    w.run_until(3_000)
    assert w.coord.states[TP0][0].leader_epoch == 1
    accepted(w)


# ---- the controller counts a crashed broker as live until its session expires ---------------
def lagging_election_run(protocol: str, seed: int) -> tuple[World, int]:
    """Leader 0 crashes; 300 ms later follower 1 loses power with an unflushed record (seven
    records, an fsync every second batch). When 0's session expires the controller (2) elects
    1, whose session has not expired yet: a crashed broker elected leader. Then 1's session
    expires too, 2 is elected, and both come back. Returns the run and what the power failure
    cut from 1's log."""
    cfg = sim_config(protocol, min_insync_replicas=1, flush_interval_batches=2)
    w = World(3, 1, 3, cfg, seed=seed)
    w.run_until(100)
    for i in range(7):
        w.at(100 + 25 * i, w.produce, TP0, f"r{i}")
    w.run_until(300)
    assert w.leader_of(TP0) == 0
    w.crash(0)
    w.run_until(500)
    before = w.broker(1).partitions[TP0].log.leo
    w.crash(1, lose_unflushed=True)
    cut = before - len(w.nodes[1].store.logs.get(TP0, []))
    w.run_until(1_000)
    assert w.coord.states[TP0][0].leader == 1 and not w.nodes[1].alive  # elected while down
    w.run_until(1_600)
    assert w.coord.states[TP0][0].leader == 2
    w.restart(1)
    w.restart(0)
    w.run_until(4_000)
    return w, cut


@pytest.mark.parametrize("protocol", ["kip-320", "hw-truncation"])
def test_crashed_broker_elected_before_its_session_expires(protocol: str) -> None:
    """Was unsupported (controller-session-lag): the spec's controller sees a crash at once.
    Now the crash is deferred: the spec's BrokerCrash of 1 comes after its election (a live
    replica that takes no steps), when 1's expired session makes the controller elect again."""
    for seed in range(3):
        w, cut = lagging_election_run(protocol, seed)
        assert cut == 1
        accepted(w)


def test_deferred_power_failure_still_drops_the_unflushed_tail() -> None:
    """The deferred crash must drop what the power failure dropped: relabelled a process crash
    (which keeps the log), the same run is rejected at broker 1's restart."""
    w, cut = lagging_election_run("kip-320", 0)
    assert cut == 1
    pf = next(e for e in w.trace if e["action"] == "BrokerCrash" and e["node"] == 1)
    del pf["args"]["lose_unflushed"]
    v = verdict(w)
    assert v.verdict == "rejected", v.reason
    assert v.event["action"] == "BrokerRestart" and v.event["node"] == 1


# ---- a parked fetch answered by a leader that crashes right after ----------------------------
def test_parked_fetch_answered_before_the_leader_crashed() -> None:
    """Two partitions, kip-101. Follower 0 of t-1 bounces and fetches again at the offset its
    leader 1 had already recorded (the leader logs no serve: nothing changed there); the leader
    parks the fetch, answers it when a record arrives, then bounces itself. The follower applies
    that response after the leader's crash: the spec's fetch from the leader as it was before."""
    faults = [
        Fault(290, "partition", 1, 0, 139),
        Fault(177, "restart", 1, 0, 197),
        Fault(244, "crash", 2, 2, 105),
        Fault(139, "restart", 0, 0, 195),
    ]
    w = run_random("kip-101", faults, seed=285, records=12, partitions=2, min_insync_replicas=1)
    accepted(w)


# ---- a leader crashing right after its ISR write landed -------------------------------------
def isr_write_then_crash_run(kind: str, seed: int) -> tuple[World, list[tuple[int, ...]]]:
    """Leader 0 of t-0 changes its ISR (``shrink``: follower 2 cut off; ``expand``: follower 2
    back after a crash) and crashes right after the compare-and-set landed, before its answer
    (which is when the leader traces the change). The new controller then elects from the
    ISR the leader wrote. Returns the run and the ISR of the untraced write."""
    w = World(3, 1, 3, sim_config("kip-320", min_insync_replicas=1), seed=seed)
    w.run_until(100)
    for i in range(6):
        w.at(100 + 25 * i, w.produce, TP0, f"r{i}")
    landed: list[tuple[int, ...]] = []
    armed = [kind == "shrink"]
    cas = w.coord.cas

    def cas_then_crash(e: m.CasWrite) -> m.CasResult:
        res = cas(e)
        if e.purpose == "isr" and res.ok and armed[0] and not landed:
            landed.append(e.state.isr)
            w.at(w.now, w.crash, e.state.leader)  # before the answer (1 ms later)
        return res

    w.coord.cas = cas_then_crash  # type: ignore[method-assign]
    w.run_until(120)
    if kind == "shrink":
        w.net.blocked.add(frozenset((0, 2)))
        w.run_until(1_500)
        w.net.blocked.clear()
    else:
        w.crash(2)
        w.run_until(800)  # shrunk out of the ISR
        armed[0] = True
        w.restart(2)  # catches up: the leader expands the ISR
        w.run_until(1_500)
    w.run_until(2_000)
    for b in range(3):
        if not w.nodes[b].alive:
            w.restart(b)
    w.run_until(4_000)
    return w, landed


def untraced_isr_write(w: World, isr: tuple[int, ...]) -> list[dict]:
    """The trace a runtime that traces the ISR change on the compare-and-set's answer (the
    real cluster's) writes when the leader crashes before the answer: the run's trace without
    the leader's events from that change up to its crash."""
    evs = [dict(e) for e in w.trace]
    k = next(
        k
        for k, e in enumerate(evs)
        if e["action"] in ("LeaderShrinkIsr", "LeaderExpandIsr") and tuple(e["state"]["isr"]) == isr
    )
    leader = evs[k]["node"]
    end = next(
        j
        for j in range(k, len(evs))
        if evs[j]["action"] == "BrokerCrash" and evs[j]["node"] == leader
    )
    return evs[:k] + [e for e in evs[k:end] if e["node"] != leader] + evs[end:]


@pytest.mark.parametrize("kind", ["shrink", "expand"])
def test_isr_write_is_traced_when_it_lands(kind: str) -> None:
    """The simulation answers a leader's ISR compare-and-set in the step that writes it, so
    the change is traced when it lands: a crash right after the write no longer hides it."""
    for seed in range(3):
        w, landed = isr_write_then_crash_run(kind, seed)
        assert landed == [(0, 1) if kind == "shrink" else (0, 1, 2)]
        k = next(
            k
            for k, e in enumerate(w.trace)
            if e["action"] in ("LeaderShrinkIsr", "LeaderExpandIsr")
            and tuple(e["state"]["isr"]) == landed[0]
        )
        assert any(e["action"] == "BrokerCrash" and e["node"] == 0 for e in w.trace[k:])
        accepted(w)


@pytest.mark.parametrize("kind", ["shrink", "expand"])
def test_isr_write_landed_but_untraced_before_the_leader_crashed(kind: str) -> None:
    """Was rejected at the controller's election (its ISR differs from the spec's): the
    validator inserts a crashed leader's last ISR writes (the spec's LeaderShrinkIsr /
    LeaderExpandIsr before its deferred crash) when an event needs them."""
    for seed in range(3):
        w, landed = isr_write_then_crash_run(kind, seed)
        evs = untraced_isr_write(w, landed[0])
        head = header(
            "kip-320", "sim", config=w.config.to_dict(), cluster={"assignments": {"t-0": [0, 1, 2]}}
        )
        v = validate_events(head, evs)
        assert v.verdict == "accepted", (v.reason, v.event, v.mismatches)


# ---- the controller removes dead followers one write at a time -------------------------------
def test_two_dead_followers_leave_the_isr_one_write_each() -> None:
    """(Found by tests/traces/test_online.py once crashes were deferred.) Followers 1 and 2
    crash, 1 bounces, leader 0 (the controller) bounces (bounces no controller saw, KAFKA-1120)
    and then crashes: broker 1 leads with
    0 and 2 counted live. When both sessions expire the new controller removed both from the
    ISR in one write (one epoch bump), traced as two ControllerShrinkIsr; the spec removes one
    dead follower per write with its own epoch, as Kafka's removeReplicasFromIsr does (R9).
    The controller now writes one removal at a time."""
    w = World(3, 1, 3, sim_config("kip-320"), seed=7, full_log_in_trace=False)
    w.run_until(200)
    w.crash(1)
    w.crash(2)
    w.restart(1, missed_bounce=True)
    w.crash(0)
    w.restart(0, missed_bounce=True)
    w.crash(0)
    w.run_until(w.now + 900)
    shrinks = [e for e in w.trace if e["action"] == "ControllerShrinkIsr"]
    assert len(shrinks) == 2
    assert (
        shrinks[0]["state"]["coord"]["leader_epoch"] < shrinks[1]["state"]["coord"]["leader_epoch"]
    )
    accepted(w)


# ---- a broker back while the controller's write is in flight ---------------------------------
def test_broker_back_during_a_controller_write_gets_the_new_state() -> None:
    """(scripts/validate_sweep.py --seed 3, run 84.) Every broker loses power; 0 comes back
    inside its session and, as controller, elects crashed 1 (its session alive); then 1's and
    2's sessions expire: 0 is elected, then 2 removed from the ISR. Broker 1 came back while
    that last write was in flight and the controller sent it the state the write replaced,
    which no spec state has a request for (the spec's restart gets the current state). The
    controller now sends a partition's state only when no write of it is in flight."""
    faults = [Fault(99, "power-all", 0, 2, 138), Fault(123, "pause", 0, 2, 269)]
    faults.append(Fault(204, "duplicate", 2, 2, 258))
    w = run_random(
        "kip-101",
        faults,
        seed=813476559,
        records=10,
        replication=3,
        partitions=2,
        min_insync_replicas=3,
        flush_interval_batches=2,
    )
    assert not any(e["action"] == "BrokerPause" for e in w.trace)  # it hit a dead broker
    accepted(w)


# ---- fetches split across a bounce or an append ----------------------------------------------
def test_request_of_a_bounced_follower_served_while_it_truncates() -> None:
    """kip-279, two partitions; broker 0 (controller, follower of t-1) bounces. Leader 1 then
    serves the fetch 0 sent before its crash, at the offset and epoch 0 is back at but while
    0 waits for its OffsetsForLeaderEpoch truncation: the spec's fetch of the follower as it
    was when it sent the request (its leader half only), as for any stale request."""
    w = run_random(
        "kip-279", [Fault(130, "restart", 0, 0, 154)], seed=738, records=12, partitions=2
    )
    accepted(w)


def test_out_of_range_answer_applied_after_the_leader_appended() -> None:
    """hw-truncation, two partitions. Leader 2 of t-1 bounces and 1, shorter, is elected;
    follower 0 fetches past 1's log end and truncates to it (R12), but 1 appended a record
    between answering and the truncation: the spec's out-of-range fetch on the leader's log
    as it was when it answered (its log now, cut to the truncation point)."""
    faults = [
        Fault(225, "restart", 1, 0, 193),
        Fault(122, "restart", 1, 0, 183),
        Fault(270, "restart", 2, 0, 295),
    ]
    w = run_random("hw-truncation", faults, seed=130, records=12, partitions=2)
    accepted(w)


# ---- the order of a written trace: merged by Lamport clock -----------------------------------
def test_restart_after_session_expiry_is_ordered_after_the_reaction() -> None:
    """(scripts/validate_sweep.py --seed 1, run 7.) Broker 0 loses power, its session expires,
    the controller elects another leader; 0 restarts later. Merged by Lamport clock (how a
    written trace is read), the restart came before the election: 0 took no part in the
    coordination service while down, so its clock did not move. A restarting broker now opens
    its session (syncs its clock with the coordination service) before recovering, and the
    service absorbs the clock of a traced controller decision (impl.sim.world)."""
    w = run_random(
        "kip-279",
        [Fault(133, "restart", 2, 2, 201), Fault(15, "power", 0, 2, 277)],
        seed=749713817,
        records=10,
        replication=2,
        partitions=2,
        flush_interval_batches=0,
    )
    accepted(w)
