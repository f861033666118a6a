"""Pure functions over a replica's log: leader-epoch cache lookups (KIP-101, KIP-279).

The leader-epoch cache is derived from the log itself: an epoch's start offset is the offset of
its first entry. A leader also holds its own current epoch from the moment it became leader, at
the LEO of that moment (Kafka's ``makeLeader`` assigns it before any record is written); since a
leader never truncates, that offset is where its current-epoch entries start, or its LEO if it has
written none. Epochs that a replica led without writing and later lost are forgotten here, where
Kafka's cache file would keep them; the difference only affects the UNDEFINED answers below.
The ``kraft`` version keeps the cache as its own state with its checkpoint file instead
(spec/epoch_cache.py), unless its ``epoch_cache`` flag is off.
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


def end_offset_kip101(log: Log, leader_epoch: int, requested: int) -> int:
    """KIP-101 OffsetsForLeaderEpoch on the leader: the end offset of ``requested`` = the start
    offset of the first epoch above it, or the LEO if ``requested`` is the leader's current epoch;
    UNDEFINED when the leader knows no epoch above it."""
    if requested == leader_epoch:
        return len(log)
    for epoch, start in epoch_starts(log, leader_epoch):
        if epoch > requested:
            return start
    return UNDEFINED


def end_offset_kip279(log: Log, leader_epoch: int | None, requested: int) -> tuple[int, int]:
    """KIP-279 OffsetsForLeaderEpoch: (the largest epoch <= requested that this log knows, its end
    offset). (UNDEFINED, UNDEFINED) when every known epoch is above ``requested``."""
    starts = epoch_starts(log, leader_epoch)
    found = UNDEFINED
    end = UNDEFINED
    for i, (epoch, _) in enumerate(starts):
        if epoch <= requested:
            found = epoch
            end = starts[i + 1][1] if i + 1 < len(starts) else len(log)
    return found, end
