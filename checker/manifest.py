"""Checkpoint manifests, for the engines that resume (parallel, spark): reading one, and saying
why a checkpoint was made for another check."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def load_manifest(directory: str, name: str, error: type[Exception]) -> Any:
    """The JSON manifest ``name`` of the checkpoint in ``directory``, for the engines that
    resume (parallel, spark; each checks its own format and identity); ``error`` (the engine's
    CheckpointError, one line) when it is missing or unreadable."""
    path = Path(directory) / name
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise error(f"no checkpoint to resume in {directory} (no {name})") from None
    except (OSError, ValueError) as e:
        raise error(f"cannot read {path}: {e}") from None


def identity_mismatch(directory: str, saved: dict, mine: dict) -> str:
    """The one-line reason a checkpoint's identity ``saved`` is not this run's ``mine``, naming
    each field that differs with both values (``config.records: 1 in the checkpoint, 2 now``),
    nested one level (the bounds live in ``config``); "" when they are the same."""
    diffs = []
    for k in sorted(set(saved) | set(mine), key=str):
        a, b = saved.get(k), mine.get(k)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            for f in sorted(set(a) | set(b), key=str):
                if a.get(f) != b.get(f):
                    diffs.append(f"{k}.{f}: {a.get(f)!r} in the checkpoint, {b.get(f)!r} now")
        elif isinstance(a, list | tuple) and isinstance(b, list | tuple) and len(a) + len(b) > 8:
            diffs.append(f"{k} ({len(a)} entries in the checkpoint, {len(b)} now)")
        else:
            diffs.append(f"{k}: {a!r} in the checkpoint, {b!r} now")
    if not diffs:
        return ""
    return f"checkpoint in {directory} was made for another check ({'; '.join(diffs)})"
