"""Liveness properties of PROTOCOL.md and the fairness of each action (weak or strong), for the
state-graph engine. BFS reports `eventually` properties as not checked."""

from __future__ import annotations

from checker.model import Fairness, Property

from .actions.common import Ctx


def make_liveness(ctx: Ctx, kind_of: dict[str, int]) -> tuple[list[Property], list[Fairness]]:
    """(eventually-properties, fairness per action name)."""
    return [], []
