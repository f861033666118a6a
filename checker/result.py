"""One result type for every engine, with its JSON form."""

from __future__ import annotations

import copy
from dataclasses import asdict, dataclass, field
from typing import Any

RESULT_FORMAT_VERSION = 1

# CheckResult.stop_reason values of the exhaustive engines. "exhausted" is the only complete one.
# The early stops end the search on purpose once it has its answer: every checked property
# decided, or (when asked, as TLC does by default) the first violation. The rest are limits or an
# interruption, which leave the properties not yet decided undecided.
EARLY_STOPS = ("all-properties-decided", "first-violation")
STOP_REASONS = ("exhausted", *EARLY_STOPS, "max-states", "max-seconds", "interrupted")


@dataclass
class Step:
    """One step of a counterexample: the action taken and the variables it changed."""

    index: int
    action: str
    args: dict[str, Any]
    changed: dict[str, Any]


@dataclass
class Counterexample:
    """A path from an initial state. ``initial`` is the whole first state; each step lists only
    what changed. ``loop_start`` marks the first step of the cycle of a liveness lasso.

    ``states``: every whole state along the path (``initial`` first, then one per step), as the
    engine that found the path had them (:func:`checker.paths.to_counterexample`), so that the
    CLI and the trace writers use them as they are instead of rebuilding them. Not part of the
    JSON form (which shows the changes only); a counterexample read back from JSON has none and
    :meth:`whole_states` rebuilds them from the changes."""

    initial: dict[str, Any]
    steps: list[Step]
    loop_start: int | None = None
    note: str = ""  # e.g. a path shown up to symmetry (checker.paths.UP_TO_SYMMETRY)
    states: list[dict[str, Any]] | None = field(default=None, repr=False, compare=False)

    @property
    def length(self) -> int:
        return len(self.steps)

    def whole_states(self) -> list[dict[str, Any]]:
        """The whole state before the first step and after each step: the engine's own states
        when it gave them, else rebuilt from ``initial`` and each step's changes (a
        counterexample read from a JSON result)."""
        if self.states is not None and len(self.states) == len(self.steps) + 1:
            return self.states
        states = [copy.deepcopy(self.initial)]
        for step in self.steps:
            s = copy.deepcopy(states[-1])
            for key, value in step.changed.items():
                if isinstance(value, dict) and isinstance(s.get(key), dict):
                    s[key].update(value)
                else:
                    s[key] = value
            states.append(s)
        return states

    def to_json(self) -> dict[str, Any]:
        return {
            "length": self.length,
            "initial": self.initial,
            "steps": [asdict(s) for s in self.steps],
            **({"loop_start": self.loop_start} if self.loop_start is not None else {}),
            **({"note": self.note} if self.note else {}),
        }


@dataclass
class PropertyResult:
    name: str
    kind: str
    holds: bool | None  # None: not checked by this engine (e.g. liveness under BFS)
    counterexample: Counterexample | None = None
    description: str = ""
    note: str = ""
    # A violation: when the engine found it (wall seconds since the start, distinct states then).
    found_after_seconds: float | None = None
    found_after_states: int | None = None
    # Undecided by an incomplete search: every state (transition) within this many steps of an
    # initial state was checked without a violation (an `always`/`action` property) or a witness.
    checked_to_depth: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "holds": self.holds,
            "counterexample": None
            if self.counterexample is None
            else self.counterexample.to_json(),
            **({"note": self.note} if self.note else {}),
            **(
                {
                    "found_after_seconds": round(self.found_after_seconds, 3),
                    "found_after_states": self.found_after_states,
                }
                if self.found_after_seconds is not None
                else {}
            ),
            **(
                {"checked_to_depth": self.checked_to_depth}
                if self.checked_to_depth is not None
                else {}
            ),
        }


@dataclass
class CheckResult:
    model: str
    engine: str
    config: dict[str, Any]
    complete: bool
    # Why the search ended (STOP_REASONS): "exhausted" (complete), an early stop that still decides
    # ("all-properties-decided", "first-violation"), or a limit or an interruption (undecided).
    stop_reason: str
    distinct_states: int
    states_generated: int
    depth: int
    seconds: float
    properties: list[PropertyResult]
    actions_never_fired: list[str]
    deadlocks: int = 0
    deadlock_example: Counterexample | None = None
    collision_probability: float = 0.0
    symmetry: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def violated(self) -> list[PropertyResult]:
        return [p for p in self.properties if p.holds is False]

    def holds(self, name: str) -> bool | None:
        """The verdict on property ``name``: True (holds), False (violated), None (undecided: the
        search stopped first). KeyError for a property that was not checked."""
        for p in self.properties:
            if p.name == name:
                return p.holds
        raise KeyError(f"{name} was not checked; checked: {[p.name for p in self.properties]}")

    @property
    def states_per_second(self) -> float:
        return self.distinct_states / self.seconds if self.seconds > 0 else 0.0

    @property
    def stopped_early(self) -> bool:
        """The search stopped before exhausting the state space but decided what it was asked:
        every checked property was decided, or it stopped at the first violation."""
        return self.stop_reason in EARLY_STOPS

    def exit_code(self) -> int:
        """0 every checked property holds (and the search completed, or stopped once each was
        decided); 1 a property is violated; 3 incomplete (a limit or an interruption stopped the
        search before it could decide). (2, bad input, is the CLI's.) A violation found by an
        incomplete search is still a violation; a `sometimes` not yet met by an incomplete search
        is only incomplete."""
        if any(
            p.holds is False and (p.kind != "sometimes" or self.complete) for p in self.properties
        ):
            return 1
        return 0 if self.complete or self.stopped_early else 3

    def to_json(self) -> dict[str, Any]:
        return {
            "format_version": RESULT_FORMAT_VERSION,
            "model": self.model,
            "engine": self.engine,
            "config": self.config,
            "complete": self.complete,
            "stop_reason": self.stop_reason,
            "symmetry": self.symmetry,
            "distinct_states": self.distinct_states,
            "states_generated": self.states_generated,
            "depth": self.depth,
            "seconds": round(self.seconds, 3),
            "states_per_second": round(self.states_per_second, 1),
            "collision_probability": self.collision_probability,
            "properties": [p.to_json() for p in self.properties],
            "actions_never_fired": self.actions_never_fired,
            "deadlocks": self.deadlocks,
            "deadlock_example": None
            if self.deadlock_example is None
            else self.deadlock_example.to_json(),
            **self.extra,
        }
