"""Checkpoint and resume: after each level the frontier and the visited set with its parent links
(one text file set per level, ``state-NNNNN``, only the newest kept) and ``manifest.json``
(the driver's tally and the SHA-256 of every partition's line, written last and atomically, so a
run interrupted mid-write resumes from the previous complete level).

Reading a checkpoint runs no code from it (issue 17: ``--resume DIR`` of a directory someone
else could write). A partition is one line of JSON: its visited arrays as raw array bytes
(base64, with their type codes) and its frontier. The frontier holds the model's states, which
the engine keeps pickled; before anything is unpickled, the driver checks every line against
the manifest's hash and unpickles its frontier with ``SafeUnpickler``, which resolves only
builtin containers and named-tuple classes already imported (it never imports a module, never
calls anything else); the executors then check each line against the hash the driver verified
(a file swapped meanwhile is refused). A tampered or corrupt checkpoint is a
``CheckpointError``: exit 2, one line.

Files are written by the executors through Hadoop's file system API: a local directory works in
local mode and on a one-machine (loopback) cluster; a multi-machine cluster needs a shared path.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import pickle
import shutil
import sys
from array import array
from pathlib import Path
from typing import Any

from ..errors import CheckpointError  # re-exported (the engines' errors: checker.errors)
from ..manifest import identity_mismatch, load_manifest
from .partition import route
from .tally import Tally

FORMAT_VERSION = 2  # 2: data-only lines with hashes (1 was pickle files)
MANIFEST = "manifest.json"


def _uri(path: Path) -> str:
    return path.resolve().as_uri()


def _state_dir(root: Path, level: int) -> Path:
    return root / f"state-{level:05d}"


_SAFE_BUILTINS = frozenset(
    {"tuple", "list", "dict", "set", "frozenset", "int", "float", "str", "bytes", "bool"}
)


class SafeUnpickler(pickle.Unpickler):
    """Resolves only builtin containers and named-tuple classes of modules already imported
    (the model's state classes): no import, no callable other than a tuple subclass's
    constructor, so loading cannot run code the checkpoint brings."""

    def find_class(self, module: str, name: str) -> Any:
        if module == "builtins" and name in _SAFE_BUILTINS:
            return getattr(__import__("builtins"), name)
        mod = sys.modules.get(module)
        cls = getattr(mod, name, None) if mod is not None and "." not in name else None
        if isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields"):
            return cls
        raise pickle.UnpicklingError(f"{module}.{name} is not a state class")


def safe_loads(data: bytes) -> Any:
    return SafeUnpickler(io.BytesIO(data)).load()


def _b64(a: array) -> list[str]:
    return [a.typecode, base64.b64encode(a.tobytes()).decode()]


def _unb64(v: Any) -> array:
    code, data = v
    if code not in ("l", "q", "i", "L", "Q", "I"):
        raise ValueError(f"array type code {code!r}")
    a = array(code)
    a.frombytes(base64.b64decode(data, validate=True))
    return a


def _encode(pid: int, it: Any) -> Any:
    """One line per blob: ``{"pid", "visited": [fps, parents, indices], "frontier"}``."""
    for (fps, parents, indices), frontier in it:
        yield json.dumps(
            {
                "pid": pid,
                "visited": [_b64(fps), _b64(parents), _b64(indices)],
                "frontier": base64.b64encode(frontier).decode(),
            },
            separators=(",", ":"),
        )


def _sha(line: str) -> str:
    return hashlib.sha256(line.encode()).hexdigest()


def _decode(hashes: frozenset[str], line: str) -> tuple[int, Any]:
    """A line the driver verified (its hash is one of ``hashes``) back into ``(pid, blob)``."""
    if _sha(line) not in hashes:
        raise CheckpointError("a checkpoint line changed after it was verified")
    d = json.loads(line)
    fps, parents, indices = (_unb64(v) for v in d["visited"])
    return int(d["pid"]), ((fps, parents, indices), base64.b64decode(d["frontier"]))


def _verify_line(line: str) -> str | None:
    """Why ``line`` is not a well-formed partition of data only, or None."""
    try:
        d = json.loads(line)
        if not isinstance(d, dict) or type(d.get("pid")) is not int:
            return "not a partition record"
        arrays = [_unb64(v) for v in d["visited"]]
        if len(arrays) != 3 or len({len(a) for a in arrays}) != 1:
            return "visited arrays of different lengths"
        frontier = safe_loads(base64.b64decode(d["frontier"], validate=True))
        if not isinstance(frontier, list):
            return "the frontier is not a list"
        for item in frontier:
            if not (isinstance(item, tuple) and len(item) == 2 and type(item[0]) is int):
                return "a frontier entry is not (fingerprint, state)"
            if isinstance(item[1], bytes):
                safe_loads(item[1])
    except (ValueError, TypeError, KeyError, EOFError, pickle.UnpicklingError) as e:
        return f"{type(e).__name__}: {e}"
    except Exception as e:  # any other failure of a crafted pickle is a refusal too
        return f"{type(e).__name__}"
    return None


def save_level(
    directory: str, level: int, out: Any, identity: dict[str, Any], tally: Tally
) -> None:
    """Write level ``level``: its state (frontier + visited), then the manifest."""
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    state = _state_dir(root, level)
    shutil.rmtree(state, ignore_errors=True)
    lines = out.mapPartitionsWithIndex(_encode)
    lines.saveAsTextFile(_uri(state))
    hashes = sorted(lines.map(_sha).collect())
    manifest = {
        "format_version": FORMAT_VERSION,
        "identity": identity,
        "level": level,
        "tally": tally.to_json(),
        "hashes": hashes,
    }
    tmp = root / (MANIFEST + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=1))
    os.replace(tmp, root / MANIFEST)
    for old in root.glob("state-*"):
        if old != state:
            shutil.rmtree(old, ignore_errors=True)


def read_manifest(directory: str, identity: dict[str, Any]) -> dict[str, Any]:
    path = Path(directory) / MANIFEST
    manifest = load_manifest(directory, MANIFEST, CheckpointError)
    if manifest.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(f"{path}: unsupported checkpoint format")
    saved = dict(manifest["identity"])
    mine = dict(identity)
    saved.pop("partitions", None)
    mine.pop("partitions", None)
    if saved != mine:
        raise CheckpointError(identity_mismatch(directory, saved, mine))
    return manifest


def verify(directory: str, manifest: dict[str, Any]) -> frozenset[str]:
    """Every line of the level's files has a hash the manifest lists (each once, none
    missing) and is data only (``_verify_line``); the hashes, for the executors."""
    want = manifest.get("hashes")
    if not isinstance(want, list) or not all(isinstance(h, str) for h in want):
        raise CheckpointError(f"{directory}: the manifest lists no hashes")
    state = _state_dir(Path(directory), int(manifest["level"]))
    seen: list[str] = []
    try:
        files = sorted(p for p in state.glob("part-*") if p.is_file())
        for p in files:
            with open(p, encoding="utf-8") as f:
                for line in f:
                    line = line.rstrip("\n")
                    h = _sha(line)
                    if h not in want:
                        raise CheckpointError(f"{p}: a line does not match the manifest's hashes")
                    why = _verify_line(line)
                    if why is not None:
                        raise CheckpointError(f"{p}: refused ({why})")
                    seen.append(h)
    except (OSError, UnicodeDecodeError) as e:
        raise CheckpointError(f"cannot read the checkpoint in {state}: {e}") from None
    if sorted(seen) != sorted(want):
        raise CheckpointError(f"{state}: lines missing or repeated (the manifest lists others)")
    return frozenset(want)


def load(sc: Any, directory: str, manifest: dict[str, Any]) -> Any:
    """The level RDD (one blob per partition, in fingerprint-partition order) of a checkpoint,
    verified first (``verify``)."""
    from functools import partial

    hashes = verify(directory, manifest)
    root = Path(directory)
    parts = manifest["identity"]["partitions"]
    path = _state_dir(root, manifest["level"])
    rdd = sc.textFile(_uri(path)).map(partial(_decode, hashes))
    return rdd.partitionBy(parts, route).values()
