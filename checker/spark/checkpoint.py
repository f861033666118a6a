"""Checkpoint and resume: after each level the frontier and visited set (one pickle file set per
level, ``state-NNNNN``, only the newest kept), the level's parent links (``links/level-NNNNN``,
all kept: counterexamples need them) and ``manifest.json`` (the driver's tally, written last and
atomically, so a run interrupted mid-write resumes from the previous complete level).

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


def _links_dir(root: Path, level: int) -> Path:
    return root / "links" / f"level-{level:05d}"


def _tag_state(pid: int, it):
    for blob in it:
        yield pid, (blob[0], blob[1])


def _tag_links(pid: int, it):
    for blob in it:
        yield pid, blob[0]


def _as_level_blob(vf):
    return vf[0], vf[1], None, None


def save_level(
    directory: str, level: int, out: Any, links: Any, identity: dict[str, Any], tally: Tally
) -> None:
    """Write level ``level``: its state (frontier + visited), its links (if any), the manifest."""
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    state = _state_dir(root, level)
    shutil.rmtree(state, ignore_errors=True)
    out.mapPartitionsWithIndex(_tag_state).saveAsPickleFile(_uri(state))
    if links is not None:
        ldir = _links_dir(root, level)
        shutil.rmtree(ldir, ignore_errors=True)
        links.mapPartitionsWithIndex(_tag_links).saveAsPickleFile(_uri(ldir))
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


def load(sc: Any, directory: str, manifest: dict[str, Any]) -> tuple[Any, dict[int, Any]]:
    """The level RDD (one blob per partition, in fingerprint-partition order) and lazy links
    RDDs by level, from a checkpoint."""
    root = Path(directory)
    parts = manifest["identity"]["partitions"]
    level = manifest["level"]
    out = (
        sc.pickleFile(_uri(_state_dir(root, level)))
        .partitionBy(parts, route)
        .values()
        .map(_as_level_blob)
    )
    links: dict[int, Any] = {}
    for lv in range(1, level + 1):
        ldir = _links_dir(root, lv)
        if ldir.exists():
            links[lv] = sc.pickleFile(_uri(ldir)).partitionBy(parts, route).values()
    return out, links
