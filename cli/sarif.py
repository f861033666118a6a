"""SARIF 2.1.0 for code-scanning dashboards (GitHub, GitLab): one result per violated property.

SARIF is made for findings in source files; a model-checking verdict has no line of code, so
each result points at the property's definition in the spec (spec/properties.py, or
spec/liveness.py for `eventually` properties) and carries the counterexample as text: its
length, its actions and the sentence saying what breaks (cli/why.py). Rules are the properties
that were checked, so a dashboard lists passing ones too.
"""

from __future__ import annotations

import json
from typing import Any

from .errors import UsageError
from .traceout import full_states
from .why import one_line

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _where(kind: str) -> str:
    return "spec/liveness.py" if kind == "eventually" else "spec/properties.py"


def check_sarif(res: Any, command: str = "isr check") -> dict[str, Any]:
    """The SARIF log of a CheckResult: a rule per property, a result per violation."""
    rules, results = [], []
    for p in res.properties:
        rules.append(
            {
                "id": p.name,
                "shortDescription": {"text": p.description or p.name},
                "properties": {"kind": p.kind},
            }
        )
        if p.holds is not False:
            continue
        cx = p.counterexample
        text = (
            one_line(p.name, cx.steps, full_states(cx))
            if cx is not None
            else f"{p.name}: {'never reached' if p.kind == 'sometimes' else 'violated'}"
        )
        results.append(
            {
                "ruleId": p.name,
                "level": "error",
                "message": {"text": text},
                "locations": [{"physicalLocation": {"artifactLocation": {"uri": _where(p.kind)}}}],
                "properties": {"length": cx.length if cx is not None else None},
            }
        )
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "isr", "informationUri": "README.md", "rules": rules}},
                "invocations": [
                    {"commandLine": command, "executionSuccessful": bool(res.complete)}
                ],
                "results": results,
            }
        ],
    }


def write(path: str, doc: dict[str, Any]) -> None:
    try:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
    except OSError as e:
        raise UsageError(f"cannot write {path}: {e.strerror}") from None
