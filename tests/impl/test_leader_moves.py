"""Leadership moved away from a live leader (R9): preferred-replica or operator election
(ControllerMoveLeader) and controlled shutdown (ControllerShutdownBroker), in the controller's
handlers and in the simulation, including the deposed leader that acts on its stale view."""

from __future__ import annotations

import pytest
from isr.impl.core import messages as m
from isr.impl.core.config import Config
from isr.impl.core.controller import Controller
from isr.impl.core.trace import LamportClock
from isr.impl.mutants import MUTANTS
from isr.impl.sim.scenarios import TP0, Fault, leader_move_scenario, run_random

TP = ("t", 0)


def ctrl(live, st: m.PartitionState, version: int = 5) -> Controller:
    c = Controller(0, Config(), 4, LamportClock())
    c.activate(0, set(live), {TP: (0, 1, 2)}, {TP: (st, version)})
    return c


def writes(effects) -> list[m.CasWrite]:
    return [e for e in effects if isinstance(e, m.CasWrite)]


def traced(effects) -> list[tuple[str, dict]]:
    return [(e.event["action"], e.event["args"]) for e in effects if isinstance(e, m.Trace)]


def land(c: Controller, w: m.CasWrite, version: int = 6):
    return c.on_cas_results(11, [m.CasResult(w.tp, True, w.state, version)])


# ---- the controller --------------------------------------------------------------------------
def test_preferred_election_moves_leadership_back_to_the_preferred_replica():
    c = ctrl({0, 1, 2}, m.PartitionState(1, 3, (0, 1, 2), 1))
    (w,) = writes(c.elect_leader(10))
    assert w.state == m.PartitionState(0, 4, (0, 1, 2), 4) and w.expected_version == 5
    assert w.purpose == "move"
    effs = land(c, w)
    assert traced(effs) == [("ControllerMoveLeader", {"leader": 0})]
    lai = [e for e in effs if isinstance(e, m.Send) and isinstance(e.msg, m.LeaderAndIsr)]
    assert sorted(e.dst for e in lai) == [0, 1, 2]  # the deposed leader 1 is told too
    assert c.requests == {}
    assert writes(c.elect_leader(12)) == []  # already led by the preferred replica


def test_operator_election_needs_a_live_isr_member_and_a_live_leader():
    c = ctrl({0, 1, 2}, m.PartitionState(0, 3, (0, 1), 1))
    assert writes(c.elect_leader(10, 2)) == []  # 2 is not in the ISR
    (w,) = writes(c.elect_leader(10, 1))
    assert w.state == m.PartitionState(1, 4, (0, 1), 4)
    # the leader is dead: the controller elects (a lost leader), it does not move
    c = Controller(0, Config(), 4, LamportClock())
    st = m.PartitionState(0, 3, (0, 1, 2), 1)
    (w,) = writes(c.activate(0, {1, 2}, {TP: (0, 1, 2)}, {TP: (st, 5)}))
    assert writes(c.elect_leader(10, 2)) == []  # its write is in flight
    effs = land(c, w)
    assert [a for a, _ in traced(effs)] == ["ControllerElectLeader"]
    assert writes(effs) == [] and c.requests == {}  # led by 1 now; 2 stays a follower


def test_move_is_decided_again_after_a_conflict():
    c = ctrl({0, 1, 2}, m.PartitionState(0, 3, (0, 1, 2), 1))
    (_w,) = writes(c.elect_leader(10, 2))
    winner = m.PartitionState(0, 3, (0, 2), 1)  # the leader shrank 1 out meanwhile
    (again,) = writes(c.on_cas_results(11, [m.CasResult(TP, False, winner, 6)]))
    assert again.state == m.PartitionState(2, 4, (0, 2), 4) and again.expected_version == 6
    winner = m.PartitionState(0, 3, (0,), 1)  # 2 left the ISR too: the move is dropped
    assert writes(c.on_cas_results(12, [m.CasResult(TP, False, winner, 7)])) == []
    assert c.requests == {}


def test_controlled_shutdown_of_the_leader_elects_from_the_live_isr_without_it():
    c = ctrl({0, 1, 2}, m.PartitionState(0, 3, (0, 1, 2), 1))
    (w,) = writes(c.controlled_shutdown(10, 0))
    assert w.state == m.PartitionState(1, 4, (1, 2), 4)
    assert traced(land(c, w)) == [("ControllerShutdownBroker", {"replica": 0, "leader": 1})]
    assert c.unmovable(0) == []


def test_controlled_shutdown_of_a_follower_removes_it_from_the_isr():
    c = ctrl({0, 1, 2}, m.PartitionState(0, 3, (0, 1, 2), 1))
    (w,) = writes(c.controlled_shutdown(10, 2))
    assert w.state == m.PartitionState(0, 4, (0, 1), 4)
    assert traced(land(c, w)) == [("ControllerShutdownBroker", {"replica": 2, "leader": 0})]


def test_controlled_shutdown_of_the_only_isr_member_leaves_it_leading():
    c = ctrl({0, 1, 2}, m.PartitionState(0, 3, (0,), 1))
    assert writes(c.controlled_shutdown(10, 0)) == []
    assert c.unmovable(0) == [TP]
    assert writes(c.controlled_shutdown(10, 1)) == []  # not in the ISR: nothing to do


def test_controlled_shutdown_waits_for_the_write_in_flight():
    c = ctrl({0, 1, 2}, m.PartitionState(0, 3, (0, 1, 2), 1))
    (w,) = writes(c.elect_leader(10, 1))
    assert writes(c.controlled_shutdown(10, 1)) == []  # one write per partition at a time
    effs = land(c, w)
    assert [a for a, _ in traced(effs)] == ["ControllerMoveLeader"]
    (w2,) = writes(effs)  # the shutdown of the new leader 1, decided on the landed state
    assert w2.state == m.PartitionState(0, 5, (0, 2), 4) and w2.expected_version == 6


# ---- the simulation --------------------------------------------------------------------------
def _deposed_live_leader(w, move: str) -> dict:
    """The move deposing broker 1 (alive); asserts that 1 keeps acting as leader of the old
    epoch after it (a zombie taking a write) until it becomes a follower at the new epoch (an
    election) or stops (a controlled shutdown: Kafka tells a broker shutting down nothing)."""
    evs = w.trace
    k = next(
        i for i, e in enumerate(evs) if e["action"] == move and e["state"]["coord"]["leader"] != 1
    )
    new_epoch = evs[k]["state"]["coord"]["leader_epoch"]
    later = [e for e in evs[k + 1 :] if e["node"] == 1]
    end = next(
        i
        for i, e in enumerate(later)
        if e["action"] == "BrokerCrash"
        or (e["action"] == "BrokerBecomeFollower" and e["args"]["epoch"] == new_epoch)
    )
    want = "BrokerBecomeFollower" if move == "ControllerMoveLeader" else "BrokerCrash"
    assert later[end]["action"] == want, later[: end + 1]
    zombie = [
        e
        for e in later[:end]
        if e["action"] == "ProducerSend"
        and e["state"]["role"] == "leader"
        and e["state"]["leader_epoch"] < new_epoch
    ]
    assert zombie, later[: end + 1]
    return evs[k]


@pytest.mark.parametrize("protocol", ["kip-320", "hw-truncation"])
@pytest.mark.parametrize(
    ("how", "move"), [("elect", "ControllerMoveLeader"), ("shutdown", "ControllerShutdownBroker")]
)
def test_scenario_has_the_move_and_a_zombie_leader_and_loses_nothing(protocol, how, move):
    w = leader_move_scenario(protocol, how)
    assert next(e["args"] for e in w.trace if e["action"] == "ControllerMoveLeader") == {
        "leader": 1
    }  # the operator's election that makes broker 1 leader
    _deposed_live_leader(w, move)
    assert w.lost_acked() == []
    assert w.leader_of(TP0) == 0
    assert sorted(w.producer.acked) == ["m1", "x"]


def test_the_mutant_acknowledges_a_write_its_deposed_leader_never_committed():
    w = leader_move_scenario(
        "kip-320", "elect", broker_cls=MUTANTS["deposed-leader-acks"].broker_cls
    )
    acked_by_1 = [e for e in w.trace if e["action"] == "ProduceAcked" and e["node"] == 1]
    assert [e["args"]["records"] for e in acked_by_1] == [["m1"], ["x"]]
    assert acked_by_1[-1]["state"]["role"] == "follower"
    assert w.lost_acked() == [("x", TP0, 1)]


FAULTS = {
    "elect": [Fault(50, "elect", 1)],
    # a crash first moves leadership away from the preferred replica 0, which comes back
    "preferred": [Fault(20, "crash", 0, 0, 100), Fault(900, "preferred", 0)],
    # the leader (and controller) 0 shuts down, stops 60 ms later, is back at 240 ms
    "shutdown": [Fault(300, "shutdown", 0, 0, 60)],
}


@pytest.mark.parametrize(
    ("kind", "action"),
    [
        ("elect", "ControllerMoveLeader"),
        ("preferred", "ControllerMoveLeader"),
        ("shutdown", "ControllerShutdownBroker"),
    ],
)
def test_seeded_fault_kinds_contain_their_events(kind, action):
    w = run_random("kip-320", FAULTS[kind], seed=2, records=40)
    moves = [e for e in w.trace if e["action"] == action]
    assert moves, [e["action"] for e in w.trace]
    assert w.lost_acked() == []
    if kind == "preferred":
        assert moves[-1]["args"] == {"leader": 0} and w.leader_of(TP0) == 0
    if kind == "shutdown":
        assert moves[0]["args"]["replica"] == 0 and moves[0]["args"]["leader"] != 0
        assert moves[0]["state"]["coord"]["leader"] == moves[0]["args"]["leader"]
        stop = next(e for e in w.trace if e["action"] == "BrokerCrash" and e["node"] == 0)
        assert w.trace.index(moves[0]) < w.trace.index(stop)
