"""The partition log as the core sees it: entries, LEO, HW and the leader-epoch cache (R3, R4).

This is in-memory state; durability is the runtime's job (effects ``Append``/``Truncate``, the
``impl.storage`` log). Every entry carries the leader epoch it was written in (KIP-101). Log start
offset (R12) moves up with the kraft version's DeleteRecords and retention (``delete_before``,
impl/core/logstart.py) and a follower's reset to its leader's (``reset_to``); entries below it
are gone, and the leader-epoch cache derived from the log (``epochs``) starts at it, as Kafka's
``LeaderEpochFileCache.truncateFromStart`` leaves the cache (an epoch with no retained record
is not kept: the derived cache has no epoch without a record).
"""

from __future__ import annotations

from .messages import Entry
from .producer_state import ProducerState


class PartitionLog:
    def __init__(self, entries: list[Entry] | None = None, log_start: int = 0, hw: int = 0) -> None:
        self.log_start = log_start
        self.entries: list[Entry] = list(entries or [])
        self.hw = min(hw, self.leo)  # R4: HW <= LEO always
        # idempotent producers: each producer's epoch and last five batches, derived from the
        # log's batch headers as Kafka's ProducerStateManager (impl/core/producer_state.py)
        self.producers = ProducerState()
        self._index(0)

    def _index(self, start: int) -> None:
        for i in range(start, len(self.entries)):
            e = self.entries[i]
            if len(e) >= 5:
                pepoch = e[5] if len(e) >= 6 else 0  # type: ignore[misc]
                self.producers.add(e[3], pepoch, e[4], self.log_start + i)  # type: ignore[misc]

    def _rebuild_producers(self) -> None:
        """A truncation or a deletion: the state replayed from the log (``rebuildProducerState``)."""
        self.producers.rebuild(self.entries, self.log_start)

    # -- offsets ---------------------------------------------------------------------------------
    @property
    def leo(self) -> int:
        """R3: the offset the next record will get."""
        return self.log_start + len(self.entries)

    def entry(self, offset: int) -> Entry:
        return self.entries[offset - self.log_start]

    def read(self, offset: int, max_records: int, limit: int | None = None) -> tuple[Entry, ...]:
        end = self.leo if limit is None else min(limit, self.leo)
        if offset >= end or offset < self.log_start:
            return ()
        lo = offset - self.log_start
        hi = min(end, offset + max_records) - self.log_start
        return tuple(self.entries[lo:hi])

    # -- mutation --------------------------------------------------------------------------------
    def append(self, entries: tuple[Entry, ...] | list[Entry]) -> int:
        base = self.leo
        n = len(self.entries)
        self.entries.extend(entries)
        self._index(n)
        return base

    def truncate_to(self, offset: int) -> None:
        """Drop every entry at or above ``offset``; HW follows down (R4 HW <= LEO)."""
        offset = max(offset, self.log_start)
        if offset < self.leo:
            del self.entries[offset - self.log_start :]
            self._rebuild_producers()
        self.hw = min(self.hw, self.leo)

    def delete_before(self, offset: int) -> int:
        """R12: the log start offset moves up to ``offset`` (at most the LEO), deleting every
        entry below it (Kafka's ``UnifiedLog.maybeIncrementLogStartOffset`` for DeleteRecords
        and a follower taking up its leader's log start, ``deleteOldSegments`` for retention).
        The HW is the caller's to keep at or above it. Returns how many entries went."""
        offset = min(offset, self.leo)
        n = offset - self.log_start
        if n <= 0:
            return 0
        del self.entries[:n]
        self.log_start = offset
        self._rebuild_producers()  # (the deleted batches forgotten: before KAFKA-7190)
        return n

    def reset_to(self, start: int) -> None:
        """R12: the leader no longer has our offsets; drop everything and start at ``start``."""
        self.entries.clear()
        self.producers.rebuild([], start)
        self.log_start = start
        self.hw = start

    # -- leader-epoch cache (KIP-101) ------------------------------------------------------------
    def epochs(self) -> list[tuple[int, int]]:
        """(epoch, start offset) for every epoch present in the log, ascending."""
        out: list[tuple[int, int]] = []
        last = None
        for i, e in enumerate(self.entries):
            if e[0] != last:
                out.append((e[0], self.log_start + i))
                last = e[0]
        return out

    def latest_epoch(self) -> int:
        return self.entries[-1][0] if self.entries else -1

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """KIP-279 answer: (largest epoch <= ``epoch`` present here, the end offset of it).

        The end offset of an epoch is the start offset of the next epoch, or LEO for the latest.
        If no such epoch exists, (-1, log_start). (The answers per release are
        impl/core/truncation.py's.)
        """
        cache = self.epochs()
        best = -1
        end = self.log_start
        for i, (ep, _start) in enumerate(cache):
            if ep <= epoch:
                best = ep
                end = cache[i + 1][1] if i + 1 < len(cache) else self.leo
        return best, end

    def view(self) -> list[list[object]]:
        """The trace's view of the log: [record_id, epoch] pairs (``trace_entry``)."""
        return [trace_entry(e) for e in self.entries]


def trace_entry(e: Entry) -> list[object]:
    """An entry as the trace shows it (FORMAT.md): [record id, leader epoch], and for an
    idempotent producer's batch its header, [.., producer epoch, sequence] (the spec's
    --idempotence log entries; the producer id is not shown: the spec has one producer)."""
    if len(e) >= 5:
        return [e[1], e[0], e[5] if len(e) >= 6 else 0, e[4]]  # type: ignore[misc]
    return [e[1], e[0]]
