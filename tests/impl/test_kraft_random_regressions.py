"""The reference implementation's kraft bugs that the kit's random schedules found
(docs/conformance.md, "Random kraft schedules"), each kept as its shrunk scenario.

A restarted broker's fetchers never take an answer meant for its previous incarnation. Found by
`isr conform --protocol kraft --random 60 --seed 7` (shrunk to the 11 commands below): a leader
answered a fetch still queued from the follower's previous incarnation (STALE_BROKER_EPOCH,
KAFKA-15221's setting) after the follower had restarted; the simulation delivered that answer
to the new process, whose fetcher took it as the answer to its own request (correlation ids
restarted at 1) and sent a second fetch with the first still in flight, which neither Kafka
(the answer travels on a connection that closed with the old process) nor the spec (one fetch
in flight per fetcher) allows."""

from __future__ import annotations

import pytest
from isr.impl.adapter import Session
from isr.traces.conformance.runner import InProcess, run_scenario_full


def _start(partitions: int) -> dict:
    return {"op": "start", "brokers": 2, "replication": 2, "partitions": partitions,
            "min_insync": 1, "acks": "all", "session_timeout_ms": 300}  # fmt: skip


# how every shrunk random schedule ends (the kit's closing steps): both brokers up again, then
# writes and a read, so that what the faults did shows
CLOSING = [
    {"op": "restart", "broker": 0},
    {"op": "restart", "broker": 1},
    {"op": "run", "ms": 800},
    {"op": "produce", "count": 2},
    {"op": "run", "ms": 300},
    {"op": "consume"},
    {"op": "run", "ms": 200},
]


def _run(commands: list[dict], seed: int) -> tuple:
    """The verdict on the reference's kraft trace of ``commands``, and the trace's events."""
    v, out = run_scenario_full(InProcess(Session(None)), commands, "regression", seed, "kraft")
    assert out.events is not None
    return v, out.events


SCENARIO = [_start(2), {"op": "consume"}, {"op": "crash", "broker": 0}, {"op": "heal"}, *CLOSING]


# (each rejected before the fix; seeds 0, 3 and 4 were until a restarted leader's re-election
# came before its registration, docs/conformance.md random kraft item 3, which moved the fetches)
@pytest.mark.parametrize("seed", [17, 37, 38])
def test_previous_incarnations_answer_is_not_taken(seed: int) -> None:
    v, events = _run(SCENARIO, seed)
    # the scenario still contains the event it is about: a previous incarnation's fetch
    # answered after the restart
    stale = [
        e
        for e in events
        if e.get("action") == "LeaderHandleFetch"
        and (e.get("args") or {}).get("error") == "STALE_BROKER_EPOCH"
    ]
    assert stale, "the scenario no longer answers a previous incarnation's fetch"
    assert v.verdict == "accepted", (v.reason, v.mismatches)


# The controller's view after an AlterPartition it accepted: found by `isr conform --protocol
# kraft --random 150 --seed 11` (shrunk to these 13 commands). The coordination service
# recorded the expansion, the running controller learned it only at its next resync, and a
# controlled shutdown in between was decided on the ISR before it (traced as a shutdown that
# removed the follower, which the ISR still held; then the real removal came as a second,
# unexplainable shrink).
STALE_VIEW = [
    _start(1),
    {"op": "controlled_shutdown", "broker": 0},
    {"op": "restart", "broker": 0},
    {"op": "consume"},
    {"op": "controlled_shutdown", "broker": 0},
    {"op": "heal"},
    *CLOSING,
]


@pytest.mark.parametrize("seed", [0, 1, 4])  # (each rejected before the fix)
def test_the_controller_decides_on_the_isr_it_accepted(seed: int) -> None:
    v, events = _run(STALE_VIEW, seed)
    accepted = [
        e
        for e in events
        if e.get("action") == "ControllerHandleAlterPartition" and e["args"].get("accepted")
    ]
    shutdowns = [e for e in events if e.get("action") == "ControllerShutdownBroker"]
    assert accepted and len(shutdowns) >= 2  # the story: an expansion, then a shutdown
    assert v.verdict == "accepted", (v.reason, v.mismatches)


def test_the_history_names_the_power_failures() -> None:
    """The reference adapter's history header lists the kit's faults on the ops' clock, so a
    write lost to a power failure is told apart from a lost write (traces/history.py)."""
    s = Session(None)
    s.handle({"op": "start", "brokers": 2, "replication": 2, "protocol": "kraft", "seed": 1})
    s.handle({"op": "produce", "count": 1})
    s.handle({"op": "power_fail", "broker": 1})
    s.handle({"op": "restart", "broker": 1})
    head = s.handle({"op": "history"})["header"]
    assert [f["event"] for f in head["faults"]] == ["power 1", "restart 1"]
    assert head["faults"][0]["time"] <= head["faults"][1]["time"]


# A leader's re-election after the controller co-located with it restarted: found by `isr
# conform --protocol kraft --random 60 --seed 12` (shrunk to these 11 commands; docs/
# conformance.md, random kraft item 3). Broker 0 (leader of t-0, and the controller) crashed
# and restarted inside its session while broker 1 was paused. The restarted controller saw 0's
# registration before it re-elected: 0 registered while still the recorded leader, so its
# unclean shutdown left it in the ISR, and it was re-elected from ISR [0, 1] once 1 had come
# back (another partition's AlterPartition had lifted its bar). Kafka's registration batch
# (``handleBrokerUncleanShutdown``) takes 0 out of the ISR whatever its leadership, so the
# partition goes offline with ISR [1] when 1 is fenced and its last known leader, 1, is elected
# when it registers again.
CO_LOCATED = [
    _start(2),
    {"op": "crash", "broker": 0},
    {"op": "pause", "broker": 1, "ms": 500},
    {"op": "heal"},
    *CLOSING,
]


@pytest.mark.parametrize("seed", [0, 1, 2])  # (each rejected before the fix)
def test_a_restarted_leader_leaves_the_isr_before_it_registers(seed: int) -> None:
    v, events = _run(CO_LOCATED, seed)
    t0 = [e for e in events if e.get("partition") == 0 or e.get("topic") is None]
    crash = next(i for i, e in enumerate(t0) if e.get("action") == "BrokerCrash")
    register = next(
        i for i, e in enumerate(t0) if e.get("action") == "BrokerRegister" and i > crash
    )
    elected = [
        e["state"]["coord"]
        for e in t0[crash:register]
        if e.get("action") == "ControllerElectLeader"
    ]
    # the failover's election comes before 0's registration, without 0 in the ISR
    assert elected == [{"leader": 1, "leader_epoch": 1, "isr": [1], "version": 1}]
    # and no later election of t-0 puts 0 back as leader from the ISR it left
    later = [
        e["state"]["coord"]
        for e in t0[register:]
        if e.get("action") == "ControllerElectLeader" and e["args"]["leader"] >= 0
    ]
    assert later and all(c["isr"] == [1] and c["leader"] == 1 for c in later)
    assert v.verdict == "accepted", (v.reason, v.mismatches)


# The controlled shutdown of a leader no other ISR member can replace (docs/conformance.md,
# random kraft item 6). Broker 1 crashed and left the ISR; it restarts and broker 0, leader with
# ISR [0], asks for a controlled shutdown before 1 is back in the ISR. Kafka's controller
# (``handleBrokerInControlledShutdown`` → ``generateLeaderAndIsrUpdates`` →
# ``PartitionChangeBuilder.build``, no acceptable leader) records leader -1 with a new leader
# epoch, as the spec's ControllerShutdownBroker does (``_leaderless``). The reference kept the
# leader and traced nothing, then refused 0's expansion with INELIGIBLE_REPLICA (0 is shutting
# down), which no spec step explains (rejected for seeds 0 and 1 before the fix).
LEADERLESS_SHUTDOWN = [
    _start(1),
    {"op": "crash", "broker": 1},
    {"op": "run", "ms": 500},
    {"op": "restart", "broker": 1},
    {"op": "controlled_shutdown", "broker": 0},
    {"op": "run", "ms": 300},
    *CLOSING,
]


@pytest.mark.parametrize("seed", [0, 1])
def test_a_leader_with_no_successor_shuts_down_leaderless(seed: int) -> None:
    v, events = _run(LEADERLESS_SHUTDOWN, seed)
    # the shutdown writes leader -1 with a new leader epoch, the ISR kept
    t0 = [e for e in events if e.get("partition") == 0]
    shut = [e for e in t0 if e.get("action") == "ControllerShutdownBroker"]
    assert [e["args"] for e in shut] == [{"replica": 0, "leader": -1}]
    assert shut[0]["state"]["coord"]["leader_epoch"] == 1
    assert shut[0]["state"]["coord"]["isr"] == [0]
    # each broker applies it (0 stops leading, 1 follows nobody)
    applied = [
        e["args"]["replica"]
        for e in t0
        if e.get("action") == "BrokerBecomeFollower" and e["args"]["leader"] == -1
    ]
    assert sorted(applied) == [0, 1]
    # and 0 is elected again once it registers anew
    i = t0.index(shut[0])
    assert any(
        e.get("action") == "ControllerElectLeader" and e["args"]["leader"] == 0 for e in t0[i:]
    )
    assert v.verdict == "accepted", (v.reason, v.mismatches)
