"""Checkpoints of the parallel engine: a directory that a later run resumes from.

After each level every worker writes its partition into ``level-NNNNN/``: ``wK-of-N.visited``
(the visited fingerprints and their parent fingerprints, two raw little-endian int64 arrays) and
``wK-of-N.frontier`` (the frontier's fingerprints as a raw array, then its states as one
``marshal`` blob). Then the coordinator writes ``manifest.json`` atomically (the commit point: a
run interrupted mid-write resumes from the previous level) and removes older level directories.

Reading one cannot run code: the arrays are bytes, ``marshal`` builds only plain values (tuples,
ints, bools, None; never pickle's arbitrary callables) and the manifest is JSON. The manifest
names the check the files belong to (model, its config, symmetry, property selection, action
names) and the SHA-256 of every file, so a checkpoint of another check, a tampered or truncated
file, or a path leaving the directory is refused with a :class:`CheckpointError` before a worker
reads anything. (The hashes catch corruption and edits, not a forger who rewrites the manifest
too; that forger still cannot make the reader run code.)

A checkpoint may be resumed with any number of workers: each one keeps the entries whose
fingerprint it owns (with the same number it reads only its own files).
"""

from __future__ import annotations

import hashlib
import json
import marshal
import os
import shutil
import struct
import sys
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import CheckpointError  # re-exported (the engines' errors: checker.errors)
from ..manifest import identity_mismatch, load_manifest
from ..model import State

FORMAT_VERSION = 1
MANIFEST = "manifest.json"
VISITED_MAGIC = b"ISRVIS01"
FRONTIER_MAGIC = b"ISRFRN01"
HEADER = struct.Struct("<8sQ")  # magic, number of entries


def fp_array() -> array:
    return array("q")


def _le(a: array) -> bytes:
    if sys.byteorder == "big":  # pragma: no cover - files are little-endian everywhere
        a = array("q", a)
        a.byteswap()
    return a.tobytes()


def _from_le(data: bytes) -> array:
    a = array("q")
    a.frombytes(data)
    if sys.byteorder == "big":  # pragma: no cover
        a.byteswap()
    return a


def level_dir(directory: str | Path, depth: int) -> Path:
    return Path(directory) / f"level-{depth:05d}"


def _write_atomic(path: Path, chunks: list[bytes]) -> dict[str, Any]:
    tmp = path.with_name(path.name + ".tmp")
    digest = hashlib.sha256()
    size = 0
    with open(tmp, "wb") as f:
        for chunk in chunks:
            f.write(chunk)
            digest.update(chunk)
            size += len(chunk)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    return {"sha256": digest.hexdigest(), "bytes": size}


def write_partition(
    directory: str,
    depth: int,
    k: int,
    n: int,
    fps: array,
    parents: array,
    frontier: Any,
) -> list[dict[str, Any]]:
    """Write worker ``k``'s visited set (its fingerprints and their parents, entry for entry) and
    its frontier (a :class:`checker.store.MemoryQueue`); their manifest entries."""
    d = level_dir(directory, depth)
    d.mkdir(parents=True, exist_ok=True)
    base = f"w{k}-of-{n}"
    entries = []
    visited = d / f"{base}.visited"
    meta = _write_atomic(visited, [HEADER.pack(VISITED_MAGIC, len(fps)), _le(fps), _le(parents)])
    entries.append({"worker": k, "kind": "visited", "path": f"{d.name}/{visited.name}", **meta})
    front = d / f"{base}.frontier"
    chunks = [
        HEADER.pack(FRONTIER_MAGIC, len(frontier.fps)),
        _le(frontier.fps),
        marshal.dumps(encode_states(frontier.states), 4),
    ]
    meta = _write_atomic(front, chunks)
    entries.append({"worker": k, "kind": "frontier", "path": f"{d.name}/{front.name}", **meta})
    return entries


def _read(path: str, magic: bytes) -> tuple[int, bytes]:
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise CheckpointError(f"cannot read checkpoint file {path}: {e.strerror}") from None
    if len(data) < HEADER.size:
        raise CheckpointError(f"checkpoint file {path} is truncated")
    got, count = HEADER.unpack_from(data)
    if got != magic:
        raise CheckpointError(f"{path} is not a checkpoint file of this kind")
    return count, data[HEADER.size :]


def count_visited(paths: list[str]) -> int:
    total = 0
    for path in paths:
        try:
            with open(path, "rb") as f:
                head = f.read(HEADER.size)
        except OSError as e:
            raise CheckpointError(f"cannot read checkpoint file {path}: {e.strerror}") from None
        if len(head) < HEADER.size:
            raise CheckpointError(f"checkpoint file {path} is truncated")
        total += HEADER.unpack(head)[1]
    return total


def read_visited(path: str) -> Iterator[tuple[int, int]]:
    count, body = _read(path, VISITED_MAGIC)
    if len(body) != 16 * count:
        raise CheckpointError(f"checkpoint file {path} has the wrong size")
    fps = _from_le(body[: 8 * count])
    parents = _from_le(body[8 * count :])
    return zip(fps, parents, strict=True)


def read_frontier(path: str) -> Iterator[tuple[int, State]]:
    count, body = _read(path, FRONTIER_MAGIC)
    if len(body) < 8 * count:
        raise CheckpointError(f"checkpoint file {path} is truncated")
    fps = _from_le(body[: 8 * count])
    try:
        payload = marshal.loads(body[8 * count :])
    except (EOFError, ValueError, TypeError) as e:
        raise CheckpointError(f"checkpoint file {path}: bad frontier data ({e})") from None
    states = decode_states(payload, path)
    if len(states) != count:
        raise CheckpointError(f"checkpoint file {path}: the frontier is not a list of states")
    return zip(fps, states, strict=True)


# --- states as plain values --------------------------------------------------------------------
#
# A state is a nest of tuples of ints, bools and None, some of them tuple subclasses (a spec's
# NamedTuples), which marshal cannot write. Encoded, a tuple subclass becomes a list
# ``[type index, *items]`` (states hold no lists) and the frontier ``(type names, states)``.
# Decoding rebuilds a tuple subclass with ``tuple.__new__`` (no constructor of the class runs)
# and only for classes already loaded in this process; any other leaf than int, bool or None is
# refused. Subtuples shared between states stay shared (memoised by identity both ways).

_LEAVES = (int, bool, type(None))


def encode_states(states: list[State]) -> tuple[list[str], list[Any]]:
    types: dict[type, int] = {}
    memo: dict[int, Any] = {}

    def enc(v: tuple) -> Any:
        key = id(v)
        got = memo.get(key)
        if got is not None:
            return got
        items = [enc(x) if isinstance(x, tuple) else x for x in v]
        cls = type(v)
        if cls is tuple:
            out: Any = tuple(items)
        else:
            out = [types.setdefault(cls, len(types)), *items]
        memo[key] = out
        return out

    encoded = [enc(s) for s in states]
    names = [f"{cls.__module__}:{cls.__qualname__}" for cls in types]
    return names, encoded


def _resolve(name: Any, path: str) -> type:
    module, _, qual = name.partition(":") if isinstance(name, str) else ("", "", "")
    obj: Any = sys.modules.get(module)  # never imports: only classes this process has loaded
    for part in qual.split("."):
        obj = getattr(obj, part, None) if obj is not None and part else None
    if not (isinstance(obj, type) and issubclass(obj, tuple)):
        raise CheckpointError(f"checkpoint file {path}: unknown state type {name!r}")
    return obj


def decode_states(payload: Any, path: str) -> list[State]:
    if not (
        type(payload) is tuple
        and len(payload) == 2
        and type(payload[0]) is list
        and type(payload[1]) is list
    ):
        raise CheckpointError(f"checkpoint file {path}: the frontier is not a list of states")
    types = [_resolve(name, path) for name in payload[0]]
    memo: dict[int, tuple] = {}

    def dec(v: Any) -> tuple:
        key = id(v)
        got = memo.get(key)
        if got is not None:
            return got
        cls = type(v)
        if cls is list:
            if not v or type(v[0]) is not int or not 0 <= v[0] < len(types):
                raise CheckpointError(f"checkpoint file {path}: bad state encoding")
            items = v[1:]
        elif cls is tuple:
            items = v
        else:
            raise CheckpointError(f"checkpoint file {path}: a state is not a tuple")
        out = []
        for x in items:
            t = type(x)
            if t is tuple or t is list:
                out.append(dec(x))
            elif t in _LEAVES:
                out.append(x)
            else:
                raise CheckpointError(f"checkpoint file {path}: a state holds a {t.__name__}")
        made = tuple(out) if cls is tuple else tuple.__new__(types[v[0]], out)
        memo[key] = made
        return made

    return [dec(s) for s in payload[1]]


# --- the manifest (coordinator side) ---------------------------------------------------------


def write_manifest(
    directory: str,
    identity: dict[str, Any],
    depth: int,
    workers: int,
    tally: dict[str, Any],
    entries: list[dict[str, Any]],
    store: str = "memory",
    frontier_depth: int | None = None,
) -> None:
    """Commit level ``depth``: write the manifest atomically, then drop older levels (a disk
    store's queue files of the depths before ``frontier_depth``: their states are expanded)."""
    root = Path(directory)
    manifest = {
        "format_version": FORMAT_VERSION,
        "identity": identity,
        "depth": depth,
        "workers": workers,
        "tally": tally,
        "files": entries,
    }
    if store != "memory":
        manifest["store"] = store
        manifest["frontier_depth"] = frontier_depth
    tmp = root / (MANIFEST + ".tmp")
    with open(tmp, "w") as f:
        json.dump(manifest, f, indent=1)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, root / MANIFEST)
    if frontier_depth is not None:
        for old in (root / "queue").glob("*.states"):
            d = old.name.partition("-")[0]
            if d.isdigit() and int(d) < frontier_depth:
                old.unlink(missing_ok=True)
    keep = level_dir(root, depth)
    for old in root.glob("level-*"):
        if old != keep:
            shutil.rmtree(old, ignore_errors=True)


def one_directory(checkpoint: str | None, resume: str | None) -> str | None:
    """The run's checkpoint directory: a resumed run keeps checkpointing where it resumed from,
    so naming two directories is bad input."""
    if checkpoint and resume and checkpoint != resume:
        raise CheckpointError(
            "a resumed run keeps checkpointing in its own directory: give --resume DIR alone"
        )
    return checkpoint or resume


def prepare(directory: str) -> None:
    """Make the checkpoint directory (a run starting afresh there discards an older checkpoint
    only when it commits its own first level)."""
    try:
        Path(directory).mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise CheckpointError(f"cannot create checkpoint directory {directory}: {e}") from None


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def read_manifest(directory: str, identity: dict[str, Any]) -> dict[str, Any]:
    """The manifest of the checkpoint in ``directory``, once its identity and every file's hash
    are checked; CheckpointError (one line) otherwise."""
    root = Path(directory)
    path = root / MANIFEST
    manifest = load_manifest(directory, MANIFEST, CheckpointError)
    if not isinstance(manifest, dict) or manifest.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(
            f"{path}: not a checkpoint of the parallel engine (or another format)"
        )
    try:
        saved = manifest["identity"]
        depth, workers, entries = manifest["depth"], manifest["workers"], manifest["files"]
        manifest["tally"]["generated"]
    except (KeyError, TypeError):
        raise CheckpointError(f"{path}: incomplete manifest") from None
    if not isinstance(saved, dict) or saved.get("engine") != identity.get("engine"):
        raise CheckpointError(f"checkpoint in {directory} was not written by the local engine")
    if saved != identity:
        raise CheckpointError(identity_mismatch(directory, saved, identity))
    if not isinstance(depth, int) or not isinstance(workers, int) or workers < 1:
        raise CheckpointError(f"{path}: incomplete manifest")
    if manifest.get("store", "memory") == "disk":
        return _check_disk_manifest(root, path, manifest)
    have = set()
    for e in entries:
        rel = e.get("path", "") if isinstance(e, dict) else ""
        target = (root / rel).resolve()
        if not rel or Path(rel).is_absolute() or root.resolve() not in target.parents:
            raise CheckpointError(f"{path}: a file entry points outside the checkpoint")
        try:
            actual = _sha256(target)
        except OSError as e2:
            raise CheckpointError(f"checkpoint file {rel} is missing ({e2.strerror})") from None
        if actual != e.get("sha256"):
            raise CheckpointError(
                f"checkpoint file {rel} does not match its manifest (altered or corrupted)"
            )
        have.add((e.get("worker"), e.get("kind")))
    want = {(k, kind) for k in range(workers) for kind in ("visited", "frontier")}
    if have != want:
        raise CheckpointError(f"{path}: the manifest does not list one file set per worker")
    return manifest


def _check_disk_manifest(root: Path, path: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    """A disk store's manifest: its queue files (one per worker, at the frontier's depth) must
    have the size it says, and each name a file inside the store's queue folder. The trace
    files are the store's own; the coordinator checks the visited count they give."""
    depth, workers = manifest.get("frontier_depth"), manifest["workers"]
    if not isinstance(depth, int) or depth < 0:
        raise CheckpointError(f"{path}: incomplete manifest")
    have = set()
    for e in manifest["files"]:
        rel = e.get("path", "") if isinstance(e, dict) else ""
        target = (root / rel).resolve()
        if not rel or Path(rel).is_absolute() or (root / "queue").resolve() != target.parent:
            raise CheckpointError(f"{path}: a file entry points outside the checkpoint")
        size = target.stat().st_size if target.exists() else 0
        if size != e.get("bytes"):
            raise CheckpointError(
                f"checkpoint file {rel} does not match its manifest (altered, truncated or missing)"
            )
        have.add((e.get("worker"), e.get("kind")))
    if have != {(k, "queue") for k in range(workers)}:
        raise CheckpointError(f"{path}: the manifest does not list one queue per worker")
    return manifest


def disk_parts(directory: str, manifest: dict[str, Any]) -> dict[str, Any]:
    """What the workers resume a disk store from: the frontier's depth and the queue files.
    What the interrupted level wrote after the manifest (trace files deeper than the frontier,
    queue files of other depths) is removed first: the resumed run writes it again."""
    root = Path(directory)
    depth = manifest["frontier_depth"]
    for f in (root / "trace").glob("*"):
        d = f.name.partition("-")[0]
        if d.isdigit() and int(d) > depth:
            f.unlink(missing_ok=True)
    for f in (root / "queue").glob("*"):
        d = f.name.partition("-")[0]
        if not (d.isdigit() and int(d) == depth):
            f.unlink(missing_ok=True)
    queues = [(e["worker"], str(root / e["path"])) for e in manifest["files"]]
    return {"depth": depth, "queues": queues}


def parts(directory: str, manifest: dict[str, Any]) -> list[tuple[int, str, str]]:
    """[(old worker, visited file, frontier file)] of a checked manifest."""
    root = Path(directory)
    by = {(e["worker"], e["kind"]): str(root / e["path"]) for e in manifest["files"]}
    return [(k, by[k, "visited"], by[k, "frontier"]) for k in range(manifest["workers"])]
