"""Checkpoint and resume: after each level the frontier and the visited set with its parent links
(one pickle file set per level, ``state-NNNNN``, only the newest kept) and ``manifest.json``
(the driver's tally, written last and atomically, so a run interrupted mid-write resumes from the
previous complete level).

Files are written by the executors through Hadoop's file system API: a local directory works in
local mode and on a one-machine (loopback) cluster; a multi-machine cluster needs a shared path.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from .partition import route
from .tally import Tally

FORMAT_VERSION = 1
MANIFEST = "manifest.json"


class CheckpointError(ValueError):
    """A checkpoint directory that cannot be resumed (missing, or made for another check)."""


def _uri(path: Path) -> str:
    return path.resolve().as_uri()


def _state_dir(root: Path, level: int) -> Path:
    return root / f"state-{level:05d}"


def _tag_state(pid: int, it):
    for blob in it:
        yield pid, blob


def save_level(
    directory: str, level: int, out: Any, identity: dict[str, Any], tally: Tally
) -> None:
    """Write level ``level``: its state (frontier + visited), then the manifest."""
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    state = _state_dir(root, level)
    shutil.rmtree(state, ignore_errors=True)
    out.mapPartitionsWithIndex(_tag_state).saveAsPickleFile(_uri(state))
    manifest = {
        "format_version": FORMAT_VERSION,
        "identity": identity,
        "level": level,
        "tally": tally.to_json(),
    }
    tmp = root / (MANIFEST + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=1))
    os.replace(tmp, root / MANIFEST)
    for old in root.glob("state-*"):
        if old != state:
            shutil.rmtree(old, ignore_errors=True)


def read_manifest(directory: str, identity: dict[str, Any]) -> dict[str, Any]:
    path = Path(directory) / MANIFEST
    try:
        manifest = json.loads(path.read_text())
    except FileNotFoundError:
        raise CheckpointError(f"no checkpoint to resume in {directory} (no {MANIFEST})") from None
    except (OSError, ValueError) as e:
        raise CheckpointError(f"cannot read {path}: {e}") from None
    if manifest.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(f"{path}: unsupported checkpoint format")
    saved = dict(manifest["identity"])
    mine = dict(identity)
    saved.pop("partitions", None)
    mine.pop("partitions", None)
    if saved != mine:
        diff = sorted(k for k in set(saved) | set(mine) if saved.get(k) != mine.get(k))
        raise CheckpointError(
            f"checkpoint in {directory} was made for another check (differs in {', '.join(diff)})"
        )
    return manifest


def load(sc: Any, directory: str, manifest: dict[str, Any]) -> Any:
    """The level RDD (one blob per partition, in fingerprint-partition order) of a checkpoint."""
    root = Path(directory)
    parts = manifest["identity"]["partitions"]
    path = _state_dir(root, manifest["level"])
    return sc.pickleFile(_uri(path)).partitionBy(parts, route).values()
