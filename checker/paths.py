"""Counterexamples as paths: engines keep only fingerprints and parent links; the path is
rebuilt here by replaying the model, so every step shown is a real transition of the spec, from a
real initial state (with symmetry reduction too: see :func:`replay_chain`)."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .errors import ReplayError  # re-exported (the engines' errors: checker.errors)
from .fingerprint import fingerprint
from .model import Action, Model, State
from .result import Counterexample, Step

Canon = Callable[[State], State]


def fingerprint_chain(target: int, parent_of: Mapping[int, int]) -> list[int]:
    """Fingerprints from an initial state to ``target``. Initial states are their own parent."""
    chain = [target]
    fp = target
    while True:
        try:
            parent = parent_of[fp]
        except KeyError:
            raise ReplayError(f"fingerprint {fp} has no parent link") from None
        if parent == fp:
            break
        chain.append(parent)
        fp = parent
        if len(chain) > len(parent_of) + 1:
            raise ReplayError("parent links form a cycle")
    chain.reverse()
    return chain


class ReplayedPath(list):
    """``[(action, state), ...]`` from an initial state; the first action is ``INIT``.

    ``concrete``: every state is a real state of the spec and every step a real transition, from
    a real initial state. It is False only for a symmetric model without
    ``canonicalize_with_permutation``: the states are then the representatives the search
    expanded, and each step is a transition followed by a renaming of symmetric ids.

    ``last_canonical`` / ``last_perm``: for a path rebuilt through permutations, the
    representative the search expanded last and the renaming from the path's last (concrete)
    state to it (``permute(path[-1][1], last_perm) == last_canonical``)."""

    concrete: bool = True
    last_canonical: State | None = None
    last_perm: tuple[int, ...] | None = None

    def extended(self, action: Action, state: State) -> ReplayedPath:
        out = ReplayedPath([*self, (action, state)])
        out.concrete = self.concrete
        return out


INIT: Action = (-1, ())

Perm = tuple[int, ...]


def compose(p: Perm, q: Perm) -> Perm:
    """The renaming ``r`` with ``permute(s, r) == permute(permute(s, p), q)`` for renamings in
    the model protocol's form (``permute(s, p)`` renames element ``p[k]`` to ``k``)."""
    return tuple([p[j] for j in q])


def _permutations(model: Model, canon: Canon):
    """The model's (canonicalize_with_permutation, permute) when ``canon`` is its symmetry
    reduction and it offers them; else None."""
    cwp = getattr(model, "canonicalize_with_permutation", None)
    permute = getattr(model, "permute", None)
    if cwp is None or permute is None or canon != getattr(model, "canonicalize", None):
        return None
    return cwp, permute


def replay_chain(model: Model, canon: Canon, chain: Sequence[int]) -> ReplayedPath:
    """Rebuild the path behind a chain of canonical fingerprints (``fingerprint_chain``):
    ``[(INIT, init), (a1, s1), ...]``, as long as the chain.

    The search stored, for each representative it reached, the fingerprint of the representative
    it expanded to get there. So the replay walks those representatives: from ``c_i``, some
    successor ``t`` has ``fingerprint(canon(t)) == chain[i+1]`` (that is how the link was made),
    and ``c_{i+1} = canon(t)``. (Walking concrete states and canonicalizing their successors
    instead is unsound: ``canonicalize`` need not map every member of an orbit to the same
    representative, so a concrete state's successors may all canonicalize to other ones.)

    The concrete path follows alongside through the renamings: with ``c_i = permute(s_i, P_i)``
    and the model's successors symmetric, ``s_i`` has a successor ``u`` with
    ``permute(u, P_i) == t``; that is ``s_{i+1}``, reached by the concrete action, and
    ``P_{i+1} = P_i`` then the renaming that canonicalized ``t``. Models without
    ``canonicalize_with_permutation``/``permute`` get the path of representatives (``concrete``
    False unless every representative on it equals the state it came from)."""
    perms = _permutations(model, canon)
    if perms is not None:
        return _replay_with_permutations(model, perms[0], perms[1], chain)
    return _replay_representatives(model, canon, chain)


def _replay_with_permutations(model: Model, cwp, permute, chain: Sequence[int]) -> ReplayedPath:
    successors = model.successors
    # the concrete state's steps: all of them when the model reduces its successors
    # (checker.model: the optional ``full_successors``)
    concrete_successors = getattr(model, "full_successors", None) or successors
    for s in model.init_states():
        c, perm = cwp(s)
        if fingerprint(c) == chain[0]:
            break
    else:
        raise ReplayError("no initial state has the first fingerprint of the path")
    path = ReplayedPath([(INIT, s)])
    # a model with a reduction that forgets (checker.model: ``forget``) canonicalizes the
    # forgotten values away too: the concrete step is matched up to them
    forget = getattr(model, "forget", None)
    for step, want in enumerate(chain[1:], start=1):
        for _, t in successors(c):
            c2, q = cwp(t)
            if fingerprint(c2) == want:
                break
        else:
            raise ReplayError(
                f"no successor of the representative at step {step - 1} has fingerprint {want} "
                "(a fingerprint collision, or successors that are not a function of the state)"
            )
        if forget is None:
            step_taken = next(
                ((a, u) for a, u in concrete_successors(s) if permute(u, perm) == t), None
            )
        else:
            ft = forget(t)
            step_taken = next(
                ((a, u) for a, u in concrete_successors(s) if forget(permute(u, perm)) == ft),
                None,
            )
        if step_taken is None:
            raise ReplayError(
                f"step {step}: the concrete state has no successor matching the representative's "
                "(the model's successors are not symmetric under its permutations)"
            )
        action, u = step_taken
        perm = compose(perm, q)
        path.append((action, u))
        s, c = u, c2
    path.last_canonical = c
    path.last_perm = perm
    return path


def _replay_representatives(model: Model, canon: Canon, chain: Sequence[int]) -> ReplayedPath:
    successors = model.successors
    for s in model.init_states():
        c = canon(s)
        if fingerprint(c) == chain[0]:
            break
    else:
        raise ReplayError("no initial state has the first fingerprint of the path")
    concrete = c == s
    path = ReplayedPath([(INIT, c)])
    for step, want in enumerate(chain[1:], start=1):
        for a, t in successors(c):
            c2 = canon(t)
            if fingerprint(c2) == want:
                action = a
                break
        else:
            raise ReplayError(
                f"no successor of the state at step {step - 1} has fingerprint {want} "
                "(a fingerprint collision, or successors that are not a function of the state)"
            )
        concrete = concrete and c2 == t
        path.append((action, c2))
        c = c2
    path.concrete = concrete
    return path


def diff_vars(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """Variables that changed; for dict-valued variables only the changed entries."""
    changed: dict[str, Any] = {}
    for key, new in after.items():
        old = before.get(key)
        if old == new:
            continue
        if isinstance(old, dict) and isinstance(new, dict):
            changed[key] = {k: v for k, v in new.items() if old.get(k) != v}
            for k in old:
                if k not in new:
                    changed[key][k] = None
        else:
            changed[key] = new
    return changed


def to_counterexample(model: Model, path: Sequence[tuple[Action, State]]) -> Counterexample:
    """Render a concrete path for people and JSON."""
    first = model.state_to_json(path[0][1])
    steps: list[Step] = []
    states = [first]
    prev = first
    for i, (action, state) in enumerate(path[1:], start=1):
        cur = model.state_to_json(state)
        desc = model.describe_action(action)
        steps.append(Step(i, desc["action"], desc["args"], diff_vars(prev, cur)))
        states.append(cur)
        prev = cur
    # the whole states travel with the counterexample (the CLI's trace writers use them as they
    # are); ``initial`` is a copy so that nothing edits a state of ``states`` through it
    cx = Counterexample(initial=copy.deepcopy(first), steps=steps, states=states)
    if not getattr(path, "concrete", True):
        cx.note = UP_TO_SYMMETRY
    return cx


UP_TO_SYMMETRY = (
    "shown up to symmetry: the states are the representatives the search expanded, so a step "
    "may also rename symmetric ids (the model has no canonicalize_with_permutation)"
)


def extend_with_transition(
    model: Model, path: list[tuple[Action, State]], check: Callable[[State, Action, State], bool]
) -> ReplayedPath:
    """For an action-property violation: append the violating transition out of the path's last
    state. The search found it out of the representative it expanded (``last_canonical`` of a
    path rebuilt through permutations): the transition is taken there and renamed back onto the
    concrete state, so the violation shown is the one found, on a real path."""
    if not isinstance(path, ReplayedPath):
        path = ReplayedPath(path)
    s = path[-1][1]
    successors = model.successors
    concrete_successors = getattr(model, "full_successors", None) or successors
    c = path.last_canonical
    permute = getattr(model, "permute", None)
    if c is not None and permute is not None:
        perm = path.last_perm
        for a, t in successors(c):
            if check(c, a, t):
                continue
            for action, u in concrete_successors(s):
                if not check(s, action, u) and permute(u, perm) == t:
                    return path.extended(action, u)
    for action, u in successors(s):
        if not check(s, action, u):
            return path.extended(action, u)
    raise ReplayError("the violating transition is not enabled in the replayed state")
