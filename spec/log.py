"""Pure functions over a replica's log: the leader-epoch cache derived from it (KIP-101, KIP-279).

An epoch's start offset is the offset of its first entry: what Kafka's LeaderEpochFileCache
holds once every batch appended assigned its epoch (``Log.append``; Kafka 0.11 to 2.0 assign
an epoch nowhere else). From Kafka 2.1 (KAFKA-7415) a leader also assigns its current epoch
when it becomes leader, at its LEO of that moment (``Partition.makeLeader``), before any record
is written: ``epoch_starts(log, leader_epoch)``. A leader never truncates, so that offset is
where its current-epoch entries start, or its LEO if it has written none. The derived cache
forgets an epoch a replica led without writing and then lost, which Kafka's file keeps until
the next record or truncation replaces it; only a follower's question can tell (it asks with
its cache's latest epoch: docs/design/kraft.md, "The answer for an epoch the leader never
had"). The OffsetsForLeaderEpoch lookups on such a list are in spec/epoch_cache.py. The
``kraft`` version keeps the cache as its own state with its checkpoint file instead, unless
its ``epoch_cache`` flag is off.
"""

from __future__ import annotations

from .state import Log

UNDEFINED = -1


def leo(log: Log) -> int:
    return len(log)


def last_epoch(log: Log) -> int:
    return log[-1][1] if log else 0


def epoch_starts(log: Log, leader_epoch: int | None = None) -> list[tuple[int, int]]:
    """[(epoch, start offset)] in increasing order; the leader's current epoch is appended at the
    LEO when it has no entry yet."""
    if type(log) is tuple:
        starts: list[tuple[int, int]] = []
        prev = None
        for offset, entry in enumerate(log):
            epoch = entry[1]
            if epoch != prev:
                starts.append((epoch, offset))
                prev = epoch
    else:  # a SharedLog keeps its epoch starts (spec.shared_log)
        starts = log.epoch_starts()
    if leader_epoch is not None and (not starts or starts[-1][0] < leader_epoch):
        starts.append((leader_epoch, len(log)))
    return starts


def epoch_start(log: Log, epoch: int) -> int:
    """Where ``epoch``'s entries start in ``log``; its LEO if it has none (a leader's current
    epoch before its first write)."""
    for e, start in epoch_starts(log):
        if e == epoch:
            return start
    return len(log)
