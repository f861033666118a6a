"""Human-readable rendering of check results and counterexamples."""

from __future__ import annotations

import json
from typing import Any

from isr.checker.result import CheckResult, Counterexample
from isr.spec.protocols import protocol_source

from .why import counterexample_lines


def _fmt_value(v: Any) -> str:
    return json.dumps(v, separators=(",", ":"))


def _args(args: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in args.items())


def protocol_words(name: str, version=None) -> str:
    """A version's name; a user's (``version`` from --protocol-file) also with its file and
    content hash."""
    src = protocol_source(version)
    if not src:
        return name
    return f"{name} (file {src['protocol_file']}, sha256 {src['protocol_sha256'][:12]})"


def config_words(cfg, version=None) -> str:
    """The bounds of a model configuration (of ``version``, the model's version object), as
    every command's header line gives them."""
    return (
        f"protocol {protocol_words(cfg.protocol, version)}, replicas {cfg.replicas}, records {cfg.records}, "
        f"epochs {cfg.epochs}, crashes {cfg.crashes}, acks {cfg.acks}, "
        f"min.insync.replicas {cfg.min_isr}"
    )


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


def verdict_word(p, distinct: int | None = None) -> str:
    """A property's verdict as the text output shows it. ``distinct``: the run's distinct states,
    quoted for a property an incomplete search left undecided."""
    if p.holds is True:
        return "holds" if p.kind != "sometimes" else "reached"
    if p.holds is None:
        if p.kind == "eventually":
            return "not checked here (isr liveness)"
        if p.checked_to_depth is None:
            return "undecided"
        what = "not reached" if p.kind == "sometimes" else "no violation"
        states = "" if distinct is None else f" ({distinct:,} distinct states)"
        return f"{what} up to depth {p.checked_to_depth}{states}"
    if p.kind == "sometimes":
        return "NEVER REACHED"
    n = f"{p.counterexample.length} steps" if p.counterexample else "no counterexample"
    if p.found_after_seconds is not None:
        n += (
            f", found after {p.found_after_seconds:.1f} s at "
            f"{p.found_after_states:,} distinct states"
        )
    return f"VIOLATED ({n})"


STOP_LABELS = {
    "exhausted": "complete",
    "all-properties-decided": "stopped early: every checked property decided",
    "first-violation": "stopped early: at the first violation",
    "max-states": "INCOMPLETE: --max-states reached",
    "max-seconds": "INCOMPLETE: --max-seconds reached",
    "interrupted": "INCOMPLETE: interrupted",
}


# engines whose runs --checkpoint/--resume can continue (cli/check.py)
RESUMABLE = ("bfs", "parallel", "spark")


def stop_label(res: CheckResult) -> str:
    if res.complete:
        return "complete"
    return STOP_LABELS.get(res.stop_reason, f"INCOMPLETE: {res.stop_reason}")


def render_result(res: CheckResult, header: str) -> str:
    out = [header]
    line = f"engine {res.engine}, symmetry {'on' if res.symmetry else 'off'}"
    if res.extra.get("store", "memory") != "memory":
        line += f", {res.extra['store']} store"
    if res.model.endswith("+dead-state"):
        line += ", dead-state reduction"
    out.append(line)
    out.append(
        f"{stop_label(res)} ({res.distinct_states:,} distinct states, "
        f"{res.states_generated:,} generated, depth {res.depth}, {res.seconds:.1f} s, "
        f"{res.states_per_second:,.0f} distinct/s)"
    )
    if not res.complete and res.extra.get("unexplored"):
        out.append(f"states left unexplored in the queue: {res.extra['unexplored']:,}")
    if res.stop_reason == "interrupted" and res.engine in RESUMABLE:
        kept = res.extra.get("checkpoint_dir")
        out.append(
            f"continue this run with --resume {kept} (its finished levels are kept there)"
            if kept
            else "to continue a long run later: start it with --checkpoint DIR (every finished "
            "BFS level is kept) and continue with --resume DIR"
        )
    out.append(f"fingerprint collision probability {res.collision_probability:.1e} (optimistic)")
    out.append("")
    width = max((len(p.name) for p in res.properties), default=10)
    for p in res.properties:
        out.append(f"  {p.name:<{width}}  {p.kind:<10}  {verdict_word(p, res.distinct_states)}")
    out.append("")
    if res.complete:
        never = ", ".join(res.actions_never_fired) or "none"
        out.append(f"actions never fired: {never}")
    out.append(f"terminal states (no action enabled): {res.deadlocks:,}")
    if res.extra.get("deadlock_example_error"):
        out.append(f"(no example of one: {res.extra['deadlock_example_error']})")
    out.extend(counterexample_lines(res.properties, render_counterexample))
    for p in res.properties:
        if p.counterexample is not None:
            if p.counterexample.note:
                out.append(f"  ({p.name}: {p.counterexample.note})")
        elif p.holds is False and p.note and p.kind != "sometimes":
            out.append("")
            out.append(f"{p.name}: {p.note}")
    out.append("")
    code = res.exit_code()
    word = {
        0: "all checked properties hold" if res.stopped_early else "all properties hold",
        1: "VIOLATED",
        3: "INCOMPLETE",
    }[code]
    out.append(f"verdict: {word} (exit {code})")
    return "\n".join(out)
