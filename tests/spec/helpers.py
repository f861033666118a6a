from __future__ import annotations

from isr.spec import Config, IsrSpec
from isr.spec.state import State


def model(protocol: str = "kip-320", **kw) -> IsrSpec:
    return IsrSpec(Config(protocol=protocol, **kw))


def moves(m: IsrSpec, s: State, name: str) -> list[tuple[tuple, State]]:
    """(args, next state) of every enabled instance of action ``name`` in ``s``."""
    return [(a[1], t) for a, t in m.successors(s) if m.action_names[a[0]] == name]


def step(m: IsrSpec, s: State, name: str, *args) -> State:
    for a, t in moves(m, s, name):
        if a == tuple(args):
            return t
    raise AssertionError(
        f"{name}{args} is not enabled; enabled: {[m.describe_action(a) for a, _ in m.successors(s)]}"
    )


def run(m: IsrSpec, *script) -> State:
    s = m.init_states()[0]
    for name, *args in script:
        s = step(m, s, name, *args)
    return s
