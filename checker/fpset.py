"""The visited set: fingerprints with their parent fingerprints, in two flat arrays.

An open-addressing hash table (linear probing) over ``array('q')``: 16 bytes a slot, kept at most
half full, so about 32 bytes per distinct state with the parent link included — against roughly
85 for a Python ``set`` of int objects plus separate parent arrays. Fingerprints are already
uniform 64-bit hashes, so their low bits index the table directly. 0 marks an empty slot; the one
fingerprint is 0 (:func:`checker.fingerprint.fingerprint` maps a zero hash to ``ZERO_STANDIN``).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator

_MIN_CAPACITY = 1 << 10


class FingerprintTable:
    __slots__ = ("_fps", "_mask", "_parents", "_size")

    def __init__(self, capacity: int = _MIN_CAPACITY) -> None:
        cap = _MIN_CAPACITY
        while cap < 2 * capacity:
            cap <<= 1
        self._fps = array("q", bytes(8 * cap))
        self._parents = array("q", bytes(8 * cap))
        self._mask = cap - 1
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def add(self, fp: int, parent: int) -> bool:
        """Insert ``fp`` with its parent; False if it was already present. (checker.bfs inlines
        this in its hot loop: a change here is a change there.)"""
        fps = self._fps
        mask = self._mask
        i = fp & mask
        while True:
            v = fps[i]
            if v == 0:
                break
            if v == fp:
                return False
            i = (i + 1) & mask
        fps[i] = fp
        self._parents[i] = parent
        self._size += 1
        if self._size * 2 > mask:
            self._grow()
        return True

    def __contains__(self, fp: int) -> bool:
        fps = self._fps
        mask = self._mask
        i = fp & mask
        while True:
            v = fps[i]
            if v == fp:
                return True
            if v == 0:
                return False
            i = (i + 1) & mask

    def parent_of(self, fp: int) -> int:
        fps = self._fps
        mask = self._mask
        i = fp & mask
        while True:
            v = fps[i]
            if v == fp:
                return self._parents[i]
            if v == 0:
                raise KeyError(fp)
            i = (i + 1) & mask

    def items(self) -> Iterator[tuple[int, int]]:
        """(fingerprint, parent) pairs, in table order."""
        for fp, parent in zip(self._fps, self._parents, strict=True):
            if fp:
                yield fp, parent

    def _grow(self) -> None:
        old_fps, old_parents = self._fps, self._parents
        cap = (self._mask + 1) * 2
        fps = self._fps = array("q", bytes(8 * cap))
        parents = self._parents = array("q", bytes(8 * cap))
        mask = self._mask = cap - 1
        for fp, parent in zip(old_fps, old_parents, strict=True):
            if fp:
                i = fp & mask
                while fps[i]:
                    i = (i + 1) & mask
                fps[i] = fp
                parents[i] = parent


class ParentMap:
    """A read-only mapping view ``fp -> parent`` over a FingerprintTable (for path rebuilding)."""

    def __init__(self, table: FingerprintTable) -> None:
        self._table = table

    def __getitem__(self, fp: int) -> int:
        return self._table.parent_of(fp)

    def __len__(self) -> int:
        return len(self._table)


class FingerprintSet:
    """The visited set without parent links (those go to disk: :mod:`checker.store`): 8 bytes a
    slot, kept at most three quarters full, so 10.7 to 21 bytes per distinct state (at 10**8
    states, 2**27 slots: 10.7). Linear probing stays short at that load because fingerprints are
    uniform hashes. The engines inline :meth:`add` in their hot loops (a change here is a change
    there); they grow the table when ``_size > _limit``."""

    __slots__ = ("_fps", "_limit", "_mask", "_size")

    def __init__(self, capacity: int = _MIN_CAPACITY) -> None:
        cap = _MIN_CAPACITY
        while cap * 3 < 4 * capacity:
            cap <<= 1
        self._fps = array("q", bytes(8 * cap))
        self._mask = cap - 1
        self._limit = cap * 3 // 4
        self._size = 0

    def __len__(self) -> int:
        return self._size

    @property
    def nbytes(self) -> int:
        return 8 * (self._mask + 1)

    def add(self, fp: int) -> bool:
        """Insert ``fp``; False if it was already present."""
        fps = self._fps
        mask = self._mask
        i = fp & mask
        while True:
            v = fps[i]
            if v == 0:
                break
            if v == fp:
                return False
            i = (i + 1) & mask
        fps[i] = fp
        self._size += 1
        if self._size > self._limit:
            self._grow()
        return True

    def __contains__(self, fp: int) -> bool:
        fps = self._fps
        mask = self._mask
        i = fp & mask
        while True:
            v = fps[i]
            if v == fp:
                return True
            if v == 0:
                return False
            i = (i + 1) & mask

    def __iter__(self) -> Iterator[int]:
        for fp in self._fps:
            if fp:
                yield fp

    def _grow(self) -> None:
        old = self._fps
        cap = (self._mask + 1) * 2
        fps = self._fps = array("q", bytes(8 * cap))
        mask = self._mask = cap - 1
        self._limit = cap * 3 // 4
        for fp in old:
            if fp:
                i = fp & mask
                while fps[i]:
                    i = (i + 1) & mask
                fps[i] = fp
