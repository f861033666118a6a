"""What every search engine checks on one step (s, action, t) while it expands a state: the
action properties (a step that breaks one: :func:`all_of` the fast test, :func:`broken` the names) and the "sometimes" transitions (a step that
witnesses one). One module for the sequential BFS (checker/bfs.py) and the parallel worker
(checker/parallel/worker.py), compiled with them (pyproject.toml's ``compiled``): each function
runs once per generated transition while such properties are open."""

from __future__ import annotations

from typing import Any


def all_of(checks: list) -> Any:
    """One callable ``(s, action, t) -> bool`` that holds when every check in ``checks`` holds
    (the action properties still open), or None when there is none: the engine calls it once
    per generated transition, so with one property (the usual case) it is that property's own
    check, with no call around it."""
    if not checks:
        return None
    if len(checks) == 1:
        return checks[0]
    return _AllOf(tuple(checks))


class _AllOf:
    __slots__ = ("checks",)

    def __init__(self, checks: tuple) -> None:
        self.checks = checks

    def __call__(self, s: Any, action: Any, t: Any) -> bool:
        for check in self.checks:  # noqa: SIM110 - a loop, not all() over a generator: hot path
            if not check(s, action, t):
                return False
        return True


def broken(props: list, s: Any, action: Any, t: Any) -> list[str]:
    """The names of the action properties ``props`` the step breaks."""
    return [p.name for p in props if not p.check(s, action, t)]


def witnessed(props: list, s: Any, action: Any, t: Any) -> list[str]:
    """The names of the "sometimes" transition properties ``props`` the step witnesses."""
    return [p.name for p in props if p.check(s, action, t)]
