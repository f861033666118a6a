"""A withdrawn finding, kept to show what it took: kraft as the spec had it before issue 25
read Kafka 4.x (the fence apart from the ISR removal, no unclean-shutdown handling of a
registration without --lose-unflushed), with the leader-epoch checkpoint written after a
truncation (Kafka 3.8+: KAFKA-16541's fix, #15993, ``LeaderEpochFileCache.
truncateFromEndAsyncFlush``; 3.7 still wrote it with the truncation, without fsync).

    isr simulate --protocol-file examples/protocols/kraft_async_epoch_checkpoint.py \
        --replicas 2 --records 2 --epochs 3 --crashes 1 --invariant StrongIsr

A crash between the truncation and the write brings back, at the restart, an epoch the
truncation had removed. If the log has meanwhile grown past that epoch's start with records of
an older epoch (which assign no new cache entry, so write no checkpoint), the stale entry
survives the restart's truncation of the cache to the log end; the follower's next fetch then
carries that epoch, the leader's answer diverges there, and the follower truncates to its own
(stale) end of the older epoch: a committed record is cut from the restarted follower. In this
version that follower registered again before the controller removed it from the ISR, so the
cut broke StrongIsr (25 steps at 2 replicas, 2 records, 3 epochs, 1 crash; tests/spec/
test_kraft.py test_a_stale_epoch_checkpoint_truncates_a_committed_record_only_in_the_old_spec).

Kafka cannot take that path: the crashed follower is fenced and removed from the ISR in one
batch (``ReplicationControlManager.handleBrokerFenced``) before its new incarnation can register
(``ClusterControlManager.registerBroker`` refuses it while the old session is valid), and it
rejoins only through an AlterPartition after a counted fetch at or above the HW, which a
diverging fetch is not. The built-in ``kraft`` (4.1+), ``kraft-4.0`` (both with the
asynchronous write) and ``kraft-3.7`` (the write with the truncation) keep StrongIsr on the
same story.
"""

from isr.spec.protocols.kraft import Kraft


class KraftAsyncEpochCheckpoint(Kraft):
    name = "kraft-async-epoch-checkpoint"
    description = (
        "kraft before issue 25 (the fence apart from the ISR removal) with the epoch checkpoint"
        " written after a truncation: the withdrawn 25-step StrongIsr story"
    )
    sync_truncation_ckpt = False
    atomic_fence = False
    unfence_on_heartbeat = False
    unclean_shutdown_on_register = False


PROTOCOL = KraftAsyncEpochCheckpoint()
