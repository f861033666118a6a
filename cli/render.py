"""Human-readable rendering of check results and counterexamples."""

from __future__ import annotations

import json
from typing import Any

from checker.result import CheckResult, Counterexample


def _fmt_value(v: Any) -> str:
    return json.dumps(v, separators=(",", ":"))


def _args(args: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in args.items())


def render_counterexample(cx: Counterexample, indent: str = "  ") -> list[str]:
    lines = [f"{indent}0. Init"]
    for key, value in cx.initial.items():
        lines.append(f"{indent}     {key} = {_fmt_value(value)}")
    for step in cx.steps:
        mark = " (loop starts here)" if cx.loop_start == step.index else ""
        lines.append(f"{indent}{step.index}. {step.action}({_args(step.args)}){mark}")
        for key, value in step.changed.items():
            if isinstance(value, dict):
                for sub, v in value.items():
                    lines.append(f"{indent}     {key}.{sub} = {_fmt_value(v)}")
            else:
                lines.append(f"{indent}     {key} = {_fmt_value(value)}")
    return lines


def verdict_word(p) -> str:
    if p.holds is True:
        return "holds" if p.kind != "sometimes" else "reached"
    if p.holds is None:
        return "not checked here (isr liveness)" if p.kind == "eventually" else "undecided"
    if p.kind == "sometimes":
        return "NEVER REACHED"
    n = p.counterexample.length if p.counterexample else "?"
    return f"VIOLATED ({n} steps)"


def render_result(res: CheckResult, header: str) -> str:
    out = [header]
    out.append(f"engine {res.engine}, symmetry {'on' if res.symmetry else 'off'}")
    state = "complete" if res.complete else f"INCOMPLETE ({res.stop_reason})"
    out.append(
        f"{state}: {res.distinct_states:,} distinct states, {res.states_generated:,} generated, "
        f"depth {res.depth}, {res.seconds:.1f} s ({res.states_per_second:,.0f} distinct/s)"
    )
    out.append(f"fingerprint collision probability {res.collision_probability:.1e} (optimistic)")
    out.append("")
    width = max((len(p.name) for p in res.properties), default=10)
    for p in res.properties:
        out.append(f"  {p.name:<{width}}  {p.kind:<10}  {verdict_word(p)}")
    out.append("")
    if res.complete:
        never = ", ".join(res.actions_never_fired) or "none"
        out.append(f"actions never fired: {never}")
    out.append(f"terminal states (no action enabled): {res.deadlocks:,}")
    for p in res.properties:
        if p.counterexample is not None:
            out.append("")
            out.append(f"Counterexample for {p.name} ({p.counterexample.length} steps):")
            out.extend(render_counterexample(p.counterexample))
    out.append("")
    code = res.exit_code()
    word = {0: "all properties hold", 1: "VIOLATED", 3: "INCOMPLETE"}[code]
    out.append(f"verdict: {word} (exit {code})")
    return "\n".join(out)
