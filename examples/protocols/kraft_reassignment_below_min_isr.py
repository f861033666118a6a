"""kraft with one fix removed: the controller completes a partition reassignment once the ISR
holds every adding replica, though target replicas it keeps are out of the ISR (Kafka 3.3 to
3.7; KAFKA-15665, apache/kafka#15359, Kafka 3.8.0:
``PartitionReassignmentReplicas.maybeCompleteReassignment`` needs ``newTargetIsr.containsAll(
newTargetReplicas)``).

    isr check --protocol-file examples/protocols/kraft_reassignment_below_min_isr.py \
        --replicas 3 --records 0 --epochs 2 --crashes 0 --min-isr 2 --reassignments 1 \
        --invariant ReassignmentKeepsMinIsr

Three brokers, replicas [0, 1], broker 2 a spare, min.insync.replicas 2. Follower 1's
controlled shutdown takes it out of the ISR (ISR [0], ELR [1]); the operator moves the
partition to [1, 2] (adding 2, removing 0); broker 2 follows the leader, catches up and the
leader's AlterPartition asks for ISR [0, 2]. That completes the reassignment on the old rule:
the replicas become [1, 2], the ISR [2] alone, below min ISR, broker 2 is elected leader, and
the ELR now holds broker 0, a replica that was removed (ReassignmentKeepsMinIsr, 8 steps). The
built-in ``kraft`` (and ``kraft-4.0``) records ISR [0, 2] and waits for broker 1 to rejoin.
``kraft-3.7`` has this rule as released (its ELR off, so only the ISR below min ISR remains).
"""

from isr.spec.protocols.kraft import Kraft


class KraftReassignmentBelowMinIsr(Kraft):
    name = "kraft-reassignment-below-min-isr"
    description = (
        "kraft, but a reassignment completes once the ISR holds the adding replicas (before"
        " KAFKA-15665)"
    )
    reassignment_needs_full_isr = False


PROTOCOL = KraftReassignmentBelowMinIsr()
