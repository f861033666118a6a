"""Property verdicts from what an engine found: one place that turns "violated here / witnessed /
search complete or not" into :class:`~checker.result.PropertyResult` values, shared by engines
that keep their findings as paths (the Spark BFS engine, simulation)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence

from .model import Action, Model, Property, State
from .paths import to_counterexample
from .result import PropertyResult

Path = list[tuple[Action, State]]

LIVENESS_NOTE = "liveness: checked by `isr liveness`, not by BFS"


def property_results(
    model: Model,
    props: Sequence[Property],
    *,
    complete: bool,
    violations: Mapping[str, Callable[[], Path]],
    witnessed: Collection[str],
    unreached_note: str = "not reached before the search stopped",
    liveness_note: str = LIVENESS_NOTE,
) -> list[PropertyResult]:
    """``violations`` maps an `always`/`action` property to a function building its violating
    path (for `action` properties the path ends with the violating transition)."""
    results: list[PropertyResult] = []
    for p in props:
        if p.kind in ("always", "action"):
            if p.name in violations:
                cx = to_counterexample(model, violations[p.name]())
                results.append(PropertyResult(p.name, p.kind, False, cx, p.description))
            else:
                results.append(PropertyResult(p.name, p.kind, True if complete else None))
        elif p.kind == "sometimes":
            if p.name in witnessed:
                results.append(PropertyResult(p.name, p.kind, True, None, p.description))
            else:
                results.append(
                    PropertyResult(
                        p.name,
                        p.kind,
                        False if complete else None,
                        None,
                        p.description,
                        note="never reached" if complete else unreached_note,
                    )
                )
        else:
            results.append(PropertyResult(p.name, p.kind, None, note=liveness_note))
    return results
