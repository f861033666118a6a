"""kraft: Kafka 3.7+/4.x replication with the KRaft controller, as far as issue 18's steps 1 to 3
go (docs/design/kraft.md).

What it changes from kip-966 (whose election rules it keeps: ELR, the HW needs min ISR, an
unclean shutdown makes a replica ineligible, broker epochs fence a previous incarnation):
* the fetch is a request and a delayed response (FollowerSendFetch, LeaderHandleFetch,
  FollowerHandleFetchResponse, spec/actions/fetch.py), at most one in flight per follower; the
  response carries the HW the leader read with the records, before it applied this fetch
  (KAFKA-7104);
* no truncation phase: the leader answers a fetch whose last fetched epoch disagrees with its log
  with a DivergingEpoch, and the follower truncates by KIP-279's rule on receipt (Kafka 2.7+);
* ISR changes are asynchronous AlterPartition requests (LeaderSendAlterPartition,
  ControllerHandleAlterPartition, spec/actions/alter_partition.py): while one is in flight the
  leader's HW counts the maximal ISR (the current one with the proposed additions), and the
  controller checks the added follower's broker epoch (KIP-903);
* the partition epoch is apart from the leader epoch (KAFKA-15021): an ISR change (an accepted
  AlterPartition, the controller's shrink of a gone follower, a controlled shutdown of a
  follower, an unclean registration) bumps only the partition epoch and is told to the leader
  (BrokerApplyPartitionChange), which keeps its followers' fetch state; fetches, fenced by the
  leader epoch only, go on across it; an AlterPartition built on an older partition epoch is
  refused (INVALID_UPDATE_VERSION);
* KIP-841: a crashed broker is fenced, a restarted one registers apart (BrokerRegister: new
  broker epoch, unfenced), a running one may be fenced (ControllerFenceBroker, counted as a
  crash), a controlled shutdown marks the broker shutting down; fenced and shutting-down brokers
  are neither elected nor let back into the ISR (INELIGIBLE_REPLICA).
* KIP-392: the one consumer reads at its position from the leader or a follower, below that
  replica's HW (ConsumerFetch(replica)); an out-of-range position at the leader resets it
  (ConsumerResetOffset), which MonotonicReads reports.
Not yet: the epoch cache with its own checkpoint, lost fetches and AlterPartitions.

Each guard is a flag, so a test can put a known bug back with ``KRAFT.variant(flag=...)``.
"""

from __future__ import annotations

from .kip_966 import Kip966


class Kraft(Kip966):
    name = "kraft"
    description = (
        "Kafka 3.7+/4.x (issue 18, steps 1-2): kip-966's election rules with the fetch split into"
        " request and delayed response, DivergingEpoch truncation, broker epochs, asynchronous"
        " AlterPartition with the maximal ISR, the partition epoch apart from the leader epoch,"
        " KIP-841 fenced and shutting-down brokers, and KIP-392 follower reads"
    )
    split_fetch = True
    response_guard = True  # a response is applied only if the follower's fetch offset and
    # leader epoch did not change while it was in flight (AbstractFetcherThread; KAFKA-18991)
    fresh_hw_in_response = False  # True: the response carries the HW after the leader applied
    # the fetch (before KAFKA-7104) instead of the one read with the records
    count_diverging_fetch = False  # True: the leader counts a diverging fetch's offset as the
    # follower's LEO (KAFKA-13141's bug) instead of ignoring it
    fence_stale_fetch = True  # a fetch whose broker epoch is older than the one the leader last
    # counted for that follower is rejected, STALE_BROKER_EPOCH (KAFKA-15221)
    broker_epoch_check = True  # KIP-903: the controller accepts an ISR expansion only if the
    # broker epoch of the fetch that justified it is the follower's registered one
    partition_epoch_check = True  # the controller refuses an AlterPartition built on an older
    # partition epoch (INVALID_UPDATE_VERSION); False: it checks the leader epoch only
    ineligible_replica_check = True  # KIP-841: the controller refuses an AlterPartition whose
    # new ISR holds a fenced or shutting-down broker (INELIGIBLE_REPLICA)
    maximal_isr = True  # the HW counts the ISR with the proposed additions while an
    # AlterPartition is in flight; False: the proposed ISR alone
    follower_reads = True  # KIP-392: the consumer may read from a follower; False: only from
    # a replica that presumes to lead (before Kafka 2.4)
    follower_reads_below_hw = True  # a follower serves consumers only below its HW; False:
    # up to its LEO (the bug: it shows records that are not committed)
    epoch_cache = True  # the leader-epoch cache is its own state with a checkpoint file
    # (spec.epoch_cache; epochs without records are kept); False: derived from the log
    # (spec/log.py's epoch_starts, as the older versions do)
    sync_truncation_ckpt = True  # the checkpoint is written with a truncation of the cache
    # (Kafka before 3.7); False: later, by BrokerCheckpointEpochCache (KAFKA-15046 dropped the
    # fsync, KAFKA-16541's fix writes it asynchronously): a crash in between restores epochs
    # the truncation had removed


KRAFT = Kraft()
