"""Reader, writer and merge of NDJSON traces (FORMAT.md, format version 1).

Tiny on purpose: a writer appending one JSON object per line, a reader returning (header, events),
a merge of several files into one order by (Lamport clock, node, position), a log reconstruction
from the delta encoding, and a validator for the subset of JSON Schema the schema file uses (so no
dependency is needed to check a trace).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO

from .schemacheck import (
    MAX_DEPTH,
    bad_value,
    first_error,
    load_schema,
    schema_errors,
)

try:  # 2-3 times faster than json on trace lines; JSONDecodeError subclasses json's
    from orjson import loads as parse_line
except ImportError:  # pragma: no cover - orjson is a dependency; json gives the same values

    def parse_line(line: bytes | str) -> Any:
        """json.loads, UTF-8 only (given bytes, json would also guess UTF-16 and UTF-32)."""
        return json.loads(line.decode("utf-8") if isinstance(line, bytes) else line)


def parse_document(text: str) -> Any:
    """json.loads of a whole document (ITF, a TLC dump, a pretty-printed header), with nesting
    too deep for the parser, or an integer too long for Python's int parser, reported as bad
    JSON (json.JSONDecodeError, a ValueError) instead of a RecursionError or a bare ValueError:
    hostile input is bad input, one line and exit 2."""
    try:
        return json.loads(text)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", text, 0) from None
    except json.JSONDecodeError:
        raise
    except ValueError as e:  # an integer past Python's 4,300-digit limit (not a JSONDecodeError)
        raise json.JSONDecodeError(f"bad number: {str(e).split(';')[0]}", text, 0) from None


FORMAT = "isr-trace"
VERSION = 1
SCHEMA_PATH = Path(__file__).parent / "schema" / "trace-event.schema.json"
OBSERVED = [
    "alive", "role", "leader", "leader_epoch", "isr", "hw", "hw_checkpoint", "leo", "log",
    "remote_leo", "coord",
]  # fmt: skip


def header(protocol: str, source: str, **extra: Any) -> dict[str, Any]:
    h: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "protocol": protocol,
        "source": source,
        "observed": OBSERVED,
        "log_encoding": "delta",
    }
    h.update(extra)
    return h


class TraceWriter:
    """Appends events to ``path``; writes the header if the file is new or empty."""

    def __init__(self, path: str | Path, head: dict[str, Any], flush_every: int = 1) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fresh = not self.path.exists() or self.path.stat().st_size == 0
        self._f: TextIO = open(self.path, "a", encoding="utf-8")  # noqa: SIM115
        self._n = 0
        self._every = flush_every
        if fresh:
            self._f.write(json.dumps(head, separators=(",", ":")) + "\n")
            self._f.flush()

    def write(self, ev: dict[str, Any]) -> None:
        self._f.write(json.dumps(ev, separators=(",", ":")) + "\n")
        self._n += 1
        if self._n % self._every == 0:
            self._f.flush()

    def close(self) -> None:
        self._f.close()


class TraceFormatError(ValueError):
    """A trace this version cannot read. ``str()`` is one line for the user naming the file, the
    line and the field: ``FILE:LINE: FIELD: problem`` (exit 2 in the CLI)."""


MAX_LINE_BYTES = 64 * 2**20  # generous: a delta+full line of a long run holds a whole log


def check_values(obj: Any, where: str, max_depth: int = MAX_DEPTH) -> None:
    """Raise TraceFormatError unless every number in ``obj`` is finite and every integer within
    +-MAX_INT, and arrays and objects nest at most ``max_depth`` deep (schemacheck.bad_value)."""
    bad = bad_value(obj, max_depth)
    if bad is not None:
        raise TraceFormatError(f"{where}: {bad[0] or 'the line'}: {bad[1]}")


def load_json_line(
    raw: bytes | str,
    where: str,
    max_bytes: int = MAX_LINE_BYTES,
    max_depth: int = MAX_DEPTH,
    bounded: bool = True,
) -> Any:
    """One JSON value from one line, or TraceFormatError naming ``where`` (``FILE:LINE``): too
    long, not UTF-8, not JSON, nested too deep, a number out of range. Every reader of the
    project's NDJSON files (traces, counterexamples, an adapter's answers) goes through here.
    ``bounded=False`` leaves the depth and number bounds to the caller's ``line_errors``, which
    checks them along with the schema (once instead of twice on every trace event)."""
    if len(raw) > max_bytes:
        raise TraceFormatError(f"{where}: line longer than {max_bytes:,} bytes")
    try:
        obj = parse_line(raw)  # orjson checks the UTF-8 itself: no second pass over the bytes
    except RecursionError:
        raise TraceFormatError(f"{where}: nested more than {max_depth} deep") from None
    except ValueError as e:  # JSONDecodeError, UnicodeDecodeError, json's int digit limit
        if isinstance(raw, bytes):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as u:
                raise TraceFormatError(
                    f"{where}: not UTF-8 (byte {u.start + 1} of the line)"
                ) from None
        msg = getattr(e, "msg", None) or str(e).split(":")[0]
        raise TraceFormatError(f"{where}: not JSON: {msg}") from None
    if bounded:
        check_values(obj, where, max_depth)
    return obj


def ndjson_lines(
    path: str | Path, max_bytes: int = MAX_LINE_BYTES, keep_torn: bool = False
) -> Iterator[tuple[int, bytes]]:
    """(line number, bytes without the newline) of each complete non-blank line; a torn last
    line (no newline: the writer was killed mid-write) is dropped, or kept with ``keep_torn``
    (files written whole, where a missing final newline is an editor's doing). Memory stays
    bounded by ``max_bytes`` whatever the file holds. OSError propagates."""
    with open(path, "rb") as f:
        ln = 0
        while True:
            line = f.readline(max_bytes + 2)
            if not line:
                return
            ln += 1
            if not line.endswith(b"\n"):
                if len(line) > max_bytes:
                    raise TraceFormatError(f"{path}:{ln}: line longer than {max_bytes:,} bytes")
                if keep_torn and line.strip():
                    yield ln, line
                return  # torn tail
            body = line.rstrip(b"\r\n")
            if body.strip():
                yield ln, body


def event_errors(obj: Any) -> list[str]:
    """Schema errors of a trace line that is not a header, plus the rules the schema's subset
    cannot say: an event of a partition names both its topic and its partition."""
    errs = line_errors(obj, "event")
    if not errs and ("topic" in obj) != ("partition" in obj):
        errs.append("topic/partition: an event names both or neither")
    return errs


def parse_trace_lines(
    lines: Iterable[tuple[int, bytes | str]], name: str
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Header and events of one trace file from its numbered lines, every line checked against
    the schema (schema/trace-event.schema.json) and the bounds of ``load_json_line``. A line
    carrying the header again (a restarted process appends one) is checked and skipped."""
    head: dict[str, Any] | None = None
    events: list[dict[str, Any]] = []
    last: dict[int | str, int] = {}  # per node, the clock of its latest event in this file
    for ln, raw in lines:
        where = f"{name}:{ln}"
        obj = load_json_line(raw, where, bounded=False)
        is_head = isinstance(obj, dict) and "format" in obj
        if head is None and not is_head:
            raise TraceFormatError(f"{where}: not an {FORMAT} file (the first line is no header)")
        errs = line_errors(obj, "header") if is_head else event_errors(obj)
        if errs:
            raise TraceFormatError(f"{where}: {errs[0]}")
        if head is None:
            head = obj
        elif not is_head:
            # One process writes its own events in the order it takes them, each with a
            # Lamport clock above its last one: a node whose clock goes back in its own file
            # is no recording (two events swapped with their clocks kept, issue 27 item 6).
            # The merge orders by clock, so without this check such a file would be read as
            # the unswapped one and accepted.
            key = obj["node"]  # an int or a string (the schema)
            if obj["clock"] < last.get(key, obj["clock"]):
                raise TraceFormatError(
                    f"{where}: node {obj['node']}'s clock {obj['clock']} is below its previous "
                    f"event's {last[key]} in this file (its own events out of order)"
                )
            last[key] = obj["clock"]
            events.append(obj)
    if head is None:
        raise TraceFormatError(f"{name}: empty trace (no header line)")
    return head, events


def read(path: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Header and events of a trace file, every line checked (``parse_trace_lines``); a torn
    last line (the process was killed mid-write) is dropped. Raises TraceFormatError (a
    ValueError) with one line for the user, or OSError."""
    return parse_trace_lines(ndjson_lines(path), str(path))


def parse_text(text: str, name: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """As ``read``, for the text of a file (the Spark engine ships texts, not paths)."""
    numbered = ((ln, line) for ln, line in enumerate(text.splitlines(), 1) if line.strip())
    return parse_trace_lines(numbered, name)


def check_run(events: list[dict[str, Any]], name: str) -> None:
    """A run (one file, or the files of one run together) must hold at least one event: a
    header alone is no recording of anything."""
    if not events:
        raise TraceFormatError(f"{name}: no events after the header")


def last_clock(path: str | Path) -> int:
    try:
        _h, evs = read(path)
    except (FileNotFoundError, ValueError):
        return 0
    return max((e["clock"] for e in evs), default=0)


def merge(streams: Iterable[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """One order for events of several processes: by Lamport clock, ties by node then by the
    position in their own file (which keeps each node's own order)."""
    keyed = []
    for s in streams:
        for i, ev in enumerate(s):
            keyed.append(((ev["clock"], str(ev["node"]), i), ev))
    keyed.sort(key=lambda kv: kv[0])
    return [ev for _k, ev in keyed]


def merge_files(paths: Iterable[str | Path]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Headers and merged events of the files of one run; the run must hold an event."""
    heads, streams, names = [], [], []
    for p in paths:
        h, evs = read(p)
        heads.append(h)
        streams.append(evs)
        names.append(str(p))
    events = merge(streams)
    check_run(events, ",".join(names))
    return heads, events


def logs(events: Iterable[dict[str, Any]]) -> Iterator[tuple[dict[str, Any], list[list[Any]]]]:
    """Yield each event with the acting replica's full log after it, rebuilt from the deltas."""
    cur: dict[tuple[Any, str, int], list[list[Any]]] = {}
    for ev in events:
        st = ev.get("state") or {}
        if "topic" not in ev:
            yield ev, []
            continue
        key = (ev["node"], ev["topic"], ev["partition"])
        log = cur.setdefault(key, [])
        if "log" in st:
            log[:] = st["log"]
        else:
            if "log_truncate" in st:
                del log[st["log_truncate"] - st.get("log_start", 0) :]
            log.extend(st.get("log_append", []))
        yield ev, list(log)


def validate_line(obj: Any) -> list[str]:
    """Errors of one trace line against schema/trace-event.schema.json (empty if valid)."""
    return schema_errors(obj, load_schema(SCHEMA_PATH))


def line_errors(obj: Any, kind: str, schema_path: Path = SCHEMA_PATH) -> list[str]:
    """The first error of ``obj`` against the definition ``kind`` of a schema (by default the
    trace schema: "header", "event"), as ``FIELD: problem``, or [] (schemacheck.first_error)."""
    return first_error(obj, kind, schema_path)
