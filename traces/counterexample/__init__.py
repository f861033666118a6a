"""Counterexample files: NDJSON written by `isr check --trace-out` and read by `isr replay`.

Line 1, the header: {"type": "header", "format": "isr-counterexample", "version": 1,
  "model": ..., "config": {...}, "property": NAME, "kind": "always"|"action"|...}
Line 2, the initial state: {"type": "state", "index": 0, "state": {...every variable...}}
Then one line per step: {"type": "step", "index": i, "action": NAME, "args": {...},
  "changed": {...}, "state": {...every variable after the step...}}
Whole states are written so that a replay can confirm each step exactly.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from .. import format as tformat

FORMAT = "isr-counterexample"
VERSION = 1
SCHEMA_PATH = Path(__file__).parent.parent / "schema" / "counterexample.schema.json"


class TraceFileError(ValueError):
    """The file is not a counterexample trace this version can read (one line for the user)."""


@dataclass
class CounterexampleTrace:
    header: dict[str, Any]
    initial: dict[str, Any]
    steps: list[dict[str, Any]]


def write(
    path: str, header: dict[str, Any], states: list[dict[str, Any]], steps: Iterable[dict]
) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(
            json.dumps({"type": "header", "format": FORMAT, "version": VERSION, **header}) + "\n"
        )
        f.write(json.dumps({"type": "state", "index": 0, "state": states[0]}) + "\n")
        for i, (step, state) in enumerate(zip(steps, states[1:], strict=True), start=1):
            f.write(json.dumps({"type": "step", "index": i, **step, "state": state}) + "\n")


def read(path: str, version: Any = None) -> CounterexampleTrace:
    """The file's header, initial state and steps, every line checked against
    schema/counterexample.schema.json and the bounds of traces/format.py, and the lines against
    each other (consecutive indexes, the header's config a valid spec.Config, every per-replica
    map over the config's replicas), so that `isr replay` and `isr explain` can trust what they
    read. ``version``: the user's protocol version the header's config names (its
    ``protocol_file``, loaded by the caller), else None (a built-in one). Raises TraceFileError,
    one line naming the file, the line and the field."""
    try:
        numbered = list(tformat.ndjson_lines(path, keep_torn=True))
        objs = [_line(path, ln, raw, k) for k, (ln, raw) in enumerate(numbered)]
    except OSError as e:
        raise TraceFileError(f"cannot read {path}: {e.strerror or e}") from None
    except tformat.TraceFormatError as e:
        raise TraceFileError(str(e)) from None
    if not objs:
        raise TraceFileError(f"{path}: empty file (no header line)")
    if len(objs) < 2:
        raise TraceFileError(f"{path}: the initial state line is missing")
    head = objs[0]
    where = f"{path}:{numbered[0][0]}"
    replicas = _check_config(head["config"], where, version)
    for (ln, _raw), obj in zip(numbered[1:], objs[1:], strict=True):
        _check_replicas(obj["state"], replicas, f"{path}:{ln}")
    for k, ((ln, _raw), step) in enumerate(zip(numbered[2:], objs[2:], strict=True), start=1):
        if step["index"] != k:
            raise TraceFileError(f"{path}:{ln}: index: {step['index']}, expected {k}")
    steps = objs[2:]
    if head.get("loop_start", 0) > len(steps):
        raise TraceFileError(f"{where}: loop_start: {head['loop_start']} is past the last step")
    return CounterexampleTrace(head, objs[1]["state"], steps)


def _line(path: str, ln: int, raw: bytes, k: int) -> dict[str, Any]:
    """Line ``ln`` (the ``k``-th non-blank one) parsed and checked against its definition."""
    where = f"{path}:{ln}"
    obj = tformat.load_json_line(raw, where, bounded=False)
    if k == 0:
        if not isinstance(obj, dict) or obj.get("format") != FORMAT or obj.get("type") != "header":
            raise TraceFileError(f"{path}: not an {FORMAT} file (no header line)")
        if obj.get("version") != VERSION or type(obj.get("version")) is not int:
            raise TraceFileError(f"{where}: format version {obj.get('version')!r} is not {VERSION}")
    kind = "header" if k == 0 else "state_line" if k == 1 else "step"
    errs = tformat.line_errors(obj, kind, SCHEMA_PATH)
    if errs:
        what = {"header": "the header", "state_line": "the initial state", "step": "a step"}[kind]
        raise TraceFileError(f"{where}: {errs[0]} (in {what})")
    return obj


def _check_config(cfg: dict[str, Any], where: str, version: Any = None) -> int:
    """The header's config must be a valid spec.Config: known fields of the right types (a
    bool is not an int here), then Config.validate. Returns the replica count."""
    from isr.spec import Config, ConfigError

    types = {f.name: type(f.default) for f in fields(Config)}
    for k, v in cfg.items():
        if k not in types:
            raise TraceFileError(f"{where}: config.{k[:40]}: not a setting of this spec")
        if type(v) is not types[k]:
            raise TraceFileError(
                f"{where}: config.{k}: expected {types[k].__name__}, got {type(v).__name__}"
            )
    try:
        return Config(**cfg).validate(version).replicas
    except ConfigError as e:
        raise TraceFileError(f"{where}: config: {e}") from None


def _check_replicas(state: dict[str, Any], n: int, where: str) -> None:
    """Every per-replica map of a state (each keyed r0..r{R-1}, spec.model's one list; required
    or optional) names exactly the config's replicas."""
    from isr.spec.codec import KRAFT_PER_REPLICA_KEYS, PER_REPLICA_KEYS

    want = {f"r{i}" for i in range(n)}
    for key in PER_REPLICA_KEYS + KRAFT_PER_REPLICA_KEYS:
        if key in state and set(state[key]) != want:
            raise TraceFileError(
                f"{where}: state.{key}: replicas {sorted(state[key])}, the config has "
                f"{sorted(want)}"
            )
