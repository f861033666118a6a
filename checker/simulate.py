"""Simulation: many seeded random walks, for configurations too big to exhaust.

Walk ``i`` of a run with seed ``s`` draws from ``random.Random(f"{s}:{i}")``: the same walks in
every process, so the Spark variant (:mod:`checker.spark.simulate`) finds exactly what the
sequential one finds. Each walk starts in an initial state and takes up to ``depth`` steps,
choosing uniformly among the enabled actions, checking invariants on every state it visits and
action properties on every transition; it stops early in a state with no enabled action (or
outside the boundary).

What the result means (``complete`` is always False):

* A simulation never proves: a property not violated is *undecided* (``holds`` None), and so is
  a `sometimes` never met. ``isr simulate`` exits 0 when no violation was found.
* A violation found is real: the walk is a path of the spec. For each violated property the first
  violating walk (lowest index) is kept, cut at the first violating state (or transition), then
  shrunk greedily — steps are removed while the rest still replays and still violates. The result
  is a genuine counterexample, usually much shorter than the walk, but not necessarily a shortest
  one (``isr check`` finds those).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from .fingerprint import collision_probability, fingerprint
from .model import Action, Model, Property, State
from .options import Options, select_properties, takes_options
from .progress import Progress
from .result import CheckResult
from .verdicts import property_results

Path = list[tuple[Action, State]]
INIT: Action = (-1, ())
MAX_SHRINK_REPLAYS = 5000


@dataclass
class Violation:
    """The first walk violating a property: its index, initial state index and actions."""

    walk: int
    init: int
    actions: tuple[Action, ...]


@dataclass
class Outcome:
    """What a batch of walks found; batches merge (see :func:`merge`)."""

    walks: int = 0
    steps: int = 0
    longest: int = 0
    deadlocks: int = 0
    fired: int = 0
    fps: set[int] = field(default_factory=set)
    violations: dict[str, Violation] = field(default_factory=dict)
    witnessed: set[str] = field(default_factory=set)


def walk_rng(seed: int, index: int) -> random.Random:
    return random.Random(f"{seed}:{index}")


def selected(model: Model, properties: Sequence[str] | None) -> list[Property]:
    return select_properties(model, properties)


def run_walks(
    model: Model,
    indices: Iterable[int],
    *,
    depth: int,
    seed: int,
    properties: Sequence[str] | None = None,
    symmetry: bool = True,
    on_walk: Callable[[Outcome], None] | None = None,
) -> Outcome:
    """Run the walks with the given indices."""
    props = selected(model, properties)
    invariants = [p for p in props if p.kind == "always"]
    action_props = [p for p in props if p.kind == "action"]
    some_states = [p for p in props if p.kind == "sometimes" and not p.on_transitions]
    some_trans = [p for p in props if p.kind == "sometimes" and p.on_transitions]
    canon = model.canonicalize if symmetry else None
    inits = list(model.init_states())
    out = Outcome()

    def visit(state: State, walk: Violation, open_inv: list[Property]) -> None:
        out.fps.add(fingerprint(canon(state) if canon else state))
        for p in list(open_inv):
            if not p.check(state):
                out.violations[p.name] = Violation(walk.walk, walk.init, walk.actions)
                open_inv.remove(p)
        for p in some_states:
            if p.name not in out.witnessed and p.check(state):
                out.witnessed.add(p.name)

    for index in indices:
        rng = walk_rng(seed, index)
        out.walks += 1
        if not inits:
            continue
        init = rng.randrange(len(inits))
        s = inits[init]
        actions: list[Action] = []
        open_inv = [p for p in invariants if p.name not in out.violations]
        open_act = [p for p in action_props if p.name not in out.violations]
        visit(s, Violation(index, init, ()), open_inv)
        for _ in range(depth):
            if not model.within_boundary(s):
                break
            succ = list(model.successors(s))
            if not succ:
                out.deadlocks += 1
                break
            action, t = succ[rng.randrange(len(succ))]
            out.fired |= 1 << action[0]
            for p in list(open_act):
                if not p.check(s, action, t):
                    out.violations[p.name] = Violation(index, init, (*actions, action))
                    open_act.remove(p)
            for p in some_trans:
                if p.name not in out.witnessed and p.check(s, action, t):
                    out.witnessed.add(p.name)
            actions.append(action)
            s = t
            if open_inv or some_states:
                visit(s, Violation(index, init, tuple(actions)), open_inv)
            else:
                out.fps.add(fingerprint(canon(s) if canon else s))
        out.steps += len(actions)
        out.longest = max(out.longest, len(actions))
        if on_walk is not None:
            on_walk(out)
    return out


def merge(a: Outcome, b: Outcome) -> Outcome:
    """Merge two batches; for each property the violation of the lowest walk index wins."""
    out = Outcome(
        walks=a.walks + b.walks,
        steps=a.steps + b.steps,
        longest=max(a.longest, b.longest),
        deadlocks=a.deadlocks + b.deadlocks,
        fired=a.fired | b.fired,
        fps=a.fps | b.fps,
        violations=dict(a.violations),
        witnessed=a.witnessed | b.witnessed,
    )
    for name, v in b.violations.items():
        if name not in out.violations or v.walk < out.violations[name].walk:
            out.violations[name] = v
    return out


# --- replay and shrinking --------------------------------------------------------------------
def replay_actions(model: Model, init: State, actions: Sequence[Action]) -> Path | None:
    """The path taking ``actions`` from ``init``, or None if one is not enabled on the way."""
    path: Path = [(INIT, init)]
    s = init
    for want in actions:
        for action, t in model.successors(s):
            if action == want:
                path.append((action, t))
                s = t
                break
        else:
            return None
    return path


def first_violation(path: Path, p: Property) -> int | None:
    """Length of the shortest prefix of ``path`` (in steps) that violates ``p``, or None."""
    if p.kind == "always":
        for i, (_, s) in enumerate(path):
            if not p.check(s):
                return i
        return None
    for i in range(1, len(path)):
        if not p.check(path[i - 1][1], path[i][0], path[i][1]):
            return i
    return None


def shrink(model: Model, init: State, actions: Sequence[Action], p: Property) -> Path:
    """A short violating path: cut at the first violation, then greedily delete chunks of steps
    (halves, quarters, ... single steps) while the rest replays and still violates ``p``."""
    budget = MAX_SHRINK_REPLAYS

    def attempt(acts: Sequence[Action]) -> Path | None:
        nonlocal budget
        budget -= 1
        path = replay_actions(model, init, acts)
        if path is None:
            return None
        cut = first_violation(path, p)
        return None if cut is None else path[: cut + 1]

    best = attempt(actions)
    if best is None:
        raise RuntimeError(f"the walk does not violate {p.name} when replayed")
    chunk = max(1, len(best) // 2)
    while budget > 0:
        improved = False
        i = 0
        while i < len(best) - 1 and budget > 0:
            acts = [a for a, _ in best[1:]]
            trial = attempt(acts[:i] + acts[i + chunk :])
            if trial is not None and len(trial) < len(best):
                best = trial
                improved = True
            else:
                i += chunk
        if chunk == 1 and not improved:
            break
        chunk = max(1, chunk // 2)
    return best


def finish(
    model: Model,
    out: Outcome,
    options: Options,
    *,
    engine: str,
    seconds: float,
    distinct: int | None = None,
    extra: dict | None = None,
) -> CheckResult:
    """The :class:`CheckResult` of a simulation run as ``options`` asked (counterexamples
    shrunk here, on the driver)."""
    walks, depth, seed, symmetry = options.walks, options.depth, options.seed, options.symmetry
    props = selected(model, options.properties)
    by_name = {p.name: p for p in props}
    inits = list(model.init_states())
    violations = {
        name: (lambda v=v, p=by_name[name]: shrink(model, inits[v.init], v.actions, p))
        for name, v in out.violations.items()
    }
    results = property_results(
        model,
        props,
        complete=False,
        violations=violations,
        witnessed=out.witnessed,
        unreached_note="not reached by the random walks",
    )
    n = len(out.fps) if distinct is None else distinct
    names = model.action_names
    info = {
        "walks": walks,
        "max_depth": depth,
        "seed": seed,
        "steps": out.steps,
        "walks_ended_in_terminal_state": out.deadlocks,
        "violating_walk": {name: v.walk for name, v in sorted(out.violations.items())},
        "actions_fired": [a for k, a in enumerate(names) if out.fired >> k & 1],
        **(extra or {}),
    }
    return CheckResult(
        model=model.name,
        engine=engine,
        config=dict(options.config or {}),
        complete=False,
        stop_reason="simulation",
        distinct_states=n,
        states_generated=out.walks + out.steps,
        depth=out.longest,
        seconds=seconds,
        properties=results,
        actions_never_fired=[],
        deadlocks=out.deadlocks,
        collision_probability=collision_probability(n),
        symmetry=symmetry,
        extra={"simulation": info},
    )


@takes_options
def simulate(model: Model, options: Options) -> CheckResult:
    """Run ``options.walks`` seeded random walks of at most ``options.depth`` steps (see the
    module docstring); ``options``: checker.engines.Options (or its fields as keywords)."""
    walks, depth, seed = options.walks, options.depth, options.seed
    properties, symmetry = options.properties, options.symmetry
    if walks < 0 or depth < 0:
        raise ValueError("walks and depth must be >= 0")
    t0 = time.perf_counter()
    reporter = Progress(options.progress)

    def on_walk(o: Outcome) -> None:
        if o.walks % 64 == 0:
            reporter.maybe_report(
                time.perf_counter() - t0, o.walks + o.steps, len(o.fps), walks - o.walks, depth
            )

    out = run_walks(
        model,
        range(walks),
        depth=depth,
        seed=seed,
        properties=properties,
        symmetry=symmetry,
        on_walk=on_walk,
    )
    seconds = time.perf_counter() - t0
    reporter.final(seconds, out.walks + out.steps, len(out.fps), out.longest)
    return finish(model, out, options, engine="simulate", seconds=seconds)


__all__ = ["Outcome", "Violation", "merge", "run_walks", "shrink", "simulate"]
