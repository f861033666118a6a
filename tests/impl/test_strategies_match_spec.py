"""The implementation's truncation strategies (impl/core/truncation.py) against the spec's one
registry (spec/protocols): the implementation imports no spec, so its own table is checked here.
Every strategy is a spec version of the same name and agrees with it on every rule both have,
including the truncation point itself on random logs, and on KAFKA-7128 (which the
implementation once applied to every version, the spec only with KIP-320)."""

from __future__ import annotations

import random

import pytest
from isr.impl.core.config import DEFAULT_PROTOCOL as IMPL_DEFAULT
from isr.impl.core.config import PROTOCOLS as IMPL_PROTOCOLS
from isr.impl.core.log import PartitionLog
from isr.impl.core.truncation import STRATEGIES
from isr.spec.protocols import DEFAULT_PROTOCOL, PROTOCOLS


def test_every_strategy_is_a_spec_version():
    assert tuple(STRATEGIES) == IMPL_PROTOCOLS
    assert set(STRATEGIES) <= set(PROTOCOLS)
    assert IMPL_DEFAULT == DEFAULT_PROTOCOL
    # the versions the implementation does not run: design comparisons and later releases
    assert set(PROTOCOLS) - set(STRATEGIES) >= {"original-design", "majority-quorum"}


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_strategy_agrees_with_the_spec_on_its_rules(name):
    s, p = STRATEGIES[name], PROTOCOLS[name]
    assert s.fences_fetch == p.fenced_fetch
    assert s.isr_join_needs_epoch_start == p.isr_join_needs_epoch_start  # KAFKA-7128
    assert s.asks_leader == p.truncates_by_asking_leader
    assert s.diverging_epoch_fetch == p.split_fetch  # kraft: DivergingEpoch, no truncation round
    assert s.hw_needs_min_isr == p.eligible_leader_replicas  # KIP-966: HW needs min ISR
    log = PartitionLog([(1, "k", "a"), (1, "k", "b"), (2, "k", "c")], hw=1)
    spec_log = (("a", 1), ("b", 1), ("c", 2))
    assert s.truncate_on_restart(log, 1) == len(p.on_restart(spec_log, 1))
    if not s.asks_leader:
        assert s.truncate_on_become_follower(log) == len(p.become_follower(spec_log, 1, 1)[0])


def _impl_truncation(s, flog: PartitionLog, llog: PartitionLog, lepoch: int) -> int:
    """The implementation's OffsetsForLeaderEpoch rounds until its strategy says done: the
    fetch offset is the HW in the first round, then where the previous round cut."""
    fetch_offset = flog.hw
    for _ in range(50):
        ep, end = s.answer(llog, flog.latest_epoch(), lepoch)
        offset, done = s.follower_offset(flog, ep, end, fetch_offset)
        flog.truncate_to(offset)
        if done or flog.leo == 0:
            return flog.leo
        fetch_offset = offset
    raise AssertionError("no end")


def _random_log(rng: random.Random, top: int) -> list[int]:
    """The epochs of a log's entries: non-decreasing, each <= top."""
    epochs, e = [], 1
    for _ in range(rng.randint(1, 5)):
        e = min(top, e + rng.choice((0, 0, 1, 2)))
        epochs.append(e)
    return epochs


@pytest.mark.parametrize("name", ["kip-101", "kip-279", "kip-320"])
def test_truncation_point_agrees_with_the_spec(name):
    """Random follower and leader logs sharing a prefix, their tails written in different epochs
    (one leader per epoch), the leader at an epoch newer than every entry it lacks: the
    implementation's rounds end where the spec's truncation_offset does."""
    s, p = STRATEGIES[name], PROTOCOLS[name]
    rng = random.Random(name)
    compared = 0
    for _ in range(3000):
        shared = _random_log(rng, 3)[: rng.randint(0, 3)]
        top = (shared[-1] if shared else 1) + 3
        f_tail = [e for e in _random_log(rng, top) if not shared or e >= shared[-1]]
        l_tail = [e for e in _random_log(rng, top) if not shared or e >= shared[-1]]
        fe, le = shared + f_tail, shared + l_tail
        if not fe or set(f_tail) & set(l_tail):
            continue  # one writer per epoch: the tails were written by different leaders
        # the leader leads at an epoch newer than any it lacks (it was elected after them)
        lepoch = max([*le, *(e + 1 for e in f_tail)])
        # the HW covers only what both hold: above the common prefix the two differ on purpose
        # (their intermediate rounds cut to different points, and the HW fallback of an
        # UNDEFINED answer then sees a different log end)
        hw = rng.randint(0, len(shared))
        flog = PartitionLog([(e, "k", f"f{i}") for i, e in enumerate(fe)], hw=hw)
        llog = PartitionLog([(e, "k", f"l{i}") for i, e in enumerate(le)], hw=hw)
        spec_f = tuple((f"f{i}", e) for i, e in enumerate(fe))
        spec_l = tuple((f"l{i}", e) for i, e in enumerate(le))
        want = p.truncation_offset(spec_f, hw, spec_l, lepoch)
        assert _impl_truncation(s, flog, llog, lepoch) == want, (fe, le, hw, lepoch)
        compared += 1
    assert compared > 1000


def _spec_kraft_rounds(flog: tuple, fhw: int, llog: tuple, lepoch: int) -> int:
    """The spec's own kraft steps (FollowerSendFetch, LeaderHandleFetch,
    FollowerHandleFetchResponse) on a two-replica state: leader 0 at ``lepoch``, follower 1 with
    ``flog``; rounds until an answer is not diverging. The follower's LEO then."""
    from isr.spec import Config
    from isr.spec.actions.common import Ctx
    from isr.spec.actions.fetch import (
        follower_handle_fetch_response,
        follower_send_fetch,
        leader_handle_fetch,
    )
    from isr.spec.state import initial_kraft, initial_state

    ctx = Ctx.of(Config(replicas=2, records=9, epochs=9, protocol="kraft"))
    s = initial_state(2, kraft=initial_kraft(2))
    r0, r1 = s.replicas
    r0 = r0._replace(log=llog, epoch=lepoch)
    r1 = r1._replace(log=flog, hw=fhw, hw_ckpt=fhw, epoch=lepoch)
    s = s._replace(replicas=(r0, r1))
    for _ in range(50):
        for fn in (follower_send_fetch, leader_handle_fetch, follower_handle_fetch_response):
            if fn is follower_handle_fetch_response and not s.kraft.fetch_responses[0].diverging:
                return len(s.replicas[1].log)  # the leader answered with records: no divergence
            out: list = []
            fn(ctx, s, 0, out)
            assert len(out) == 1, fn.__name__
            s = out[0][1]
    raise AssertionError("no end")


def test_kraft_diverging_epoch_truncation_agrees_with_the_spec():
    """kraft: the implementation's DivergingEpoch answer (``Kraft.diverging``) and the follower's
    cut (``Kraft.follower_truncation``), in rounds until the leader answers without divergence,
    end where the spec's own kraft fetch steps leave the follower's log on random logs."""
    s = STRATEGIES["kraft"]
    rng = random.Random("kraft")
    compared = 0
    for _ in range(1500):
        shared = _random_log(rng, 3)[: rng.randint(0, 3)]
        top = (shared[-1] if shared else 1) + 3
        f_tail = [e for e in _random_log(rng, top) if not shared or e >= shared[-1]]
        l_tail = [e for e in _random_log(rng, top) if not shared or e >= shared[-1]]
        fe, le = shared + f_tail, shared + l_tail
        if not fe or set(f_tail) & set(l_tail):
            continue
        lepoch = max([*le, *(e + 1 for e in f_tail)])
        hw = rng.randint(0, len(shared))
        flog = PartitionLog([(e, "k", f"f{i}") for i, e in enumerate(fe)], hw=hw)
        llog = PartitionLog([(e, "k", f"l{i}") for i, e in enumerate(le)], hw=hw)
        # the common prefix holds the same records on both sides
        spec_f = tuple((i if i < len(shared) else 100 + i, e) for i, e in enumerate(fe))
        spec_l = tuple((i if i < len(shared) else 200 + i, e) for i, e in enumerate(le))
        want = _spec_kraft_rounds(spec_f, hw, spec_l, lepoch)
        for _round in range(50):
            div = s.diverging(llog, lepoch, flog.latest_epoch(), flog.leo)
            if div is None:
                break
            flog.truncate_to(s.follower_truncation(flog, *div))
        assert flog.leo == want, (fe, le, hw, lepoch)
        compared += 1
    assert compared > 500
