"""kraft with one guard removed: a leader whose AlterPartition is refused as stale drops the
pending ISR change at once and falls back to its ISR, instead of keeping the change pending
until newer partition state overrides it (issue 28 item 2; spec/protocols/kraft.py).

    isr check --protocol-file examples/protocols/kraft_drop_pending_on_refusal.py \
        --replicas 2 --records 1 --epochs 2 --crashes 0 --controller-failovers 1

Why Kafka keeps it (since AlterIsr, KIP-497, Kafka 2.7.0: ``Partition.handleAlterIsrResponse``;
today ``Partition.handleAlterPartitionError`` returns false on INVALID_UPDATE_VERSION and
FENCED_LEADER_EPOCH, "awaiting new the latest metadata"): the channel manager re-sends an
AlterPartition whose answer was lost, so a refusal as stale may answer a retry of a change the
controller already applied. The leader cannot tell, and the change may be in the recorded ISR.
Dropping it, the leader's HW no longer waits for a follower the controller now counts in the
ISR. The checker finds it in 10 steps with no crash (NoCommittedLoss; StrongIsr in 8): the
leader asks to add a caught-up follower back, takes a record, the controller records the
expansion but the answer is lost, the controller moves leadership to the follower, and the
retry's refusal lets the old leader, not yet told, commit the record alone. With the released
rule (``keep_pending_on_refusal = True``, the built-in ``kraft``) every safety property holds
at these bounds (316,272 states).
"""

from isr.spec.protocols.kraft import Kraft


class KraftDropPendingOnRefusal(Kraft):
    name = "kraft-drop-pending-on-refusal"
    description = (
        "kraft, but a leader drops a pending ISR change when the controller refuses it as stale"
    )
    keep_pending_on_refusal = False


PROTOCOL = KraftDropPendingOnRefusal()
