"""kraft: the leader-epoch cache as its own state, Kafka's LeaderEpochFileCache (KIP-101, KIP-279;
issue 18 item 4, docs/design/kraft.md §4). Pure functions over a cache: a tuple of
(epoch, start offset) entries, epochs and start offsets increasing.

Unlike spec/log.py's ``epoch_starts``, which derives the cache from the log, this cache keeps
epochs without records (a leader's epoch from the moment it became leader, even if it wrote
nothing and then lost leadership), is truncated with the log, and has a checkpoint file of its
own (``Kraft.epoch_ckpt``) from which a restarted broker rebuilds it (R13), and is truncated
from the start when the log start offset moves (``truncate_from_start``: retention,
DeleteRecords, a follower taking up its leader's log start; R12). Not modelled: log recovery's
re-assignment of epochs from the batches above the recovery point (here every surviving
record is below it: the checkpoint alone rebuilds the cache, the case where a stale file
matters)."""

from __future__ import annotations

from .log import UNDEFINED

Cache = tuple[tuple[int, int], ...]


def latest_epoch(cache: Cache) -> int:
    """The epoch of the last entry, 0 when empty: a follower's last fetched epoch (Kafka's
    ``log.latestEpoch`` reads the cache, not the last record)."""
    return cache[-1][0] if cache else 0


def assign(cache: Cache, epoch: int, start: int) -> Cache:
    """LeaderEpochFileCache.assign: a new (epoch, start) entry, unless the latest entry already
    has that epoch and starts at or before ``start``; entries it contradicts (an epoch at or
    above ``epoch``, or a start at or after ``start``) are removed first (KAFKA-7415)."""
    if cache and cache[-1][0] == epoch and cache[-1][1] <= start:
        return cache
    kept = tuple(e for e in cache if e[0] < epoch and e[1] < start)
    return (*kept, (epoch, start))


def assign_records(cache: Cache, records, offset: int) -> Cache:
    """A follower appends ``records`` at ``offset``: each batch whose epoch is above the
    cache's latest is assigned at its offset (Kafka: ``maybeAssignEpochStartOffset`` for each
    batch of a newer epoch)."""
    for entry in records:
        epoch = entry[1]
        if epoch > latest_epoch(cache):
            cache = assign(cache, epoch, offset)
        offset += 1
    return cache


def truncate_from_end(cache: Cache, end: int) -> Cache:
    """LeaderEpochFileCache.truncateFromEnd: drop the entries starting at or after ``end`` (done
    even when ``end`` is at or past the log end: KAFKA-10706)."""
    if not cache or cache[-1][1] < end:
        return cache
    return tuple(e for e in cache if e[1] < end)


def truncate_from_start(cache: Cache, start: int) -> Cache:
    """LeaderEpochFileCache.truncateFromStart (Kafka 4.x ``truncateFromStartAsyncFlush``, the
    private ``truncateFromStart``): the entries starting at or below ``start`` are removed and
    the latest of them is put back at ``start`` ("truncateFromStart(6) will retain an entry at
    offset 6"), so every offset the cache names is in the log; the entries above ``start`` stay.
    Called when the log start offset moves up (``UnifiedLog.maybeIncrementLogStartOffset``) and
    by log loading with the log start offset (``LogLoader.load``)."""
    if not cache or cache[0][1] > start:
        return cache
    k = 0
    while k < len(cache) and cache[k][1] <= start:
        k += 1
    return ((cache[k - 1][0], start), *cache[k:])


def end_offset(cache: Cache, leo: int, requested: int) -> tuple[int, int]:
    """OffsetsForLeaderEpoch on a cache, as ``LeaderEpochFileCache.endOffsetFor`` answers it
    since Kafka 2.1 (KAFKA-7415; storage/.../epoch/LeaderEpochFileCache.java in 4.x):

    * ``requested`` is the latest epoch: (requested, the LEO);
    * below it: (the largest epoch <= requested, the start of the next entry);
    * below every entry: (requested, the first entry's start) -- "the data has already been
      removed from the log" and the asker should replicate from the leader's first epoch, so a
      follower whose epochs the leader never had truncates to where the leader's begin;
    * an empty cache, or an epoch above the latest: (UNDEFINED, UNDEFINED).
    (Kafka 2.0, KIP-279's first release, answered UNDEFINED below every entry too: spec/log.py's
    ``end_offset_kip279``, which kip-279 keeps.) Any list of (epoch, start) entries will do:
    the kraft variant without a cache passes ``spec.log.epoch_starts``."""
    if not cache or requested > cache[-1][0]:
        return UNDEFINED, UNDEFINED
    if requested == cache[-1][0]:
        return requested, leo
    floor = -1
    for i, (epoch, _) in enumerate(cache):
        if epoch <= requested:
            floor = i
    if floor < 0:
        return requested, cache[0][1]
    return cache[floor][0], cache[floor + 1][1]


def epoch_start(cache: Cache, epoch: int, leo: int) -> int:
    """Where ``epoch`` starts by the cache; the LEO if the cache does not know it."""
    for e, start in cache:
        if e == epoch:
            return start
    return leo
