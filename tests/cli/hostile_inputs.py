"""Hostile inputs for every reader: mutations of the golden samples, and an in-process runner.

Shared by tests/cli/test_hostile_input.py (a few seconds of hypothesis) and
scripts/fuzz_readers.py (a long seeded run that counts tracebacks by place). A mutation works
on the bytes of a file (byte flips, truncation, inserted non-UTF-8 or bracket bytes) or on one of
its JSON lines (a field deleted or retyped, a line replaced by a hostile one), so every layer of a
reader is reached: decoding, JSON parsing, the schema, and the code behind it.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "traces" / "samples"

# Exit codes each command documents in its help (and README).
DOCUMENTED = {
    "validate": {0, 1, 2, 3},
    "replay": {0, 1, 2, 4},
    "explain": {0, 2},
    "history": {0, 1, 2},
}

DEEP = 100_000  # brackets: far beyond any parser's recursion limit
HOSTILE_VALUES: list[Any] = [
    None,
    True,
    0.5,
    2.5,
    -1,
    0,
    2**64,
    10**30,
    10**15,
    -(2**63),
    1e308,
    "",
    "x",
    "r9",
    [],
    {},
    [1],
    [[]],
    [None, "x"],
    {"a": 1},
    {"r0": [[1, 1]]},
]
HOSTILE_LINES: list[bytes] = [
    b"[1]",
    b"1",
    b'"x"',
    b"null",
    b"{}",
    b"[" * DEEP + b"]" * DEEP,
    b'{"a":' * 2000 + b"1" + b"}" * 2000,
    b"1" + b"0" * 5000,
    b"NaN",
    b'{"clock": 1e400, "node": 0, "action": "X", "args": {}}',
    b'{"clock": NaN, "node": 0, "action": "X", "args": {}}',
    b'{"clock": 1, "node": 0.5, "action": "ProducerSend", "args": {}}',
    b'{"clock": 1, "node": 0, "action": "ProducerSend"}',
    b'{"type": "step", "index": 1}',
    b'{"type": "state", "index": 0, "state": [1]}',
    b"\xff\xfe\x00garbage",
    b'{"format": "isr-trace"}',
    b'{"type": "header", "format": "isr-counterexample", "version": 1}',
    b"x" * 70_000,
]
INSERTED_BYTES = [b"\xff", b"\xc3", b"\x00", b"[", b"{", b"\n", b"]]", b"\\", b'"', b"1e999", b"-"]


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def _mutate_json(obj: Any, draw: Callable, depth: int = 0) -> Any:
    """Delete or retype one field somewhere in ``obj`` (a random walk down from the top)."""
    if isinstance(obj, dict) and obj:
        keys = sorted(obj)
        k = keys[draw(st.integers(0, len(keys) - 1))]
        how = draw(st.sampled_from(["descend", "delete", "retype"] if depth < 6 else ["retype"]))
        out = dict(obj)
        if how == "delete":
            del out[k]
        elif how == "retype" or not isinstance(obj[k], (dict, list)) or not obj[k]:
            out[k] = draw(st.sampled_from(HOSTILE_VALUES))
        else:
            out[k] = _mutate_json(obj[k], draw, depth + 1)
        return out
    if isinstance(obj, list) and obj:
        i = draw(st.integers(0, len(obj) - 1))
        how = draw(st.sampled_from(["descend", "delete", "retype"]))
        out = list(obj)
        if how == "delete":
            del out[i]
        elif how == "retype" or not isinstance(obj[i], (dict, list)) or not obj[i]:
            out[i] = draw(st.sampled_from(HOSTILE_VALUES))
        else:
            out[i] = _mutate_json(obj[i], draw, depth + 1)
        return out
    return draw(st.sampled_from(HOSTILE_VALUES))


def mutate(data: bytes, draw: Callable) -> tuple[str, bytes]:
    """One hostile mutation of the file ``data``: (what was done, the new bytes)."""
    kind = draw(
        st.sampled_from(
            [
                "flip",
                "truncate",
                "insert",
                "field",
                "field",
                "field",
                "line",
                "drop-lines",
                "header-only",
                "empty",
                "duplicate",
            ]
        )
    )
    n = len(data)
    if kind == "flip" and n:
        i = draw(st.integers(0, n - 1))
        return f"flip@{i}", data[:i] + bytes([draw(st.integers(0, 255))]) + data[i + 1 :]
    if kind == "truncate" and n:
        i = draw(st.integers(0, n - 1))
        return f"truncate@{i}", data[:i]
    if kind == "insert":
        i = draw(st.integers(0, n))
        b = draw(st.sampled_from(INSERTED_BYTES))
        return f"insert {b!r}@{i}", data[:i] + b + data[i:]
    lines = _lines(data)
    idx = draw(st.integers(0, max(0, len(lines) - 2)))  # the last piece is after the final \n
    if draw(st.integers(0, 3)) == 0:
        idx = 0  # the header, a quarter of the time: one line that the whole file depends on
    if kind == "field":
        try:
            obj = json.loads(lines[idx])
        except ValueError:
            return "field(not json)", data
        new = _mutate_json(obj, draw)
        lines[idx] = json.dumps(new).encode()
        return f"field line {idx + 1}", b"\n".join(lines)
    if kind == "line":
        lines[idx] = draw(st.sampled_from(HOSTILE_LINES))
        return f"line {idx + 1} replaced", b"\n".join(lines)
    if kind == "drop-lines":
        j = draw(st.integers(idx, max(idx, len(lines) - 1)))
        return f"drop lines {idx + 1}..{j + 1}", b"\n".join(lines[:idx] + lines[j + 1 :])
    if kind == "header-only":
        return "header only", lines[0] + b"\n"
    if kind == "duplicate":
        return f"duplicate line {idx + 1}", b"\n".join(lines[: idx + 1] + lines[idx:])
    return "empty", b""


# ---- running the CLI in-process ---------------------------------------------------------------
class Hang(Exception):
    """The case outran its time limit."""


@dataclass
class Outcome:
    code: int | None
    out: str
    err: str
    exc: BaseException | None = None
    where: str = ""  # the innermost project frame of a traceback: "file.py:line (Type)"


def _where(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    mine = [f for f in frames if str(ROOT) in f.filename and "/tests/" not in f.filename]
    f = (mine or frames)[-1]
    return f"{os.path.relpath(f.filename, ROOT)}:{f.lineno} ({type(exc).__name__})"


@contextlib.contextmanager
def time_limit(seconds: float):
    """SIGALRM-based: the main thread only (pytest and the fuzz script run cases there)."""
    if seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_alarm(_sig, _frame):
        raise Hang(f"no answer in {seconds} s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def run_cli(argv: list[str], timeout: float = 60.0) -> Outcome:
    """``isr ARGV`` in this process: exit code, stdout, stderr, and any escaped exception."""
    from isr.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    code: int | None = None
    exc: BaseException | None = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            with time_limit(timeout):
                code = main(argv)
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
        except Exception as e:
            exc = e
    o = Outcome(code, out.getvalue(), err.getvalue(), exc)
    if exc is not None:
        o.where = "hang" if isinstance(exc, Hang) else _where(exc)
    return o


def problem(cmd: str, o: Outcome) -> str | None:
    """What is wrong with an outcome of ``isr CMD`` on hostile input, or None."""
    if o.exc is not None:
        return f"{'hang' if isinstance(o.exc, Hang) else 'traceback'} at {o.where}: {o.exc!r}"[:300]
    if o.code not in DOCUMENTED[cmd]:
        return f"exit: {o.code}, not one of {sorted(DOCUMENTED[cmd])}"
    if o.code == 2:
        lines = [x for x in o.err.splitlines() if x.strip()]
        if len(lines) != 1 or "Traceback" in o.err:
            return f"stderr: exit 2 with {len(lines)} stderr lines: {o.err[:300]!r}"
    return None


# ---- the golden inputs ------------------------------------------------------------------------
def trace_samples() -> list[Path]:
    """Every golden trace: single files, and the files of the per-broker cluster run."""
    return sorted(SAMPLES.rglob("*.ndjson"))


def make_counterexamples(out_dir: Path) -> list[Path]:
    """Counterexample files as `isr check --trace-out` and `isr liveness --trace-out` write them
    (small models, about a second each): a safety violation, then a liveness lasso."""
    out_dir.mkdir(parents=True, exist_ok=True)
    small = ["--replicas", "2", "--records", "1", "--epochs", "2", "--crashes", "2"]
    made = []
    for name, argv in {
        "safety.ndjson": ["check", "--protocol", "hw-truncation", *small, "--quiet"],
        "lasso.ndjson": ["liveness", *small[:-2], "--crashes", "1"],
    }.items():
        p = out_dir / name
        if not p.exists():
            o = run_cli([*argv, "--trace-out", str(p)])
            assert o.exc is None, o.where
        if p.exists():
            made.append(p)
    return made
