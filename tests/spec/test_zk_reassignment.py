"""Partition reassignment in the ZooKeeper-era versions (issue 28 item 1, ZooKeeper side;
spec/actions/zk_reassignment.py): the ZooKeeper controller's phases U, A and B as
OperatorReassignPartition and ControllerCompleteReassignment, the removed replica's
BrokerStopReplica, the leader honouring the replica set it applied; KAFKA-6638's state (a
leader's ISR holding a replica outside its replica set between phase B's two writes) and
KAFKA-14808 (``reassignment_keeps_leader``), found by the checker in its variant."""

from __future__ import annotations

import itertools

import pytest
from isr.checker.bfs import check_bfs
from isr.spec import Config, IsrSpec
from isr.spec.config import ConfigError
from isr.spec.protocols import KIP_320
from isr.spec.state import NO_EPOCH, NO_KRAFT, NO_LEADER

from .helpers import first_violation, model, moves, run, safety, step

SMALL = dict(replicas=2, records=1, epochs=4, crashes=0)
# The replica moves from broker 0 to the spare, broker 1: phase A (epoch 2), broker 1 follows,
# catches up and joins the ISR, phase B (the leader moved to 1 at epoch 3, then broker 0 out of
# the ISR at epoch 4).
MOVE = (
    ("OperatorReassignPartition", 0b10),
    ("BrokerBecomeLeader", 0, 2),
    ("BrokerBecomeFollower", 1, 0, 2),
    ("FollowerFetch", 1, 0),
    ("LeaderExpandIsr", 0, 1),
    ("ControllerCompleteReassignment",),
)
# examples/protocols/kip320_reassignment_stops_leader.py
# KIP-455's API (2.4.0: a target may replace one in progress), with and without KAFKA-14808's fix
WITH_KIP_455 = KIP_320.variant(alter_reassignment_in_progress=True)
WITHOUT_14808_FIX = KIP_320.variant(
    alter_reassignment_in_progress=True, reassignment_keeps_leader=False
)


def test_the_bound_is_checked():
    Config(protocol="kip-320", reassignments=1).validate()
    with pytest.raises(ConfigError, match="ISR versions"):
        Config(protocol="majority-quorum", reassignments=1).validate()
    with pytest.raises(ConfigError, match="controller_failovers"):
        Config(protocol="kip-320", reassignments=1, controller_failovers=1).validate()
    with pytest.raises(ConfigError, match="controller_failovers"):
        Config(protocol="kip-320", reassignments=1, session_expiries=1).validate()


def test_off_by_default_the_model_is_unchanged():
    m = model(**SMALL)
    assert not set(m.action_names) & {"OperatorReassignPartition", "BrokerStopReplica"}
    assert "LeaderIsReplica" not in safety(m)
    (s,) = m.init_states()
    assert s.kraft is NO_KRAFT


def test_the_spare_broker_is_no_replica():
    (s,) = model(replicas=3, records=1, epochs=4, crashes=0, reassignments=1).init_states()
    k = s.kraft
    assert (k.assigned, k.adding, k.removing, k.views) == (0b011, 0, 0, (0b011, 0, 0))
    assert k.broker_epoch == ()  # every kraft-only field stays NO_KRAFT's
    assert s.coord.isr == 0b011
    spare = s.replicas[2]
    assert (spare.leader, spare.epoch, spare.isr, spare.log) == (NO_LEADER, NO_EPOCH, 0, ())


def test_phase_a_bumps_the_leader_epoch_and_tells_every_replica_of_the_new_set():
    m = model(**SMALL, reassignments=1)
    s = run(m, MOVE[0])
    k = s.kraft
    assert (k.assigned, k.adding, k.removing, k.reassignments) == (0b11, 0b10, 0b01, 1)
    assert (s.coord.leader, s.coord.epoch, s.coord.isr) == (0, 2, 0b01)
    assert {(q.dest, q.leader, q.epoch, q.replicas) for q in s.requests} == {
        (0, 0, 2, 0b11),
        (1, 0, 2, 0b11),
    }


def test_a_leader_serves_only_the_replicas_it_applied():
    """``Partition.updateFollowerFetchState`` finds no replica: the fetch is refused."""
    m = model(**SMALL, reassignments=1)
    s = run(m, MOVE[0], MOVE[2])  # the new replica follows before the leader knows it
    assert not moves(m, s, "FollowerFetch")
    s = step(m, s, *MOVE[1])
    assert moves(m, s, "FollowerFetch")


def test_phase_b_sends_the_new_set_with_the_old_isr_then_shrinks_it():
    """B3 then B4: two writes, two requests, in that order to each broker. Broker 1 applies
    the first and leads with ISR [0, 1] and replica set [1]: KAFKA-6638's state (the
    leader's own ISR holds a replica outside the replica set it applied), until the second."""
    m = model(**SMALL, reassignments=1)
    s = run(m, ("ProducerSend", 0, 1), *MOVE[:3], ("FollowerFetch", 1, 0))
    s = run_from(m, s, ("FollowerFetch", 1, 0), *MOVE[4:])
    k = s.kraft
    assert (k.assigned, k.adding, k.removing) == (0b10, 0, 0)
    assert (s.coord.leader, s.coord.epoch, s.coord.isr) == (1, 4, 0b10)
    assert sorted((q.dest, q.leader, q.epoch, q.isr, q.fresh, q.replicas) for q in s.requests) == [
        (1, 1, 3, 0b11, False, 0b10),
        (1, 1, 4, 0b10, True, 0b10),
    ]
    # only the request of epoch 3 is deliverable first (one queue per broker, R8)
    assert [a for a, _ in moves(m, s, "BrokerBecomeLeader")] == [(1, 3)]
    s = step(m, s, "BrokerBecomeLeader", 1, 3)
    r1 = s.replicas[1]
    assert (r1.isr, s.kraft.views[1]) == (0b11, 0b10)
    assert r1.isr & ~s.kraft.views[1]  # KAFKA-6638's state
    s = step(m, s, "BrokerBecomeLeader", 1, 4)
    assert s.replicas[1].isr == 0b10
    s = step(m, s, "BrokerStopReplica", 0)
    r0 = s.replicas[0]
    assert (r0.log, r0.leader, r0.epoch, r0.alive) == ((), NO_LEADER, NO_EPOCH, True)
    assert s.replicas[1].log == ((1, 1),)  # the record moved with the replica
    assert not moves(m, s, "BrokerStopReplica")


def run_from(m, s, *script):
    for name, *args in script:
        s = step(m, s, name, *args)
    return s


@pytest.mark.parametrize(
    ("protocol", "bounds", "states"),
    [
        ("kip-320", dict(**SMALL, reassignments=1), 4406),
        ("kip-101", dict(**SMALL, reassignments=1), 5738),
        ("kafka-0.10", dict(**SMALL, reassignments=1), 3679),
        ("kip-320", dict(SMALL, epochs=5, reassignments=2), 16697),
        ("kip-101", dict(SMALL, epochs=5, reassignments=2), 25165),
        ("kip-320", dict(replicas=3, records=0, epochs=4, crashes=0, reassignments=1), 23729),
        (WITH_KIP_455, dict(SMALL, epochs=5, reassignments=2), 19260),
    ],
)
def test_every_safety_property_holds(protocol, bounds, states):
    if isinstance(protocol, str):
        m = IsrSpec(Config(protocol=protocol, **bounds))
    else:
        m = IsrSpec(Config(protocol="kip-320", **bounds), protocol=protocol)
    res = check_bfs(m)
    assert res.distinct_states == states
    bad = [p.name for p in res.properties if p.kind in ("always", "action") and not p.holds]
    assert bad == []
    reached = {p.name for p in res.properties if p.kind == "sometimes" and p.holds}
    assert "SometimesReassigned" in reached


def test_before_kip_455_a_reassignment_in_progress_is_not_replaced():
    """Kafka 0.8 to 2.3: "There is an existing assignment running." (ReassignPartitionsCommand)."""
    m = model(**SMALL, reassignments=2)
    s = run(m, MOVE[0])
    assert moves(m, s, "OperatorReassignPartition") == []
    m = IsrSpec(Config(protocol="kip-320", **SMALL, reassignments=2), protocol=WITH_KIP_455)
    s = run(m, MOVE[0])
    assert [a for a, _ in moves(m, s, "OperatorReassignPartition")] == [(0b01,)]


BOUNDS_14808 = dict(SMALL, epochs=5, reassignments=2)


def test_kafka_14808_a_new_target_stops_the_adding_replica_that_leads():
    """Every ZooKeeper-controller release with KIP-455 (2.4.0 to 3.9): the second target drops
    broker 1, an adding replica that leads since broker 0's controlled shutdown; phase U stops
    it (leader -1, the ISR [1] kept as its last member) and phase A follows with leader -1:
    LeaderIsReplica, 7 steps. With PR 13451's fix that target is refused and every safety
    property holds at the same bounds (19,260 states, ``test_every_safety_property_holds``)."""
    bug = IsrSpec(Config(protocol="kip-320", **BOUNDS_14808), protocol=WITHOUT_14808_FIX)
    cex = first_violation(bug, "LeaderIsReplica")
    assert [st.action for st in cex.steps] == [
        "OperatorReassignPartition",
        "BrokerBecomeLeader",
        "BrokerBecomeFollower",
        "FollowerFetch",
        "LeaderExpandIsr",
        "ControllerShutdownBroker",
        "OperatorReassignPartition",
    ]
    story = (
        *MOVE[:5],
        ("ControllerShutdownBroker", 0, 1),
    )
    s = run(bug, *story)
    t = step(bug, s, "OperatorReassignPartition", 0b01)
    k = t.kraft
    assert (k.assigned, k.adding, k.removing) == (0b01, 0, 0)
    assert (t.coord.leader, t.coord.isr, t.faults.lead_renewed) == (1, 0b10, True)
    assert {(q.dest, q.leader) for q in t.requests if q.epoch == t.coord.epoch} == {(0, -1)}
    fixed = IsrSpec(Config(protocol="kip-320", **BOUNDS_14808), protocol=WITH_KIP_455)
    s = run(fixed, *story)
    assert [a for a, _ in moves(fixed, s, "OperatorReassignPartition")] == []


def test_a_reassignment_state_goes_through_json():
    from isr.spec.codec import state_from_json, state_to_json

    m = model(**SMALL, reassignments=1)
    s = run(m, *MOVE[:3])
    d = state_to_json(s)
    assert (d["replicas"], d["adding_replicas"], d["removing_replicas"]) == ([0, 1], [1], [0])
    assert "broker_epoch" not in d  # (no kraft-only key in a ZooKeeper-era state)
    assert state_from_json(d) == s


def test_the_spare_is_renamed_with_what_it_holds():
    """Symmetry: every renaming of a mid-reassignment state has the same representative, and
    the replica set, adding/removing masks and views are renamed with the brokers."""
    m = model(replicas=3, records=1, epochs=4, crashes=0, reassignments=1)
    s = run(m, ("OperatorReassignPartition", 0b110))
    rep = m.canonicalize(s)
    for order in itertools.permutations(range(3)):
        t = m.permute(s, order)
        assert m.canonicalize(t) == rep
        pos = [order.index(i) for i in range(3)]
        assert t.kraft.adding == 1 << pos[2] and t.kraft.removing == 1 << pos[0]
