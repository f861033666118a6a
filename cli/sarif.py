"""SARIF 2.1.0 for code-scanning dashboards (GitHub, GitLab): `--sarif FILE` of `isr check`,
`isr matrix`, `isr validate` and `isr conform`.

SARIF is made for findings in source files; a model-checking verdict has no line of code, so
each result points at the property's definition in the spec (spec/properties.py, or
spec/liveness.py for `eventually` properties), or at the trace file or scenario a validation
rejected, and carries the counterexample as text. Every command builds the JUnit suites of
cli/junit.py first, and this module turns the same suites into SARIF (`from_suites`), so the two
reports always agree: a rule per property (or verdict kind) that was checked, passing ones
included, so a dashboard lists them; a result per failed case (level ``error``), per errored
case (``error``, the input could not be checked) and per undecided case (``note``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from .errors import UsageError
from .junit import Suite, check_suite

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
VERSION = "2.1.0"


def from_suites(
    suites: Iterable[Suite],
    command: str = "isr",
    descriptions: dict[str, str] | None = None,
    complete: bool | None = None,
) -> dict[str, Any]:
    """The SARIF log of JUnit suites: a rule per distinct case rule (a property's name unless the
    case says otherwise), a result per failed, errored or skipped case."""
    suites = list(suites)
    descriptions = descriptions or {}
    rules: dict[str, dict[str, Any]] = {}
    results = []
    for s in suites:
        for c in s.cases:
            rule = c.rule or c.name
            if rule not in rules:
                rules[rule] = {
                    "id": rule,
                    "shortDescription": {"text": descriptions.get(rule) or c.description or rule},
                }
            if c.failure is not None:
                level, text = "error", c.failure
            elif c.error is not None:
                level, text = "error", c.error
            elif c.skipped is not None:
                level, text = "note", c.skipped
            else:
                continue
            where = c.uri or "spec/properties.py"
            results.append(
                {
                    "ruleId": rule,
                    "ruleIndex": list(rules).index(rule),
                    "level": level,
                    "message": {"text": f"{s.name}: {c.name}: {text}"},
                    "locations": [{"physicalLocation": {"artifactLocation": {"uri": where}}}],
                    "properties": {"suite": s.name, "case": c.name},
                }
            )
    if complete is None:
        complete = all(s.properties.get("complete", "true") == "true" for s in suites)
    return {
        "$schema": SCHEMA,
        "version": VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "isr",
                        "rules": list(rules.values()),
                    }
                },
                "invocations": [{"commandLine": command, "executionSuccessful": bool(complete)}],
                "results": results,
            }
        ],
    }


def check_sarif(res: Any, command: str = "isr check") -> dict[str, Any]:
    """The SARIF log of a CheckResult (checker.result): a rule per property, with its
    description, and a result per violation."""
    return from_suites([check_suite(res, command)], command, complete=bool(res.complete))


def write(path: str, doc: dict[str, Any]) -> None:
    try:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
    except OSError as e:
        raise UsageError(f"cannot write {path}: {e.strerror}") from None
