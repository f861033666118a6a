"""The visited set: 64-bit fingerprints in one flat array.

An open-addressing hash table (linear probing) over ``array('q')``: 8 bytes a slot, kept at most
three quarters full, so 10.7 to 21 bytes per distinct state — against roughly 70 for a Python
``set`` of int objects. The parent links a counterexample is rebuilt from are kept apart, level by
level (:mod:`checker.store`). Fingerprints are already uniform 64-bit hashes, so their low bits
index the table directly. 0 marks an empty slot; no fingerprint is 0
(:func:`checker.fingerprint.fingerprint` maps a zero hash to ``ZERO_STANDIN``).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator

_MIN_CAPACITY = 1 << 10


class FingerprintSet:
    """The visited set (the parent links are kept apart: :mod:`checker.store`): 8 bytes a slot,
    kept at most three quarters full, so 10.7 to 21 bytes per distinct state (at 10**8 states,
    2**27 slots: 10.7). Linear probing stays short at that load because fingerprints are
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
