"""Property verdicts from what an engine found: one place that turns "violated here / witnessed /
search complete or not" into :class:`~checker.result.PropertyResult` values, shared by the
engines (BFS, the Spark BFS engine, simulation)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence

from .model import Action, Model, Property, State
from .paths import ReplayError, to_counterexample
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
    found: Mapping[str, tuple[float, int]] | None = None,
    checked_to_depth: int | None = None,
) -> list[PropertyResult]:
    """``violations`` maps an `always`/`action` property to a function building its violating
    path (for `action` properties the path ends with the violating transition). ``found`` maps a
    violated property to (wall seconds, distinct states) when it was found. ``checked_to_depth``
    (an incomplete breadth-first search): the depth up to which every state was checked, given to
    the properties it leaves undecided.

    A path that cannot be rebuilt (:class:`~checker.paths.ReplayError`: a fingerprint collision or
    a model that breaks the protocol) leaves the violation reported, without a counterexample and
    with a note saying why, rather than failing the whole result."""
    found = found or {}
    undecided_depth = None if complete else checked_to_depth
    results: list[PropertyResult] = []
    for p in props:
        if p.kind in ("always", "action"):
            if p.name in violations:
                note = ""
                try:
                    cx = to_counterexample(model, violations[p.name]())
                except ReplayError as e:
                    cx, note = None, f"the counterexample could not be rebuilt: {e}"
                when = found.get(p.name)
                results.append(
                    PropertyResult(
                        p.name,
                        p.kind,
                        False,
                        cx,
                        p.description,
                        note=note,
                        found_after_seconds=None if when is None else when[0],
                        found_after_states=None if when is None else when[1],
                    )
                )
            else:
                results.append(
                    PropertyResult(
                        p.name,
                        p.kind,
                        True if complete else None,
                        checked_to_depth=undecided_depth,
                    )
                )
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
                        checked_to_depth=undecided_depth,
                    )
                )
        else:
            results.append(PropertyResult(p.name, p.kind, None, note=liveness_note))
    return results
