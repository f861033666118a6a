"""The model protocol: what an engine needs from a specification, and nothing about Kafka.

A model is a plain object (see :class:`Model`). Engines explore it; they never import a spec.
The design follows stateright's `Model` trait and TLC's separation of spec, state and engine:

* ``init_states()`` — the initial states.
* ``successors(state)`` — every enabled action with its successor, in a deterministic order.
  An action is a pair ``(kind, args)``: ``kind`` indexes ``action_names``, ``args`` is a tuple of
  ints naming what the action acts on (replicas, records...).
* ``properties`` — named properties (see :class:`Property`).
* ``within_boundary(state)`` — states outside the boundary are kept but not expanded.
* ``canonicalize(state)`` — symmetry reduction: map a state to a representative of its orbit
  under the model's symmetry group (identity when the model has none). It must return a state in
  the same orbit; it need not pick the same representative for every member of the orbit (that
  loses some reduction, never soundness). So two states of one orbit may have different
  representatives, and a concrete state's successors need not canonicalize to the
  representatives the search stored: counterexamples are rebuilt along the representatives the
  search expanded (:func:`checker.paths.replay_chain`), never by canonicalizing concrete states.
* Optional, for counterexamples that are concrete paths under symmetry reduction:
  ``canonicalize_with_permutation(state) -> (canonicalize(state), perm)`` and
  ``permute(state, perm) -> state`` with ``permute(state, perm) == canonicalize(state)``. A
  ``perm`` is a tuple of ints, a permutation of ``range(k)`` over the model's symmetric ids:
  ``permute(s, perm)`` renames id ``perm[j]`` to ``j`` everywhere in ``s`` (so renamings compose
  as ``permute(permute(s, p), q) == permute(s, tuple(p[j] for j in q))``). The model's successors
  must commute with ``permute`` (that is what makes the symmetry reduction sound): the successors
  of ``permute(s, p)`` are the successors of ``s``, each permuted by ``p``, equal as values. A
  model without them (engines look them up with ``getattr``; ``None`` counts as absent) gets its
  counterexamples as paths of representatives, each step shown up to a renaming.
* Optional: ``forget(state) -> state`` — a reduction folded into ``canonicalize`` (which is
  then ``canonicalize(forget(s))``): it overwrites values no step will ever read again, so that
  states differing only there become one (e.g. the ISR spec's dead-state reduction). It must
  commute with the model's successors up to itself and with ``permute``; the replay then matches
  concrete steps up to it, and the counterexamples stay concrete paths. A model with one names
  it in ``reduction`` (a string; part of a checkpoint's identity).
* Optional: ``full_successors(state)`` — for a model whose ``successors`` is a reduction that
  keeps only some successors of a state (e.g. the ISR spec's partial-order reduction): all of
  them. It is then these that must commute with ``permute`` (and ``forget``): a reduction
  chosen on each state need not keep the same steps in two members of an orbit. The
  counterexample replay matches a concrete state's step against them, so the path stays a
  concrete behaviour; the representatives are still walked with ``successors``, as searched.
* Optional: ``symmetric`` — False for a model whose ``canonicalize`` is the identity whatever
  the engine asks (results then say symmetry off).
* Optional: ``to_wire(state)`` and ``from_wire(wire)`` — the state as nested plain tuples (no
  tuple subclasses), for engines that move states between processes (Spark): pickling plain
  tuples costs no Python-level call. ``hash(to_wire(s)) == hash(s)`` and
  ``from_wire(to_wire(s)) == s``; absent, states move as they are.
* ``describe_action(action)`` / ``state_to_json(state)`` — for counterexamples people read.

States are immutable values made only of ints, bools, ``None`` and tuples (sets as sorted tuples
or bitmasks). That makes them hash by value *and* makes ``hash(state)`` identical in every
process and on every 64-bit CPython >= 3.8: integer hashing is not salted (only str and bytes
are, by PYTHONHASHSEED) and tuple hashing is a fixed xxHash-style mix. :mod:`checker.fingerprint`
relies on this and checks it.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

State = tuple
Action = tuple[int, tuple[int, ...]]

PropertyKind = Literal["always", "action", "sometimes", "eventually"]


@dataclass(frozen=True)
class Property:
    """A named property.

    kind:
      * ``always``     — ``check(state)`` holds in every reachable state (an invariant).
      * ``action``     — ``check(state, action, next_state)`` holds on every transition
                         (TLA+'s [][A]_vars), e.g. HwMonotonic.
      * ``sometimes``  — ``check(...)`` holds in at least one reachable state, or on at least one
                         transition when ``on_transitions``. A `sometimes` that is never met is a
                         failure: the model cannot reach what it claims to model.
      * ``eventually`` — liveness; checked by the state-graph engine (:mod:`checker.liveness`)
                         under the model's ``fairness``. Two forms:

                         - ``trigger is None``: ``<>check`` — every fair behaviour from an
                           initial state reaches a state where ``check(state)`` holds.
                         - ``trigger`` given: a quantified leads-to, ``\\A x: P(x) ~> Q(x)``.
                           ``trigger(state)`` yields the tokens ``x`` for which ``P(x)`` holds in
                           ``state`` (hashable values, e.g. a record id or a (follower, leader)
                           pair); ``check(state, x)`` is ``Q(x)``. Violated when, from a state
                           where ``P(x)`` holds, some fair behaviour never reaches ``Q(x)``.

                         Behaviours may stutter (TLA+): stuttering forever in a state is fair
                         only when no fair action is enabled there.
    """

    name: str
    kind: PropertyKind
    check: Callable[..., bool]
    description: str = ""
    on_transitions: bool = False
    requirement: str = ""
    trigger: Callable[[Any], Iterable[Any]] | None = None


@dataclass(frozen=True)
class Fairness:
    """Fairness of one action kind for liveness checking: ``weak`` or ``strong``.

    ``instances=False``: fairness of the action as a whole, TLA+'s ``WF_vars(\\E args: A(args))``.
    ``instances=True``: fairness of each argument tuple on its own, ``\\A args: WF_vars(A(args))``
    (e.g. every follower's fetcher is a process of its own)."""

    action: str
    kind: Literal["weak", "strong"]
    instances: bool = False


class Model(Protocol):
    """What every engine consumes."""

    name: str
    action_names: Sequence[str]
    properties: Sequence[Property]

    def init_states(self) -> Sequence[State]: ...

    def successors(self, state: State) -> Iterable[tuple[Action, State]]: ...

    def within_boundary(self, state: State) -> bool: ...

    def canonicalize(self, state: State) -> State: ...

    def describe_action(self, action: Action) -> dict[str, Any]: ...

    def state_to_json(self, state: State) -> dict[str, Any]: ...


def model_identity(model: Model) -> dict[str, Any]:
    """What a checkpoint records of the model, to refuse resuming it under another: its name,
    its ``version`` when it has one (an optional attribute: e.g. the hash of a user's protocol
    file, whose name alone does not change when the file does), and a digest of the source of
    the package that defines the model's class (:func:`source_digest`): a checkpoint written
    before the model's code changed is refused instead of continuing one state space's levels
    with another's (the same whether the run was started from the API or the command line)."""
    version = getattr(model, "version", None)
    reduction = getattr(model, "reduction", None)
    return {
        "model": model.name,
        "model_code": source_digest(type(model).__module__),
        **({"model_version": version} if version else {}),
        **({"reduction": reduction} if reduction else {}),
    }


@functools.cache
def source_digest(module: str) -> str:
    """SHA-256 (16 hex digits) of every ``.py`` file, by relative path, of the top package
    under the root package that defines ``module`` (``isr.spec.model`` -> all of isr/spec)."""
    parts = module.split(".")
    pkg = importlib.import_module(".".join(parts[:2]) if len(parts) > 2 else parts[0])
    where = getattr(pkg, "__file__", None)
    if not where:  # a model defined where there is no source file (an interactive session)
        return ""
    path = Path(where).resolve()
    root = path.parent
    files = sorted(root.rglob("*.py")) if hasattr(pkg, "__path__") else [path]
    h = hashlib.sha256()
    for f in files:
        h.update(f.relative_to(root).as_posix().encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:16]


@dataclass
class SimpleModel:
    """A model built from plain functions, for toy models in tests and examples."""

    name: str
    action_names: Sequence[str]
    init: Callable[[], Sequence[State]]
    next: Callable[[State], Iterable[tuple[Action, State]]]
    properties: Sequence[Property] = ()
    boundary: Callable[[State], bool] | None = None
    canon: Callable[[State], State] | None = None
    fairness: Sequence[Fairness] = field(default_factory=tuple)
    # The optional protocol members (see the module docstring), as plain functions or None.
    canonicalize_with_permutation: Callable[[State], tuple[State, tuple[int, ...]]] | None = None
    permute: Callable[[State, tuple[int, ...]], State] | None = None

    def init_states(self) -> Sequence[State]:
        return self.init()

    def successors(self, state: State) -> Iterable[tuple[Action, State]]:
        return self.next(state)

    def within_boundary(self, state: State) -> bool:
        return True if self.boundary is None else self.boundary(state)

    def canonicalize(self, state: State) -> State:
        return state if self.canon is None else self.canon(state)

    def describe_action(self, action: Action) -> dict[str, Any]:
        kind, args = action
        return {"action": self.action_names[kind], "args": list(args)}

    def state_to_json(self, state: State) -> dict[str, Any]:
        return {"state": _jsonable(state)}


def _jsonable(value: Any) -> Any:
    if isinstance(value, tuple | list | frozenset | set):
        return [_jsonable(v) for v in value]
    return value
