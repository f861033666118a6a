"""kip-320 with KIP-455's reassignment API (Kafka 2.4.0: a new target may replace a
reassignment in progress, ``alter_reassignment_in_progress``) and without KAFKA-14808's fix: a
new target that drops an adding replica which meanwhile became leader is accepted, and the
ZooKeeper controller's phase U stops that replica while it leads: its OfflineReplica transition
records leader -1, and the partition is left leaderless (KAFKA-14808;
``KafkaController.updateCurrentReassignment`` → ``stopRemovedReplicasOfReassignedPartition`` →
``ReplicaStateMachine.doRemoveReplicasFromIsr``, read at 2.4.0 and at trunk 2024-10). The fix,
apache/kafka#13451 (refuse such a target with INVALID_REPLICA_ASSIGNMENT), was closed unmerged:
every release from 2.4.0 to 3.9 with the ZooKeeper controller behaves as this variant.

    isr check --protocol-file examples/protocols/kip320_reassignment_stops_leader.py \
        --replicas 2 --records 1 --epochs 5 --crashes 0 --reassignments 2 \
        --invariant LeaderIsReplica

Two brokers, the partition on broker 0, broker 1 a spare. The operator moves it to [1]
(replicas [0, 1], adding [1]; phase A: leader epoch 2); broker 1 follows, catches up and joins
the ISR; broker 0's controlled shutdown moves the leadership to broker 1 and leaves the ISR [1].
The operator now asks for [0]: broker 1, an adding replica the new target drops, is stopped
while it leads, so the controller records leader -1 with ISR [1] (the last member is kept) and
replicas [0], and phase A follows with leader -1: broker 0 cannot join an ISR without a leader,
the reassignment never completes and no election comes (LeaderIsReplica, 7 steps). With the
fix (``KIP_320.variant(alter_reassignment_in_progress=True)``) that target is refused and every
safety property holds at these bounds; the built-in kip-320 (Kafka 2.1) refuses any target
while a reassignment is in progress.
"""

from isr.spec.protocols.kip_320 import Kip320


class Kip320ReassignmentStopsLeader(Kip320):
    name = "kip-320-reassignment-stops-leader"
    description = (
        "kip-320, but a new reassignment may stop the adding replica that leads (KAFKA-14808,"
        " as every ZooKeeper-controller release does)"
    )
    alter_reassignment_in_progress = True  # KIP-455's API (2.4.0): a target may replace one
    reassignment_keeps_leader = False


PROTOCOL = Kip320ReassignmentStopsLeader()
