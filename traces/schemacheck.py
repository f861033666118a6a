"""JSON Schema checking for the subset of keywords the project's schemas use, and the bounds
every reader holds JSON values to. No dependency: a trace must be checkable anywhere.

Three layers, one semantics:
- ``schema_errors``: a plain interpreter, every error (the checker's result schema, tests);
- ``_compile``: a definition compiled to closures, the first error with its field path (used
  only to word the message once a value has failed);
- ``_generate``: a definition compiled to Python source, straight-line type tests and no path
  bookkeeping, the fast path run on every trace event (a trace can hold millions).
``first_error`` runs the generated check and, on failure, the closure for the message.
Beyond the schema, every number must be finite and every integer within +-MAX_INT, and the
parts a schema leaves free (an event's ``args``, a header's ``config``, unknown fields) are held
to ``bad_value``'s bounds.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

MAX_DEPTH = 24  # nesting of arrays and objects in one line; events use 5
MAX_INT = 2**53 - 1  # I-JSON (RFC 7493): integers every JSON reader represents exactly


def bad_value(obj: Any, max_depth: int = MAX_DEPTH) -> tuple[str, str] | None:
    """None if every number in ``obj`` is a finite float or an integer of at most ``MAX_INT``
    in magnitude and arrays and objects nest at most ``max_depth`` deep; else (field path,
    problem). Iterative: a hostile line must not exhaust the stack of the check meant to stop
    it. The path is only computed once a value failed, so the common case stays cheap."""
    stack = [(obj, 1)]
    while stack:
        v, d = stack.pop()
        t = type(v)
        if t is dict or t is list:
            if d > max_depth:
                break
            stack.extend((x, d + 1) for x in (v.values() if t is dict else v))
        elif t is int:
            if not -MAX_INT <= v <= MAX_INT:
                break
        elif t is float and (v != v or v in (_INF, -_INF)):
            break
    else:
        return None
    return _first_bad_value(obj, max_depth)


_INF = float("inf")


def _first_bad_value(obj: Any, max_depth: int) -> tuple[str, str]:
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
        elif isinstance(v, float) and (v != v or abs(v) == _INF):
            return path, f"{v} is not a finite number"
        elif isinstance(v, int) and not isinstance(v, bool) and not -MAX_INT <= v <= MAX_INT:
            return path, f"{v} is beyond +-2^53-1"
    return "", "bad value"  # pragma: no cover - bad_value found one


# ---- the interpreter -------------------------------------------------------------------------
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


# ---- closures: the first error, with its path ----------------------------------------------------
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


def _free(v: Any) -> str | None:
    """A value the schema leaves free: only the bounds of ``bad_value``."""
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
    bad = bad_value(v, MAX_DEPTH)
    if bad is None:
        return None
    path, msg = bad
    return f"{'' if not path or path[0] == '[' else '.'}{path}: {msg}"


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


# ---- the fast path: a definition compiled to Python source ------------------------------------
class _Gen:
    """Generates one function per schema node that is an object or an array (scalars are
    inlined as boolean expressions). A generated function returns None when the value is
    valid, else the closure's error (computed only then)."""

    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        self.src: list[str] = []
        self.ns: dict[str, Any] = {"_free": _free, "_M": object(), "_INF": _INF, "MAX_INT": MAX_INT}
        self.refs: dict[str, str] = {}
        self.slow_refs: dict[str, Check] = {}
        self.n = 0

    def name(self, prefix: str, value: Any) -> str:
        self.n += 1
        nm = f"{prefix}{self.n}"
        self.ns[nm] = value
        return nm

    def cond(self, s: dict[str, Any], x: str) -> str:
        """A boolean expression true iff the value ``x`` (an expression) satisfies ``s``."""
        if "$ref" in s:
            return f"{self.ref(s['$ref'].rsplit('/', 1)[1])}({x}) is None"
        if "oneOf" in s:
            slow = self.name("_slow", _compile(s, self.root, self.slow_refs))
            return f"{slow}({x}) is None"
        names = s["type"] if isinstance(s.get("type"), list) else [s["type"]] if "type" in s else []
        lo = max(s.get("minimum", -MAX_INT), -MAX_INT)
        hi = min(s.get("maximum", MAX_INT), MAX_INT)
        parts = []
        if "const" in s:
            c = s["const"]
            parts.append(f"(type({x}) is {type(c).__name__} and {x} == {c!r})")
        if "enum" in s:
            parts.append(
                f"(type({x}) is str and {x} in {self.name('_enum', frozenset(s['enum']))})"
            )
        if "pattern" in s:
            rx = self.name("_rx", re.compile(s["pattern"]))
            parts.append(f"(type({x}) is not str or {rx}.fullmatch({x}) is not None)")
        if (
            names == ["object"]
            or names == ["array"]
            or (not names and {"properties", "items", "prefixItems", "required"} & set(s))
        ):
            parts.append(f"{self.function(s)}({x}) is None")
        elif names:
            alts = []
            for t in names:
                if t == "integer":
                    alts.append(f"(type({x}) is int and {lo} <= {x} <= {hi})")
                elif t == "number":
                    alts.append(f"(type({x}) is int and {lo} <= {x} <= {hi})")
                    alts.append(f"(type({x}) is float and {x} == {x} and {x} not in (_INF, -_INF))")
                elif t == "string":
                    alts.append(f"type({x}) is str")
                elif t == "boolean":
                    alts.append(f"type({x}) is bool")
                elif t == "null":
                    alts.append(f"{x} is None")
                else:  # object or array among others: the closure decides
                    alts.append(
                        f"{self.name('_slow', _compile(s, self.root, self.slow_refs))}({x}) is None"
                    )
            parts.append("(" + " or ".join(alts) + ")")
        elif not {"const", "enum"} & set(s):
            parts.append(f"_free({x}) is None")
        return " and ".join(parts) or "True"

    def ref(self, name: str) -> str:
        if name not in self.refs:
            self.refs[name] = f"_def_{re.sub(r'[^0-9a-zA-Z_]', '_', name)}"
            self.define(self.refs[name], self.root["$defs"][name])
        return self.refs[name]

    def function(self, s: dict[str, Any]) -> str:
        self.n += 1
        fname = f"_f{self.n}"
        self.define(fname, s)
        return fname

    def define(self, fname: str, s: dict[str, Any]) -> None:
        slow = self.name("_slow", _compile(s, self.root, self.slow_refs))
        names = s["type"] if isinstance(s.get("type"), list) else [s["type"]] if "type" in s else []
        body: list[str] = []
        if names == ["object"] or (not names and {"properties", "required"} & set(s)):
            body += self.object_body(s, slow, typed=names == ["object"])
        elif names == ["array"] or (not names and {"items", "prefixItems"} & set(s)):
            body += self.array_body(s, slow, typed=names == ["array"])
        else:
            body.append(f"if not ({self.cond(s, 'v')}): return {slow}(v)")
        self.src.append(
            f"def {fname}(v):\n" + "".join(f"    {ln}\n" for ln in body) + "    return None\n"
        )

    def object_body(self, s: dict[str, Any], slow: str, typed: bool) -> list[str]:
        out = [f"if type(v) is not dict: return {slow}(v) if {typed} else None"]
        req = s.get("required", [])
        if req:
            out.append(f"if not ({' and '.join(f'{k!r} in v' for k in req)}): return {slow}(v)")
        props = s.get("properties", {})
        out.append("n = 0")
        for k, sub in props.items():
            out.append(f"x = v.get({k!r}, _M)")
            out.append("if x is not _M:")
            out.append("    n += 1")
            out.append(f"    if not ({self.cond(sub, 'x')}): return {slow}(v)")
        extra = s.get("additionalProperties")
        other = self.cond(extra, "x") if isinstance(extra, dict) else "_free(x) is None"
        known = self.name("_props", frozenset(props))
        out.append("if n != len(v):")
        out.append("    for k, x in v.items():")
        out.append(f"        if k not in {known} and not ({other}): return {slow}(v)")
        if "propertyNames" in s:
            out.append("for k in v:")
            out.append(f"    if not ({self.cond(s['propertyNames'], 'k')}): return {slow}(v)")
        return out

    def array_body(self, s: dict[str, Any], slow: str, typed: bool) -> list[str]:
        out = [f"if type(v) is not list: return {slow}(v) if {typed} else None"]
        lo, hi = s.get("minItems", 0), s.get("maxItems")
        if lo:
            out.append(f"if len(v) < {lo}: return {slow}(v)")
        if hi is not None:
            out.append(f"if len(v) > {hi}: return {slow}(v)")
        pre = s.get("prefixItems", [])
        for i, sub in enumerate(pre):
            out.append(f"if len(v) > {i} and not ({self.cond(sub, f'v[{i}]')}): return {slow}(v)")
        items = s.get("items")
        item = self.cond(items, "x") if isinstance(items, dict) else "_free(x) is None"
        if item != "True":
            start = f"v[{len(pre)}:]" if pre else "v"
            out.append(f"for x in {start}:")
            out.append(f"    if not ({item}): return {slow}(v)")
        return out


@functools.cache
def _checker(path: Path, kind: str) -> Check:
    """The fast check of the definition ``kind`` of the schema at ``path``."""
    gen = _Gen(load_schema(path))
    entry = gen.ref(kind)
    exec(compile("\n".join(gen.src), f"<schema {path.name}#{kind}>", "exec"), gen.ns)
    return gen.ns[entry]


def first_error(obj: Any, kind: str, path: Path) -> list[str]:
    """The first error of ``obj`` against the definition ``kind`` of the schema at ``path``, as
    ``FIELD: problem`` with the field a dotted path (the whole line: ``the line``), or []."""
    err = _checker(path, kind)(obj)
    if err is None:
        return []
    where, _, what = err.partition(": ")
    return [f"{where.lstrip('.') or 'the line'}: {what}"]


@functools.cache
def load_schema(path: Path) -> dict[str, Any]:
    return json.loads(Path(path).read_text())
