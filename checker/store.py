"""States on disk, fingerprints in memory: the store of a search too large for memory (issue 26).

TLC's design, in our terms: the visited set keeps 64-bit fingerprints only
(:class:`checker.fpset.FingerprintSet`, 11 to 21 bytes per state); the BFS queue is written to
disk level by level (:class:`LevelQueue`); the parent links go to disk too (:class:`TraceWriter`,
TLC's TLCTrace), one pair of files per level and per process, and a counterexample is rebuilt by
looking its fingerprints up there (:class:`DiskParents`), then replaying the model
(:mod:`checker.paths`), exactly as from the in-memory table: same counts, same verdicts, same
shortest counterexamples.

Layout of a store directory (every file raw little-endian int64 arrays, or chunks described
below)::

    trace/DDDDD-NAME.fps     fingerprints of the states first reached at depth DDDDD by NAME
    trace/DDDDD-NAME.par     their parents' fingerprints, entry for entry (an initial state is
                             its own parent)
    queue/DDDDD-NAME.states  the states of depth DDDDD that NAME will expand

A queue file is a sequence of chunks: an 8-byte header (payload bytes, states) and a zlib
(level 1) compressed ``marshal`` payload ``(fingerprints as bytes, [wire forms])``. The wire form
is the model's ``to_wire`` (plain nested tuples; checker.model), which marshal writes in C:
about 360 bytes a state before compression and 20 to 40 after, since neighbouring states share
most of their structure. ``marshal`` builds only plain values on reading, never runs code. Nothing
in a queue file is needed once its level is expanded (it is deleted then); the trace files are the
search's whole memory of the past: the union of their ``.fps`` is the visited set, which is how a
run resumes (:func:`visited_from_trace`).

Costs, measured on the default model (README's performance page): encoding and decoding a state
take about 6 us together, against about 29 us of search per distinct state, so a disk-store run is
some 10-20% slower than an in-memory one, at a tenth of the memory.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import shutil
import struct
import sys
import tempfile
import zlib
from array import array
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from .fpset import FingerprintSet
from .model import State

CHUNK = 2048  # states per queue chunk
TRACE_FLUSH = 1 << 15  # trace entries buffered before a write
_HEAD = struct.Struct("<QQ")  # payload bytes, states in the chunk
_LITTLE = sys.byteorder == "little"


def _identity(x: Any) -> Any:
    return x


def wire_codec(model: Any) -> tuple[Callable[[State], Any], Callable[[Any], State]]:
    """The model's (to_wire, from_wire) (checker.model: optional), or the identity twice, for a
    model whose states are plain tuples already."""
    to_wire = getattr(model, "to_wire", None)
    from_wire = getattr(model, "from_wire", None)
    if to_wire is None or from_wire is None:
        return _identity, _identity
    return to_wire, from_wire


def _le(a: array) -> bytes:
    if not _LITTLE:  # pragma: no cover - files are little-endian everywhere
        a = array("q", a)
        a.byteswap()
    return a.tobytes()


def _from_le(data: bytes | memoryview) -> array:
    a = array("q")
    a.frombytes(data)
    if not _LITTLE:  # pragma: no cover
        a.byteswap()
    return a


class StoreDir:
    """The directory of one run's store. ``path`` None: a fresh temporary directory, removed by
    :meth:`cleanup` (a directory the user named is not removed; the processes of a run without
    a checkpoint remove their own files from it: :meth:`SearchStore.cleanup`)."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.owned = path is None
        self.root = Path(tempfile.mkdtemp(prefix="isr-store-")) if path is None else Path(path)
        (self.root / "trace").mkdir(parents=True, exist_ok=True)
        (self.root / "queue").mkdir(parents=True, exist_ok=True)

    def trace_path(self, depth: int, name: str, ext: str) -> Path:
        return self.root / "trace" / f"{depth:05d}-{name}.{ext}"

    def queue_path(self, depth: int, name: str) -> Path:
        return self.root / "queue" / f"{depth:05d}-{name}.states"

    def disk_bytes(self) -> int:
        """Bytes the store's files take now."""
        total = 0
        for sub in ("trace", "queue"):
            try:
                with os.scandir(self.root / sub) as it:
                    for e in it:
                        with contextlib.suppress(FileNotFoundError):
                            total += e.stat().st_size
            except FileNotFoundError:
                pass
        return total

    def cleanup(self) -> None:
        if self.owned:
            shutil.rmtree(self.root, ignore_errors=True)


# --- parent links ------------------------------------------------------------------------------


class TraceWriter:
    """One process's parent links, a pair of files per depth. The engine appends to ``fps`` and
    ``parents`` directly (two array appends on the hot path; the arrays stay the same objects for
    the writer's life) and calls :meth:`maybe_flush` now and then; :meth:`level` starts the
    files of the next depth."""

    def __init__(self, store: StoreDir, name: str) -> None:
        self.store = store
        self.name = name
        self.depth = -1
        self.fps = array("q")
        self.parents = array("q")
        self._f: Any = None
        self._p: Any = None
        self.entries = 0

    def level(self, depth: int) -> None:
        """New states from now on are at ``depth``."""
        self.close()
        self.depth = depth
        # held open for the whole level (closed by close()), hence no with-block
        self._f = open(self.store.trace_path(depth, self.name, "fps"), "ab")  # noqa: SIM115
        self._p = open(self.store.trace_path(depth, self.name, "par"), "ab")  # noqa: SIM115

    def maybe_flush(self) -> None:
        if len(self.fps) >= TRACE_FLUSH:
            self.flush()

    def flush(self) -> None:
        if self.fps:
            assert len(self.fps) == len(self.parents)
            self._f.write(_le(self.fps))
            self._p.write(_le(self.parents))
            self.entries += len(self.fps)
            # emptied in place: an engine may hold the arrays' bound append methods
            del self.fps[:]
            del self.parents[:]

    def close(self, sync: bool = False) -> None:
        if self._f is not None:
            self.flush()
            for f in (self._f, self._p):
                f.flush()
                if sync:
                    os.fsync(f.fileno())
                f.close()
            self._f = self._p = None


class MemoryTrace:
    """The in-memory store's parent links: the same interface as :class:`TraceWriter`, one pair
    of arrays per depth kept in memory (16 bytes a state, no hash-table slack)."""

    def __init__(self) -> None:
        self.by_depth: dict[int, tuple[array, array]] = {}
        self.fps = array("q")
        self.parents = array("q")
        self.depth = -1

    def level(self, depth: int) -> None:
        self.depth = depth
        self.fps, self.parents = self.by_depth.setdefault(depth, (array("q"), array("q")))

    def maybe_flush(self) -> None:
        pass

    def flush(self) -> None:
        pass

    def close(self, sync: bool = False) -> None:
        pass

    @property
    def entries(self) -> int:
        return sum(len(f) for f, _ in self.by_depth.values())


class MemoryParents:
    """``fp -> parent fp`` over a :class:`MemoryTrace` (see :class:`DiskParents`)."""

    def __init__(self, trace: MemoryTrace) -> None:
        self.trace = trace
        self._hint: int | None = None

    def __getitem__(self, fp: int) -> int:
        levels = self.trace.by_depth
        order = sorted(levels, reverse=True)
        if self._hint is not None:
            first = [d for d in (self._hint, self._hint - 1) if d in levels]
            order = first + [d for d in order if d not in first]
        for depth in order:
            fps, parents = levels[depth]
            try:
                i = fps.index(fp)
            except ValueError:
                continue
            self._hint = max(depth - 1, 0)
            return parents[i]
        raise KeyError(fp)

    def __len__(self) -> int:
        return self.trace.entries


def trace_files(root: Path) -> dict[int, list[tuple[Path, Path]]]:
    """depth -> [(fps file, parents file)] of every process, from a store's trace folder."""
    out: dict[int, list[tuple[Path, Path]]] = {}
    folder = Path(root) / "trace"
    for fps in sorted(folder.glob("*.fps")):
        depth_s, _, _ = fps.stem.partition("-")
        if depth_s.isdigit():
            out.setdefault(int(depth_s), []).append((fps, fps.with_suffix(".par")))
    return out


_SCAN = 1 << 20  # entries read at a time when looking a fingerprint up


def _find(fps_path: Path, fp: int) -> int | None:
    """The index of ``fp`` in a trace file, or None (a linear scan in C: array.index)."""
    if not fps_path.exists():
        return None
    with open(fps_path, "rb") as f:
        base = 0
        while True:
            data = f.read(8 * _SCAN)
            if not data:
                return None
            a = _from_le(data[: len(data) - len(data) % 8])
            try:
                return base + a.index(fp)
            except ValueError:
                base += len(a)


class DiskParents:
    """A read-only mapping ``fp -> parent fp`` over a store's trace files (for
    :func:`checker.paths.fingerprint_chain`). Each lookup scans the files of one depth (the one
    below the previous answer's, where a chain's next parent is), so rebuilding a path of length
    L reads about L levels' trace files once: seconds even at 10**8 states."""

    def __init__(self, root: str | Path, total: int | None = None) -> None:
        self.files = trace_files(Path(root))
        self.total = total
        self._hint: int | None = None

    def depth_of(self, fp: int) -> int | None:
        order = sorted(self.files, reverse=True)
        if self._hint is not None and self._hint in self.files:
            order.remove(self._hint)
            order.insert(0, self._hint)
        for depth in order:
            for fps_path, _ in self.files[depth]:
                if _find(fps_path, fp) is not None:
                    return depth
        return None

    def __getitem__(self, fp: int) -> int:
        order = sorted(self.files, reverse=True)
        if self._hint is not None:  # the chain walks down one level at a time
            first = [d for d in (self._hint, self._hint - 1) if d in self.files]
            order = first + [d for d in order if d not in first]
        for depth in order:
            for fps_path, par_path in self.files[depth]:
                i = _find(fps_path, fp)
                if i is None:
                    continue
                with open(par_path, "rb") as p:
                    p.seek(8 * i)
                    (parent,) = _from_le(p.read(8))
                self._hint = depth - 1 if depth > 0 else 0
                return parent
        raise KeyError(fp)

    def __len__(self) -> int:
        if self.total is None:
            self.total = sum(
                os.path.getsize(f) // 8 for files in self.files.values() for f, _ in files
            )
        return self.total


def visited_from_trace(
    root: str | Path,
    upto: int,
    keep: Callable[[int], bool] | None = None,
) -> FingerprintSet:
    """The visited set of a resumed run: every fingerprint in the trace files of depths
    ``<= upto`` (those ``keep`` accepts: a worker's share)."""
    files = trace_files(Path(root))
    total = sum(os.path.getsize(f) // 8 for d, fs in files.items() if d <= upto for f, _ in fs)
    seen = FingerprintSet(total if keep is None else total // 2 + 1)
    add = seen.add
    for depth, fs in files.items():
        if depth > upto:
            continue
        for fps_path, _ in fs:
            with open(fps_path, "rb") as f:
                while data := f.read(8 * _SCAN):
                    for fp in _from_le(data):
                        if keep is None or keep(fp):
                            add(fp)
    return seen


# --- the queue of one level --------------------------------------------------------------------


class LevelQueue:
    """The states of one depth that one process holds, with their fingerprints, on disk.

    Written by :meth:`append` (buffered: a chunk of CHUNK states at a time), then read by
    :meth:`chunks`, which yields ``(states, fingerprints)`` a chunk at a time and deletes the file
    at the end. :meth:`take` removes states from the end (the parallel engine's balancing) and
    :meth:`extend` adds some (the receiving side)."""

    def __init__(
        self,
        path: Path,
        to_wire: Callable[[State], Any],
        from_wire: Callable[[Any], State],
        compress: bool = True,
        keep: bool = False,
    ) -> None:
        self.path = path
        self.to_wire = to_wire
        self.from_wire = from_wire
        self.compress = compress
        self.keep = keep  # a checkpoint's queue: left on disk once read (its manifest names it)
        self.states: list[State] = []  # the buffer, after every chunk on disk
        self.fps = array("q")
        self._index: list[tuple[int, int, int]] = []  # (offset, payload bytes, states)
        self._on_disk = 0
        self._end = 0
        self._f: Any = None
        self.bytes_written = 0

    def __len__(self) -> int:
        return self._on_disk + len(self.states)

    def append(self, state: State, fp: int) -> None:
        self.states.append(state)
        self.fps.append(fp)
        if len(self.states) >= CHUNK:
            self._write(self.states, self.fps)
            self.states = []
            self.fps = array("q")

    def extend(self, states: list[State], fps: array) -> None:
        for s, fp in zip(states, fps, strict=True):
            self.append(s, fp)

    def _write(self, states: list[State], fps: array) -> None:
        to_wire = self.to_wire
        payload = marshal.dumps((_le(fps), [to_wire(s) for s in states]), 4)
        if self.compress:
            payload = zlib.compress(payload, 1)
        if self._f is None:
            self._f = open(self.path, "w+b")  # noqa: SIM115 - open until delete()
        self._f.seek(self._end)
        self._f.write(_HEAD.pack(len(payload), len(states)))
        self._f.write(payload)
        self._index.append((self._end + _HEAD.size, len(payload), len(states)))
        self._end += _HEAD.size + len(payload)
        self._on_disk += len(states)
        self.bytes_written += _HEAD.size + len(payload)

    def _read(self, offset: int, size: int) -> tuple[list[State], array]:
        self._f.flush()
        self._f.seek(offset)
        payload = self._f.read(size)
        if self.compress:
            payload = zlib.decompress(payload)
        fps_bytes, wires = marshal.loads(payload)
        from_wire = self.from_wire
        return [from_wire(w) for w in wires], _from_le(fps_bytes)

    def take(self, count: int) -> tuple[list[State], array]:
        """Remove and return ``count`` states (and their fingerprints) from the end."""
        states: list[State] = []
        fps = array("q")
        while count > 0:
            if not self.states and self._index:
                offset, size, n = self._index.pop()
                self._on_disk -= n
                self._end = offset - _HEAD.size
                self.states, self.fps = self._read(offset, size)
            if not self.states:
                break
            k = min(count, len(self.states))
            states[:0] = self.states[len(self.states) - k :]
            fps[:0] = self.fps[len(self.fps) - k :]
            del self.states[len(self.states) - k :]
            del self.fps[len(self.fps) - k :]
            count -= k
        return states, fps

    def chunks(self) -> Iterator[tuple[list[State], array]]:
        """Every state, a chunk at a time (disk first, then the buffer); the queue is empty
        afterwards and its file deleted."""
        index, self._index = self._index, []
        for offset, size, _ in index:
            yield self._read(offset, size)
        self._on_disk = 0
        states, fps = self.states, self.fps
        self.states, self.fps = [], array("q")
        if states:
            yield states, fps
        if self.keep:
            self.close()
        else:
            self.delete()

    def attach(self) -> None:
        """Take over the chunks already in this queue's file (a resumed run's frontier)."""
        self._f = open(self.path, "r+b")  # noqa: SIM115 - open until delete()
        offset = 0
        while head := self._f.read(_HEAD.size):
            size, n = _HEAD.unpack(head)
            self._index.append((offset + _HEAD.size, size, n))
            self._on_disk += n
            offset += _HEAD.size + size
            self._f.seek(offset)
        self._end = offset

    def close(self) -> None:
        if self._f is not None:
            self._f.close()
            self._f = None

    def seal(self, sync: bool = False) -> None:
        """Write the buffer out too (before a checkpoint's manifest names the file)."""
        if self.states:
            self._write(self.states, self.fps)
            self.states = []
            self.fps = array("q")
        if self._f is not None:
            self._f.flush()
            if sync:
                os.fsync(self._f.fileno())

    def delete(self) -> None:
        self.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        self._end = 0


class MemoryQueue:
    """The in-memory store's level queue: :class:`LevelQueue`'s interface over a list."""

    def __init__(self) -> None:
        self.states: list[State] = []
        self.fps = array("q")

    def __len__(self) -> int:
        return len(self.states)

    def append(self, state: State, fp: int) -> None:
        self.states.append(state)
        self.fps.append(fp)

    def extend(self, states: list[State], fps: array) -> None:
        self.states.extend(states)
        self.fps.extend(fps)

    def take(self, count: int) -> tuple[list[State], array]:
        count = min(count, len(self.states))
        cut = len(self.states) - count
        states, fps = self.states[cut:], self.fps[cut:]
        del self.states[cut:]
        del self.fps[cut:]
        return states, fps

    def chunks(self) -> Iterator[tuple[list[State], array]]:
        states, fps = self.states, self.fps
        self.states, self.fps = [], array("q")
        if states:
            yield states, fps

    def seal(self, sync: bool = False) -> None:
        pass

    def close(self) -> None:
        pass

    def delete(self) -> None:
        self.states, self.fps = [], array("q")


def read_queue_file(
    path: Path, from_wire: Callable[[Any], State], compress: bool = True
) -> Iterator[tuple[list[State], array]]:
    """The chunks of a sealed queue file (a resumed run's frontier)."""
    with open(path, "rb") as f:
        while head := f.read(_HEAD.size):
            size, _n = _HEAD.unpack(head)
            payload = f.read(size)
            if compress:
                payload = zlib.decompress(payload)
            fps_bytes, wires = marshal.loads(payload)
            yield [from_wire(w) for w in wires], _from_le(fps_bytes)


STORES = ("memory", "disk")


class SearchStore:
    """What one breadth-first search process keeps: the visited set (fingerprints, always in
    memory), the parent links and the level queues, in memory (``kind="memory"``) or on disk
    (``"disk"``, in ``directory`` or a temporary one). ``name`` tells this process's files apart
    from its peers' (a parallel run's workers share one directory)."""

    def __init__(
        self,
        model: Any,
        kind: str = "memory",
        directory: str | Path | None = None,
        name: str = "bfs",
        dir_obj: StoreDir | None = None,
    ) -> None:
        if kind not in STORES:
            raise ValueError(f"unknown store {kind!r}; the stores are: {', '.join(STORES)}")
        self.kind = kind
        self.name = name
        self.seen = FingerprintSet()
        self.to_wire, self.from_wire = wire_codec(model)
        self.dir: StoreDir | None = None
        self.trace: MemoryTrace | TraceWriter
        if kind == "disk":
            self.dir = dir_obj or StoreDir(directory)
            self.trace = TraceWriter(self.dir, name)
        else:
            self.trace = MemoryTrace()

    def queue(self, depth: int, keep: bool = False) -> MemoryQueue | LevelQueue:
        """The queue of ``depth``; ``keep``: its file stays once read (a checkpoint names it)."""
        if self.dir is None:
            return MemoryQueue()
        path = self.dir.queue_path(depth, self.name)
        return LevelQueue(path, self.to_wire, self.from_wire, keep=keep)

    def parents(self) -> MemoryParents | DiskParents:
        """The parent links as a mapping (after :meth:`close` for a disk store)."""
        if isinstance(self.trace, MemoryTrace):
            return MemoryParents(self.trace)
        assert self.dir is not None
        return DiskParents(self.dir.root, len(self.seen))

    def disk_bytes(self) -> int:
        return self.dir.disk_bytes() if self.dir is not None else 0

    def close(self) -> None:
        """Flush the trace (parent lookups read it from disk afterwards)."""
        self.trace.close()

    def cleanup(self) -> None:
        """At the end of a run without a checkpoint: a temporary store is removed, and from a
        directory the user named, this process's files."""
        if self.dir is not None:
            if self.dir.owned:
                self.dir.cleanup()
            else:
                self.remove_own_files()

    def remove_own_files(self) -> None:
        """Remove this process's files from a shared store directory (a parallel worker at the
        end of a run without a checkpoint), and the directory once nobody's files are left."""
        if self.dir is None:
            return
        self.trace.close()
        root = self.dir.root
        for sub in ("trace", "queue"):
            for f in (root / sub).glob(f"*-{self.name}.*"):
                f.unlink(missing_ok=True)
        for d in (root / "trace", root / "queue", root):
            with contextlib.suppress(OSError):  # not empty: a peer's files are still there
                d.rmdir()


__all__ = [
    "CHUNK",
    "STORES",
    "DiskParents",
    "LevelQueue",
    "MemoryParents",
    "MemoryQueue",
    "MemoryTrace",
    "SearchStore",
    "StoreDir",
    "TraceWriter",
    "read_queue_file",
    "trace_files",
    "visited_from_trace",
    "wire_codec",
]
