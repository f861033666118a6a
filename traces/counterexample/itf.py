"""Counterexamples as Apalache's Informal Trace Format (ITF), and TLC's `-dumpTrace json`.

TLA+ users exchange traces as ITF JSON; this module writes the same data as the NDJSON
counterexample file (:mod:`traces.counterexample`) in that form and reads it back, so that
`isr replay` and `isr explain` take either. It also imports TLC's `-dumpTrace json` of a TLA+
spec that uses our variable names. The mapping is written down in traces/counterexample/ITF.md.

An ITF document:
  {"#meta": {"format": "ITF", ..., "isr": <our header>}, "vars": [...], "loop": i (lassos),
   "states": [{"#meta": {"index": i, "action": NAME, "args": {...}}, var: value, ...}, ...]}
Values: ints as JSON numbers (``{"#bigint": "..."}`` beyond 2^53), sets as ``{"#set": [...]}``,
tuples as ``{"#tup": [...]}``, per-replica functions as records keyed ``r0``, ``r1``...;
sequences as arrays. Reading accepts ``#bigint`` everywhere, ``#map``, and sets as arrays.

Detection is by content (:func:`read_any`): one JSON document with ``states`` and ``vars`` is ITF;
one with a ``state`` list (or a bare list of records) is a TLC dump; anything else is NDJSON.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from typing import Any

from isr.spec.codec import JSON_ABSENT, PER_REPLICA_KEYS, SET_PATHS, TUPLE_PATHS

from .. import counterexample as cxfile
from .. import format as tformat
from . import CounterexampleTrace, TraceFileError

FORMATS = ("ndjson", "itf")
ITF_DESCRIPTION = "https://apalache-mc.org/docs/adr/015adr-trace.html"
SAFE_INT = 2**53

# Variables that are functions of the replica id (records keyed r0, r1, ... in our JSON).
PER_REPLICA = frozenset(PER_REPLICA_KEYS)


# ---------------------------------------------------------------------------- values


def _matches(path: tuple, patterns: set[tuple]) -> bool:
    def fits(p: Any, q: Any) -> bool:
        if p == "*":
            return isinstance(q, str)
        if p == "[]":
            return isinstance(q, int)
        return p == q

    return any(
        len(pat) == len(path) and all(fits(p, q) for p, q in zip(pat, path, strict=True))
        for pat in patterns
    )


def encode(value: Any, path: tuple = ()) -> Any:
    """Our JSON value at ``path`` (a state variable and the keys below it) as an ITF value."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value if -SAFE_INT < value < SAFE_INT else {"#bigint": str(value)}
    if isinstance(value, dict):
        return {k: encode(v, (*path, k)) for k, v in value.items()}
    if isinstance(value, list):
        items = [encode(v, (*path, i)) for i, v in enumerate(value)]
        if _matches(path, SET_PATHS):
            return {"#set": items}
        if _matches(path, TUPLE_PATHS):
            return {"#tup": items}
        return items
    raise TypeError(f"cannot encode {type(value).__name__} at {'.'.join(map(str, path))}")


def _sort_key(v: Any) -> tuple:
    return (0, v, "") if isinstance(v, int) and not isinstance(v, bool) else (1, 0, json.dumps(v))


def decode(value: Any) -> Any:
    """An ITF (or TLC JSON) value as our JSON: sets become sorted lists, tuples lists, maps
    records with string keys, big integers ints."""
    if isinstance(value, list):
        return [decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    if set(value) == {"#bigint"}:
        return int(value["#bigint"])
    if set(value) == {"#tup"}:
        return [decode(v) for v in value["#tup"]]
    if set(value) == {"#set"}:
        return sorted((decode(v) for v in value["#set"]), key=_sort_key)
    if set(value) == {"#map"}:
        return {str(decode(k)): decode(v) for k, v in value["#map"]}
    if "#unserializable" in value:
        raise TraceFileError(f"an unserializable value: {value['#unserializable']}")
    return {k: decode(v) for k, v in value.items()}


# ---------------------------------------------------------------------------- ITF


def to_itf(trace: CounterexampleTrace) -> dict[str, Any]:
    """The ITF document of a counterexample (our header kept under ``#meta.isr``)."""
    rest = {k: v for k, v in trace.header.items() if k not in ("type", "format", "version")}
    header = {"format": cxfile.FORMAT, "version": cxfile.VERSION, **rest}
    states = [trace.initial] + [s["state"] for s in trace.steps]
    # ITF wants every variable in every state: the union of the states' keys (a key that only
    # some states have, e.g. one a fault mode writes once it happened, is never dropped)
    names = list(dict.fromkeys(k for st in states for k in st))
    out_states = []
    for i, st in enumerate(states):
        meta: dict[str, Any] = {"index": i}
        if i:
            step = trace.steps[i - 1]
            meta["action"] = step["action"]
            meta["args"] = encode(step.get("args", {}))
        out_states.append({"#meta": meta, **{n: _value(st, n) for n in names}})
    doc: dict[str, Any] = {
        "#meta": {
            "format": "ITF",
            "format-description": ITF_DESCRIPTION,
            "source": header.get("model", "isr"),
            "description": f"counterexample to {header.get('property', '?')} written by isr",
            "isr": header,
        },
        "vars": names,
        "states": out_states,
    }
    if header.get("loop_start") is not None:
        # ITF's loop: the state the last one loops back to (it equals it); our loop_start is the
        # cycle's first step, which leaves that state
        doc["loop"] = header["loop_start"] - 1
    return doc


# A variable a state of ours does not have (the state JSON writes some keys only once their
# mechanism has moved them): ITF's escape for a value it cannot carry, read back as absent.
ABSENT = {"#unserializable": "absent"}


def _value(st: dict[str, Any], name: str) -> Any:
    """``st[name]`` in ITF's encoding; a key the state leaves out written with the value its
    absence stands for (spec.codec.JSON_ABSENT) or, for the others, as ``ABSENT``."""
    if name in st:
        return encode(st[name], (name,))
    if name in JSON_ABSENT:
        return encode(JSON_ABSENT[name], (name,))
    return ABSENT


def from_itf(doc: dict[str, Any], where: str = "ITF") -> CounterexampleTrace:
    """A counterexample from an ITF document (ours, or any with our variable names: then the
    header is what ``#meta.isr`` holds, and unlabelled steps get ``action`` None)."""
    states = doc.get("states")
    if not isinstance(states, list) or not states:
        raise TraceFileError(f"{where}: an ITF trace needs a non-empty 'states' list")
    names = doc.get("vars") or [k for k in states[0] if k != "#meta"]
    meta = doc.get("#meta") or {}
    header = dict(meta.get("isr") or {})
    header.pop("format", None)
    header.pop("version", None)
    if doc.get("loop") is not None:
        header["loop_start"] = int(decode(doc["loop"])) + 1
    decoded = []
    for k, st in enumerate(states):
        if not isinstance(st, dict):
            raise TraceFileError(f"{where}: state {k} is not an object")
        missing = [n for n in names if n not in st]
        if missing:
            raise TraceFileError(f"{where}: state {k} lacks variable {missing[0]!r}")
        decoded.append({n: normalise(n, decode(st[n])) for n in names if st[n] != ABSENT})
    steps = []
    for i in range(1, len(states)):
        m = states[i].get("#meta") or {}
        steps.append(
            {
                "type": "step",
                "index": i,
                "action": m.get("action"),
                "args": decode(m.get("args", {})),
                "changed": changed(decoded[i - 1], decoded[i]),
                "state": decoded[i],
            }
        )
    return CounterexampleTrace({"type": "header", **header}, decoded[0], steps)


def normalise(name: str, value: Any) -> Any:
    """Per-replica functions keyed ``0``, ``1``... (TLC, ``#map``) or given as an array indexed by
    replica id become records keyed ``r0``, ``r1``..."""
    if name not in PER_REPLICA:
        return value
    if isinstance(value, list):
        return {f"r{i}": v for i, v in enumerate(value)}
    if isinstance(value, dict):
        return {(f"r{k}" if k.lstrip("-").isdigit() else k): v for k, v in value.items()}
    return value


def changed(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """What a step changed, as in NDJSON counterexamples: a record variable lists only its
    changed keys; any other variable its whole new value."""
    out: dict[str, Any] = {}
    for k, v in after.items():
        old = before.get(k)
        if v == old:
            continue
        if isinstance(v, dict) and isinstance(old, dict):
            out[k] = {sk: sv for sk, sv in v.items() if old.get(sk) != sv}
        else:
            out[k] = v
    return out


def dumps(trace: CounterexampleTrace) -> str:
    """The ITF text: one line per state, so that diffs and `grep` stay readable."""
    doc = to_itf(trace)
    states = doc.pop("states")
    head = json.dumps(doc)[:-1]
    body = ",\n  ".join(json.dumps(s, separators=(",", ":")) for s in states)
    return f'{head},\n "states": [\n  {body}\n ]}}\n'


def write(
    path: str, header: dict[str, Any], states: list[dict[str, Any]], steps: Iterable[dict]
) -> None:
    """Same arguments as :func:`traces.counterexample.write`, ITF out."""
    steps = list(steps)
    trace_steps = [
        {"type": "step", "index": i, **step, "state": st}
        for i, (step, st) in enumerate(zip(steps, states[1:], strict=True), start=1)
    ]
    trace = CounterexampleTrace({"type": "header", **header}, states[0], trace_steps)
    with open(path, "w", encoding="utf-8") as f:
        f.write(dumps(trace))


def write_as(
    fmt: str, path: str, header: dict[str, Any], states: list[dict], steps: Iterable[dict]
) -> None:
    """Write a counterexample in ``fmt`` (``ndjson`` or ``itf``); OSError is the caller's."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown trace format {fmt!r}; known: {', '.join(FORMATS)}")
    (write if fmt == "itf" else cxfile.write)(path, header, states, steps)


# ---------------------------------------------------------------------------- TLC


def from_tlc(doc: Any, where: str = "TLC dump") -> CounterexampleTrace:
    """A counterexample from TLC's `-dumpTrace json` (the ``CounterExample`` record of TLCExt:
    ``state`` = [[i, {var: value}], ...], ``action`` = [[[i, s], {name, parameter}, [j, t]], ...]),
    or from a bare list of state records. The header is empty: the caller supplies protocol,
    property and bounds (:func:`infer_config`)."""
    if isinstance(doc, list):
        pairs = [(i + 1, s) for i, s in enumerate(doc)]
        actions: dict[int, dict] = {}
    elif isinstance(doc, dict) and isinstance(doc.get("state"), list):
        try:
            pairs = sorted(((int(i), s) for i, s in doc["state"]), key=lambda p: p[0])
        except (TypeError, ValueError):
            raise TraceFileError(f"{where}: 'state' must be a list of [index, record]") from None
        actions = {}
        for entry in doc.get("action") or []:
            try:
                (i, _s), act, (j, _t) = entry
                actions[int(j)] = act
            except (TypeError, ValueError):
                raise TraceFileError(
                    f"{where}: an 'action' entry is not [[i,s],act,[j,t]]"
                ) from None
    else:
        raise TraceFileError(f"{where}: not a TLC -dumpTrace json file (no 'state' list)")
    if not pairs:
        raise TraceFileError(f"{where}: the trace has no states")
    states = []
    for i, s in pairs:
        if not isinstance(s, dict):
            raise TraceFileError(f"{where}: state {i} is not a record")
        states.append({n: normalise(n, decode(v)) for n, v in s.items()})
    steps = []
    for k in range(1, len(states)):
        act = actions.get(pairs[k][0]) or {}
        steps.append(
            {
                "type": "step",
                "index": k,
                "action": act.get("name"),
                "args": decode(act.get("parameter", {})) if act.get("parameter") else None,
                "changed": changed(states[k - 1], states[k]),
                "state": states[k],
            }
        )
    header: dict[str, Any] = {"type": "header", "model": "tlc"}
    return CounterexampleTrace(header, states[0], steps)


def infer_config(trace: CounterexampleTrace, **given: Any) -> dict[str, Any]:
    """Bounds just large enough for the trace's states (a replay needs no more), overridden by
    ``given`` (protocol and any flag)."""
    states = [trace.initial] + [s["state"] for s in trace.steps]
    epochs = max(
        [e[1] for st in states for log in st["log"].values() for e in log]
        + [st["coordination"]["leader_epoch"] for st in states]
    )
    cfg = {
        "replicas": len(trace.initial["log"]),
        "records": max(1, max(st.get("records_written", 0) for st in states)),
        "epochs": max(1, epochs),
        "crashes": max(st.get("crashes", 0) for st in states),
    }
    cfg.update({k: v for k, v in given.items() if v is not None})
    return cfg


def label_steps(model: Any, trace: CounterexampleTrace) -> None:
    """Name the action and arguments of steps that carry none (TLC dumps without ``action``,
    ITF from other tools), by the spec: the unique successor equal to the next state. Steps no
    transition explains keep ``action`` None (a replay then rejects them)."""
    try:
        _label(model, trace)
    finally:
        for s in trace.steps:
            if s.get("args") is None:
                s["args"] = {}


def _label(model: Any, trace: CounterexampleTrace) -> None:
    if all(s.get("action") and s.get("args") is not None for s in trace.steps):
        return
    state = next((s for s in model.init_states() if model.state_to_json(s) == trace.initial), None)
    for step in trace.steps:
        if state is None:
            return
        found = None
        for action, t in model.successors(state):
            if model.state_to_json(t) != step["state"]:
                continue
            desc = model.describe_action(action)
            if step.get("action") in (None, desc["action"]):
                found = (desc, t)
                break
        if found is None:
            return
        desc, state = found
        step["action"] = desc["action"]
        step["args"] = desc["args"]


# ---------------------------------------------------------------------------- reading


def detect(text: str) -> str:
    """``itf``, ``tlc`` or ``ndjson``, by content."""
    try:
        doc = tformat.parse_document(text)
    except json.JSONDecodeError:
        return "ndjson"
    if isinstance(doc, dict) and "states" in doc and ("vars" in doc or "#meta" in doc):
        return "itf"
    if isinstance(doc, list) or (isinstance(doc, dict) and isinstance(doc.get("state"), list)):
        return "tlc"
    return "ndjson"


def read_any(path: str, version: Any = None) -> CounterexampleTrace:
    """Read an NDJSON or ITF counterexample file (detected by content). A TLC dump needs a
    protocol and a property: convert it first (``python -m isr.traces.counterexample.itf from-tlc``).
    ``version``: as for ``counterexample.read`` (the header's user protocol version)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise TraceFileError(f"cannot read {path}: {e.strerror}") from None
    except UnicodeDecodeError:
        raise TraceFileError(f"{path}: not UTF-8 text") from None
    kind = detect(text)
    if kind == "ndjson":
        return cxfile.read(path, version)
    if kind == "tlc":
        raise TraceFileError(
            f"{path}: a TLC -dumpTrace json file; convert it first: "
            f"python -m isr.traces.counterexample.itf from-tlc {path} --protocol NAME --property NAME -o OUT.itf.json"
        )
    trace = from_itf(tformat.parse_document(text), path)
    if not trace.header.get("property"):
        raise TraceFileError(f"{path}: the ITF trace names no property (#meta.isr.property)")
    return trace


def to_ndjson_lines(trace: CounterexampleTrace) -> list[str]:
    header = {k: v for k, v in trace.header.items() if k not in ("type", "format", "version")}
    lines = [
        json.dumps(
            {"type": "header", "format": cxfile.FORMAT, "version": cxfile.VERSION, **header}
        ),
        json.dumps({"type": "state", "index": 0, "state": trace.initial}),
    ]
    for s in trace.steps:
        step = {k: v for k, v in s.items() if k not in ("type", "index", "state")}
        lines.append(json.dumps({"type": "step", "index": s["index"], **step, "state": s["state"]}))
    return lines


# ---------------------------------------------------------------------------- command line


def main(argv: list[str] | None = None) -> int:
    """`python -m isr.traces.counterexample.itf to-itf|to-ndjson|from-tlc ...`: convert counterexample files."""
    p = argparse.ArgumentParser(
        prog="python -m isr.traces.counterexample.itf", description=main.__doc__
    )
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("to-itf", "to-ndjson"):
        c = sub.add_parser(name, help=f"convert an NDJSON or ITF counterexample {name[3:]}")
        c.add_argument("file")
        c.add_argument("-o", "--out", required=True)
    t = sub.add_parser("from-tlc", help="import TLC's -dumpTrace json as an ITF counterexample")
    t.add_argument("file")
    t.add_argument("--protocol", required=True)
    t.add_argument("--property", required=True)
    t.add_argument(
        "--config", default="{}", help="JSON object of further Config fields (bounds, modes)"
    )
    t.add_argument("-o", "--out", required=True)
    args = p.parse_args(argv)
    try:
        if args.cmd == "from-tlc":
            trace = import_tlc(args.file, args.protocol, args.property, json.loads(args.config))
        else:
            trace = read_any(args.file)
        with open(args.out, "w", encoding="utf-8") as f:
            if args.cmd == "to-ndjson":
                f.write("\n".join(to_ndjson_lines(trace)) + "\n")
            else:
                f.write(dumps(trace))
    except (TraceFileError, json.JSONDecodeError, OSError) as e:
        print(f"isr: error: {e}", file=sys.stderr)
        return 2
    print(f"{len(trace.steps)} steps written to {args.out}")
    return 0


def import_tlc(path: str, protocol: str, prop: str, extra: dict | None = None):
    """Read a TLC dump and give it a header: the property, and a Config with the protocol,
    ``extra`` and bounds inferred from the states; label unnamed steps by the spec."""
    from isr.spec import Config, ConfigError, IsrSpec

    try:
        with open(path, encoding="utf-8") as f:
            doc = tformat.parse_document(f.read())
    except OSError as e:
        raise TraceFileError(f"cannot read {path}: {e.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise TraceFileError(f"{path}: not a JSON document") from None
    trace = from_tlc(doc, path)
    for var in ("log", "coordination"):
        if var not in trace.initial:
            raise TraceFileError(
                f"{path}: the states lack the variable {var!r} (traces/counterexample/ITF.md)"
            )
    try:
        cfg = Config(**infer_config(trace, protocol=protocol, **(extra or {}))).validate()
    except (TypeError, ConfigError) as e:
        raise TraceFileError(f"{path}: bad config: {e}") from None
    model = IsrSpec(cfg)
    kind = next((p.kind for p in model.properties if p.name == prop), None)
    if kind is None:
        raise TraceFileError(f"unknown property {prop!r}")
    known = set(model.state_to_json(next(iter(model.init_states()))))
    unknown = sorted(set(trace.initial) - known)
    if unknown:
        raise TraceFileError(f"{path}: variables the spec does not have: {', '.join(unknown)}")
    trace.header.update(
        {"model": model.name, "config": cfg.to_json(), "property": prop, "kind": kind}
    )
    label_steps(model, trace)
    return trace


if __name__ == "__main__":
    sys.exit(main())
