"""kip-320 with one producer-state fix taken back: KAFKA-7190 (Kafka 2.5, KIP-360). Before it,
a broker forgot an idempotent producer once retention had deleted the producer's last batch
(``ProducerStateManager.truncateHead`` when the log start offset moved; a reload kept only
producers with a batch at or above the log start).

    isr check --protocol-file examples/protocols/kip320_forget_producer_state.py \
        --replicas 2 --records 1 --epochs 1 --crashes 0 --retries 1 --idempotence --retention

NoDuplicates fails in 4 steps, no crash, no leader change: the leader, alone in the ISR, takes
record 1 and acknowledges it (the answer is lost), retention deletes it, and the producer's
retry finds no state for it, so the leader appends record 1 a second time (any sequence is
accepted from a producer the broker does not know, KAFKA-8710). With the fix (the built-in
versions, ``retain_producer_state = True``) the leader still knows the batch and answers with
its offset: NoDuplicates and every other safety property hold at these bounds. At 2 epochs the fix still fails, in 9
steps: a follower reset to the leader's log start drops its producer state
(``UnifiedLog.truncateFullyAndStartAt``) and is later elected (docs/findings.md).
"""

from isr.spec.protocols.kip_320 import Kip320


class Kip320ForgetProducerState(Kip320):
    name = "kip-320-forget-producer-state"
    description = (
        "kip-320, but a broker forgets a producer whose last batch retention deleted"
        " (before KAFKA-7190)"
    )
    retain_producer_state = False


PROTOCOL = Kip320ForgetProducerState()
