"""The fast canonical order (spec.symmetry.ReplicaSymmetry._order) against its plain definition: a stable
sort of the replica ids by their keys. Both must give the same order on every state, or the
pinned state counts (which depend on the representatives chosen) would change."""

from __future__ import annotations

import pytest
from isr.spec import Config, IsrSpec
from isr.spec.state import Replica


def plain_order(model: IsrSpec, s) -> list[int]:
    c = s.coord
    keys = [
        (
            r.log,
            r.hw,
            r.hw_ckpt,
            r.alive,
            r.epoch,
            r.leader == i,
            c.leader == i,
            c.isr >> i & 1,
            r.truncating,
            r.zk_fresh,
            r.pending,
        )
        for i, r in enumerate(s.replicas)
    ]
    return sorted(range(len(keys)), key=keys.__getitem__)


def reachable(model: IsrSpec, limit: int) -> list:
    """Up to ``limit`` concrete successors, breadth first (not canonicalized, so that unordered
    states are among them)."""
    out = []
    frontier = list(model.init_states())
    seen = set(frontier)
    while frontier and len(out) < limit:
        nxt = []
        for s in frontier:
            for _, t in model.successors(s):
                out.append(t)
                c = model.canonicalize(t)
                if c not in seen:
                    seen.add(c)
                    nxt.append(c)
        frontier = nxt
    return out[:limit]


@pytest.mark.parametrize("replicas", [2, 3, 4])
def test_fast_order_is_the_plain_order(replicas: int) -> None:
    model = IsrSpec(Config(protocol="kip-320", replicas=replicas, records=2, epochs=2, crashes=1))
    states = reachable(model, 20_000)
    unordered = 0
    for t in states:
        order = model._order(t)
        assert list(order) == plain_order(model, t)
        unordered += order is not model._ident
        assert model.canonicalize(t) == model.permute(t, tuple(plain_order(model, t)))
    assert unordered > 0  # the test saw states that need a renaming


def test_replace_keeps_namedtuple_semantics() -> None:
    r = Replica((), 0, 0, True, 0, 1, 7, True, (-1, -1, -1), False, ())
    t = r._replace(hw=2, pending=(0,))
    assert type(t) is Replica and t.hw == 2 and t.pending == (0,) and t.log == ()
    with pytest.raises(ValueError):
        r._replace(nope=1)


def plain_strong_isr(s, isr_of) -> bool:
    """StrongIsr/WeakIsr as docs/PROTOCOL.md states them: below a presumed leader's HW, every
    member of the ISR (``isr_of(s, i, r)``) holds the same entries."""
    for i, r in enumerate(s.replicas):
        if r.alive and r.leader == i and r.hw:
            for j, other in enumerate(s.replicas):
                if isr_of(s, i, r) >> j & 1 and not (
                    len(r.log) >= r.hw
                    and len(other.log) >= r.hw
                    and r.log[: r.hw] == other.log[: r.hw]
                ):
                    return False
    return True


@pytest.mark.parametrize(
    "cfg",
    [
        {"replicas": 3, "records": 2, "epochs": 2, "crashes": 1},
        {"replicas": 3, "records": 2, "epochs": 2, "crashes": 1, "lose_unflushed": True},
        {"replicas": 2, "records": 2, "epochs": 3, "crashes": 1, "retries": 1},
    ],
)
def test_canonicalize_right_after_expansion(cfg: dict) -> None:
    """canonicalize reuses what it knows of the state just expanded (its order, when a
    successor shares its replicas and coordination objects); the faulty path skips the renaming
    when the order is the identity. Checked the way the engines call it: each successor
    canonicalized right after ``successors`` of its parent, against the plain definition."""
    model = IsrSpec(Config(protocol="kip-320", **cfg))
    frontier = list(model.init_states())
    seen = set(frontier)
    shared = checked = 0
    while frontier and checked < 30_000:
        nxt = []
        for s in frontier:
            for _, t in model.successors(s):
                c = model.canonicalize(t)
                order = model._order(t)
                assert c == model.permute(t, tuple(order))
                if not model._faulty:
                    assert list(order) == plain_order(model, t)
                shared += t.replicas is s.replicas and t.coord is s.coord
                checked += 1
                if c not in seen:
                    seen.add(c)
                    nxt.append(c)
        frontier = nxt
    assert shared > 0  # the shortcut was taken


def test_strong_and_weak_isr_are_the_plain_definition() -> None:
    from isr.spec.properties import strong_isr, weak_isr

    model = IsrSpec(Config(protocol="kip-101", replicas=3, records=2, epochs=3, crashes=1))
    states = reachable(model, 20_000)
    # and states the model never reaches: an HW past the leader's log end, a member short of it
    s = states[-1]
    r0 = s.replicas[0]._replace(alive=True, leader=0, hw=3, log=((1, 1),), isr=0b111)
    states.append(s._replace(replicas=(r0, *s.replicas[1:])))
    r0 = r0._replace(log=((1, 1), (2, 1), (1, 2)))
    states.append(s._replace(replicas=(r0, *s.replicas[1:])))
    violated = 0
    for t in states:
        strong = plain_strong_isr(t, lambda s, i, r: s.coord.isr)
        assert strong_isr(t) == strong
        assert weak_isr(t) == plain_strong_isr(t, lambda s, i, r: r.isr)
        violated += not strong
    assert violated > 0  # at least the two made-up states
