"""kip-320 with one fix removed: a new reassignment that drops an adding replica of the
reassignment in progress which meanwhile became leader is accepted, and the ZooKeeper
controller's phase U stops that replica: its OfflineReplica transition writes leader -1 and the
partition is left leaderless (KAFKA-14808; the fix, apache/kafka#13451, refusing such a target
with INVALID_REPLICA_ASSIGNMENT, was closed unmerged: every Kafka release with the ZooKeeper
controller behaves as this variant; ``KafkaController.updateCurrentReassignment`` →
``stopRemovedReplicasOfReassignedPartition`` → ``ReplicaStateMachine.doRemoveReplicasFromIsr``).

    isr check --protocol-file examples/protocols/kip320_reassignment_stops_leader.py \\
        --replicas 2 --records 1 --epochs 5 --crashes 0 --reassignments 2 \\
        --invariant LeaderIsReplica

Two brokers, the partition on broker 0, broker 1 a spare. The operator moves it to [1]
(replicas [0, 1], adding [1]); broker 1 follows, catches up and joins the ISR; a
preferred-replica election makes it leader (the target's first replica is preferred); it takes
a record broker 0 does not fetch and shrinks the ISR to [1]. The operator now asks for [0]:
broker 1, an adding replica the new target drops, is stopped while it leads, so the controller
records leader -1 with ISR [1] (the last member is kept) and replicas [0]; broker 0 cannot join
an ISR without a leader, so the reassignment never completes and no election comes
(LeaderIsReplica). The built-in kip-320 refuses the second target, as the PR did.
"""

from isr.spec.protocols.kip_320 import Kip320


class Kip320ReassignmentStopsLeader(Kip320):
    name = "kip-320-reassignment-stops-leader"
    description = (
        "kip-320, but a new reassignment may stop the adding replica that leads (KAFKA-14808,"
        " as every ZooKeeper-controller release does)"
    )
    reassignment_keeps_leader = False


PROTOCOL = Kip320ReassignmentStopsLeader()
