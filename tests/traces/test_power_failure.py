"""Power failures (R14): the implementation traces its flushes, and a trace with a crash that
lost the unflushed tail is validated in the spec's lose-unflushed mode (VALIDATION.md, "Mapped
fault modes")."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from isr.impl.core import messages as m
from isr.impl.core.partition import Partition
from isr.impl.core.replica import Broker
from isr.impl.sim.scenarios import run_random
from isr.impl.sim.world import World, sim_config
from isr.traces.validator.mapping import derive_config
from isr.traces.validator.validate import Verdict, parse_text, validate_events, validate_text

TP0 = ("t", 0)
SAMPLES = Path(__file__).resolve().parents[2] / "traces" / "samples"


def verdict(w: World) -> Verdict:
    return validate_events(w.trace_header(), [dict(e) for e in w.trace])


def stored_leo(w: World, b: int) -> int:
    return len(w.nodes[b].store.logs.get(TP0, []))


def power_failure_run(
    protocol: str, seed: int, victim: str, flush: int = 2, bounce: bool = False
) -> tuple[World, int]:
    """Ten acks=all records at a steady pace; at a random time the leader (or a follower) loses
    power and comes back later; with ``bounce`` another broker is killed (a process crash, which
    keeps the log) and restarted. Returns the run and how many entries the power failure cut."""
    rng = random.Random(seed)
    cfg = sim_config(protocol, min_insync_replicas=2, flush_interval_batches=flush)
    w = World(3, 1, 3, cfg, seed=seed)
    w.run_until(100)
    for i in range(10):
        w.at(100 + 25 * i, w.produce, TP0, f"r{i}")
    cut: list[int] = []

    def power_failure() -> None:
        leader = w.leader_of(TP0)
        b = leader if victim == "leader" else (leader + 1 + rng.randrange(2)) % 3
        before = w.broker(b).partitions[TP0].log.leo
        w.crash(b, lose_unflushed=True)
        cut.append(before - stored_leo(w, b))
        w.at(w.now + rng.randint(50, 800), w.restart, b)
        if bounce:
            other = (b + 1) % 3
            w.at(w.now + 1_000, w.crash, other)
            w.at(w.now + 1_000, w.restart, other)

    w.at(100 + rng.randint(0, 300), power_failure)
    w.run_until(2_500)
    w.heal()
    w.run_until(5_000)
    return w, cut[0]


class FsyncLies(Broker):
    """A broker whose fsync never reaches the disk (the storage effect is lost) but which still
    traces BrokerFlush: a power failure then loses records the trace says were durable."""

    def _flush(self, out: list[Any], p: Partition, now: int) -> None:
        sub: list[Any] = []
        super()._flush(sub, p, now)
        out.extend(e for e in sub if not isinstance(e, m.Flush))


def sample_run(broker_cls: type[Broker] = Broker) -> World:
    """The golden power-failure sample's recipe (traces/samples/manifest.json): ``run_random``
    under kip-320, seed 2, four acks=all records, min.insync.replicas 2, an fsync every third
    batch; then follower 1 loses power, restarts 200 ms later and catches up."""
    cfg = sim_config("kip-320", min_insync_replicas=2, flush_interval_batches=3)
    w = World(3, 1, 3, cfg, seed=2, broker_cls=broker_cls)
    w.run_until(100)
    for i in range(4):
        w.at(100 + 25 * i, w.produce, TP0, f"r{i}")
    end = 100 + 25 * 4 + 1_500
    w.run_until(end)
    w.at(end, w.heal)
    w.run_until(end + 3_000)
    w.crash(1, lose_unflushed=True)
    w.run_until(w.now + 200)
    w.restart(1)
    w.run_until(w.now + 1_000)
    return w


def flushes(w: World) -> list[dict[str, Any]]:
    return [e for e in w.trace if e["action"] == "BrokerFlush"]


# ---- (a) power failures of a follower and of a leader are accepted ---------------------------
@pytest.mark.parametrize("protocol", ["hw-truncation", "kip-101", "kip-279", "kip-320"])
@pytest.mark.parametrize("victim", ["leader", "follower"])
def test_power_failure_runs_are_accepted(protocol: str, victim: str) -> None:
    cuts = []
    for seed in range(6):
        w, cut = power_failure_run(protocol, seed, victim, flush=2, bounce=seed % 2 == 1)
        assert flushes(w) and all(e["state"]["flushed"] == e["state"]["leo"] for e in flushes(w))
        v = verdict(w)
        assert v.verdict == "accepted", (seed, v.reason, v.event, v.mismatches)
        cuts.append(cut)
    assert any(cuts), "no power failure lost anything: the runs prove nothing"


# ---- (b) a committed record lost by a leader's power failure: the spec allows it -------------
def committed_loss_run(protocol: str, seed: int) -> World:
    """R14: five acks=all records, acknowledged once every ISR member has them (in memory); an
    fsync every second batch. The leader and both followers lose power at once, the followers
    come back first and the leader 300 ms later: the unflushed last record is gone everywhere."""
    cfg = sim_config(protocol, min_insync_replicas=2, flush_interval_batches=2)
    w = World(3, 1, 3, cfg, seed=seed)
    w.run_until(100)
    for i in range(5):
        w.at(100 + 10 * i, w.produce, TP0, f"r{i}")
    w.run_until(600)
    assert len(w.producer.acked) == 5
    leader = w.leader_of(TP0)
    for b in range(3):
        w.crash(b, lose_unflushed=True)
    w.run_until(w.now + 300)
    for b in sorted(range(3), key=lambda b: b == leader):
        w.restart(b)
    w.run_until(4_000)
    return w


@pytest.mark.parametrize("protocol", ["hw-truncation", "kip-320"])
def test_committed_loss_by_power_failure_is_accepted(protocol: str) -> None:
    """The spec allows it under lose-unflushed: the checker's NoCommittedLoss finds it, the
    validator accepts the trace."""
    for seed in range(2):
        w = committed_loss_run(protocol, seed)
        assert [rid for rid, _tp, _o in w.lost_acked()] == ["r4"]  # really lost
        v = verdict(w)
        assert v.verdict == "accepted", (seed, v.reason, v.event, v.mismatches)
        # the same events with the power failures relabelled process crashes (which keep the
        # log) do not fit: a restarted broker's log lacks r4
        for e in w.trace:
            if e["action"] == "BrokerCrash":
                e["args"].pop("lose_unflushed", None)
        v = verdict(w)
        assert v.verdict == "rejected" and v.event["action"] == "BrokerRestart"


def test_a_process_crash_keeps_the_unflushed_tail() -> None:
    """In lose-unflushed mode a process crash is the spec's hidden BrokerFlush + BrokerCrash:
    labelled a power failure instead, a crash of a broker with unflushed records is rejected."""
    found = 0
    for seed in range(6):
        w, _cut = power_failure_run("kip-320", seed, "follower", flush=3, bounce=True)
        crashes = [e for e in w.trace if e["action"] == "BrokerCrash"]
        bounced = next(e for e in crashes if not e["args"].get("lose_unflushed"))
        b = bounced["node"]
        last = [e for e in w.trace[: w.trace.index(bounced)] if e["node"] == b and "state" in e]
        flushed = [e["state"]["flushed"] for e in last if e["action"] == "BrokerFlush"]
        if not (flushed and last[-1]["state"].get("leo", 0) > flushed[-1]):
            continue  # nothing unflushed when it was killed
        found += 1
        assert verdict(w).verdict == "accepted"
        bounced["args"]["lose_unflushed"] = True
        v = verdict(w)
        assert v.verdict == "rejected" and v.event["action"] == "BrokerRestart", v.reason
        assert v.event["node"] == b
    assert found


# ---- (c) tampered flushes are rejected at the first unexplained event ------------------------
def _sample_events() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    text = (SAMPLES / "accepted" / "sim-power-failure.ndjson").read_text()
    return parse_text(text)


def _text(head: dict[str, Any], events: list[dict[str, Any]]) -> str:
    return "\n".join(json.dumps(x) for x in [head, *events]) + "\n"


def test_record_surviving_a_power_failure_past_the_last_flush_is_rejected() -> None:
    head, evs = _sample_events()
    pf = next(k for k, e in enumerate(evs) if e["args"].get("lose_unflushed"))
    victim = evs[pf]["node"]
    last_flush = max(
        k for k, e in enumerate(evs[:pf]) if e["action"] == "BrokerFlush" and e["node"] == victim
    )
    assert evs[last_flush]["state"]["flushed"] == 3
    restart = next(
        k for k, e in enumerate(evs) if k > pf and e["action"] == "BrokerRestart"
    )  # the victim comes back with the 3 records that flush made durable
    tampered = evs[:last_flush] + evs[last_flush + 1 :]
    v = validate_text(_text(head, tampered))
    assert v.verdict == "rejected"
    assert v.event == {k: x for k, x in evs[restart].items() if not k.startswith("_")}
    assert "BrokerRestart" in v.reason and any("LEO=3" in x for x in v.mismatches)


def test_flush_claimed_beyond_the_log_is_rejected() -> None:
    head, evs = _sample_events()
    k = next(k for k, e in enumerate(evs) if e["action"] == "BrokerFlush")
    evs[k]["state"]["flushed"] += 1
    v = validate_text(_text(head, evs))
    assert v.verdict == "rejected" and v.index == k and v.event["action"] == "BrokerFlush"
    assert any("flushed=" in x for x in v.mismatches)


# ---- (d) without a power failure the mode stays off ------------------------------------------
def test_no_power_failure_keeps_lose_unflushed_off() -> None:
    head, evs = parse_text((SAMPLES / "accepted" / "sim-kip320-leader-crash.ndjson").read_text())
    assert not derive_config(head, evs, 3).lose_unflushed
    head, evs = _sample_events()
    assert derive_config(head, evs, 3).lose_unflushed
    # flushes and process crashes, no power failure: flushes stutter, the mode stays off
    w = run_random("kip-320", [], seed=3, records=6, flush_interval_batches=2)
    w.crash(2)
    w.restart(2)
    w.run_until(w.now + 1_000)
    evs = [dict(e) for e in w.trace]
    assert flushes(w) and not derive_config(head, evs, 3).lose_unflushed
    v = verdict(w)
    assert v.verdict == "accepted", (v.reason, v.mismatches)


# ---- (c) an OffsetsForLeaderEpoch answer applied after the leader's power failure ------------
# `isr conform --random 60 --seed 5` (random 5, 11-15, 36; shrunk to these 12 commands): broker
# 1, elected leader with two unflushed records, answered follower 0's OffsetsForLeaderEpoch
# (epoch 0 ends at 2), lost power, and restarted with an empty log; 0 then applied the answer
# (no truncation). Kafka 2.1 does so: ``fetchEpochsFromLeader`` is a blocking sendRequest, and
# ``AbstractFetcherThread.maybeTruncate`` applies the answer if the partition is still fetched;
# the leader answered from memory (``Partition.lastOffsetForLeaderEpoch``). The validator took
# the spec's truncation on the leader's log after the crash (empty): truncate to 0.
ANSWER_BEFORE_POWER_FAILURE = [
    {"op": "start", "brokers": 2, "replication": 2, "partitions": 1, "min_insync": 1,
     "acks": "all", "session_timeout_ms": 300},
    {"op": "produce", "count": 2},
    {"op": "elect_leader", "broker": 1},
    {"op": "power_fail", "broker": 1},
    {"op": "heal"},
    {"op": "restart", "broker": 0},
    {"op": "restart", "broker": 1},
    {"op": "run", "ms": 800},
    {"op": "produce", "count": 2},
    {"op": "run", "ms": 300},
    {"op": "consume"},
    {"op": "run", "ms": 200},
]  # fmt: skip


def _answer_run(seed: int) -> tuple[Verdict, dict[str, Any], list[dict[str, Any]]]:
    from isr.impl.adapter import Session
    from isr.traces.conformance.runner import InProcess, run_scenario_full

    v, out = run_scenario_full(InProcess(Session(None)), ANSWER_BEFORE_POWER_FAILURE, "r", seed)
    assert out.header is not None and out.events is not None
    return v, out.header, out.events


def _late_truncation(evs: list[dict[str, Any]]) -> int:
    """The index of follower 0's FollowerTruncate applying broker 1's answer after 1 restarted
    (the story: the answer came from the log the power failure lost)."""
    crash = next(k for k, e in enumerate(evs) if e["action"] == "BrokerCrash")
    assert evs[crash]["args"] == {"replica": 1, "lose_unflushed": True}
    restart = next(
        k
        for k, e in enumerate(evs)
        if k > crash and e["action"] == "BrokerRestart" and e["args"]["replica"] == 1
    )
    assert evs[restart]["state"]["leo"] == 0  # nothing was flushed: the log is gone
    return next(
        k
        for k, e in enumerate(evs)
        if k > restart
        and e["action"] == "FollowerTruncate"
        and e["args"]["leader"] == 1
        and e["args"]["leader_answer"] == [0, 2]
    )


@pytest.mark.parametrize("seed", [2, 5])  # (both rejected before the fix)
def test_an_answer_sent_before_the_leaders_power_failure_is_applied_after_it(seed: int) -> None:
    v, _head, evs = _answer_run(seed)
    k = _late_truncation(evs)
    assert evs[k]["args"]["offset"] == 2 and evs[k]["state"]["leo"] == 2
    assert v.verdict == "accepted", (v.reason, v.mismatches)


def test_a_truncation_the_lost_log_does_not_explain_is_still_rejected() -> None:
    """The held log is the leader's before the crash, not any log: a follower cutting a record
    that log had at the follower's epoch is a wrong truncation (the answer said 2)."""
    v, head, evs = _answer_run(5)
    assert v.verdict == "accepted", (v.reason, v.mismatches)
    k = _late_truncation(evs)
    bad = [dict(e) for e in evs]
    bad[k] = {**bad[k], "args": {**bad[k]["args"], "offset": 1}}
    bad[k]["state"] = {**bad[k]["state"], "leo": 1, "hw": 1}
    got = validate_events(head, bad)
    assert got.verdict == "rejected", got.verdict
    assert "FollowerTruncate" in got.reason and got.event == bad[k], got.reason
