"""The reachable state graph of a model as a networkx DiGraph, its statistics and its export.

Nodes are state fingerprints (see :mod:`checker.fingerprint`); each edge ``u -> v`` carries the
list of actions ``(kind, args)`` that lead from ``u`` to ``v`` (several actions may). The states
themselves are kept beside the graph (``StateGraph.states``) so that engines can evaluate
predicates on them. Meant for small bounds: every state is held in memory, unlike
:mod:`checker.bfs`, which keeps fingerprints only.

Exports: GraphML through networkx (attributes flattened to strings), and DOT written here as
plain text (no pygraphviz or pydot needed).
"""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from .fingerprint import fingerprint
from .model import Action, Model, State


class GraphLimitError(RuntimeError):
    """The reachable graph has more states than the limit given to :func:`build_graph`."""


@dataclass
class StateGraph:
    """The reachable graph: ``graph`` (fingerprint nodes, ``actions`` on edges), the states by
    fingerprint, the initial fingerprints, BFS distance from the initial states and BFS parents
    (for shortest prefixes), and the states outside the model's boundary (not expanded)."""

    model: Model
    graph: nx.DiGraph
    states: dict[int, State]
    init: list[int]
    dist: dict[int, int]
    parent: dict[int, tuple[int, Action] | None]
    outside: set[int] = field(default_factory=set)
    symmetry: bool = False
    seconds: float = 0.0
    truncated: bool = False  # build_graph(truncate_at=...) stopped before exhausting the graph

    def enabled(self, u: int) -> set[Action]:
        """Every action enabled in ``u`` (the labels of its outgoing edges)."""
        out: set[Action] = set()
        for _, _, acts in self.graph.out_edges(u, data="actions"):
            out.update(acts)
        return out

    def prefix_to(self, target: int) -> list[tuple[Action, int]]:
        """A shortest path from an initial state to ``target``: [(action, fingerprint)...], the
        initial state itself not included."""
        steps: list[tuple[Action, int]] = []
        fp = target
        while True:
            link = self.parent[fp]
            if link is None:
                break
            prev, action = link
            steps.append((action, fp))
            fp = prev
        steps.reverse()
        return steps

    def root_of(self, target: int) -> int:
        fp = target
        while (link := self.parent[fp]) is not None:
            fp = link[0]
        return fp


def _identity(state: State) -> State:
    return state


def build_graph(
    model: Model,
    *,
    symmetry: bool = False,
    max_states: int | None = None,
    truncate_at: int | None = None,
    on_transition: Callable[[int, State, Action, State], None] | None = None,
    edges: bool = True,
) -> StateGraph:
    """Breadth-first exploration keeping every state and every transition.

    ``symmetry`` explores canonical representatives only (fine for statistics and pictures;
    liveness under per-instance fairness needs the concrete graph, see :mod:`checker.liveness`).
    Raises :class:`GraphLimitError` beyond ``max_states``. ``truncate_at``: instead, stop
    expanding once that many states are known and return the partial graph (``truncated``;
    the states left unexpanded have no outgoing edges). ``on_transition(u, s, action, t)`` is
    called for every transition, in exploration order (``u`` is the fingerprint of ``s``):
    for searches that look at transitions, such as the conformance kit's scenario targets.
    ``edges=False`` keeps states, distances and parents only (shortest paths, no graph edges:
    half the time when only paths are wanted)."""
    t0 = time.perf_counter()
    canon: Callable[[State], State] = model.canonicalize if symmetry else _identity
    g = nx.DiGraph()
    states: dict[int, State] = {}
    dist: dict[int, int] = {}
    parent: dict[int, tuple[int, Action] | None] = {}
    init: list[int] = []
    outside: set[int] = set()
    queue: deque[int] = deque()
    for s in model.init_states():
        c = canon(s)
        fp = fingerprint(c)
        if fp in states:
            continue
        states[fp] = c
        dist[fp] = 0
        parent[fp] = None
        init.append(fp)
        g.add_node(fp)
        queue.append(fp)
    truncated = False
    while queue:
        if truncate_at is not None and len(states) >= truncate_at:
            truncated = True
            break
        u = queue.popleft()
        s = states[u]
        if not model.within_boundary(s):
            outside.add(u)
            continue
        du = dist[u] + 1
        for action, t in model.successors(s):
            if on_transition is not None:
                on_transition(u, s, action, t)
            c = canon(t)
            v = fingerprint(c)
            if v not in states:
                if max_states is not None and len(states) >= max_states:
                    raise GraphLimitError(f"more than {max_states} states")
                states[v] = c
                dist[v] = du
                parent[v] = (u, action)
                g.add_node(v)
                queue.append(v)
            if not edges:
                continue
            data = g.get_edge_data(u, v)
            if data is None:
                g.add_edge(u, v, actions=[action])
            else:
                data["actions"].append(action)
    return StateGraph(
        model=model,
        graph=g,
        states=states,
        init=init,
        dist=dist,
        parent=parent,
        outside=outside,
        symmetry=symmetry,
        seconds=time.perf_counter() - t0,
        truncated=truncated,
    )


def graph_stats(sg: StateGraph) -> dict[str, Any]:
    """Summary statistics: states, edges (distinct pairs and labelled transitions), SCCs (count,
    largest, non-trivial ones), diameter, deadlocks (states with no enabled action, not counting
    states outside the boundary).

    ``diameter`` is the largest BFS distance from an initial state (TLC's "depth"), the longest
    of the shortest behaviours needed to reach any state; the all-pairs diameter of a graph of
    this size would cost O(V*E)."""
    g = sg.graph
    sccs = list(nx.strongly_connected_components(g))
    sizes = sorted((len(c) for c in sccs), reverse=True)
    nontrivial = sum(1 for c in sccs if len(c) > 1 or g.has_edge(next(iter(c)), next(iter(c))))
    deadlocks = sum(1 for u in g if g.out_degree(u) == 0 and u not in sg.outside)
    transitions = sum(len(a) for _, _, a in g.edges(data="actions"))
    return {
        "states": g.number_of_nodes(),
        "edges": g.number_of_edges(),
        "transitions": transitions,
        "initial_states": len(sg.init),
        "sccs": len(sccs),
        "nontrivial_sccs": nontrivial,
        "largest_scc": sizes[0] if sizes else 0,
        "diameter": max(sg.dist.values(), default=0),
        "deadlocks": deadlocks,
        "outside_boundary": len(sg.outside),
        "symmetry": sg.symmetry,
        "seconds": round(sg.seconds, 3),
    }


def action_label(model: Model, action: Action) -> str:
    desc = model.describe_action(action)
    args = desc["args"]
    if isinstance(args, dict):
        inner = ", ".join(f"{k}={v}" for k, v in args.items())
    else:
        inner = ", ".join(str(a) for a in args)
    return f"{desc['action']}({inner})"


def _state_text(model: Model, state: State) -> str:
    return json.dumps(model.state_to_json(state), separators=(",", ":"), sort_keys=True)


def export_graphml(sg: StateGraph, path: str) -> None:
    """GraphML with string node ids ``s<k>`` (k in BFS order) and attributes: ``fingerprint``,
    ``state`` (JSON), ``init``, ``deadlock``, ``depth``; edges: ``actions`` ("A(x=1); B()")."""
    model = sg.model
    ids = _node_ids(sg)
    h = nx.DiGraph()
    for u in sg.graph:
        h.add_node(
            ids[u],
            fingerprint=str(u),
            state=_state_text(model, sg.states[u]),
            init=u in sg.init,
            deadlock=sg.graph.out_degree(u) == 0 and u not in sg.outside,
            depth=sg.dist[u],
        )
    for u, v, acts in sg.graph.edges(data="actions"):
        h.add_edge(ids[u], ids[v], actions="; ".join(action_label(model, a) for a in acts))
    nx.write_graphml(h, path)


def _node_ids(sg: StateGraph) -> dict[int, str]:
    order = sorted(sg.graph, key=lambda u: sg.dist[u])
    return {u: f"s{k}" for k, u in enumerate(order)}


def _dot_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def to_dot(sg: StateGraph, *, with_states: bool = True) -> str:
    """DOT text: initial states double-circled, deadlocks red, edges labelled by their actions;
    each node labelled by its id and, when the model has ``state_label``, its short summary;
    its tooltip is its state as JSON (when ``with_states``)."""
    model = sg.model
    ids = _node_ids(sg)
    lines = [
        f'digraph "{_dot_escape(model.name)}" {{',
        "  node [shape=circle, fontsize=10];",
        "  edge [fontsize=8];",
    ]
    short = getattr(model, "state_label", None)  # a model may name its states briefly
    for u in sorted(sg.graph, key=lambda u: sg.dist[u]):
        text = ids[u] if short is None else f"{ids[u]}\n{short(sg.states[u])}"
        attrs = [f'label="{_dot_escape(text)}"']
        if u in sg.init:
            attrs.append("shape=doublecircle")
        if sg.graph.out_degree(u) == 0 and u not in sg.outside:
            attrs.append("color=red")
        if with_states:
            attrs.append(f'tooltip="{_dot_escape(_state_text(model, sg.states[u]))}"')
        lines.append(f"  {ids[u]} [{', '.join(attrs)}];")
    for u, v, acts in sg.graph.edges(data="actions"):
        label = "\\n".join(_dot_escape(action_label(model, a)) for a in acts)
        lines.append(f'  {ids[u]} -> {ids[v]} [label="{label}"];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def export_dot(sg: StateGraph, path: str, *, with_states: bool = True) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(to_dot(sg, with_states=with_states))


__all__ = [
    "GraphLimitError",
    "StateGraph",
    "WithoutActions",
    "action_label",
    "build_graph",
    "export_dot",
    "export_graphml",
    "graph_stats",
    "to_dot",
]


class WithoutActions:
    """A view of ``model`` in which the named actions never happen (e.g. "what if the network
    never lost a message"): same states, names and properties, fewer transitions. Action kinds
    keep their numbers, so counterexamples replay on the original model too."""

    def __init__(self, model: Model, names: list[str]):
        unknown = [n for n in names if n not in model.action_names]
        if unknown:
            raise ValueError(f"unknown action {unknown[0]!r}")
        self._model = model
        self._excluded = {list(model.action_names).index(n) for n in names}
        self.name = f"{model.name} without {', '.join(names)}"
        self.action_names = model.action_names
        self.properties = model.properties
        self.fairness = getattr(model, "fairness", ())

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._model, attr)

    def init_states(self):
        return self._model.init_states()

    def successors(self, state: State):
        return ((a, t) for a, t in self._model.successors(state) if a[0] not in self._excluded)

    def within_boundary(self, state: State) -> bool:
        return self._model.within_boundary(state)

    def canonicalize(self, state: State) -> State:
        return self._model.canonicalize(state)

    def describe_action(self, action: Action) -> dict[str, Any]:
        return self._model.describe_action(action)

    def state_to_json(self, state: State) -> dict[str, Any]:
        return self._model.state_to_json(state)
