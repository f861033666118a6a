"""`isr replay FILE`: re-run a saved counterexample against the spec, step by step."""

from __future__ import annotations

import json
import sys

from isr.spec import Config, ConfigError, IsrSpec
from isr.spec.protocols import ProtocolVersion
from isr.traces import counterexample as cxfile
from isr.traces.counterexample import itf
from isr.traces.format import parse_document

from .errors import OK, REJECTED, VIOLATION, UsageError
from .models import add_protocol_file_arg, user_protocol


def register(sub) -> None:
    p = sub.add_parser(
        "replay",
        help="re-run a counterexample written by `isr check --trace-out` against the spec",
        description="Confirms that every step is a transition of the spec and that the property "
        "named in the file is violated at the end. Exit 1: the violation is confirmed; 0: the trace "
        "is a behaviour of the spec but the property holds at its end; 4: a step is not a "
        "transition of the spec; 2: bad input.",
    )
    p.add_argument("file", metavar="FILE")
    p.add_argument("--format", choices=["text", "json"], default="text")
    add_protocol_file_arg(
        p,
        "the protocol file the trace was written with (default: the one its header names); "
        "refused if its content changed since (protocol_sha256)",
    )
    p.set_defaults(run=run)


def _peek_header(path: str) -> dict:
    """The header of a counterexample file before it is read in full (which needs the user's
    protocol registered): NDJSON's first line, or ITF's ``#meta.isr``. Empty when unreadable;
    the full read then says what is wrong."""
    try:
        with open(path, encoding="utf-8") as f:
            try:
                obj = parse_document(f.readline(1 << 20))
            except ValueError:  # not one JSON document per line: ITF, pretty-printed
                obj = None
            if isinstance(obj, dict) and obj.get("type") == "header":
                return obj
            f.seek(0)
            doc = parse_document(f.read())
        meta = doc.get("#meta") if isinstance(doc, dict) else None
        isr = meta.get("isr") if isinstance(meta, dict) else None
        return isr if isinstance(isr, dict) else {}
    except (OSError, ValueError, UnicodeDecodeError):
        return {}


def load_trace_protocol(path: str, protocol_file: str | None = None) -> ProtocolVersion | None:
    """The user's version a counterexample or trace file was written with: ``protocol_file``
    (the command's --protocol-file) or else the one its header names, loaded by
    ``user_protocol`` and refused when its content is not what the file was made with
    (``protocol_sha256``); None for a built-in version. The one way every command that reads a
    counterexample header loads its protocol file (replay, explain, explore --trace, conform
    --from-counterexample)."""
    header = _peek_header(path)
    source = protocol_file or header.get("protocol_file")
    if not source:
        return None
    if not isinstance(source, str):
        raise UsageError(f"{path}: header protocol_file is not a string")
    version = user_protocol(source)
    want = header.get("protocol_sha256")
    have = version.source_sha256 or ""
    if want and want != have:
        raise UsageError(
            f"{path} was written with protocol file sha256 {str(want)[:12]}, {source} now has "
            f"{have[:12]}: the protocol changed since; re-run the check"
        )
    return version


def load_trace(
    path: str, protocol_file: str | None = None
) -> tuple[cxfile.CounterexampleTrace, IsrSpec]:
    """The counterexample in ``path`` (NDJSON or ITF, by content) and the spec its header
    names, its protocol file loaded (``protocol_file`` or the header's), every step named by
    its action. UsageError for a file that cannot be used (`isr explore --trace` too)."""
    version = load_trace_protocol(path, protocol_file)
    try:
        trace = itf.read_any(path, version)  # NDJSON or ITF, by content
    except cxfile.TraceFileError as e:
        raise UsageError(str(e)) from None
    try:
        cfg = Config(**trace.header.get("config", {})).validate(version)
    except (TypeError, ConfigError) as e:
        raise UsageError(f"{path}: bad config in header: {e}") from None
    model = IsrSpec(cfg, version)
    itf.label_steps(model, trace)  # ITF from other tools may name no action
    return trace, model


def run(args) -> int:
    trace, model = load_trace(args.file, args.protocol_file)
    prop_name = trace.header.get("property")
    prop = next((p for p in model.properties if p.name == prop_name), None)
    if prop is None:
        raise UsageError(f"{args.file}: the header names no known property ({prop_name!r})")
    report = replay(model, trace, prop)
    if args.format == "json":
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(report["message"])
        if "enabled" in report:
            print("enabled there:")
            for a in report["enabled"]:
                print(f"  {a['action']}({', '.join(f'{k}={v}' for k, v in a['args'].items())})")
    return report["exit"]


def replay(model: IsrSpec, trace: cxfile.CounterexampleTrace, prop) -> dict:
    state = next((s for s in model.init_states() if model.state_to_json(s) == trace.initial), None)
    if state is None:
        return {
            "exit": REJECTED,
            "confirmed_steps": 0,
            "message": "rejected at step 0: the initial state is not an initial state of the spec",
        }
    prev = None
    last_action = None
    for step in trace.steps:
        want = {"action": step["action"], "args": step.get("args", {})}
        enabled = []
        nxt = None
        for action, t in model.successors(state):
            desc = model.describe_action(action)
            enabled.append(desc)
            if desc == want and model.state_to_json(t) == step["state"]:
                nxt = (action, t)
                break
        if nxt is None:
            return {
                "exit": REJECTED,
                "confirmed_steps": step["index"] - 1,
                "message": f"rejected at step {step['index']}: {step['action']}"
                f"({', '.join(f'{k}={v}' for k, v in want['args'].items())}) "
                "is not a transition of the spec from the state before it",
                "enabled": enabled,
            }
        prev, state = state, nxt[1]
        last_action = nxt[0]
    n = len(trace.steps)
    if prop.kind == "always":
        violated = not prop.check(state)
    elif prop.kind == "action":
        violated = prev is not None and not prop.check(prev, last_action, state)
    else:
        violated = False
    if violated:
        return {
            "exit": VIOLATION,
            "confirmed_steps": n,
            "property": prop.name,
            "message": f"confirmed: all {n} steps are transitions of the spec, and {prop.name} "
            f"is violated {'by the last step' if prop.kind == 'action' else 'in the last state'}",
        }
    return {
        "exit": OK,
        "confirmed_steps": n,
        "property": prop.name,
        "message": f"all {n} steps are transitions of the spec, but {prop.name} holds at the end",
    }
