"""KIP-455 partition reassignment in the kraft family (issue 28 item 1, --reassignments N):
the partition starts on brokers 0..R-2, broker R-1 a spare; OperatorReassignPartition,
OperatorCancelReassignment, the completion in the AlterPartition's record, BrokerStopReplica;
the properties LeaderIsReplica, IsrWithinReplicas, ReassignmentKeepsMinIsr; KAFKA-15665's flag
(``reassignment_needs_full_isr``) and the ISR-within-replicas check (KAFKA-9672's KRaft twin)."""

from __future__ import annotations

import pytest
from isr.checker.bfs import check_bfs
from isr.spec import Config, IsrSpec
from isr.spec.config import ConfigError
from isr.spec.protocols.kraft import KRAFT
from isr.spec.state import NO_EPOCH, NO_LEADER

from .helpers import first_violation, kraft, moves, run, safety, step

SMALL = dict(replicas=2, records=1, epochs=2, crashes=0)
# The replica moves from broker 0 to the spare, broker 1, and the reassignment completes.
MOVE = (
    ("OperatorReassignPartition", 2),
    ("BrokerBecomeFollower", 1, 0, 1),
    ("BrokerApplyPartitionChange", 0),
    ("FollowerSendFetch", 1, 0),
    ("LeaderHandleFetch", 0, 1),
    ("LeaderSendAlterPartition", 0, 1),
    ("ControllerHandleAlterPartition", 0),
)


def test_the_bound_is_checked():
    with pytest.raises(ConfigError):
        Config(protocol="kraft", reassignments=-1).validate()
    with pytest.raises(ConfigError, match="ISR versions"):  # (ZooKeeper era: test_zk_reassignment)
        Config(protocol="majority-quorum", reassignments=1).validate()
    with pytest.raises(ConfigError, match="replication factor"):
        Config(protocol="kraft", replicas=2, min_isr=2, reassignments=1).validate()
    with pytest.raises(ConfigError, match="idempotence"):
        Config(protocol="kraft", reassignments=1, retries=1, idempotence=True).validate()
    with pytest.raises(ValueError, match="reductions"):
        IsrSpec(Config(protocol="kraft", replicas=2, reassignments=1), reduction="por")


def test_off_by_default_the_model_has_no_reassignment_action():
    names = set(kraft(**SMALL).action_names)
    assert not names & {"OperatorReassignPartition", "BrokerStopReplica"}
    assert "LeaderIsReplica" not in safety(kraft(**SMALL))


def test_the_spare_broker_is_no_replica():
    (s,) = kraft(replicas=3, records=1, epochs=2, crashes=0, reassignments=1).init_states()
    k = s.kraft
    assert (k.assigned, k.adding, k.removing, k.views) == (0b011, 0, 0, (0b011, 0, 0))
    assert s.coord.isr == 0b011
    spare = s.replicas[2]
    assert (spare.leader, spare.epoch, spare.isr, spare.log) == (NO_LEADER, NO_EPOCH, 0, ())


def test_a_replica_moves_to_the_spare_and_the_old_one_deletes_its_log():
    m = kraft(**SMALL, reassignments=1)
    s = run(
        m,
        ("ProducerSend", 0, 1),
        *MOVE[:5],
        ("FollowerHandleFetchResponse", 1, 0),
        ("FollowerSendFetch", 1, 0),
        ("LeaderHandleFetch", 0, 1),
        *MOVE[5:],
    )
    k = s.kraft
    # the AlterPartition that brings broker 1 into the ISR completes the reassignment: the
    # removed leader is replaced and the leader epoch bumped (the replica set shrank)
    assert (k.assigned, k.adding, k.removing) == (0b10, 0, 0)
    assert (s.coord.leader, s.coord.epoch, s.coord.isr) == (1, 2, 0b10)
    # adding the replica kept the leader epoch: broker 1 followed at epoch 1
    assert s.replicas[1].epoch == 1
    s = step(m, s, "BrokerStopReplica", 0)
    r0 = s.replicas[0]
    assert (r0.log, r0.leader, r0.epoch, r0.alive) == ((), NO_LEADER, NO_EPOCH, True)
    assert s.replicas[1].log == ((1, 1),)  # the record moved with the replica
    assert not moves(m, s, "BrokerStopReplica")


def test_a_leader_refuses_a_fetch_before_it_knows_the_new_replica():
    """``Partition.followerReplicaOrThrow``: UNKNOWN_LEADER_EPOCH, nothing counted."""
    m = kraft(**SMALL, reassignments=1)
    s = run(m, MOVE[0], MOVE[1], ("FollowerSendFetch", 1, 0), ("LeaderHandleFetch", 0, 1))
    assert s.replicas[0].remote_leo == (-1, -1)
    assert s.kraft.fetch_responses == ()


def test_a_cancel_reverts_to_the_original_replicas():
    m = kraft(**SMALL, reassignments=2)
    s = run(m, *MOVE[:3], ("OperatorCancelReassignment",))
    k = s.kraft
    assert (k.assigned, k.adding, k.removing, k.reassignments) == (0b01, 0, 0, 2)
    assert (s.coord.leader, s.coord.epoch, s.coord.isr) == (0, 2, 0b01)
    s = step(m, s, "BrokerStopReplica", 1)
    assert s.replicas[1].leader == NO_LEADER


@pytest.mark.parametrize(
    ("protocol", "bounds", "states"),
    [
        ("kraft", dict(**SMALL, reassignments=1), 2268),
        ("kraft-4.0", dict(**SMALL, reassignments=1), 2268),
        ("kraft-3.7", dict(**SMALL, reassignments=1), 2268),
        ("kraft", dict(**SMALL, reassignments=2), 22488),
    ],
)
def test_every_safety_property_holds(protocol, bounds, states):
    m = IsrSpec(Config(protocol=protocol, **bounds))
    res = check_bfs(m)
    assert res.distinct_states == states
    bad = [p.name for p in res.properties if p.kind in ("always", "action") and not p.holds]
    assert bad == []
    reached = {p.name for p in res.properties if p.kind == "sometimes" and p.holds}
    assert "SometimesReassigned" in reached


def test_without_the_isr_check_the_leader_still_keeps_the_isr_within_its_replicas():
    """KAFKA-9672's KRaft twin: the controller's ``Replicas.validateIsr`` taken out, no ISR
    outside the replica set is recorded: the leader proposes only followers it counts, and it
    counts only the replicas it applied (the partition epoch refuses the rest)."""
    m = kraft(KRAFT.variant(isr_within_replicas_check=False), **SMALL, reassignments=1)
    res = check_bfs(m)
    assert res.distinct_states == 2268
    assert all(p.holds for p in res.properties if p.kind in ("always", "action"))


# KAFKA-15665 (Kafka 3.8.0): three brokers, replication factor 2, min.insync.replicas 2. The
# operator moves the partition from [0, 1] to [1, 2]; follower 1 drops out of the ISR, the new
# replica 2 catches up and joins: before the fix the adding replica in the ISR is enough, so the
# reassignment completes with ISR [2] alone, below min ISR.
STORY_15665 = (
    ("OperatorReassignPartition", 0b110),
    ("BrokerApplyPartitionChange", 0),
    ("LeaderSendAlterPartition", 0, 1),
    ("ControllerHandleAlterPartition", 0),
    ("BrokerBecomeFollower", 2, 0, 1),
    ("FollowerSendFetch", 2, 0),
    ("LeaderHandleFetch", 0, 2),
    ("LeaderSendAlterPartition", 0, 2),
)
BOUNDS_15665 = dict(replicas=3, records=0, epochs=2, crashes=0, min_isr=2, reassignments=1)


def _last_step(m: IsrSpec, script: tuple):
    s = run(m, *script)
    ((_args, t),) = moves(m, s, "ControllerHandleAlterPartition")
    return s, t


def test_kafka_15665_a_completion_leaves_the_isr_below_min_isr():
    bug = kraft(KRAFT.variant(reassignment_needs_full_isr=False), **BOUNDS_15665)
    s, t = _last_step(bug, STORY_15665)
    assert (t.kraft.assigned, t.coord.isr, t.coord.leader) == (0b110, 0b100, 2)
    prop = next(p for p in bug.properties if p.name == "ReassignmentKeepsMinIsr")
    assert not prop.check(s, (0, ()), t)
    # the fixed version accepts the same AlterPartition without completing: replica 1, a
    # target replica, is not in the ISR
    fixed = kraft(**BOUNDS_15665)
    s, t = _last_step(fixed, STORY_15665)
    assert (t.kraft.assigned, t.kraft.removing, t.coord.isr) == (0b111, 0b001, 0b101)
    prop = next(p for p in fixed.properties if p.name == "ReassignmentKeepsMinIsr")
    assert prop.check(s, (0, ()), t)


def test_kraft_3_7_completes_on_the_adding_replicas():
    """kraft-3.7 has the rule before KAFKA-15665's fix (3.8.0)."""
    m = IsrSpec(Config(protocol="kraft-3.7", **BOUNDS_15665))
    _s, t = _last_step(m, STORY_15665)
    assert (t.kraft.assigned, t.coord.isr) == (0b110, 0b100)


@pytest.mark.slow
@pytest.mark.parametrize("release", ["kraft-no-15665-fix", "kraft-3.7"])
def test_kafka_15665_shortest_counterexample(release):
    """The search finds it in 8 steps (43,214 states), in kraft with the fix taken out and in
    kraft-3.7 as released: the follower's controlled shutdown takes it out of the ISR (with ELR,
    into the ELR), the operator moves the partition to [1, 2], the spare catches up, and its
    AlterPartition completes the reassignment with ISR [2] (the ELR, kraft only, keeps broker 0,
    a removed replica)."""
    if release == "kraft-3.7":
        bug = IsrSpec(Config(protocol="kraft-3.7", **BOUNDS_15665))
    else:
        bug = kraft(KRAFT.variant(reassignment_needs_full_isr=False), **BOUNDS_15665)
    cex = first_violation(bug, "ReassignmentKeepsMinIsr")
    assert [st.action for st in cex.steps] == [
        "ControllerShutdownBroker",
        "OperatorReassignPartition",
        "BrokerBecomeFollower",
        "BrokerApplyPartitionChange",
        "FollowerSendFetch",
        "LeaderHandleFetch",
        "LeaderSendAlterPartition",
        "ControllerHandleAlterPartition",
    ]


def test_a_reassignment_state_goes_through_json():
    from isr.spec.codec import state_from_json, state_to_json

    m = kraft(**SMALL, reassignments=1)
    s = run(m, *MOVE[:3])
    d = state_to_json(s)
    assert (d["replicas"], d["adding_replicas"], d["removing_replicas"]) == ([0, 1], [1], [0])
    assert state_from_json(d) == s
    (s0,) = kraft(**SMALL).init_states()
    assert "replicas" not in state_to_json(s0)


def test_kafka_14808_a_new_target_keeps_a_previous_adding_replica_that_leads():
    """KAFKA-14808 (the ZooKeeper controller stopped a previous adding replica that had been
    elected leader when a new reassignment dropped it: a leaderless partition). The KRaft
    controller computes the new replicas from the registration's, adding ones included
    (PR 13521's testReassignPartitionsKeepsAllPreviousReassigningReplicas): broker 2, added by
    the move to [1, 2] and then made leader, stays a replica (removing) and the leader when
    the operator moves the partition back to [0, 1]."""
    from isr.spec.properties import leader_is_replica

    m = kraft(replicas=3, records=0, epochs=3, crashes=0, min_isr=1, reassignments=2)
    s = run(
        m,
        *STORY_15665,
        ("ControllerHandleAlterPartition", 0),
        ("ControllerMoveLeader", 2),
        ("OperatorReassignPartition", 0b011),
    )
    k = s.kraft
    assert (k.assigned, k.adding, k.removing) == (0b111, 0, 0b100)
    assert (s.coord.leader, s.coord.isr) == (2, 0b101)
    assert leader_is_replica(s)


def test_a_completion_may_elect_the_follower_its_request_adds_back_after_an_unclean_shutdown():
    """kip-966's bar on a broker back from an unclean shutdown ends when an AlterPartition adds
    it back to the ISR; Kafka's build elects from that target ISR
    (``PartitionChangeBuilder.isValidNewLeader``: any active member), so the completion the same
    request makes may elect it. Found by the kit's random kraft schedules (isr conform
    --protocol kraft --random 40 --seed 7): the reference elected the spare it had just added,
    which the spec refused while it cleared the bar only after the build."""
    m = kraft(**SMALL, reassignments=1)
    s = run(m, *MOVE[:6])
    f = s.faults
    s = s._replace(faults=f._replace(unclean=f.unclean | 0b10))  # broker 1 registered unclean
    (t,) = [t for a, t in moves(m, s, "ControllerHandleAlterPartition")]
    assert (t.kraft.assigned, t.coord.leader, t.coord.isr) == (0b10, 1, 0b10)
    assert not t.faults.unclean
