"""Reader, writer and merge of NDJSON traces (FORMAT.md, format version 1).

Tiny on purpose: a writer appending one JSON object per line, a reader returning (header, events),
a merge of several files into one order by (Lamport clock, node, position), a log reconstruction
from the delta encoding, and a validator for the subset of JSON Schema the schema file uses (so no
dependency is needed to check a trace).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO

try:  # 2-3 times faster than json on trace lines; JSONDecodeError subclasses json's
    from orjson import loads as parse_line
except ImportError:  # pragma: no cover - orjson is a dependency; json gives the same values
    from json import loads as parse_line

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


# Bounds of what a reader accepts, so that no input can exhaust memory, the stack or the time of
# the code behind it. Generous: the largest golden line is a few kB, a delta+full line of a long
# run holds a whole log.
MAX_LINE_BYTES = 64 * 2**20
MAX_DEPTH = 24  # nesting of arrays and objects in one line; events use 5
MAX_INT = 2**53 - 1  # I-JSON (RFC 7493): integers every JSON reader represents exactly


def check_values(obj: Any, where: str, max_depth: int = MAX_DEPTH) -> None:
    """Raise TraceFormatError unless every number in ``obj`` is a finite float or an integer of
    at most ``MAX_INT`` in magnitude, and arrays and objects nest at most ``max_depth`` deep.
    Iterative: a hostile line must not exhaust the stack of the check meant to stop it."""
    stack = [(obj, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            if d > max_depth:
                break
            stack.extend((x, d + 1) for x in v.values())
        elif isinstance(v, list):
            if d > max_depth:
                break
            stack.extend((x, d + 1) for x in v)
        elif isinstance(v, bool) or v is None or isinstance(v, str):
            continue
        elif isinstance(v, int):
            if -MAX_INT <= v <= MAX_INT:
                continue
            break
        elif isinstance(v, float):
            if v == v and abs(v) != float("inf"):
                continue
            break
    else:
        return
    path, msg = _first_bad_value(obj, max_depth)
    raise TraceFormatError(f"{where}: {path or 'the line'}: {msg}")


def _first_bad_value(obj: Any, max_depth: int) -> tuple[str, str]:
    """(field path, problem) of check_values' failure, found again with paths (computed only
    once a value failed, so the common path stays cheap)."""
    stack: list[tuple[Any, int, str]] = [(obj, 1, "")]
    while stack:
        v, d, path = stack.pop()
        if isinstance(v, (dict, list)):
            if d > max_depth:
                return path, f"nested more than {max_depth} deep"
            items = v.items() if isinstance(v, dict) else enumerate(v)
            for k, x in reversed(list(items)):
                sub = f"{path}.{k}" if isinstance(k, str) else f"{path}[{k}]"
                stack.append((x, d + 1, sub.lstrip(".")))
        elif isinstance(v, float) and (v != v or abs(v) == float("inf")):
            return path, f"{v} is not a finite number"
        elif isinstance(v, int) and not isinstance(v, bool) and not -MAX_INT <= v <= MAX_INT:
            return path, f"{v} is beyond +-2^53-1"
    return "", "bad value"  # pragma: no cover - check_values found one


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
    if isinstance(raw, bytes):
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise TraceFormatError(f"{where}: not UTF-8 (byte {e.start + 1} of the line)") from None
    try:
        obj = parse_line(raw)
    except RecursionError:
        raise TraceFormatError(f"{where}: nested more than {max_depth} deep") from None
    except ValueError as e:  # JSONDecodeError, and json's int digit limit
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


def _event_errors(obj: Any) -> list[str]:
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
    for ln, raw in lines:
        where = f"{name}:{ln}"
        obj = load_json_line(raw, where, bounded=False)
        is_head = isinstance(obj, dict) and "format" in obj
        if head is None and not is_head:
            raise TraceFormatError(f"{where}: not an {FORMAT} file (the first line is no header)")
        errs = line_errors(obj, "header") if is_head else _event_errors(obj)
        if errs:
            raise TraceFormatError(f"{where}: {errs[0]}")
        if head is None:
            head = obj
        elif not is_head:
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


# ---- validation against the schema (the subset it uses) ----------------------------------------
_TYPES = {
    "object": dict,
    "array": list,
    "string": str,
    "integer": int,
    "boolean": bool,
    "number": (int, float),
    "null": type(None),
}


def schema_errors(obj: Any, schema: dict[str, Any]) -> list[str]:
    """Errors of ``obj`` against a JSON Schema, for the subset of keywords our schemas use."""
    return _check(obj, schema, schema, "$")


def _check(v: Any, s: dict[str, Any], root: dict[str, Any], where: str) -> list[str]:
    if "$ref" in s:
        s = root["$defs"][s["$ref"].rsplit("/", 1)[1]]
    errs: list[str] = []
    if "oneOf" in s:
        ok = [sub for sub in s["oneOf"] if not _check(v, sub, root, where)]
        return [] if len(ok) == 1 else [f"{where}: matches {len(ok)} of oneOf"]
    if "type" in s:
        types = s["type"] if isinstance(s["type"], list) else [s["type"]]
        good = any(
            isinstance(v, _TYPES[t]) and not (t == "integer" and isinstance(v, bool)) for t in types
        )
        if not good:
            return [f"{where}: expected {s['type']}, got {type(v).__name__}"]
    if "const" in s and v != s["const"]:
        errs.append(f"{where}: expected {s['const']!r}")
    if "enum" in s and v not in s["enum"]:
        errs.append(f"{where}: {v!r} not in {s['enum']}")
    if "minimum" in s and isinstance(v, int) and v < s["minimum"]:
        errs.append(f"{where}: {v} < {s['minimum']}")
    if "maximum" in s and isinstance(v, int) and v > s["maximum"]:
        errs.append(f"{where}: {v} > {s['maximum']}")
    if "pattern" in s and isinstance(v, str) and not re.fullmatch(s["pattern"], v):
        errs.append(f"{where}: {v[:40]!r} does not match {s['pattern']}")
    if isinstance(v, dict):
        errs += [f"{where}: missing {k!r}" for k in s.get("required", []) if k not in v]
        if "propertyNames" in s:
            for k in v:
                errs += _check(k, s["propertyNames"], root, f"{where} key")
        for k, sub in s.get("properties", {}).items():
            if k in v:
                errs += _check(v[k], sub, root, f"{where}.{k}")
        if isinstance(s.get("additionalProperties"), dict):
            for k, x in v.items():
                if k not in s.get("properties", {}):
                    errs += _check(x, s["additionalProperties"], root, f"{where}.{k}")
    if isinstance(v, list):
        for i, x in enumerate(v):
            pre = s.get("prefixItems", [])
            sub = pre[i] if i < len(pre) else s.get("items")
            if sub:
                errs += _check(x, sub, root, f"{where}[{i}]")
        if "minItems" in s and len(v) < s["minItems"]:
            errs.append(f"{where}: fewer than {s['minItems']} items")
        if "maxItems" in s and len(v) > s["maxItems"]:
            errs.append(f"{where}: more than {s['maxItems']} items")
    return errs


def validate_line(obj: Any) -> list[str]:
    """Errors of one trace line against schema/trace-event.schema.json (empty if valid)."""
    schema = _schema()
    return _check(obj, schema, schema, "$")


def line_errors(obj: Any, kind: str, schema_path: Path = SCHEMA_PATH) -> list[str]:
    """The first error of ``obj`` against the definition ``kind`` ("header", "event", ...) of
    a schema, as ``FIELD: problem`` with the field a dotted path (the whole line: ``the line``),
    or []. Besides the schema, every number must be finite and an integer within +-MAX_INT, and
    the parts the schema leaves free (``args``, ``config``, unknown fields) are held to the
    bounds of ``check_values``. Compiled once per definition: this runs on every trace event."""
    err = _compiled(schema_path, kind)(obj)
    if err is None:
        return []
    where, _, what = err.partition(": ")
    return [f"{where.lstrip('.') or 'the line'}: {what}"]


@functools.cache
def _schema(path: Path = SCHEMA_PATH) -> dict[str, Any]:
    return json.loads(path.read_text())


# ---- the schema subset compiled to closures ----------------------------------------------------
# A check returns None, or the first error as PATH-SUFFIX + ": problem" (".state.hw: expected
# integer, got str"; a leaf returns ": ..."), so the path is only built on the way out of a
# failure. The interpreter above (``_check``) stays for other schemas (checker/result.schema).
Check = Callable[[Any], "str | None"]
_PY_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "boolean": (bool,),
    "number": (int, float),
    "null": (type(None),),
}


@functools.cache
def _compiled(path: Path, kind: str) -> Check:
    root = _schema(path)
    return _compile(root["$defs"][kind], root, {})


def _free(v: Any) -> str | None:
    """A value the schema leaves free: only the bounds of ``check_values``."""
    t = type(v)
    if t is str or t is bool or v is None:
        return None
    if t is int and -MAX_INT <= v <= MAX_INT:
        return None
    if t is dict:  # the common case, a flat object of scalars (an event's args)
        for x in v.values():
            tx = type(x)
            if not (tx is str or tx is bool or (tx is int and -MAX_INT <= x <= MAX_INT)):
                break
        else:
            return None
    try:
        check_values(v, "")
    except TraceFormatError:
        path, msg = _first_bad_value(v, MAX_DEPTH)
        return f"{'' if not path or path[0] == '[' else '.'}{path}: {msg}"
    return None


def _compile(s: dict[str, Any], root: dict[str, Any], refs: dict[str, Check]) -> Check:
    if "$ref" in s:
        name = s["$ref"].rsplit("/", 1)[1]
        if name not in refs:
            cell: list[Check] = []
            refs[name] = lambda v: cell[0](v)
            cell.append(_compile(root["$defs"][name], root, refs))
        return refs[name]
    if "oneOf" in s:
        subs = [_compile(x, root, refs) for x in s["oneOf"]]

        def one_of(v: Any) -> str | None:
            n = sum(1 for f in subs if f(v) is None)
            return None if n == 1 else f": matches {n} of oneOf"

        return one_of
    names = s["type"] if isinstance(s.get("type"), list) else [s["type"]] if "type" in s else []
    lo = max(s.get("minimum", -MAX_INT), -MAX_INT)
    hi = min(s.get("maximum", MAX_INT), MAX_INT)
    if names == ["integer"] and not {"const", "enum"} & set(s):  # the common case, made fast

        def integer(v: Any) -> str | None:
            if type(v) is int and lo <= v <= hi:
                return None
            if type(v) is int:
                return f": {v} is outside {lo}..{hi}"
            return f": expected integer, got {_json_type(v)}"

        return integer
    if names == ["string"] and not {"const", "enum", "pattern"} & set(s):
        return lambda v: None if type(v) is str else f": expected string, got {_json_type(v)}"
    if names == ["boolean"]:
        return lambda v: None if type(v) is bool else f": expected boolean, got {_json_type(v)}"
    if names in (["object"], ["array"]) and not {"const", "enum"} & set(s):
        body = (_compile_object if names == ["object"] else _compile_array)(s, root, refs)
        want = list if names == ["array"] else dict

        def container(v: Any) -> str | None:
            if type(v) is want:
                return body(v)
            return f": expected {names[0]}, got {_json_type(v)}"

        return container
    steps: list[Check] = []
    if names:
        allowed = tuple(t for n in names for t in _PY_TYPES[n])
        want = "|".join(names)

        def typed(v: Any) -> str | None:
            if type(v) in allowed:
                return None
            return f": expected {want}, got {_json_type(v)}"

        steps.append(typed)
    if "const" in s:
        c = s["const"]
        steps.append(lambda v: None if v == c and type(v) is type(c) else f": expected {c!r}")
    if "enum" in s:
        options = s["enum"]
        steps.append(
            lambda v: (
                None
                if type(v) is str and v in options
                else f": {str(v)[:40]!r} is not one of {', '.join(map(str, options))}"
            )
        )
    if not names or {"integer", "number"} & set(names):

        def number(v: Any) -> str | None:
            if type(v) is int:
                return None if lo <= v <= hi else f": {v} is outside {lo}..{hi}"
            if type(v) is float and (v != v or v in (float("inf"), float("-inf"))):
                return f": {v} is not a finite number"
            return None

        steps.append(number)
    if "pattern" in s:
        rx = re.compile(s["pattern"])
        steps.append(
            lambda v: (
                None
                if type(v) is not str or rx.fullmatch(v)
                else f": {v[:40]!r} does not match {s['pattern']}"
            )
        )
    if "object" in names or "properties" in s or "required" in s:
        steps.append(_compile_object(s, root, refs))
    if "array" in names or "items" in s or "prefixItems" in s:
        steps.append(_compile_array(s, root, refs))
    if not names and not {"properties", "items", "prefixItems", "const", "enum"} & set(s):
        steps.append(_free)  # no constraint at all: a free value
    elif "object" in names and not {"properties", "additionalProperties"} & set(s):
        pass  # _compile_object checks the free members
    if len(steps) == 1:
        return steps[0]

    def all_of(v: Any) -> str | None:
        for f in steps:
            err = f(v)
            if err is not None:
                return err
        return None

    return all_of


def _pair_types(s: dict[str, Any] | None) -> tuple[type, type] | None:
    """(t0, t1) when ``s`` is exactly a pair of two plain strings/integers (a log entry)."""
    if not s or set(s) - {"type", "prefixItems", "minItems", "maxItems", "description"}:
        return None
    pre = s.get("prefixItems", [])
    if s.get("type") != "array" or len(pre) != 2 or s.get("minItems") != 2 != s.get("maxItems"):
        return None
    simple = {"string": str, "integer": int}
    if any(set(p) != {"type"} or p["type"] not in simple for p in pre):
        return None
    return simple[pre[0]["type"]], simple[pre[1]["type"]]


def _json_type(v: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(v), "integer" if type(v) is int else "number"
    )


def _compile_object(s: dict[str, Any], root: dict[str, Any], refs: dict[str, Check]) -> Check:
    required = list(s.get("required", []))
    props = {k: _compile(sub, root, refs) for k, sub in s.get("properties", {}).items()}
    extra = s.get("additionalProperties")
    other = _compile(extra, root, refs) if isinstance(extra, dict) else _free
    key_check = _compile(s["propertyNames"], root, refs) if "propertyNames" in s else None

    get = props.get

    def obj(v: Any) -> str | None:
        if type(v) is not dict:
            return None
        for k in required:
            if k not in v:
                return f".{k}: missing"
        for k, x in v.items():
            err = get(k, other)(x)
            if err is not None:
                return f".{str(k)[:40]}{err}"
        if key_check is not None:
            for k in v:
                err = key_check(k)
                if err is not None:
                    return f".{str(k)[:40]}{err.replace(':', ' (the name):', 1)}"
        return None

    return obj


def _compile_array(s: dict[str, Any], root: dict[str, Any], refs: dict[str, Check]) -> Check:
    prefix = [_compile(x, root, refs) for x in s.get("prefixItems", [])]
    items = _compile(s["items"], root, refs) if "items" in s else _free
    lo, hi = s.get("minItems", 0), s.get("maxItems")
    pair = _pair_types(s.get("items"))
    if pair is not None and not prefix and lo == 0 and hi is None:  # a log: [[rec, epoch], ...]
        t0, t1 = pair

        def pairs(v: Any) -> str | None:
            if type(v) is not list:
                return None
            for i, x in enumerate(v):
                if not (
                    type(x) is list
                    and len(x) == 2
                    and type(x[0]) is t0
                    and type(x[1]) is t1
                    and (t1 is not int or -MAX_INT <= x[1] <= MAX_INT)
                    and (t0 is not int or -MAX_INT <= x[0] <= MAX_INT)
                ):
                    return f"[{i}]{items(x)}"
            return None

        return pairs

    def arr(v: Any) -> str | None:
        if type(v) is not list:
            return None
        if len(v) < lo:
            return f": fewer than {lo} items"
        if hi is not None and len(v) > hi:
            return f": more than {hi} items"
        for i, x in enumerate(v):
            err = (prefix[i] if i < len(prefix) else items)(x)
            if err is not None:
                return f"[{i}]{err}"
        return None

    return arr
