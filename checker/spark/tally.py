"""What the driver keeps between levels: counts and the first findings, with the BFS depth of
each. Small, JSON-able (it is the checkpoint manifest's payload)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from . import summary as S


@dataclass
class Tally:
    depth: int = -1  # depth of the deepest non-empty level so far
    generated: int = 0
    distinct: int = 0
    frontier: int = 0  # states in the current frontier (at ``depth``)
    deadlocks: int = 0
    deadlock: list[int] | None = None  # [depth, fp] of the first deadlock found
    fired: int = 0  # bitmask of action kinds that fired
    inv: dict[str, list[int]] = field(default_factory=dict)  # name -> [depth, fp]
    act: dict[str, list[int]] = field(default_factory=dict)  # name -> [depth of source, fp]
    wit: dict[str, int] = field(default_factory=dict)  # name -> fp
    seconds: float = 0.0  # spent in earlier runs (checkpoint/resume)
    levels: list[dict[str, Any]] = field(default_factory=list)

    def absorb(self, s: S.Summary, source_depth: int) -> None:
        """Fold in the summary of expanding the frontier at ``source_depth``."""
        self.generated += s["generated"]
        self.distinct += s["new"]
        self.deadlocks += s["deadlocks"]
        if self.deadlock is None and s["deadlock"] is not None:
            self.deadlock = [source_depth, s["deadlock"]]
        self.fired |= s["fired"]
        for name, fp in s["inv"].items():
            self.inv.setdefault(name, [source_depth + 1, fp])
        for name, fp in s["act"].items():
            self.act.setdefault(name, [source_depth, fp])
        for name, fp in s["wit"].items():
            self.wit.setdefault(name, fp)
        self.frontier = s["new"]
        if s["new"]:
            self.depth = source_depth + 1

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Tally:
        return cls(**d)
