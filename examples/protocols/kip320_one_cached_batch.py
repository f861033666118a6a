"""kip-320 with one producer-state fix taken back: KAFKA-5494 (Kafka 1.0). Kafka 0.11's broker
kept the metadata of an idempotent producer's last batch only, while its producer had one
request in flight (max.in.flight.requests.per.connection=1); 1.0 let the producer have five in
flight and the broker keep the last five batches (``ProducerStateEntry.NUM_BATCHES_TO_RETAIN``).

    isr check --protocol-file examples/protocols/kip320_one_cached_batch.py \
        --replicas 2 --records 2 --epochs 1 --crashes 0 --retries 2 --idempotence

NoDuplicates fails in 5 steps, no fault but a lost answer: the leader appends records 1 and 2
(sequences 0 and 1), the answer to record 1 is lost, and its retry is not the last batch the
leader keeps: OUT_OF_ORDER_SEQUENCE_NUMBER. For the producer that is the batch it expects next,
so it bumps its epoch (KIP-360) and sends record 1 again as sequence 0 of the new epoch, which
the leader appends. With the fix (the built-in versions, ``cache_five_batches = True``) the
retry is a duplicate the leader answers with its offset, and NoDuplicates and every other
safety property hold at these bounds.
"""

from isr.spec.protocols.kip_320 import Kip320


class Kip320OneCachedBatch(Kip320):
    name = "kip-320-one-cached-batch"
    description = "kip-320, but the leader keeps only an idempotent producer's last batch (0.11)"
    cache_five_batches = False


PROTOCOL = Kip320OneCachedBatch()
