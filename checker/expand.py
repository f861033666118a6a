"""What every search engine checks on one step (s, action, t) while it expands a state: the
action properties (a step that breaks one) and the "sometimes" transitions (a step that
witnesses one). One module for the sequential BFS (checker/bfs.py) and the parallel worker
(checker/parallel/worker.py), compiled with them (pyproject.toml's ``compiled``): each function
runs once per generated transition while such properties are open."""

from __future__ import annotations

from typing import Any


def step_breaks(checks: list, s: Any, action: Any, t: Any) -> bool:
    """Whether the step breaks any of the action properties whose ``check`` functions are
    ``checks`` (the fast test; :func:`broken` then names every one)."""
    for check in checks:  # noqa: SIM110 - a loop, not any() over a generator: hot path
        if not check(s, action, t):
            return True
    return False


def broken(props: list, s: Any, action: Any, t: Any) -> list[str]:
    """The names of the action properties ``props`` the step breaks."""
    return [p.name for p in props if not p.check(s, action, t)]


def witnessed(props: list, s: Any, action: Any, t: Any) -> list[str]:
    """The names of the "sometimes" transition properties ``props`` the step witnesses."""
    return [p.name for p in props if p.check(s, action, t)]
