"""Counterexamples as paths: engines keep only fingerprints and parent links; the path is
rebuilt here by replaying the model, so every step shown is a real transition of the spec."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .fingerprint import fingerprint
from .model import Action, Model, State
from .result import Counterexample, Step

Canon = Callable[[State], State]


class ReplayError(RuntimeError):
    """The stored fingerprints do not correspond to a path of the model (a fingerprint collision,
    or a model whose successors are not a function of the state)."""


def fingerprint_chain(target: int, parent_of: Mapping[int, int]) -> list[int]:
    """Fingerprints from an initial state to ``target``. Initial states are their own parent."""
    chain = [target]
    fp = target
    while True:
        parent = parent_of[fp]
        if parent == fp:
            break
        chain.append(parent)
        fp = parent
        if len(chain) > len(parent_of) + 1:
            raise ReplayError("parent links form a cycle")
    chain.reverse()
    return chain


def replay_chain(model: Model, canon: Canon, chain: Sequence[int]) -> list[tuple[Action, State]]:
    """Concrete states along a chain of canonical fingerprints: [(None-action, init), (a1, s1)...].

    With symmetry reduction the stored states are canonical representatives; the concrete path
    follows, at each step, the successor whose canonical form has the next fingerprint."""
    for s in model.init_states():
        if fingerprint(canon(s)) == chain[0]:
            break
    else:
        raise ReplayError("no initial state has the first fingerprint of the path")
    path: list[tuple[Action, State]] = [((-1, ()), s)]
    for want in chain[1:]:
        for action, t in model.successors(s):
            if fingerprint(canon(t)) == want:
                path.append((action, t))
                s = t
                break
        else:
            raise ReplayError(f"no successor matches fingerprint {want} at step {len(path)}")
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
    prev = first
    for i, (action, state) in enumerate(path[1:], start=1):
        cur = model.state_to_json(state)
        desc = model.describe_action(action)
        steps.append(Step(i, desc["action"], desc["args"], diff_vars(prev, cur)))
        prev = cur
    return Counterexample(initial=first, steps=steps)


def extend_with_transition(
    model: Model, path: list[tuple[Action, State]], check: Callable[[State, Action, State], bool]
) -> list[tuple[Action, State]]:
    """For an action-property violation: append the violating transition out of the path's last
    state (it exists there by symmetry even when it was first seen from another representative)."""
    s = path[-1][1]
    for action, t in model.successors(s):
        if not check(s, action, t):
            return [*path, (action, t)]
    raise ReplayError("the violating transition is not enabled in the replayed state")
