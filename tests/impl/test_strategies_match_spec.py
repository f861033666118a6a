"""The implementation's truncation strategies (impl/core/truncation.py) against the spec's one
registry (spec/protocols): the implementation imports no spec, so its own table is checked here.
Every strategy is a spec version of the same name and agrees with it on every rule both have,
including the truncation point itself on random logs, and on KAFKA-7128 (which the
implementation once applied to every version, the spec only with KIP-320)."""

from __future__ import annotations

import random

import pytest
from isr.impl.config import DEFAULT_PROTOCOL as IMPL_DEFAULT
from isr.impl.config import PROTOCOLS as IMPL_PROTOCOLS
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
    log = PartitionLog([(1, "k", "a"), (1, "k", "b"), (2, "k", "c")], hw=1)
    spec_log = (("a", 1), ("b", 1), ("c", 2))
    assert s.truncate_on_restart(log, 1) == len(p.on_restart(spec_log, 1))
    if not s.asks_leader:
        assert s.truncate_on_become_follower(log) == len(p.become_follower(spec_log, 1, 1)[0])


def _impl_truncation(s, flog: PartitionLog, llog: PartitionLog) -> int:
    """The implementation's OffsetsForLeaderEpoch rounds until its strategy says done."""
    for _ in range(50):
        ep, end = s.answer(llog, flog.latest_epoch())
        offset, done = s.follower_offset(flog, ep, end)
        flog.truncate_to(offset)
        if done or flog.leo == 0:
            return flog.leo
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
        assert _impl_truncation(s, flog, llog) == want, (fe, le, hw, lepoch)
        compared += 1
    assert compared > 1000
