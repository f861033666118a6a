"""Liveness under fairness on the reachable state graph, by strongly connected components, as
TLC's liveness checking does.

For each ``eventually`` property (see :class:`checker.model.Property`) and each token ``x`` its
trigger yields: the *bad region* is every state reachable from a state where ``P(x)`` holds and
``Q(x)`` does not, through states where ``Q(x)`` does not hold. A violation is a *fair* cycle in
the bad region: a lasso (prefix from an initial state, then a cycle repeated forever).

Fairness (:class:`checker.model.Fairness`, per action name or per argument tuple) is checked on
a strongly connected component S of the bad region, which a behaviour can traverse visiting
every state and edge of S infinitely often:

* weak ``WF(A)``: fair when A is taken on an edge inside S, or is disabled in some state of S;
  when A is enabled in every state of S and never taken, no cycle inside S is fair: S is dropped;
* strong ``SF(A)``: fair when A is taken inside S or disabled in every state of S; otherwise the
  states of S where A is enabled are removed and the rest is split into SCCs again (Emerson-Lei).

Every state may stutter (TLA+ semantics), so a single state is a cycle too: stuttering forever
there is fair only when no fair action is enabled. A lasso ending in stuttering is shown with a
last step named ``Stutter`` that changes nothing. A terminal (deadlocked) state where the goal
fails is therefore a violation.

The graph holds concrete states (no symmetry reduction: with per-instance fairness a cycle up to
symmetry is not a cycle). Lassos are replayed through the model, so each step shown is a real
transition (:mod:`checker.paths`).
"""

from __future__ import annotations

import heapq
import time
from collections import Counter, deque
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from .fingerprint import collision_probability, fingerprint
from .graph import GraphLimitError, StateGraph, build_graph, graph_stats
from .model import Action, Fairness, Model, Property, State
from .options import Options, split_properties, takes_options
from .paths import ReplayError, to_counterexample
from .result import CheckResult, Counterexample, PropertyResult, Step

STUTTER = "Stutter"


@dataclass(frozen=True)
class _Constraint:
    kind: int  # action kind
    args: tuple[int, ...] | None  # None: the action as a whole
    strong: bool
    label: str


@dataclass
class Lasso:
    """A violation: ``prefix`` from an initial state to the cycle's first state, then ``cycle``
    (empty: stuttering forever in the last state). Steps are (action, fingerprint)."""

    init: int
    prefix: list[tuple[Action, int]]
    cycle: list[tuple[Action, int]]
    token: Any


def fairness_constraints(model: Model, sg: StateGraph) -> list[_Constraint]:
    """The model's declared fairness, with per-instance fairness expanded over every argument
    tuple that occurs in the graph. Unknown action names are an error in the model."""
    fairness: Sequence[Fairness] = getattr(model, "fairness", ()) or ()
    names = list(model.action_names)
    out: list[_Constraint] = []
    instances: dict[int, set[tuple[int, ...]]] = {}
    if any(f.instances for f in fairness):
        for _, _, acts in sg.graph.edges(data="actions"):
            for k, args in acts:
                instances.setdefault(k, set()).add(args)
    for f in fairness:
        if f.action not in names:
            raise ValueError(f"fairness names an unknown action {f.action!r}")
        k = names.index(f.action)
        strong = f.kind == "strong"
        if f.instances:
            for args in sorted(instances.get(k, ())):
                out.append(_Constraint(k, args, strong, f"{f.kind[0].upper()}F {f.action}{args}"))
        else:
            out.append(_Constraint(k, None, strong, f"{f.kind[0].upper()}F {f.action}"))
    return out


class _Analysis:
    """Fair-SCC search on one graph under one set of fairness constraints."""

    def __init__(self, sg: StateGraph, constraints: list[_Constraint]):
        self.sg = sg
        self.g = sg.graph
        self.constraints = constraints
        self._enabled: dict[int, tuple[frozenset[Action], frozenset[int]]] = {}

    def enabled(self, u: int) -> tuple[frozenset[Action], frozenset[int]]:
        e = self._enabled.get(u)
        if e is None:
            acts = frozenset(self.sg.enabled(u))
            e = (acts, frozenset(k for k, _ in acts))
            self._enabled[u] = e
        return e

    @staticmethod
    def _matches(c: _Constraint, action: Action) -> bool:
        return action[0] == c.kind and (c.args is None or action[1] == c.args)

    def _is_enabled(self, c: _Constraint, u: int) -> bool:
        acts, kinds = self.enabled(u)
        return (c.kind, c.args) in acts if c.args is not None else c.kind in kinds

    def fair_components(self, nodes: set[int]) -> Iterator[set[int]]:
        """Maximal fair sub-components of the subgraph induced by ``nodes``."""
        import networkx as nx

        stack = [set(c) for c in nx.strongly_connected_components(self.g.subgraph(nodes))]
        while stack:
            comp = stack.pop()
            taken_acts: set[Action] = set()
            for u in comp:
                for v, data in self.g.adj[u].items():
                    if v in comp:
                        taken_acts.update(data["actions"])
            taken_kinds = {k for k, _ in taken_acts}
            en_acts: Counter[Action] = Counter()
            en_kinds: Counter[int] = Counter()
            for u in comp:
                acts, kinds = self.enabled(u)
                en_acts.update(acts)
                en_kinds.update(kinds)
            fair = True
            for c in self.constraints:
                if c.args is None:
                    taken = c.kind in taken_kinds
                    count = en_kinds[c.kind]
                else:
                    taken = (c.kind, c.args) in taken_acts
                    count = en_acts[(c.kind, c.args)]
                if taken or count == 0:
                    continue
                if not c.strong:
                    if count == len(comp):  # enabled throughout, never taken: no fair cycle
                        fair = False
                        break
                    continue
                rest = {u for u in comp if not self._is_enabled(c, u)}
                if rest:
                    stack.extend(
                        set(x) for x in nx.strongly_connected_components(self.g.subgraph(rest))
                    )
                fair = False
                break
            if fair:
                yield comp

    def _path_within(self, comp: set[int], src: int, dst: int) -> list[tuple[Action, int]]:
        if src == dst:
            return []
        parent: dict[int, tuple[int, Action]] = {}
        queue = deque([src])
        seen = {src}
        while queue:
            u = queue.popleft()
            for v, data in self.g.adj[u].items():
                if v in comp and v not in seen:
                    seen.add(v)
                    parent[v] = (u, data["actions"][0])
                    if v == dst:
                        steps = []
                        x = v
                        while x != src:
                            p, a = parent[x]
                            steps.append((a, x))
                            x = p
                        steps.reverse()
                        return steps
                    queue.append(v)
        raise AssertionError("nodes of one strongly connected component are not connected")

    def fair_cycle(self, comp: set[int], entry: int) -> list[tuple[Action, int]]:
        """A cycle through ``entry`` inside the fair component ``comp`` that meets every
        fairness constraint (empty: stuttering in ``entry`` is fair)."""
        edges: list[tuple[int, Action, int]] = []
        for u in comp:
            for v, data in self.g.adj[u].items():
                if v in comp:
                    edges.extend((u, a, v) for a in data["actions"])
        cycle: list[tuple[Action, int]] = []
        cur = entry
        visited = {entry}
        taken: set[Action] = set()
        for c in self.constraints:
            if any(self._matches(c, a) for a in taken):
                continue
            edge = next((e for e in edges if self._matches(c, e[1])), None)
            if edge is not None:
                u, a, v = edge
                seg = [*self._path_within(comp, cur, u), (a, v)]
            else:
                if any(not self._is_enabled(c, x) for x in visited):
                    continue
                target = next((x for x in comp if not self._is_enabled(c, x)), None)
                if target is None:  # strong fairness, disabled everywhere after pruning
                    continue
                seg = self._path_within(comp, cur, target)
            for a, v in seg:
                visited.add(v)
                taken.add(a)
            cycle.extend(seg)
            if seg:
                cur = seg[-1][1]
        if cycle:
            cycle.extend(self._path_within(comp, cur, entry))
            if not cycle:
                raise AssertionError("empty cycle after a non-empty walk")
        return cycle


def _find_lasso(
    sg: StateGraph,
    analysis: _Analysis,
    sources: Iterable[int],
    bad: Callable[[int], bool],
    token: Any,
) -> Lasso | None:
    """Dijkstra from the trigger states (each starting at its BFS depth) through bad states;
    then the fair component of the bad region whose nearest state is cheapest."""
    g = sg.graph
    cost: dict[int, int] = {}
    back: dict[int, tuple[int, Action] | None] = {}
    heap: list[tuple[int, int]] = []
    for s in sources:
        d = sg.dist[s]
        if s not in cost or d < cost[s]:
            cost[s] = d
            back[s] = None
            heapq.heappush(heap, (d, s))
    done: set[int] = set()
    while heap:
        d, u = heapq.heappop(heap)
        if u in done:
            continue
        done.add(u)
        if u in sg.outside:
            continue
        for v, data in g.adj[u].items():
            if v in done or not bad(v):
                continue
            if v not in cost or d + 1 < cost[v]:
                cost[v] = d + 1
                back[v] = (u, data["actions"][0])
                heapq.heappush(heap, (d + 1, v))
    region = done - sg.outside
    best: tuple[int, int, set[int]] | None = None
    for comp in analysis.fair_components(region):
        entry = min(comp, key=lambda x: (cost[x], x))
        if best is None or cost[entry] < best[0]:
            best = (cost[entry], entry, comp)
    if best is None:
        return None
    _, entry, comp = best
    tail: list[tuple[Action, int]] = []
    x = entry
    while (link := back[x]) is not None:
        tail.append((link[1], x))
        x = link[0]
    tail.reverse()
    prefix = sg.prefix_to(x) + tail
    return Lasso(sg.root_of(x), prefix, analysis.fair_cycle(comp, entry), token)


def replay_lasso(model: Model, sg: StateGraph, lasso: Lasso) -> Counterexample:
    """Replay the lasso through the model (each step must be an enabled action leading to the
    stored fingerprint) and render it; ``loop_start`` is the index of the cycle's first step."""
    s = sg.states[lasso.init]
    path: list[tuple[Action, State]] = [((-1, ()), s)]
    for action, want in [*lasso.prefix, *lasso.cycle]:
        for a, t in model.successors(s):
            if a == action and fingerprint(t) == want:
                path.append((a, t))
                s = t
                break
        else:
            raise ReplayError(f"{action} to {want} is not a transition at step {len(path)}")
    cx = to_counterexample(model, path)
    loop_start = len(lasso.prefix) + 1
    if not lasso.cycle:
        cx.steps.append(Step(loop_start, STUTTER, {}, {}))
    cx.loop_start = loop_start
    return cx


def _tokens(prop: Property, sg: StateGraph) -> dict[Hashable, list[int]]:
    """Trigger states per token (only those where the goal does not already hold)."""
    out: dict[Hashable, list[int]] = {}
    if prop.trigger is None:
        out[None] = [u for u in sg.init if not prop.check(sg.states[u])]
        return out
    for u, s in sg.states.items():
        for tok in prop.trigger(s):
            if not prop.check(s, tok):
                out.setdefault(tok, []).append(u)
    return out


def check_property(
    model: Model, sg: StateGraph, prop: Property, analysis: _Analysis
) -> tuple[Lasso | None, dict[str, Any]]:
    tokens = _tokens(prop, sg)
    info: dict[str, Any] = {"tokens": len(tokens), "trigger_states": 0, "bad_states": 0}
    best: Lasso | None = None
    for tok in sorted(tokens, key=repr):
        sources = tokens[tok]
        info["trigger_states"] += len(sources)
        memo: dict[int, bool] = {}

        def bad(u: int, tok=tok, memo=memo) -> bool:
            r = memo.get(u)
            if r is None:
                s = sg.states[u]
                r = not (prop.check(s) if prop.trigger is None else prop.check(s, tok))
                memo[u] = r
            return r

        lasso = _find_lasso(sg, analysis, sources, bad, tok)
        info["bad_states"] += sum(memo.values())
        if lasso is not None and (
            best is None
            or len(lasso.prefix) + len(lasso.cycle) < len(best.prefix) + len(best.cycle)
        ):
            best = lasso
    return best, info


@takes_options
def check_liveness(model: Model, options: Options) -> CheckResult:
    """Build the reachable graph (unless given: ``options.graph``, else at most
    ``options.limits.max_states`` states) and check every ``eventually`` property under the
    model's fairness. Other kinds of properties are reported as not checked here. ``options``:
    checker.engines.Options (or its fields as keywords)."""
    properties, config, graph = options.properties, options.config, options.graph
    max_states = options.limits.max_states
    t0 = time.perf_counter()
    props = split_properties(model, properties).liveness
    try:
        sg = graph if graph is not None else build_graph(model, max_states=max_states)
    except GraphLimitError:
        return CheckResult(
            model=model.name,
            engine="liveness",
            config=dict(config or {}),
            complete=False,
            stop_reason="max-states",
            distinct_states=max_states or 0,
            states_generated=0,
            depth=0,
            seconds=time.perf_counter() - t0,
            properties=[
                PropertyResult(p.name, p.kind, None, None, p.description, note="graph too large")
                for p in props
            ],
            actions_never_fired=[],
        )
    analysis = _Analysis(sg, fairness_constraints(model, sg))
    results: list[PropertyResult] = []
    details: dict[str, Any] = {}
    for p in props:
        lasso, info = check_property(model, sg, p, analysis)
        if lasso is None:
            results.append(PropertyResult(p.name, p.kind, True, None, p.description))
        else:
            cx = replay_lasso(model, sg, lasso)
            note = "" if lasso.token is None else f"for {lasso.token!r}"
            info["token"] = None if lasso.token is None else repr(lasso.token)
            info["prefix"] = len(lasso.prefix)
            info["cycle"] = len(lasso.cycle)
            results.append(PropertyResult(p.name, p.kind, False, cx, p.description, note=note))
        details[p.name] = info
    stats = graph_stats(sg)
    fired = set()
    for _, _, acts in sg.graph.edges(data="actions"):
        fired.update(k for k, _ in acts)
    return CheckResult(
        model=model.name,
        engine="liveness",
        config=dict(config or {}),
        complete=True,
        stop_reason="exhausted",
        distinct_states=stats["states"],
        states_generated=stats["transitions"],
        depth=stats["diameter"],
        seconds=time.perf_counter() - t0,
        properties=results,
        actions_never_fired=[n for k, n in enumerate(model.action_names) if k not in fired],
        deadlocks=stats["deadlocks"],
        collision_probability=collision_probability(stats["states"]),
        symmetry=False,
        extra={
            "graph": stats,
            "fairness": [c.label for c in analysis.constraints],
            "liveness": details,
        },
    )


__all__ = ["STUTTER", "Lasso", "check_liveness", "fairness_constraints", "replay_lasso"]
