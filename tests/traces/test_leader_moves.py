"""Leadership moved away from a live leader (VALIDATION.md, mapping decision 13): runs with
preferred-replica/operator elections and controlled shutdowns validate against the spec's
ControllerMoveLeader and ControllerShutdownBroker (R9), and a deposed leader that acknowledges
acks=all writes after it learned it no longer leads is rejected."""

from __future__ import annotations

import pytest
from isr.impl.mutants import MUTANTS
from isr.impl.sim.scenarios import Fault, leader_move_scenario, run_random
from isr.traces.format import header
from isr.traces.validator.validate import validate_events

from .test_known_gaps import accepted, verdict

MOVES = ("ControllerMoveLeader", "ControllerShutdownBroker")


@pytest.mark.parametrize("protocol", ["kip-320", "kip-279", "kip-101", "hw-truncation"])
@pytest.mark.parametrize("how", ["elect", "shutdown"])
def test_zombie_leader_scenario_is_accepted(protocol: str, how: str) -> None:
    w = leader_move_scenario(protocol, how)
    names = [e["action"] for e in w.trace]
    assert ("ControllerMoveLeader" if how == "elect" else "ControllerShutdownBroker") in names
    accepted(w)


@pytest.mark.parametrize("protocol", ["kip-320", "kip-279", "kip-101"])
def test_deposed_leader_acknowledging_is_rejected(protocol: str) -> None:
    """The mutant's run has the same moves; the deposed leader 1 acknowledges "x", which its
    followers never had, when it becomes a follower. The reference's run is accepted above.
    (Under hw-truncation the mutant's follower truncates "x" first, so it acknowledges
    nothing; after a controlled shutdown the deposed leader is told nothing before it stops.)"""
    mu = MUTANTS["deposed-leader-acks"]
    w = leader_move_scenario(protocol, "elect", broker_cls=mu.broker_cls)
    for merged in (False, True):
        v = verdict(w, merged)
        assert v.verdict == "rejected", (merged, v.verdict)
        assert v.event["action"] == "ProduceAcked" and v.event["args"]["records"] == ["x"]
        assert v.event["node"] == 1


def test_a_move_the_spec_does_not_allow_is_rejected() -> None:
    """Tampered: the preferred election names a broker outside the ISR as the new leader."""
    w = leader_move_scenario("kip-320", "elect")
    evs = [dict(e) for e in w.trace]
    k = max(i for i, e in enumerate(evs) if e["action"] == "ControllerMoveLeader")
    co = evs[k]["state"]["coord"]
    evs[k] = {**evs[k], "state": {"coord": {**co, "isr": [0, 2]}}}  # 1 dropped: not the spec's
    v = validate_events(w.trace_header(), evs)
    assert v.verdict == "rejected" and v.event["action"] == "ControllerMoveLeader"


# Recipes of the sweep (scripts/validate_sweep.py with the kinds elect, preferred, shutdown):
# moves mixed with crashes, pauses and partitions (all but the last two were rejected before the validator's fixes).
RUNS = [
    # a live follower taken out of the ISR by a controlled shutdown, its parked fetch of the
    # older epoch answered (before KIP-320) with what the re-elected leader appended since
    (
        "kip-101",
        [Fault(94, "elect", 2, 1, 58), Fault(176, "shutdown", 1, 2, 65)]
        + [Fault(122, "partition", 0, 1, 23)],
        1055748672,
        {"replication": 3, "partitions": 1, "min_insync_replicas": 2, "flush_interval_batches": 1},
    ),
    # merged by clock: follower 2 applies the answer to a parked fetch of leader 1, deposed by a
    # preferred election, after 1 became a follower (1 never logged that serve: it changed
    # nothing on it); held from 1's log as it led, as for a crashing leader (decision 11 a)
    (
        "kip-320",
        [Fault(100, "preferred", 2, 1, 240), Fault(51, "elect", 0, 2, 22)]
        + [Fault(53, "restart", 0, 0, 284), Fault(17, "restart", 2, 2, 133)],
        182520592,
        {"replication": 3, "partitions": 2, "min_insync_replicas": 2, "flush_interval_batches": 0},
    ),
    (
        "kip-320",
        [
            Fault(30, "shutdown", 0, 0, 80),
            Fault(400, "preferred", 0),
            Fault(120, "pause", 2, 0, 200),
        ],
        7,
        {"replication": 3, "partitions": 2, "min_insync_replicas": 2, "flush_interval_batches": 1},
    ),
    # a follower's no-op truncation (KIP-101) keeps the fetch response in flight, applied at
    # the new epoch from the leader re-elected by a controlled shutdown of the other follower
    (
        "kip-101",
        [Fault(141, "preferred", 2, 2, 279), Fault(250, "preferred", 1, 1, 157)]
        + [Fault(185, "shutdown", 0, 2, 226)],
        735242979,
        {"replication": 3, "partitions": 2, "min_insync_replicas": 1, "flush_interval_batches": 3},
    ),
    # a leader re-elected (same leader, new epoch) had answered a parked fetch before, unlogged
    (
        "hw-truncation",
        [Fault(76, "shutdown", 0, 1, 247), Fault(14, "elect", 1, 1, 227)]
        + [Fault(126, "shutdown", 2, 1, 104), Fault(243, "preferred", 2, 2, 246)],
        255604185,
        {"replication": 3, "partitions": 2, "min_insync_replicas": 3, "flush_interval_batches": 0},
    ),
    # KIP-279's walk back in rounds: a preferred election makes paused broker 1 leader again; it
    # writes at that epoch when it resumes, then follows a leader that never had the epoch
    (
        "kip-320",
        [Fault(41, "pause", 1, 2, 260), Fault(224, "preferred", 2, 0, 212)]
        + [Fault(149, "elect", 2, 2, 187)],
        154790054,
        {"replication": 3, "partitions": 2, "min_insync_replicas": 2, "flush_interval_batches": 3},
    ),
    (
        "hw-truncation",
        [Fault(50, "elect", 2), Fault(60, "crash", 0, 0, 100), Fault(700, "preferred", 0)],
        3,
        {"replication": 2, "partitions": 2, "min_insync_replicas": 1, "flush_interval_batches": 1},
    ),
]


@pytest.mark.parametrize("run", range(len(RUNS)))
def test_random_runs_with_moves_are_accepted(run: int) -> None:
    protocol, faults, seed, kw = RUNS[run]
    w = run_random(protocol, faults, seed=seed, records=10, **kw)
    assert any(e["action"] in MOVES for e in w.trace)
    accepted(w)


def test_header_only_unchanged() -> None:
    """A move needs no spec mode: the derived config of a run with moves is the plain one."""
    from isr.traces.validator.mapping import derive_config

    w = leader_move_scenario("kip-320", "shutdown")
    head = header("kip-320", "sim", config=w.config.to_dict())
    cfg = derive_config(head, [dict(e) for e in w.trace], 3)
    assert not cfg.session_expiries and not cfg.lose_unflushed and not cfg.unclean


# ---- found by the sweep with moves: a broker back in a new session while the controller is
# paused (simulation fix, VALIDATION.md "Implementation fixes"; the second run has no move)
PAUSED_CONTROLLER_RUNS = [
    (
        "kip-101",
        [Fault(235, "shutdown", 1, 1, 69), Fault(25, "pause", 0, 2, 268)]
        + [Fault(39, "preferred", 2, 2, 141)],
        871071416,
        {"replication": 2, "partitions": 2, "min_insync_replicas": 1},
    ),
    (
        "kip-279",
        [Fault(3, "crash", 2, 1, 61), Fault(133, "pause", 0, 0, 277)]
        + [Fault(33, "crash", 1, 2, 154)],
        348603353,
        {"replication": 3, "partitions": 2, "min_insync_replicas": 1},
    ),
]


@pytest.mark.parametrize("run", range(len(PAUSED_CONTROLLER_RUNS)))
def test_leader_back_in_a_new_session_while_the_controller_is_paused(run: int) -> None:
    """Controller 0 is paused; broker 1, leader of t-1, stops (or crashes) and comes back in a
    new session before 0's session expires. The paused controller never saw it leave, and the
    next one took the recorded leadership as still valid: broker 1 resumed its old epoch
    (rejected: BrokerBecomeLeader(1, epoch 0)). A restart while the controller is paused is
    now a bounce the controller learns when it resumes or is replaced (KIP-380)."""
    protocol, faults, seed, kw = PAUSED_CONTROLLER_RUNS[run]
    w = run_random(protocol, faults, seed=seed, records=10, flush_interval_batches=1 + run, **kw)
    assert any(e["action"] == "BrokerPause" and e["node"] == 0 for e in w.trace)
    accepted(w)
