"""The fast canonical order (spec.model.IsrSpec._order) against its plain definition: a stable
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
