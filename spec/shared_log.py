"""A persistent representation of a replica's log, with the value semantics of a tuple (R3).

The spec's logs are values: a step builds a new log from an old one (append, prefix, append a
leader's suffix) and the old value stays valid in every state that holds it. Tuples give that
semantics at O(length) per append, which is right for the model checker (its logs hold a few
entries) and wrong for trace validation, where one log grows to tens of thousands of entries
and each event would copy it: validation time would grow with the square of the trace length.

``SharedLog`` is a view ``entries[:n]`` of an append-only buffer. The buffer only ever grows
at its end, so every view of it is immutable, and logs that agree on a prefix share one buffer:

* taking a prefix (``log[:k]``, truncation, crash, restart) is O(1);
* appending ``e`` to ``entries[:n]`` is O(1) when ``n`` is the buffer's end (the leader) or the
  buffer already holds ``e`` at ``n`` (a follower copying its leader); otherwise the prefix is
  copied into a new buffer, O(n), which happens when logs diverge (a new leader writing over
  an old leader's uncommitted tail), not per record;
* ``len``, indexing, ``hash`` (kept per prefix in the buffer) and the epoch-start lookups of
  KIP-101/279 (kept per buffer, so no scan of the log) are O(1) or O(epochs);
* equality is O(1) for views of one buffer, and compares hashes before entries otherwise.

Slices that do not start at 0 return a plain tuple of the entries (the delta a fetch carries).
The spec's actions only use these operations, so the same action code runs on tuples in the
checker and on shared logs in the validator (``traces.validator.partition``). Logs of both kinds are never
mixed in one state: hashes differ between the two representations.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import Any

Entry = tuple[int, int]

_SEED = 0x9E3779B97F4A7C15
_MASK = (1 << 61) - 1


class _Buffer:
    """Append-only entries, the hash of every prefix, and where each epoch starts."""

    __slots__ = ("entries", "epochs", "hashes", "starts")

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self.hashes: list[int] = [_SEED]  # hashes[k]: hash of entries[:k]
        self.epochs: list[int] = []  # epochs[j] begins at offset starts[j]
        self.starts: list[int] = []

    def push(self, e: Entry) -> None:
        ep = e[1]
        if not self.epochs or self.epochs[-1] != ep:
            self.epochs.append(ep)
            self.starts.append(len(self.entries))
        self.entries.append(e)
        self.hashes.append((self.hashes[-1] * 1_000_003 + hash(e)) & _MASK)

    def fork(self, n: int) -> _Buffer:
        b = _Buffer()
        b.entries = self.entries[:n]
        b.hashes = self.hashes[: n + 1]
        j = bisect_left(self.starts, n)
        b.epochs = self.epochs[:j]
        b.starts = self.starts[:j]
        return b


class SharedLog:
    """``entries[:n]`` of a shared append-only buffer; behaves as ``tuple[Entry, ...]``."""

    __slots__ = ("_b", "_n")

    def __init__(self, buf: _Buffer, n: int) -> None:
        self._b = buf
        self._n = n

    @classmethod
    def of(cls, entries: Iterable[Entry] = ()) -> SharedLog:
        b = _Buffer()
        for e in entries:
            b.push(tuple(e))  # type: ignore[arg-type]
        return cls(b, len(b.entries))

    # ---- sequence ------------------------------------------------------------------------
    def __len__(self) -> int:
        return self._n

    def __bool__(self) -> bool:
        return self._n > 0

    def __getitem__(self, i: Any) -> Any:
        n = self._n
        if isinstance(i, slice):
            start, stop, step = i.indices(n)
            if start == 0 and step == 1:
                return self if stop == n else SharedLog(self._b, max(stop, 0))
            return tuple(self._b.entries[start:stop:step])
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("log index out of range")
        return self._b.entries[i]

    def __iter__(self) -> Iterator[Entry]:
        return islice(self._b.entries, self._n)

    def __reversed__(self) -> Iterator[Entry]:
        e = self._b.entries
        return (e[k] for k in range(self._n - 1, -1, -1))

    def __add__(self, other: Iterable[Entry]) -> SharedLog:
        b, n = self._b, self._n
        for e in other:
            if n < len(b.entries):
                if b.entries[n] == e:
                    n += 1
                    continue
                b = b.fork(n)  # divergence: this log leaves the shared buffer
            b.push(e)
            n += 1
        if b is self._b and n == self._n:
            return self
        return SharedLog(b, n)

    def __radd__(self, other: Iterable[Entry]) -> SharedLog:
        return SharedLog.of(other) + self

    # ---- value semantics -------------------------------------------------------------------
    def __hash__(self) -> int:
        return self._b.hashes[self._n]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SharedLog):
            if self._n != other._n:
                return False
            if self._b is other._b:
                return True
            if hash(self) != hash(other):
                return False
            return self._b.entries[: self._n] == other._b.entries[: other._n]
        if isinstance(other, tuple):
            return len(other) == self._n and tuple(self) == other
        return NotImplemented

    def __repr__(self) -> str:
        return f"SharedLog({list(self)!r})"

    def __reduce__(self) -> tuple:
        return (SharedLog.of, (list(self),))

    # ---- the leader-epoch cache (spec.log) -----------------------------------------------
    def epoch_starts(self) -> list[tuple[int, int]]:
        """[(epoch, start offset)] of this log's entries, in increasing order, without a scan."""
        b = self._b
        j = bisect_left(b.starts, self._n)
        return list(zip(b.epochs[:j], b.starts[:j], strict=True))
