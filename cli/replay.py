"""`isr replay FILE`: re-run a saved counterexample against the spec, step by step."""

from __future__ import annotations

import argparse
import json
import sys

from spec import Config, ConfigError, IsrSpec
from traces import counterexample as cxfile
from traces import itf

from .errors import OK, REJECTED, VIOLATION, UsageError


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
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        trace = itf.read_any(args.file)  # NDJSON or ITF, by content
    except cxfile.TraceFileError as e:
        raise UsageError(str(e)) from None
    try:
        cfg = Config(**trace.header.get("config", {})).validate()
    except (TypeError, ConfigError) as e:
        raise UsageError(f"{args.file}: bad config in header: {e}") from None
    model = IsrSpec(cfg)
    itf.label_steps(model, trace)  # ITF from other tools may name no action
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
