"""kraft with KIP-704's leader recovery as the KIP designed it, and one check removed: the
controller accepts an ISR expansion from a leader still RECOVERING after an unclean election
(KIP-704, Kafka 3.2.0, KAFKA-13587 / apache/kafka#11733:
``ReplicationControlManager.validateAlterPartitionData`` answers INVALID_REQUEST to an
AlterPartition that says RECOVERING with more than the leader in its ISR).

    isr check --protocol-file examples/protocols/kraft_recovering_isr_expansion.py \
        --replicas 2 --records 0 --epochs 2 --crashes 1 --unclean \
        --invariant RecoveringIsrAlone

The follower leaves the ISR, the leader crashes and is fenced, and the follower is elected
uncleanly: the partition is RECOVERING. The old leader restarts, registers, follows and
fetches; the new leader, which has not recovered (its recovery is its own step here,
LeaderCompleteRecovery, as KIP-704 designed it), proposes to add it, and the controller
accepts: the ISR holds a replica that copied an unrecovered leader (RecoveringIsrAlone, 12
steps). With the check (``recovering_isr_check``, this class's parent with the same recovery
flags) RecoveringIsrAlone and every safety property hold at these bounds.

What Kafka releases do: ``Partition.makeLeader`` marks the partition RECOVERED on becoming
leader (log recovery is not implemented), so the first AlterPartition says RECOVERED and the
check never refuses one (``leader_recovers_at_once``, the built-in default). What the recovery
would protect, the producer and transaction state, is not in the spec; the refusal of a
recovering leader's follower fetches (KAFKA-13754) is open in Kafka and not modelled.
"""

from isr.spec.protocols.kraft import Kraft


class KraftRecoveringIsrExpansion(Kraft):
    name = "kraft-recovering-isr-expansion"
    description = (
        "kraft with KIP-704's stepwise leader recovery, but the controller accepts an ISR"
        " expansion from a leader still RECOVERING"
    )
    leader_recovery_state = True
    leader_recovers_at_once = False
    recovering_isr_check = False


PROTOCOL = KraftRecoveringIsrExpansion()
