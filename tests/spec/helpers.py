from __future__ import annotations

from isr.checker.bfs import check_bfs
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


def kraft(variant=None, **bounds) -> IsrSpec:
    """The kraft model at ``bounds``, or a variant of it (a flag taken back)."""
    return IsrSpec(Config(protocol="kraft", **bounds), protocol=variant)


def safety(m: IsrSpec) -> list[str]:
    """The model's safety properties (invariants and action properties) by name."""
    return [p.name for p in m.properties if p.kind in ("always", "action")]


def first_violation(m: IsrSpec, prop: str):
    """The shortest counterexample to ``prop`` (the test fails if it holds)."""
    res = check_bfs(m, properties=[prop], stop_at_first_violation=True)
    (p,) = res.properties
    assert p.holds is False, (prop, res.distinct_states)
    return p.counterexample
