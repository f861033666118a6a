"""The leader-epoch cache, Kafka's LeaderEpochFileCache (KIP-101, KIP-279; issue 18 item 4,
docs/design/kraft.md §4): pure functions over a cache, a tuple (or list) of (epoch, start
offset) entries, epochs and start offsets increasing.

Two things live here. The OffsetsForLeaderEpoch lookups, release by release (KAFKA-7415):
``end_offset_kip101`` (Kafka 0.11-1.1), ``end_offset_kip279`` (2.0) and ``end_offset`` (2.1+),
and the follower's use of an answer, ``truncation_state`` (``AbstractFetcherThread.
getOffsetTruncationState``, 2.0+). Every version that asks the leader calls them, on whichever
cache it keeps: the ZooKeeper-era versions derive it from the log (spec/log.py
``epoch_starts``: the epochs of the batches appended, and, from 2.1, the leader's current epoch
at the LEO it had when it became leader); ``kraft`` keeps it as its own state.

And the cache as state (``kraft`` with ``epoch_cache``): unlike the derived one it keeps epochs
without records (a leader's epoch from the moment it became leader, even if it wrote nothing
and then lost leadership), is truncated with the log, and has a checkpoint file of its own
(``Kraft.epoch_ckpt``) from which a restarted broker rebuilds it (R13), and is truncated from
the start when the log start offset moves (``truncate_from_start``: retention, DeleteRecords,
a follower taking up its leader's log start; R12). Not modelled: log recovery's
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


def end_offset_kip101(cache: Cache, leo: int, requested: int) -> int:
    """OffsetsForLeaderEpoch as Kafka 0.11 to 1.1 answer it (KIP-101; core/.../server/epoch/
    LeaderEpochFileCache.scala ``endOffsetFor`` at 0.11.0.0 and 1.1.0): the end offset alone.

    * ``requested`` is the cache's latest epoch: the LEO;
    * no epoch above it, or ``requested`` below every entry: UNDEFINED (the follower falls
      back to its high watermark);
    * else the start of the first epoch above it.
    An empty cache's latest epoch is UNDEFINED, so it answers UNDEFINED to every epoch >= 0."""
    if cache and requested == cache[-1][0]:
        return leo
    if not cache or requested < cache[0][0]:
        return UNDEFINED
    for epoch, start in cache:
        if epoch > requested:
            return start
    return UNDEFINED


def end_offset_kip279(cache: Cache, leo: int, requested: int) -> tuple[int, int]:
    """OffsetsForLeaderEpoch as Kafka 2.0 answers it (KIP-279, KAFKA-6361; LeaderEpochFileCache.
    scala ``endOffsetFor`` at 2.0.0), on the leader and on the follower's own cache alike:

    * ``requested`` is the cache's latest epoch: (requested, the LEO);
    * no epoch above it, or ``requested`` below every entry (an empty cache too): (UNDEFINED,
      UNDEFINED);
    * else (the largest epoch <= requested, the start of the first epoch above it)."""
    if cache and requested == cache[-1][0]:
        return requested, leo
    if not cache or requested < cache[0][0] or requested > cache[-1][0]:
        return UNDEFINED, UNDEFINED
    floor = 0
    for i, (epoch, _) in enumerate(cache):
        if epoch <= requested:
            floor = i
    return cache[floor][0], cache[floor + 1][1]


def end_offset(cache: Cache, leo: int, requested: int) -> tuple[int, int]:
    """OffsetsForLeaderEpoch on a cache, as ``LeaderEpochFileCache.endOffsetFor`` answers it
    since Kafka 2.1 (KAFKA-7415, apache/kafka f2dd6aa2698; storage/.../epoch/
    LeaderEpochFileCache.java in 4.x):

    * ``requested`` is the latest epoch: (requested, the LEO);
    * below it: (the largest epoch <= requested, the start of the next entry);
    * below every entry: (requested, the first entry's start) -- "the data has already been
      removed from the log" and the asker should replicate from the leader's first epoch, so a
      follower whose epochs the leader never had truncates to where the leader's begin;
    * an empty cache, or an epoch above the latest: (UNDEFINED, UNDEFINED).
    (Kafka 2.0 answered UNDEFINED below every entry: ``end_offset_kip279``.) Any list of
    (epoch, start) entries will do: the versions without a cache of their own pass
    ``spec.log.epoch_starts``."""
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


def truncation_state(
    end_offset_for, cache: Cache, leo: int, fetch_offset: int, epoch: int, end: int
) -> tuple[int, bool]:
    """Where a follower truncates on the leader's answer (``epoch``, ``end``), and whether it is
    done: Kafka's ``AbstractFetcherThread.getOffsetTruncationState`` (2.0+; the same cases in
    2.0.0, 2.1.0 and 4.x), with the follower's own lookup ``end_offset_for`` on its ``cache``
    (its log end ``leo``): ``end_offset_kip279`` in 2.0, ``end_offset`` from 2.1.

    * the answer has no offset (UNDEFINED): to the fetch offset (the HW a new follower's
      fetcher starts from, or the point of the previous round), done;
    * the follower knows no epoch <= ``epoch`` (its lookup is UNDEFINED, which 2.1's lookup
      gives only on an empty cache): to the leader's end offset, done;
    * its largest epoch <= ``epoch`` is below it: to that epoch's end, not done (it asks again
      with its new latest epoch: KIP-279's walk back);
    * else to the smaller of the two end offsets, done.
    Never past its LEO (``Log.truncateTo`` ignores an offset at or past it)."""
    if end == UNDEFINED:
        return min(fetch_offset, leo), True
    own_epoch, own_end = end_offset_for(cache, leo, epoch)
    if own_end == UNDEFINED:
        return min(end, leo), True
    if own_epoch != epoch:
        return min(own_end, leo), False
    return min(own_end, end, leo), True


def epoch_start(cache: Cache, epoch: int, leo: int) -> int:
    """Where ``epoch`` starts by the cache; the LEO if the cache does not know it."""
    for e, start in cache:
        if e == epoch:
            return start
    return leo
