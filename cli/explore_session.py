"""The state walker behind `isr explore`, apart from HTTP: the states a user has reached, each
state's enabled actions with what they change, the properties in a state, a bounded search for
a state matching a predicate (cli/explore_query.py), and a counterexample replayed through the
model so that the user can jump to any of its states.

States are the model's concrete states as reached (no symmetry applied to what the user sees).
The session gives each state it hands out a small integer id, in the order they are first seen;
the canonical fingerprint (the checker's, ``fingerprint(model.canonicalize(s))``) is shown beside
it, to tell states apart that are one up to a renaming of the replicas. A path is the index of
an initial state and then, per step, the position of the action in the successor list of the
state before it (``model.successors`` is deterministic), so a path written in a URL means the
same states after a restart of the server.

One lock serialises every use of the model (the HTTP server answers on threads; the spec's
``successors`` keeps a per-call cache on the model object)."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Sequence
from typing import Any

from isr.checker.fingerprint import fingerprint
from isr.checker.liveness import STUTTER
from isr.checker.model import Model, Property, State
from isr.traces.counterexample import CounterexampleTrace

from .explore_query import Query, QueryError, parse

SEARCH_MAX_STATES = 200_000
SEARCH_MAX_SECONDS = 10.0
MAX_PATH = 10_000  # steps in a path given by a client


class ExploreError(ValueError):
    """A request the session cannot answer (an unknown id, a path that leaves the spec, a bad
    query): one line for the user."""


def label(desc: dict[str, Any]) -> str:
    """``ProducerWrite(record=1, acks=all)``: an action as ``describe_action`` names it."""
    args = desc.get("args") or {}
    inner = ", ".join(f"{k}={v}" for k, v in args.items()) if isinstance(args, dict) else args
    return f"{desc['action']}({inner})"


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """A state's JSON as ``{"hw.r0": 0, "coordination.leader": 0, "log.r1": [...], ...}``: maps
    flattened into dotted names, lists kept whole (a log is one value)."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        if not value and prefix:
            out[prefix] = {}
        return out
    return {prefix: value}


def diff(before: dict[str, Any], after: dict[str, Any]) -> list[dict[str, Any]]:
    """What changed from ``before`` to ``after`` (two states' JSON): one entry per flattened
    field, ``{"field", "before", "after"}`` (``None`` for a field one side lacks), in the
    order of ``after`` then of the fields only ``before`` has. A list of records (the requests
    in flight) also gets ``removed`` and ``added``: its members that left and came, which say
    more than two long lists side by side."""
    b, a = flatten(before), flatten(after)
    out = [_change(k, b.get(k), v) for k, v in a.items() if k not in b or b[k] != v]
    out += [_change(k, v, None) for k, v in b.items() if k not in a]
    return out


def _change(field: str, old: Any, new: Any) -> dict[str, Any]:
    c = {"field": field, "before": old, "after": new}
    if (
        isinstance(old, list)
        and isinstance(new, list)
        and any(isinstance(x, dict) for x in (*old, *new))
    ):
        rest = list(new)
        removed = []
        for x in old:
            if x in rest:
                rest.remove(x)
            else:
                removed.append(x)
        c["removed"], c["added"] = removed, rest
    return c


class ExploreSession:
    """The states of one model a user walks through (see the module docstring)."""

    def __init__(
        self,
        model: Model,
        trace: CounterexampleTrace | None = None,
        trace_name: str = "",
        max_states: int = SEARCH_MAX_STATES,
        max_seconds: float = SEARCH_MAX_SECONDS,
    ) -> None:
        self.model = model
        self.max_states = max_states
        self.max_seconds = max_seconds
        self._lock = threading.RLock()
        self._states: list[State] = []
        self._ids: dict[State, int] = {}
        props = list(model.properties)
        self.invariants: list[Property] = [p for p in props if p.kind == "always"]
        self.action_properties: list[Property] = [p for p in props if p.kind == "action"]
        self.sometimes: list[Property] = [
            p for p in props if p.kind == "sometimes" and not p.on_transitions
        ]
        self.liveness: list[str] = [p.name for p in props if p.kind == "eventually"]
        self._by_name = {p.name: p for p in self.invariants}
        with self._lock:
            self.initial: list[int] = [self._intern(s) for s in model.init_states()]
            self._sample = model.state_to_json(self._states[self.initial[0]])
        self.trace: dict[str, Any] | None = (
            self._replay(trace, trace_name) if trace is not None else None
        )

    # --- ids ----------------------------------------------------------------------------------
    def _intern(self, state: State) -> int:
        sid = self._ids.get(state)
        if sid is None:
            sid = self._ids[state] = len(self._states)
            self._states.append(state)
        return sid

    def state(self, sid: int) -> State:
        """The state of id ``sid``; ExploreError when no such id was handed out."""
        if not 0 <= sid < len(self._states):
            raise ExploreError(f"no state {sid}: ids are given out as states are reached")
        return self._states[sid]

    # --- what the page shows ------------------------------------------------------------------
    def info(self) -> dict[str, Any]:
        """The model, its initial states, its properties, the search limits, the trace."""
        cfg = getattr(self.model, "config", None)
        return {
            "model": self.model.name,
            "config": cfg.to_json() if cfg is not None else {},
            "initial": self.initial,
            "invariants": [{"name": p.name, "description": p.description} for p in self.invariants],
            "action_properties": [
                {"name": p.name, "description": p.description} for p in self.action_properties
            ],
            "liveness": self.liveness,
            "search": {"max_states": self.max_states, "max_seconds": self.max_seconds},
            "trace": self.trace,
        }

    def state_view(self, sid: int) -> dict[str, Any]:
        """State ``sid``: its JSON, its canonical fingerprint, and its properties (each
        invariant holds or is violated here; each `sometimes` is met here or not)."""
        with self._lock:
            s = self.state(sid)
            fp = fingerprint(self.model.canonicalize(s)) & (2**64 - 1)
            return {
                "id": sid,
                "fingerprint": f"{fp:016x}",
                "initial": sid in self.initial,
                "state": self.model.state_to_json(s),
                "invariants": [
                    {"name": p.name, "holds": self._holds(p, s), "description": p.description}
                    for p in self.invariants
                ],
                "sometimes": [{"name": p.name, "met": self._holds(p, s)} for p in self.sometimes],
            }

    def successors_view(self, sid: int) -> list[dict[str, Any]]:
        """The enabled actions of state ``sid``, in the model's order: each with its position
        ``k``, its name and arguments, the successor's id, the fields it changes (before ->
        after) and the action properties the step violates."""
        with self._lock:
            s = self.state(sid)
            before = self.model.state_to_json(s)
            out = []
            for k, (action, t) in enumerate(self.model.successors(s)):
                desc = self.model.describe_action(action)
                out.append(
                    {
                        "k": k,
                        "action": desc["action"],
                        "args": desc.get("args", {}),
                        "label": label(desc),
                        "target": self._intern(t),
                        "changed": diff(before, self.model.state_to_json(t)),
                        "violates": self._step_violations(s, action, t),
                        "target_violates": [
                            p.name for p in self.invariants if not self._holds(p, t)
                        ],
                    }
                )
            return out

    def walk(self, path: Sequence[int]) -> list[dict[str, Any]]:
        """The states along ``path`` (an initial state's index, then successor positions): per
        state its id and, from the second on, the step into it (``k``, label, the fields it
        changed, the action properties it violates)."""
        if not path:
            raise ExploreError("an empty path: it starts with an initial state's index")
        if len(path) > MAX_PATH + 1:
            raise ExploreError(f"a path of more than {MAX_PATH} steps")
        if not 0 <= path[0] < len(self.initial):
            raise ExploreError(f"no initial state {path[0]}: the model has {len(self.initial)}")
        with self._lock:
            sid = self.initial[path[0]]
            out: list[dict[str, Any]] = [{"id": sid, "k": path[0], "label": "Init"}]
            s = self.state(sid)
            for i, k in enumerate(path[1:], start=1):
                succ = self.model.successors(s)
                if not 0 <= k < len(succ):
                    raise ExploreError(
                        f"step {i} of the path: state {sid} has {len(succ)} enabled actions, "
                        f"not an action {k}"
                    )
                action, t = succ[k]
                sid = self._intern(t)
                out.append(
                    {
                        "id": sid,
                        "k": k,
                        "label": label(self.model.describe_action(action)),
                        "changed": diff(self.model.state_to_json(s), self.model.state_to_json(t)),
                        "violates": self._step_violations(s, action, t),
                    }
                )
                s = t
            return out

    # --- search -------------------------------------------------------------------------------
    def parse_query(self, text: str) -> Query:
        """``text`` parsed against this model's states and invariants (ExploreError if bad)."""
        try:
            return parse(text, self._sample, [p.name for p in self.invariants])
        except QueryError as e:
            raise ExploreError(f"bad query: {e}") from None

    def search(self, text: str, start: int | None = None) -> dict[str, Any]:
        """Breadth-first from state ``start`` (the first initial state when None) for a state
        matching the query ``text``: a shortest path to the first one found, as successor
        positions from ``start`` (``choices``) and the ids along it (``ids``, ``start`` first).
        The search stops after ``max_states`` distinct states or ``max_seconds``, with a message
        saying so. States are told apart as they are (no symmetry): a query may name a replica."""
        query = self.parse_query(text)
        model = self.model
        with self._lock:
            root = self.state(self.initial[0] if start is None else start)
            t0 = time.monotonic()
            deadline = t0 + self.max_seconds
            parent: dict[State, tuple[State | None, int]] = {root: (None, -1)}
            frontier: deque[tuple[State, int]] = deque([(root, 0)])
            found: State | None = None
            depth = 0
            stopped = ""
            while frontier:
                s, depth = frontier.popleft()
                if self._matches(query, s):
                    found = s
                    break
                if time.monotonic() > deadline:
                    stopped = f"stopped after {self.max_seconds:g} s"
                    break
                for k, (_a, t) in enumerate(model.successors(s)):
                    if t not in parent:
                        if len(parent) >= self.max_states:
                            stopped = f"stopped at the limit of {self.max_states:,} states"
                            break
                        parent[t] = (s, k)
                        frontier.append((t, depth + 1))
                if stopped:
                    break
            explored = len(parent)
            seconds = round(time.monotonic() - t0, 3)
            base = {
                "query": text,
                "from": self._intern(root),
                "explored": explored,
                "seconds": seconds,
            }
            if found is None:
                if stopped:
                    msg = (
                        f"no match within {explored:,} states up to depth {depth} ({stopped}); "
                        "search from a state closer to it, or narrow the query"
                    )
                else:
                    msg = f"no reachable state matches (all {explored:,} states searched)"
                return {**base, "found": False, "complete": not stopped, "message": msg}
            choices: list[int] = []
            chain = [found]
            node = found
            while True:
                prev, k = parent[node]
                if prev is None:
                    break
                choices.append(k)
                chain.append(prev)
                node = prev
            choices.reverse()
            chain.reverse()
            ids = [self._intern(x) for x in chain]
            n = len(choices)
            return {
                **base,
                "found": True,
                "choices": choices,
                "ids": ids,
                "message": f"found state {ids[-1]} {n} step{'s' * (n != 1)} away "
                f"(shortest; {explored:,} states searched)",
            }

    def _matches(self, query: Query, s: State) -> bool:
        j = self.model.state_to_json(s) if query.uses_state else None
        return query.matches(j, lambda name: self._holds(self._by_name[name], s))

    # --- the counterexample -------------------------------------------------------------------
    def _replay(self, trace: CounterexampleTrace, name: str) -> dict[str, Any]:
        """Replay ``trace`` through the model as `isr replay` does: the initial state equal to
        the trace's, then per step the successor with the recorded action, arguments and state.
        Each of its states comes with its id and its path (initial index, then successor
        positions), so the page can jump to it. A liveness lasso may end in a ``Stutter`` step
        that changes nothing (stuttering forever there): its state is the one before it.
        ExploreError at the first step that is no transition of the spec."""
        model = self.model
        with self._lock:
            init = model.init_states()
            i0 = next(
                (i for i, s in enumerate(init) if model.state_to_json(s) == trace.initial), None
            )
            if i0 is None:
                raise ExploreError(f"{name}: its initial state is not an initial state of the spec")
            s = init[i0]
            path = [i0]
            states = [{"label": "Init", "id": self._intern(s), "path": list(path)}]
            for step in trace.steps:
                want = {"action": step["action"], "args": step.get("args", {})}
                if want["action"] == STUTTER and step["state"] == model.state_to_json(s):
                    states.append({"label": STUTTER, "id": states[-1]["id"], "path": list(path)})
                    continue
                found = next(
                    (
                        (k, t)
                        for k, (a, t) in enumerate(model.successors(s))
                        if model.describe_action(a) == want
                        and model.state_to_json(t) == step["state"]
                    ),
                    None,
                )
                if found is None:
                    raise ExploreError(
                        f"{name}: step {step['index']} ({label(want)}) is not a transition of "
                        "the spec from the state before it (check it with `isr replay`)"
                    )
                k, s = found
                path.append(k)
                states.append({"label": label(want), "id": self._intern(s), "path": list(path)})
            return {
                "file": name,
                "property": trace.header.get("property"),
                "kind": trace.header.get("kind"),
                "loop_start": trace.header.get("loop_start"),
                "states": states,
            }

    # --- properties ---------------------------------------------------------------------------
    @staticmethod
    def _holds(p: Property, s: State) -> bool:
        return bool(p.check(s))

    def _step_violations(self, s: State, action: Any, t: State) -> list[str]:
        return [p.name for p in self.action_properties if not p.check(s, action, t)]
