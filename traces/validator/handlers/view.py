"""What a handler may use of the partition validator (traces/validator/partition.py), as a Protocol: the
handlers are called by the validator and must not import it (that would be an import cycle)."""

from __future__ import annotations

from typing import Any, Protocol

from isr.spec.state import State

from ..candidates import Cand
from ..mapping import Event, PartitionMap


class PartitionView(Protocol):
    pm: PartitionMap
    spec: Any  # spec.IsrSpec
    ctx: Any  # spec.actions.common.Ctx
    n: int
    flushed: bool
    cands: list[Cand]
    down: dict[int, bool]
    reached: dict[int, int]
    reached_epoch: dict[int, int]
    stale_alter: set[int]
    crashed_once: set[int]
    dropped_fetches: set
    activations: int

    def steps(
        self, s: State, name: str, args: tuple | None = None
    ) -> list[tuple[tuple, State]]: ...

    def check(
        self, ev: Event, i: int, t: State, mism: list[str], leo_only: bool = False
    ) -> bool: ...

    def silent_register(self, t: State, i: int) -> list[State]: ...

    def fit(
        self, ev: Event, i: int, t: State, gained: frozenset, mism: list[str]
    ) -> tuple[State, frozenset] | None: ...
