"""Exhaustive breadth-first search: the embedded default engine.

Level by level, so the first violation of each property found is a shortest one. The visited set
holds 64-bit fingerprints with their parent fingerprints in a flat open-addressing table
(:mod:`checker.fpset`); counterexamples are rebuilt from it by replay. The frontier holds
canonical states only (a fingerprint is recomputed when its state is expanded: cheaper than
keeping it).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from .fingerprint import collision_probability, fingerprint
from .fpset import FingerprintTable, ParentMap
from .model import Action, Model, State
from .nogc import gc_paused
from .paths import extend_with_transition, fingerprint_chain, replay_chain, to_counterexample
from .progress import Progress, ProgressReporter
from .result import CheckResult
from .verdicts import property_results


@dataclass(frozen=True)
class Limits:
    """Search limits; reaching one ends the run as incomplete (never as a pass)."""

    max_states: int | None = None
    max_seconds: float | None = None


def _identity(state: State) -> State:
    return state


@gc_paused
def check_bfs(
    model: Model,
    *,
    symmetry: bool = True,
    limits: Limits = Limits(),
    properties: list[str] | None = None,
    progress: ProgressReporter | None = None,
    config: dict | None = None,
) -> CheckResult:
    """Explore every reachable state of ``model`` and check its properties, with the cyclic
    garbage collector paused (see checker.nogc). ``properties`` restricts the check to the named
    properties (all when None).
    """
    t0 = time.perf_counter()
    canon: Callable[[State], State] = model.canonicalize if symmetry else _identity
    props = [p for p in model.properties if properties is None or p.name in properties]
    invariants = [p for p in props if p.kind == "always"]
    action_props = [p for p in props if p.kind == "action"]
    some_states = [p for p in props if p.kind == "sometimes" and not p.on_transitions]
    some_trans = [p for p in props if p.kind == "sometimes" and p.on_transitions]
    violation: dict[str, int] = {}  # property -> fingerprint of the violating (or witnessing) state
    witnessed: dict[str, int] = {}
    action_violation: dict[str, int] = {}  # property -> fingerprint of the transition's source
    successors = model.successors
    within = model.within_boundary
    fired = [False] * len(model.action_names)

    seen = FingerprintTable()
    add = seen.add
    frontier: list[State] = []
    generated = 0

    def check_new_state(fp: int, state: State) -> None:
        failed = False
        for p in invariants:
            if not p.check(state):
                violation[p.name] = fp
                failed = True
        if failed:
            invariants[:] = [p for p in invariants if p.name not in violation]
        if some_states:
            met = False
            for p in some_states:
                if p.check(state):
                    witnessed[p.name] = fp
                    met = True
            if met:
                some_states[:] = [p for p in some_states if p.name not in witnessed]

    for s in model.init_states():
        c = canon(s)
        fp = fingerprint(c)
        generated += 1
        if not add(fp, fp):  # an initial state is its own parent
            continue
        check_new_state(fp, c)
        frontier.append(c)

    depth = 0 if frontier else -1
    stop_reason = "exhausted"
    deadlocks = 0
    deadlock_fp: int | None = None
    reporter = Progress(progress)
    max_states = limits.max_states
    deadline = None if limits.max_seconds is None else t0 + limits.max_seconds
    check_every = 256
    counter = 0

    def all_decided() -> bool:
        return not invariants and not action_props and not some_states and not some_trans

    while frontier:
        if props and all_decided():
            stop_reason = "all-properties-decided"
            break
        next_frontier: list[State] = []
        for idx in range(len(frontier)):
            s = frontier[idx]
            frontier[idx] = None  # type: ignore[call-overload]  # free expanded states as we go
            counter += 1
            if counter >= check_every:
                counter = 0
                now = time.perf_counter()
                if deadline is not None and now >= deadline:
                    stop_reason = "max-seconds"
                    break
                reporter.maybe_report(now - t0, generated, len(seen), len(next_frontier), depth)
            if not within(s):
                continue
            sfp = fingerprint(s)
            n = 0
            for action, t in successors(s):
                n += 1
                fired[action[0]] = True
                if action_props:
                    for p in action_props:
                        if not p.check(s, action, t):
                            action_violation[p.name] = sfp
                    if action_violation:
                        action_props[:] = [
                            p for p in action_props if p.name not in action_violation
                        ]
                if some_trans:
                    for p in some_trans:
                        if p.check(s, action, t):
                            witnessed[p.name] = sfp
                    if witnessed:
                        some_trans[:] = [p for p in some_trans if p.name not in witnessed]
                c = canon(t)
                fp = fingerprint(c)
                if not add(fp, sfp):
                    continue
                if invariants or some_states:
                    check_new_state(fp, c)
                next_frontier.append(c)
            generated += n
            if n == 0:
                deadlocks += 1
                if deadlock_fp is None:
                    deadlock_fp = sfp
            if max_states is not None and len(seen) >= max_states:
                stop_reason = "max-states"
                break
        if stop_reason != "exhausted":
            break
        frontier = next_frontier
        if frontier:
            depth += 1

    seconds = time.perf_counter() - t0
    complete = stop_reason == "exhausted"
    reporter.final(seconds, generated, len(seen), depth)

    parent_of = ParentMap(seen)

    def path_to(fp: int):
        return replay_chain(model, canon, fingerprint_chain(fp, parent_of))

    violations = {name: (lambda fp=fp: path_to(fp)) for name, fp in violation.items()}
    checks = {p.name: p.check for p in props}
    for name, fp in action_violation.items():
        violations[name] = lambda fp=fp, check=checks[name]: extend_with_transition(
            model, path_to(fp), check
        )
    results = property_results(
        model, props, complete=complete, violations=violations, witnessed=witnessed
    )
    deadlock_example = None
    if deadlock_fp is not None:
        deadlock_example = to_counterexample(model, path_to(deadlock_fp))
    return CheckResult(
        model=model.name,
        engine="bfs",
        config=dict(config or {}),
        complete=complete,
        stop_reason=stop_reason,
        distinct_states=len(seen),
        states_generated=generated,
        depth=max(depth, 0),
        seconds=seconds,
        properties=results,
        actions_never_fired=[n for n, f in zip(model.action_names, fired, strict=True) if not f]
        if complete
        else [],
        deadlocks=deadlocks,
        deadlock_example=deadlock_example,
        collision_probability=collision_probability(len(seen)),
        symmetry=symmetry,
    )


__all__ = ["Action", "Limits", "check_bfs"]
