"""JUnit XML for CI systems (`--junit FILE` of `isr matrix`, `isr validate`, and `isr check`).

CI servers (Jenkins, GitLab, GitHub's test reporters) read JUnit XML: test suites of test cases,
each passed, failed (``<failure message=...>``), errored (``<error>``) or skipped. We map:
- `isr check`: one suite, one case per property; a violated property fails with the
  counterexample summary (its length and the actions) as the message, the full text as the body;
  a property the run could not decide is skipped;
- `isr matrix`: one suite per cell (protocol version × fault mode × bounds), a case per property;
- `isr validate`: one suite, one case per trace; rejected fails, unsupported errors,
  incomplete is skipped.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .errors import UsageError


@dataclass
class Case:
    name: str
    classname: str
    seconds: float = 0.0
    failure: str | None = None  # message of a failed case
    error: str | None = None  # message of an errored case (bad input, unsupported)
    skipped: str | None = None  # why it was not decided
    details: str = ""  # body text of the failure / error
    rule: str | None = None  # SARIF rule id (default: the case's name, a property's name)
    uri: str | None = None  # SARIF location (default: where the properties are defined)
    description: str | None = None  # SARIF rule description (a property's docstring line)


@dataclass
class Suite:
    name: str
    cases: list[Case] = field(default_factory=list)
    seconds: float = 0.0
    properties: dict[str, str] = field(default_factory=dict)


def to_xml(suites: Iterable[Suite]) -> str:
    suites = list(suites)
    root = ET.Element("testsuites", name="isr")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for s in suites:
        counts = {
            "tests": len(s.cases),
            "failures": sum(c.failure is not None for c in s.cases),
            "errors": sum(c.error is not None for c in s.cases),
            "skipped": sum(c.skipped is not None for c in s.cases),
        }
        for k, v in counts.items():
            totals[k] += v
        el = ET.SubElement(
            root,
            "testsuite",
            name=s.name,
            time=f"{s.seconds:.3f}",
            **{k: str(v) for k, v in counts.items()},
        )
        if s.properties:
            props = ET.SubElement(el, "properties")
            for k, v in s.properties.items():
                ET.SubElement(props, "property", name=k, value=str(v))
        for c in s.cases:
            ce = ET.SubElement(
                el, "testcase", name=c.name, classname=c.classname, time=f"{c.seconds:.3f}"
            )
            if c.failure is not None:
                ET.SubElement(ce, "failure", message=c.failure, type="violation").text = (
                    c.details or c.failure
                )
            elif c.error is not None:
                ET.SubElement(ce, "error", message=c.error, type="error").text = (
                    c.details or c.error
                )
            elif c.skipped is not None:
                ET.SubElement(ce, "skipped", message=c.skipped)
    for k, v in totals.items():
        root.set(k, str(v))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def write(path: str, suites: Iterable[Suite]) -> None:
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(to_xml(suites))
    except OSError as e:
        raise UsageError(f"cannot write {path}: {e.strerror}") from None


def _args(args: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in args.items())


def cx_summary(steps: list[Any], loop_start: int | None = None) -> str:
    """`violated in N steps: A(x=1) → B(...)` from steps with ``action`` and ``args`` (objects
    or dicts)."""
    acts = []
    for s in steps:
        action = s["action"] if isinstance(s, dict) else s.action
        args = s["args"] if isinstance(s, dict) else s.args
        acts.append(f"{action}({_args(args or {})})")
    lasso = f", cycle from step {loop_start}" if loop_start is not None else ""
    return f"violated in {len(steps)} steps{lasso}: " + " → ".join(acts)


def property_case(
    classname: str,
    name: str,
    kind: str,
    holds: bool | None,
    steps: list | None,
    loop_start: int | None = None,
    seconds: float = 0.0,
    details: str = "",
) -> Case:
    """One property's verdict as a test case."""
    case = Case(name=name, classname=classname, seconds=seconds)
    if holds is False:
        if steps is not None:
            case.failure = cx_summary(steps, loop_start)
        else:
            case.failure = "never reached" if kind == "sometimes" else "violated"
        case.details = details
    elif holds is None:
        case.skipped = (
            "not checked by this engine" if kind == "eventually" else "undecided (run incomplete)"
        )
    return case


def _spec_file(kind: str) -> str:
    """Where a property of this kind is defined (SARIF's location of a verdict)."""
    return "spec/liveness.py" if kind == "eventually" else "spec/properties.py"


def check_suite(res: Any, suite_name: str, render_cx=None) -> Suite:
    """`isr check`'s result (a checker.result.CheckResult) as a suite. ``render_cx``: a function
    from a Counterexample to its text lines (cli.render.render_counterexample), for the body."""
    suite = Suite(
        name=suite_name,
        seconds=res.seconds,
        properties={
            "engine": res.engine,
            "complete": str(res.complete).lower(),
            "distinct_states": str(res.distinct_states),
        },
    )
    from .traceout import full_states
    from .why import violation

    for p in res.properties:
        cx = p.counterexample
        details = "\n".join(render_cx(cx)) if (cx is not None and render_cx) else ""
        case = property_case(
            suite_name,
            p.name,
            p.kind,
            p.holds,
            cx.steps if cx is not None else None,
            cx.loop_start if cx is not None else None,
            details=details,
        )
        case.uri, case.description = _spec_file(p.kind), p.description or None
        if case.failure is not None and cx is not None:
            # what breaks, in words (cli/why.py), after the actions
            case.failure += f"; {violation(p.name, full_states(cx), cx.loop_start)}"
        suite.cases.append(case)
    return suite


def matrix_suites(cells: list[dict[str, Any]]) -> list[Suite]:
    """`isr matrix`'s cells: one suite per cell, one case per property the cell's version states."""
    suites = []
    for c in cells:
        name = f"R={c['replicas']} f={c['crashes']} {c['protocol']} {c['mode']}"
        suite = Suite(
            name=name,
            seconds=c.get("seconds", 0.0),
            properties={"complete": str(c["complete"]).lower(), "protocol": c["protocol"]},
        )
        for prop, entry in c["properties"].items():
            cx = entry.get("counterexample")
            case = property_case(
                name,
                prop,
                entry["kind"],
                entry["holds"],
                cx["steps"] if cx else None,
                cx.get("loop_start") if cx else None,
            )
            case.uri = _spec_file(entry["kind"])
            suite.cases.append(case)
        suites.append(suite)
    return suites


def validate_suite(verdicts: list[Any]) -> Suite:
    """`isr validate`'s verdicts (traces.validator.validate.Verdict): one case per trace."""
    suite = Suite(name="isr validate", seconds=sum(v.seconds for v in verdicts))
    for v in verdicts:
        case = Case(name=v.name, classname="isr validate", seconds=v.seconds, uri=v.name)
        case.rule = f"trace-{v.verdict}"  # SARIF: one rule per verdict kind
        where = f" at event #{v.index}" if v.index is not None else ""
        if v.verdict == "rejected":
            case.failure = f"rejected{where}: {v.reason}"
            case.details = "\n".join([case.failure, *(f"- {m}" for m in v.mismatches)])
        elif v.verdict in ("unsupported", "bad-input"):
            case.error = f"{v.verdict}: {v.reason}"
        elif v.verdict == "incomplete":
            case.skipped = f"incomplete: {v.reason}"
        suite.cases.append(case)
    return suite
