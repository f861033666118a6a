"""The kraft version in the reference implementation (issue 18 step 4): the simulation's kraft
runs validate against the spec's ``kraft`` actions (FollowerSendFetch, LeaderHandleFetch,
FollowerHandleFetchResponse, LeaderSendAlterPartition, ControllerHandleAlterPartition,
BrokerApplyPartitionChange, BrokerRegister), with crashes and restarts; a mutant that answers
fetches with the HW after the fetch (KAFKA-7104 undone) is rejected; the real cluster and the
faults whose mechanisms impl does not have are refused."""

from __future__ import annotations

from collections import Counter

import pytest
from isr.impl.cluster.manager import Cluster, ClusterError
from isr.impl.core.config import Config
from isr.impl.core.controller import Controller
from isr.impl.mutants import KRAFT_MUTANTS
from isr.impl.sim.scenarios import (
    Fault,
    kraft_divergence_scenario,
    kraft_elr_scenario,
    kraft_stale_expansion_scenario,
    kraft_stale_fetch_scenario,
    random_faults,
    run_random,
)
from isr.impl.sim.world import Unsupported, World, sim_config

from .test_known_gaps import accepted, verdict

KRAFT_ACTIONS = {"FollowerSendFetch", "LeaderHandleFetch", "FollowerHandleFetchResponse"}


@pytest.mark.parametrize("seed", range(10))
def test_random_kraft_runs_with_crashes_and_restarts_are_accepted(seed: int) -> None:
    faults = random_faults(
        seed, 40, ("crash", "restart", "elect", "preferred", "shutdown", "pause")
    )
    w = run_random("kraft", faults, seed=seed, records=40)
    names = Counter(e["action"] for e in w.trace)
    assert set(names) >= KRAFT_ACTIONS
    assert "FollowerFetch" not in names and "FollowerTruncate" not in names
    assert w.lost_acked() == []
    accepted(w)


def test_crash_restart_registers_and_alters_the_isr() -> None:
    """Follower 1 crashes: the controller removes it in the leader's epoch (a partition change
    the leader applies, KAFKA-15021); it restarts with broker epoch 2 (BrokerRegister) and its
    leader adds it back by an AlterPartition carrying that epoch (KIP-903)."""
    w = run_random(
        "kraft", [Fault(200, "crash", 1, 0, 200)], seed=3, records=40, replica_lag_time_max_ms=2000
    )  # (a lag time above the session timeout: the controller, not the leader, removes it)
    names = Counter(e["action"] for e in w.trace)
    assert names["BrokerRegister"] == 1
    assert names["BrokerApplyPartitionChange"] >= 1
    assert names["LeaderSendAlterPartition"] >= 1
    reg = next(e for e in w.trace if e["action"] == "BrokerRegister")
    assert reg["args"] == {"replica": 1, "broker_epoch": 2}
    added = [
        e for e in w.trace
        if e["action"] == "ControllerHandleAlterPartition" and e["args"]["accepted"]
    ]  # fmt: skip
    assert added and added[-1]["state"]["isr"] == [0, 1, 2]
    # the shrink kept the leader epoch: only elections move it
    epochs = {e["state"]["leader_epoch"] for e in w.trace if e["action"] == "LeaderHandleFetch"}
    assert epochs == {0}
    accepted(w)


def test_fresh_hw_in_response_mutant_is_rejected() -> None:
    """KAFKA-7104 undone: the follower's HW after a response is one round ahead of the spec's,
    which answers with the HW read before the fetch moved it."""
    mu = KRAFT_MUTANTS["fresh-hw-in-response"]
    w = run_random("kraft", [], seed=1, records=10, broker_cls=mu.broker_cls)
    for merged in (False, True):
        v = verdict(w, merged)
        assert v.verdict == "rejected", (merged, v.verdict)
        assert v.event["action"] == "LeaderHandleFetch"


def test_divergence_is_answered_with_the_diverging_epoch_and_accepted() -> None:
    """Broker 0 comes back with "x" (epoch 0) at offset 3 where the new leader 1 has "y"
    (epoch 1): its fetch at offset 4 with last fetched epoch 0 is answered DivergingEpoch (0, 3),
    not counted, and it truncates to 3 (KIP-279's rule on its own log) and fetches "y"."""
    w = kraft_divergence_scenario()
    div = [e for e in w.trace if "diverging" in e["args"]]
    assert [(e["action"], e["args"]["diverging"]) for e in div] == [
        ("LeaderHandleFetch", [0, 3]),
        ("FollowerHandleFetchResponse", [0, 3]),
    ]
    assert div[0]["state"]["remote_leo"]["0"] == -1  # the diverging offset is not counted
    assert div[1]["args"]["offset"] == 3
    log0 = w.broker(0).partitions[("t", 0)].log.view()
    assert log0[:4] == [["c0", 0], ["c1", 0], ["c2", 0], ["y", 1]]
    assert ["x", 0] not in log0  # (the producer's retry of "x" is a new record at epoch 1)
    assert log0 == w.broker(1).partitions[("t", 0)].log.view()
    assert w.lost_acked() == []
    accepted(w)


def test_count_diverging_fetch_mutant_is_rejected() -> None:
    """KAFKA-13141 brought back: the leader records the diverging fetch offset 4 as follower 0's
    LEO, one past what the two logs share; the spec's leader does not count it."""
    mu = KRAFT_MUTANTS["count-diverging-fetch"]
    w = kraft_divergence_scenario(broker_cls=mu.broker_cls)
    for merged in (False, True):
        v = verdict(w, merged)
        assert v.verdict == "rejected", (merged, v.verdict)
        assert v.event["action"] == "LeaderHandleFetch"
        assert v.event["args"]["diverging"] == [0, 3]
        assert "remote LEO of 0=4 but the spec has -1" in v.mismatches[0]


def test_stale_fetch_of_a_previous_incarnation_is_fenced_and_accepted() -> None:
    """KAFKA-15221's setting: follower 1's fetch parked before its restart is handled after its
    new incarnation (broker epoch 2) was counted: STALE_BROKER_EPOCH, nothing counted."""
    w = kraft_stale_fetch_scenario()
    errs = [e["args"] for e in w.trace if e["args"].get("error")]
    assert errs == [
        {
            "leader": 0,
            "follower": 1,
            "fetch_offset": 1,
            "leader_epoch": 0,
            "broker_epoch": 1,
            "error": "STALE_BROKER_EPOCH",
        }
    ]
    accepted(w)


def test_no_stale_fetch_fence_mutant_is_rejected() -> None:
    """The same run with the fence removed: the leader counts the previous incarnation's fetch,
    which the spec's leader (fence_stale_fetch) refuses."""
    w = kraft_stale_fetch_scenario(broker_cls=KRAFT_MUTANTS["no-stale-fetch-fence"].broker_cls)
    for merged in (False, True):
        v = verdict(w, merged)
        assert v.verdict == "rejected", (merged, v.verdict)
        assert v.event["action"] == "LeaderHandleFetch"
        assert v.event["args"]["broker_epoch"] == 1 and "error" not in v.event["args"]


def test_eligible_leader_replica_is_elected_and_accepted() -> None:
    """KIP-966: broker 1 left the ISR while it was below min ISR (ELR {1}, shrunk out by the
    leader while paused); with every ISR member down broker 2 is back but not eligible, and
    broker 1 is elected from the ELR with ISR {1}. Nothing acknowledged is lost."""
    w = kraft_elr_scenario()
    elections = [
        (e["args"]["leader"], e["state"]["coord"]["isr"])
        for e in w.trace
        if e["action"] == "ControllerElectLeader"
    ]
    assert elections == [(0, [0, 1, 2]), (1, [1])]
    shrink = next(e for e in w.trace if e["action"] == "LeaderSendAlterPartition")
    assert shrink["args"]["kind"] == "shrink" and shrink["args"]["isr"] == [0]
    assert w.lost_acked() == []
    accepted(w)


def test_a_registration_is_an_unclean_shutdown_and_the_follower_rejoins() -> None:
    """Kafka 4.x (``registerBroker`` → ``handleBrokerUncleanShutdown``): a follower that
    restarts within its session leaves the ISR in its registration's batch (the leader applies
    the change in its epoch), is barred from elections until an AlterPartition puts it back,
    and rejoins once caught up; the trace validates against the spec's defaults for it."""
    w = run_random("kraft", [Fault(200, "crash", 1, 0, 0)], seed=3, records=10)
    names = [e["action"] for e in w.trace]
    reg = names.index("BrokerRegister")
    assert names.index("BrokerApplyPartitionChange", reg) > reg
    assert "unclean_shutdown_on_register" not in w.trace_header()["protocol_flags"]
    back = [
        e for e in w.trace
        if e["action"] == "ControllerHandleAlterPartition" and e["args"]["accepted"]
    ]  # fmt: skip
    assert back and back[-1]["state"]["isr"] == [0, 1, 2]
    assert not w.coord.unclean
    accepted(w)


@pytest.mark.parametrize("mutant", [None, "no-broker-epoch-check"])
def test_a_fetch_of_a_previous_incarnation_does_not_add_it_back(mutant: str | None) -> None:
    """KIP-903 (KAFKA-14139): after a power failure and a restart, the leader proposes the
    follower on its previous incarnation's parked fetch (broker epoch 1); the controller
    refuses it. Without the check the follower rejoins empty, is elected, and the
    acknowledged "m0" is lost: the validator rejects the acceptance."""
    ctl = KRAFT_MUTANTS[mutant].controller_cls if mutant else Controller
    w = kraft_stale_expansion_scenario(controller_cls=ctl)
    names = [e["action"] for e in w.trace]
    reg = names.index("BrokerRegister")
    k = next(
        i for i, e in enumerate(w.trace)
        if i > reg and e["action"] == "LeaderHandleFetch"
        and (e["args"]["follower"], e["args"]["broker_epoch"]) == (1, 1)
    )  # fmt: skip
    assert w.trace[k]["args"]["fetch_offset"] == 1  # the old incarnation had "m0"
    assert names[k + 1] == "LeaderSendAlterPartition"
    decided = w.trace[names.index("ControllerHandleAlterPartition", k)]
    if mutant is None:
        assert decided["args"] == {"leader": 0, "accepted": False, "error": "INELIGIBLE_REPLICA"}
        assert w.lost_acked() == []
        accepted(w)
        return
    assert decided["args"]["accepted"]
    assert [r for r, _tp, _o in w.lost_acked()] == ["m0"]
    v = verdict(w, False)
    assert v.verdict == "rejected" and v.event["action"] == "ControllerHandleAlterPartition"


def test_controlled_shutdown_marks_the_broker_ineligible_and_is_accepted() -> None:
    """KIP-841: broker 2's controlled shutdown removes it from the ISR by a partition change in
    the leader's epoch; it fetches on, caught up, but the controller refuses the leader's
    AlterPartitions that would put it back (INELIGIBLE_REPLICA) until it stops; it restarts,
    registers and rejoins."""
    w = run_random("kraft", [Fault(200, "shutdown", 2, 0, 200)], seed=2, records=40)
    names = Counter(e["action"] for e in w.trace)
    assert names["ControllerShutdownBroker"] == 1 and names["BrokerRegister"] == 1
    shut = next(e for e in w.trace if e["action"] == "ControllerShutdownBroker")
    assert shut["args"] == {"replica": 2, "leader": 0}
    assert shut["state"]["coord"]["leader_epoch"] == 0 and shut["state"]["coord"]["isr"] == [0, 1]
    refused = [
        e["args"].get("error")
        for e in w.trace
        if e["action"] == "ControllerHandleAlterPartition" and not e["args"]["accepted"]
    ]
    assert refused and set(refused) == {"INELIGIBLE_REPLICA"}
    assert w.coord.states[("t", 0)][0].isr == (0, 1, 2)  # back after its restart
    assert w.lost_acked() == []
    accepted(w)


@pytest.mark.parametrize("target", [0, 1])
def test_pause_beyond_the_session_is_a_fence_and_is_accepted(target: int) -> None:
    """KIP-841: a broker paused past its session (1.2 s > 0.6 s) is fenced by the controller
    (the spec's ControllerFenceBroker, a hidden step): as follower it leaves the ISR, as leader
    (and controller) it is replaced; when the pause ends the fenced process restarts and
    registers with a new broker epoch (a BrokerCrash, BrokerRestart, BrokerRegister of its
    own), as the spec's fenced broker must."""
    w = run_random("kraft", [Fault(200, "pause", target, 0, 300)], seed=1, records=40)
    names = Counter(e["action"] for e in w.trace)
    assert names["BrokerPause"] == names["BrokerCrash"] == names["BrokerRegister"] == 1
    reg = next(e for e in w.trace if e["action"] == "BrokerRegister")
    assert reg["args"] == {"replica": target, "broker_epoch": 2}
    assert names["ControllerElectLeader"] == (2 if target == 0 else 1)
    assert w.lost_acked() == []
    accepted(w)


def test_the_real_cluster_refuses_kraft(tmp_path) -> None:
    with pytest.raises(ClusterError, match="KRaft has no ZooKeeper"):
        Cluster(tmp_path).up(config=Config(protocol="kraft"))
    assert not (tmp_path / "zookeeper").exists()
    from isr.cli.main import main

    d = tmp_path / "c"
    assert main(["cluster", "up", "--protocol", "kraft", "--dir", str(d)]) == 2
    assert not d.exists()


@pytest.mark.parametrize("kind", ["loss", "duplicate", "partition"])
def test_the_kraft_simulation_refuses_faults_it_cannot_trace(kind: str) -> None:
    with pytest.raises(Unsupported, match="kraft simulation refuses"):
        run_random("kraft", [Fault(50, kind, 1, 2, 50)], seed=0, records=6)


def test_kraft_config() -> None:
    assert Config(protocol="kraft").protocol == "kraft"
    w = World(3, 1, 3, sim_config("kraft"))
    assert w.kraft and w.broker_epochs == {0: 1, 1: 1, 2: 1}


def test_a_second_fetch_in_flight_is_rejected() -> None:
    """The spec's fetcher has one fetch in flight per follower and leader: a send while the
    first is unanswered (a timeout-and-resend, which the kraft core does not do) is rejected
    when the leader never crashed (the relaxation for a closed connection needs a crash)."""
    w = run_random("kraft", [], seed=1, records=4)
    evs = [dict(e) for e in w.trace]
    k = next(i for i, e in enumerate(evs) if e["action"] == "FollowerSendFetch")
    evs.insert(k + 1, dict(evs[k]))
    from isr.traces.validator.validate import validate_events

    v = validate_events(w.trace_header(), evs)
    assert v.verdict == "rejected" and v.index == k + 1
    assert v.event["action"] == "FollowerSendFetch"


def test_the_declared_epoch_cache_difference_is_what_lets_the_trace_pass() -> None:
    """The implementation derives its leader-epoch cache from its log, where the spec's kraft
    (as Kafka) keeps it as its own state: a leader records its epoch on taking office, with no
    record, and a follower's fetch carries that epoch. The trace header declares the difference
    (``protocol_flags``); without the declaration the same run is rejected at the first fetch
    of a deposed leader that wrote nothing, so the flag is not decoration."""
    from isr.traces.validator.validate import validate_events

    w = run_random("kraft", [Fault(50, "elect", 1)], seed=1, records=0)  # nothing written
    head = w.trace_header()
    assert head["protocol_flags"] == {
        "epoch_cache": False,
        "atomic_fence": False,
        "unfence_on_heartbeat": False,
        "fence_at_crash": True,
    }
    events = [dict(e) for e in w.trace]
    assert validate_events(head, events).verdict == "accepted"
    undeclared = {
        **head,
        "protocol_flags": {k: v for k, v in head["protocol_flags"].items() if k != "epoch_cache"},
    }
    v = validate_events(undeclared, events)
    assert v.verdict == "rejected" and "FollowerSendFetch" in v.reason, v.reason


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ({"no_such_flag": True}, "has no flag 'no_such_flag'"),
        ({"epoch_cache": "no"}, "must map flag names to true or false"),
    ],
)
def test_bad_protocol_flags_are_bad_input(flags: dict, message: str) -> None:
    from isr.traces.validator.validate import validate_events

    w = run_random("kraft", [], seed=1, records=2)
    head = {**w.trace_header(), "protocol_flags": flags}
    v = validate_events(head, [dict(e) for e in w.trace])
    assert v.verdict == "bad-input" and message in v.reason, (v.verdict, v.reason)
