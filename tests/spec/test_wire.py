"""The wire form of a state (spec.state.to_wire/from_wire): plain tuples that hash as the state
and come back as the same state, for every protocol version and fault mode (the Spark engine
ships states in it; checker.model, ``to_wire``)."""

from __future__ import annotations

import pickle
from collections import deque

import pytest
from isr.spec import Config, IsrSpec
from isr.spec.protocols import PROTOCOLS
from isr.spec.state import NO_FAULTS, NO_KRAFT, from_wire, to_wire

MODES = [
    {},
    {"lose_unflushed": True},
    {"retention": True},
    {"retries": 1},
    {"controller_failovers": 1},
    {"session_expiries": 1},
]


def _sample(cfg: Config, limit: int = 3000) -> list:
    model = IsrSpec(cfg)
    seen: set = set()
    queue = deque(model.init_states())
    out = list(queue)
    while queue and len(out) < limit:
        s = queue.popleft()
        for _, t in model.successors(s):
            if t not in seen:
                seen.add(t)
                queue.append(t)
                out.append(t)
    return out


def _plain(v: object) -> bool:
    """Nothing but plain tuples, ints, bools and None all the way down."""
    if type(v) is tuple:
        return all(_plain(x) for x in v)
    return v is None or type(v) in (int, bool)


def _same_types(a: object, b: object) -> bool:
    if isinstance(a, tuple):
        return type(a) is type(b) and all(_same_types(x, y) for x, y in zip(a, b, strict=True))
    return a == b and type(a) is type(b)


def _configs():
    for name in sorted(PROTOCOLS):
        yield name, {}
    for mode in MODES[1:]:
        yield "kip-320", mode
    yield "kraft", {"lose_unflushed": True}


@pytest.mark.parametrize(("protocol", "mode"), list(_configs()))
def test_round_trip(protocol, mode):
    replicas = 2 if protocol == "kraft" else 3
    cfg = Config(protocol=protocol, replicas=replicas, records=1, epochs=2, crashes=1, **mode)
    states = _sample(cfg)
    assert len(states) >= 1000  # enough to have requests, fetches, faults in flight
    nested = 0
    for s in states:
        w = to_wire(s)
        assert _plain(w), s
        assert hash(w) == hash(s) and w == s
        back = from_wire(w)
        assert back == s and _same_types(back, s)
        assert (back.faults is NO_FAULTS) == (s.faults == NO_FAULTS)
        assert (back.kraft is NO_KRAFT) == (s.kraft == NO_KRAFT)
        assert from_wire(s) == s  # a State itself (an old Spark checkpoint) is read too
        nested += bool(s.requests) + bool(s.kraft.fetch_requests or s.kraft.fetch_responses)
    assert nested  # the sample holds messages in flight, so their conversion is exercised


def test_the_wire_form_pickles_smaller():
    states = _sample(Config(), 2000)
    named = sum(len(pickle.dumps(s, 5)) for s in states)
    plain = sum(len(pickle.dumps(to_wire(s), 5)) for s in states)
    assert plain < 0.8 * named
