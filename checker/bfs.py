"""Exhaustive breadth-first search: the embedded default engine.

Level by level, so the first violation of each property found is a shortest one. The visited set
holds 64-bit fingerprints in a flat open-addressing table (:class:`checker.fpset.FingerprintSet`);
the parent links and the queue of each level are kept by a :class:`checker.store.SearchStore`,
in memory or on disk; counterexamples are rebuilt from the parent links by replay. The queue
holds canonical states with their fingerprints.

The search ends when the state space is exhausted, when every checked property is decided, at
the first violation when asked (``stop_at_first_violation``, TLC's default), at a limit, or on
Ctrl-C; in each case it returns what it found (violations with their counterexamples, and how far
the properties still undecided were checked).
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from .expand import all_of, broken
from .expand import witnessed as step_witnesses
from .fingerprint import ZERO_STANDIN, collision_probability, fingerprint
from .model import Action, Model, State
from .nogc import gc_paused
from .options import Limits, Options, split_properties, takes_options
from .paths import (
    ReplayError,
    extend_with_transition,
    fingerprint_chain,
    replay_chain,
    to_counterexample,
)
from .progress import Progress
from .result import CheckResult
from .store import SearchStore
from .verdicts import property_results


def _identity(state: State) -> State:
    return state


class _StopEarly(Exception):
    """Raised inside the search loop to stop at once (at the first violation, when asked), so
    that the hot path tests nothing for it."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@contextmanager
def sigint_sets(flag: list[bool]) -> Iterator[None]:
    """While the block runs, Ctrl-C (SIGINT) sets ``flag[0]`` instead of raising: an engine polls
    the flag where it is safe to stop (between two expansions, never halfway through an insert
    into the visited set) and returns its partial result as "interrupted". A second Ctrl-C raises
    KeyboardInterrupt as usual. Signal handlers can only be set from the main thread; elsewhere,
    and when SIGINT is ignored or handled outside Python, this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    if previous is None or previous is signal.SIG_IGN:
        yield
        return

    def handler(signum, frame):
        if flag[0] and signum != signal.SIGTERM:  # (a SIGTERM to the group comes twice)
            raise KeyboardInterrupt
        flag[0] = True

    signal.signal(signal.SIGINT, handler)
    # SIGTERM (a supervisor's stop, ``timeout``'s default) stops the run the same way, if nobody
    # else handles it: partial statistics and exit 3, not a silent death (exit 143)
    term = signal.getsignal(signal.SIGTERM)
    if term is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if term is signal.SIG_DFL:
            signal.signal(signal.SIGTERM, term)


def new_per_level(expanded: list[int], frontier: int, following: int, same: bool) -> list[int]:
    """The distinct states first reached at each depth (index = depth), for the growth plot
    (``isr check --html-report``): computed once at the end of the search from the sizes of the
    levels it expanded (``expanded``), the level it stopped at (``frontier`` states, when it
    stopped before expanding it) and the new states of a level cut short (``following``; the
    last entry is then partial). They sum to the distinct states."""
    sizes = list(expanded)
    if not same:  # stopped inside a level (already in ``expanded``): its successors, partial
        if following:
            sizes.append(following)
    elif frontier:  # stopped before expanding the frontier (every property decided, say)
        sizes.append(frontier)
    return sizes


@takes_options
@gc_paused
def check_bfs(model: Model, options: Options) -> CheckResult:
    """Explore every reachable state of ``model`` and check its properties, with the cyclic
    garbage collector paused (see checker.nogc). ``options`` (checker.engines.Options; or its
    fields as keywords): ``properties`` restricts the check to the named
    properties (all when None). ``stop_at_first_violation``: end the search as soon as one
    `always` or `action` property is violated (it is still a shortest counterexample; the other
    properties are reported as checked up to the depth reached). Otherwise the search goes on until
    every checked property is decided. Ctrl-C ends the search early with what it found so far
    (stop_reason "interrupted"). ``store``: where the queue and the parent links are kept,
    "memory" or "disk" (in ``store_dir``, else a temporary directory removed at the end;
    :mod:`checker.store`); the visited set's fingerprints are in memory either way.
    """
    kept = SearchStore(model, options.store, options.store_dir, "bfs")
    try:
        return _search(model, kept, options)
    finally:
        kept.cleanup()


def _search(model: Model, kept: SearchStore, options: Options) -> CheckResult:
    t0 = time.perf_counter()
    symmetry, limits, properties = options.symmetry, options.limits, options.properties
    progress, config = options.progress, options.config
    canon: Callable[[State], State] = model.canonicalize if symmetry else _identity
    split = split_properties(model, properties)
    props = split.selected
    invariants, action_props = split.invariants, split.action_properties
    some_states, some_trans = split.sometimes_states, split.sometimes_transitions
    violation: dict[str, int] = {}  # property -> fingerprint of the violating (or witnessing) state
    witnessed: dict[str, int] = {}
    action_violation: dict[str, int] = {}  # property -> fingerprint of the transition's source
    found: dict[str, tuple[float, int]] = {}  # property -> (seconds, distinct states) when violated
    successors = model.successors
    within = model.within_boundary
    fired = [False] * len(model.action_names)
    stop_first = options.stop_at_first_violation

    seen = kept.seen
    trace = kept.trace
    generated = 0
    # the check functions themselves, kept beside the property lists (the hot path calls them
    # without an attribute lookup each); refreshed whenever a property is decided
    inv_checks = [p.check for p in invariants]
    step_ok = all_of([p.check for p in action_props])  # the action properties still open

    def check_new_state(fp: int, state: State) -> None:
        for check in inv_checks:
            if not check(state):
                break
        else:
            check = None
        if check is not None:  # some invariant fails: find every one that does, as before
            for p in invariants:
                if not p.check(state):
                    violation[p.name] = fp
                    found[p.name] = (time.perf_counter() - t0, len(seen))
            invariants[:] = [p for p in invariants if p.name not in violation]
            inv_checks[:] = [p.check for p in invariants]
            decided()
        if some_states:
            met = False
            for p in some_states:
                if p.check(state):
                    witnessed[p.name] = fp
                    met = True
            if met:
                some_states[:] = [p for p in some_states if p.name not in witnessed]
                decided()

    def decided() -> None:
        """A property was just decided: stop here if it is the first violation and the user asked
        to stop there. (Once every property is decided the search stops at the end of the level,
        as the other engines do, so that they agree on the statistics.)"""
        if stop_first and (violation or action_violation):
            raise _StopEarly("first-violation")

    depth = -1
    stop_reason = "exhausted"
    deadlocks = 0
    deadlock_fp: int | None = None
    reporter = Progress(progress, disk=kept.disk_bytes if kept.dir is not None else None)
    max_states = limits.max_states
    deadline = None if limits.max_seconds is None else t0 + limits.max_seconds
    check_every = 256
    counter = 0
    levels: list[int] = []  # the size of each level, the last being expanded
    expanded = 0  # states of the level being expanded taken from its queue so far
    frontier = kept.queue(0)
    next_frontier = frontier
    unexpanded = 0  # states left in the queue when the search stops early
    interrupted = [False]
    n = 0

    def all_decided() -> bool:
        return not invariants and not action_props and not some_states and not some_trans

    with sigint_sets(interrupted):
        try:
            trace.level(0)
            for s in model.init_states():
                c = canon(s)
                fp = fingerprint(c)
                generated += 1
                if not seen.add(fp):
                    continue
                trace.fps.append(fp)
                trace.parents.append(fp)  # an initial state is its own parent
                frontier.append(c, fp)
                check_new_state(fp, c)
            depth = 0 if len(frontier) else -1
            seen_add = seen.add

            while len(frontier):
                if props and all_decided():
                    stop_reason = "all-properties-decided"
                    unexpanded = len(frontier)
                    break
                size = len(frontier)
                levels.append(size)
                expanded = 0
                next_frontier = kept.queue(depth + 1)
                next_append = next_frontier.append
                trace.level(depth + 1)
                t_fps_append = trace.fps.append
                t_par_append = trace.parents.append
                for states, state_fps in frontier.chunks():
                    for j in range(len(states)):
                        s = states[j]
                        states[j] = None  # type: ignore[call-overload]  # free expanded states
                        expanded += 1
                        counter += 1
                        if counter >= check_every:
                            counter = 0
                            now = time.perf_counter()
                            if interrupted[0]:
                                stop_reason = "interrupted"
                            elif deadline is not None and now >= deadline:
                                stop_reason = "max-seconds"
                            if stop_reason != "exhausted":
                                unexpanded = size - expanded + 1 + len(next_frontier)
                                break
                            trace.maybe_flush()
                            t_fps_append = trace.fps.append
                            t_par_append = trace.parents.append
                            reporter.maybe_report(
                                now - t0,
                                generated,
                                len(seen),
                                size - expanded + len(next_frontier),
                                depth,
                                levels,
                                expanded,
                            )
                        if not within(s):
                            continue
                        sfp = state_fps[j]
                        n = 0
                        for action, t in successors(s):
                            n += 1
                            fired[action[0]] = True
                            if step_ok is not None and not step_ok(s, action, t):
                                for name in broken(action_props, s, action, t):
                                    action_violation[name] = sfp
                                    found[name] = (time.perf_counter() - t0, len(seen))
                                action_props[:] = [
                                    p for p in action_props if p.name not in action_violation
                                ]
                                step_ok = all_of([p.check for p in action_props])
                                decided()
                            if some_trans:
                                met = step_witnesses(some_trans, s, action, t)
                                if met:
                                    for name in met:
                                        witnessed[name] = sfp
                                    some_trans[:] = [
                                        p for p in some_trans if p.name not in witnessed
                                    ]
                                    decided()
                            c = canon(t)
                            fp = hash(c) or ZERO_STANDIN  # fingerprint(c), inlined: hot path
                            if not seen_add(fp):
                                continue  # visited
                            t_fps_append(fp)
                            t_par_append(sfp)
                            next_append(c, fp)
                            if invariants or some_states:
                                check_new_state(fp, c)
                        generated += n
                        if n == 0:
                            deadlocks += 1
                            if deadlock_fp is None:
                                deadlock_fp = sfp
                        if max_states is not None and len(seen) >= max_states:
                            stop_reason = "max-states"
                            unexpanded = size - expanded + len(next_frontier)
                            break
                    if stop_reason != "exhausted":
                        break
                if stop_reason != "exhausted":
                    break
                frontier.delete()
                frontier = next_frontier
                if len(frontier):
                    depth += 1
        except _StopEarly as e:
            stop_reason = e.reason
            if levels:  # halfway through expanding a state
                generated += n
                unexpanded = size - expanded + len(next_frontier)
            else:  # among the initial states
                unexpanded = len(frontier)
        except KeyboardInterrupt:  # raised by the model code, or a second Ctrl-C
            stop_reason = "interrupted"
            left = size - expanded if levels else len(frontier)
            unexpanded = max(left, 0) + (len(next_frontier) if next_frontier is not frontier else 0)

    seconds = time.perf_counter() - t0
    complete = stop_reason == "exhausted"
    depth = max(depth, 0)
    reporter.final(seconds, generated, len(seen), depth, 0 if complete else unexpanded, stop_reason)
    level_sizes = new_per_level(
        levels, len(frontier), len(next_frontier), next_frontier is frontier
    )
    frontier.delete()
    next_frontier.delete()
    kept.close()
    parent_of = kept.parents()

    def path_to(fp: int):
        return replay_chain(model, canon, fingerprint_chain(fp, parent_of))

    violations = {name: (lambda fp=fp: path_to(fp)) for name, fp in violation.items()}
    checks = {p.name: p.check for p in props}
    for name, fp in action_violation.items():
        violations[name] = lambda fp=fp, check=checks[name]: extend_with_transition(
            model, path_to(fp), check
        )
    results = property_results(
        model,
        props,
        complete=complete,
        violations=violations,
        witnessed=witnessed,
        found=found,
        checked_to_depth=depth,
    )
    extra: dict = {"level_sizes": level_sizes}
    if not complete:
        extra["unexplored"] = unexpanded
    if kept.kind != "memory":
        extra["store"] = kept.kind
    deadlock_example = None
    if deadlock_fp is not None:
        try:
            deadlock_example = to_counterexample(model, path_to(deadlock_fp))
        except ReplayError as e:
            extra["deadlock_example_error"] = str(e)
    return CheckResult(
        model=model.name,
        engine="bfs",
        config=dict(config or {}),
        complete=complete,
        stop_reason=stop_reason,
        distinct_states=len(seen),
        states_generated=generated,
        depth=depth,
        seconds=seconds,
        properties=results,
        actions_never_fired=[n for n, f in zip(model.action_names, fired, strict=True) if not f]
        if complete
        else [],
        deadlocks=deadlocks,
        deadlock_example=deadlock_example,
        collision_probability=collision_probability(len(seen)),
        symmetry=symmetry,
        extra=extra,
    )


__all__ = ["Action", "Limits", "check_bfs", "sigint_sets"]
