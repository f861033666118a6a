"""Paused brokers (VALIDATION.md, mapping decision 12): a BrokerPause changes nothing in the spec;
the session expiry and renewal are hidden steps of the spec's --session-expiries mode."""

from __future__ import annotations

import pytest
from isr.impl.sim.scenarios import Fault, run_random
from isr.traces.format import header, merge
from isr.traces.validator.mapping import derive_config
from isr.traces.validator.validate import PartitionValidator, validate_events

from .test_known_gaps import accepted, verdict


def _expiries(w) -> list[int]:
    """The spec's session expiries in the final candidates of every partition."""
    head = header(
        w.config.protocol,
        "sim",
        config=w.config.to_dict(),
        cluster={
            "brokers": w.ids,
            "assignments": {f"{t}-{p}": list(r) for (t, p), r in w.coord.assignments.items()},
        },
    )
    last: dict[str, PartitionValidator] = {}
    v = validate_events(
        head,
        merge([[dict(e) for e in w.trace]]),
        on_step=lambda key, ev, pv: last.__setitem__(key, pv),
    )
    assert v.verdict == "accepted", (v.reason, v.mismatches)
    return sorted({c[0].faults.expiries for pv in last.values() for c in pv.cands})


def test_a_leader_paused_past_its_session_is_replaced_and_comes_back_a_follower() -> None:
    w = run_random("kip-320", [Fault(40, "pause", 0, 0, 250)], seed=3, records=8)
    assert any(e["action"] == "BrokerPause" for e in w.trace)
    assert any(e["action"] == "ControllerElectLeader" and e["args"]["leader"] == 1 for e in w.trace)
    accepted(w)
    assert _expiries(w) == [1]  # the expiry was needed: the controller replaced the leader


def test_a_short_pause_needs_no_expiry() -> None:
    w = run_random("kip-320", [Fault(40, "pause", 0, 0, 20)], seed=3, records=8)
    accepted(w)
    assert _expiries(w) == [0]


def test_the_bound_is_one_expiry_per_pause() -> None:
    head = {"protocol": "kip-320", "config": {}}
    evs = [{"action": "BrokerPause", "node": b, "args": {"replica": b}} for b in (0, 1, 0)]
    assert derive_config(head, evs, 3).session_expiries == 3
    assert derive_config(head, [], 3).session_expiries == 0  # the mode stays off


def test_a_paused_controller_neither_reacts_nor_answers_a_later_controller() -> None:
    """(scripts/validate_sweep.py --seed 2 --kinds pause, run 147.) The controller's broker
    paused inside its session still reacted to another broker's expiry, and, re-elected after
    its own expiry, traced the answer to its previous incarnation's write as a new election."""
    w = run_random(
        "kip-320",
        [Fault(208, "pause", 1, 1, 292), Fault(20, "pause", 2, 0, 295)]
        + [Fault(60, "pause", 0, 2, 203)],
        seed=460512862,
        records=10,
        replication=3,
        partitions=1,
        min_insync_replicas=1,
        flush_interval_batches=3,
    )
    accepted(w)


def test_a_zombie_follower_fetches_at_its_old_epoch_before_kip_320() -> None:
    """(Same sweep, run 113.) Follower 1, paused past its session and removed from the ISR,
    resumes at its old epoch and fetches from the leader at a newer one: allowed before KIP-320.
    The response held for that fetch was keyed by the leader's epoch and did not fit."""
    w = run_random(
        "kip-101",
        [Fault(13, "pause", 0, 0, 195), Fault(29, "pause", 1, 2, 195)]
        + [Fault(146, "pause", 2, 1, 231)],
        seed=1010435892,
        records=10,
        replication=3,
        partitions=2,
        min_insync_replicas=1,
        flush_interval_batches=3,
    )
    accepted(w)


def test_pauses_in_random_runs_are_accepted() -> None:
    for seed in range(6):
        w = run_random(
            ["kip-320", "kip-101", "hw-truncation"][seed % 3],
            [Fault(30 + 40 * seed, "pause", seed, 0, 120 + 30 * seed)],
            seed=seed,
            records=8,
        )
        v = verdict(w, merged=True)
        assert v.verdict == "accepted", (seed, v.reason, v.mismatches)


# `isr conform --random 40 --seed 2` (random 23 and 24, shrunk to these 12 commands): follower 1
# paused past its session; the controller removed crashed broker 2 (a LeaderAndIsr queued for
# 1), the leader took 2 back, then 1's expiry was handled (ISR [0,2]); 1 resumed and applied
# the older state, then the newer one its new session got. Kafka 2.1 does so: the request the
# RequestSendThread had sent sits in the paused broker's socket buffer, removeBroker clears
# only the queue, and no broker epoch fences it before KIP-380. The validator had dropped the
# candidate in which the expiry came after the first request: the one in which it came before
# explained the controller's removal of 1 at once, so no candidate got the late expiry.
STALE_AFTER_EXPIRY = [
    {"op": "start", "brokers": 3, "replication": 3, "partitions": 1, "min_insync": 1,
     "acks": "all", "session_timeout_ms": 300},
    {"op": "pause", "broker": 1, "ms": 500},
    {"op": "power_fail", "broker": 2},
    {"op": "heal"},
    {"op": "restart", "broker": 0},
    {"op": "restart", "broker": 1},
    {"op": "restart", "broker": 2},
    {"op": "run", "ms": 800},
    {"op": "produce", "count": 2},
    {"op": "run", "ms": 300},
    {"op": "consume"},
    {"op": "run", "ms": 200},
]  # fmt: skip


@pytest.mark.parametrize("seed", [0, 2])  # (both rejected before the fix)
def test_a_request_sent_before_the_expiry_reaches_the_resumed_broker(seed: int) -> None:
    from isr.impl.adapter import Session
    from isr.traces.conformance.runner import InProcess, run_scenario_full

    v, out = run_scenario_full(InProcess(Session(None)), STALE_AFTER_EXPIRY, "r", seed)
    evs = out.events
    assert evs is not None
    # the story is still there: broker 1 applies, after the controller removed it, the epoch
    # the controller wrote before (removing broker 2)
    removed = next(
        k
        for k, e in enumerate(evs)
        if e["action"] == "ControllerShrinkIsr" and e["args"]["replica"] == 1
    )
    epoch_then = evs[removed]["state"]["coord"]["leader_epoch"]
    late = [
        e
        for e in evs[removed:]
        if e["action"] == "BrokerBecomeFollower"
        and e["args"]["replica"] == 1
        and e["args"]["epoch"] < epoch_then
    ]
    assert late, "broker 1 no longer applies the request of before its expiry"
    assert v.verdict == "accepted", (v.reason, v.mismatches)
