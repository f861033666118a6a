"""kraft with the leader-epoch checkpoint written after a truncation, not with it (Kafka 3.7+:
KAFKA-15046 dropped the fsync, KAFKA-16541's fix writes it from a scheduler thread).

    isr simulate --protocol-file examples/protocols/kraft_async_epoch_checkpoint.py \
        --replicas 2 --records 2 --epochs 3 --crashes 1 --invariant StrongIsr

A crash between the truncation and the write brings back, at the restart, an epoch the
truncation had removed. If the log has meanwhile grown past that epoch's start with records of
an older epoch (which assign no new cache entry, so write no checkpoint), the stale entry
survives the restart's truncation of the cache to the log end; the follower's next fetch then
carries that epoch, the leader's answer diverges there, and the follower truncates to its own
(stale) end of the older epoch: a committed record is cut from an ISR member (StrongIsr). The
story is 25 steps at 2 replicas, 2 records, 3 epochs, 1 crash (tests/spec/test_kraft.py
test_a_stale_epoch_checkpoint_truncates_a_committed_record); it is beyond the exhaustive
search at those bounds here. The built-in ``kraft`` writes the checkpoint with the truncation
(Kafka before 3.7) and keeps the record.

What the model leaves out that Kafka has: log recovery re-reading the batches above the
recovery point (it re-assigns only epochs above the cache's latest, so it would not remove the
stale entry either); a checkpoint write torn by the OS crash (KAFKA-16541's corruption itself:
its fix fsyncs every write, which the model's whole writes assume).
"""

from isr.spec.protocols.kraft import Kraft


class KraftAsyncEpochCheckpoint(Kraft):
    name = "kraft-async-epoch-checkpoint"
    description = "kraft, but the epoch checkpoint is written after a truncation, not with it"
    sync_truncation_ckpt = False


PROTOCOL = KraftAsyncEpochCheckpoint()
