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
from dataclasses import dataclass
from typing import Any

FORMAT = "isr-counterexample"
VERSION = 1


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


def read(path: str) -> CounterexampleTrace:
    try:
        with open(path, encoding="utf-8") as f:
            lines = [ln for ln in f.read().splitlines() if ln.strip()]
    except OSError as e:
        raise TraceFileError(f"cannot read {path}: {e.strerror}") from None
    try:
        objs = [json.loads(ln) for ln in lines]
    except json.JSONDecodeError as e:
        raise TraceFileError(f"{path}: not NDJSON ({e.msg} at line {e.lineno})") from None
    if not objs or objs[0].get("type") != "header" or objs[0].get("format") != FORMAT:
        raise TraceFileError(f"{path}: not an {FORMAT} file (no header line)")
    if objs[0].get("version") != VERSION:
        raise TraceFileError(f"{path}: format version {objs[0].get('version')} is not {VERSION}")
    if len(objs) < 2 or objs[1].get("type") != "state":
        raise TraceFileError(f"{path}: the initial state line is missing")
    steps = objs[2:]
    for k, s in enumerate(steps, start=1):
        if s.get("type") != "step" or "action" not in s or "state" not in s:
            raise TraceFileError(f"{path}: line {k + 2} is not a step")
    return CounterexampleTrace(objs[0], objs[1]["state"], steps)
