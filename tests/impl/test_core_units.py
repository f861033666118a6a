"""Unit tests of the sans-I/O core's pieces: log, truncation strategies, placement, fetchers."""

from __future__ import annotations

import pytest
from isr.impl.core.config import Config
from isr.impl.core.fetcher import FetcherPool, fetcher_id
from isr.impl.core.log import PartitionLog
from isr.impl.core.placement import assign
from isr.impl.core.truncation import strategy


def log_of(*epochs: int) -> PartitionLog:
    return PartitionLog([(e, f"r{i}", "v") for i, e in enumerate(epochs)])


def test_placement_r1_round_robin_preferred_leader_first():
    a = assign([3, 1, 2], partitions=4, replication=2)
    assert a == {0: (1, 2), 1: (2, 3), 2: (3, 1), 3: (1, 2)}
    with pytest.raises(ValueError):
        assign([1, 2], partitions=1, replication=3)


def test_log_offsets_and_hw_never_above_leo():
    log = log_of(0, 0, 1)
    assert log.leo == 3
    log.hw = 3
    log.truncate_to(1)
    assert (log.leo, log.hw) == (1, 1)
    assert log.read(0, 10, limit=1) == ((0, "r0", "v"),)


def test_epoch_cache_answers():
    log = log_of(0, 0, 2, 2, 5)
    assert log.epochs() == [(0, 0), (2, 2), (5, 4)]
    assert log.end_offset_for_epoch(1) == (0, 2)  # kip-279: largest epoch <= 1 is 0, ends at 2
    assert log.end_offset_for_epoch(5) == (5, 5)
    assert log.end_offset_for_epoch(-1) == (-1, 0)
    # OffsetsForLeaderEpoch per release (the leader at epoch 9, nothing written in it yet)
    k101, k279, k320 = strategy("kip-101"), strategy("kip-279"), strategy("kip-320")
    assert k101.answer(log, 1, 9) == (1, 2)  # 0.11-1.1: the start of the first epoch > 1
    assert k101.answer(log, 5, 9) == (5, 5)  # the latest cached epoch: the LEO
    assert k101.answer(log, 6, 9) == (6, -1)  # none above 6 in the cache: UNDEFINED
    assert k279.answer(log, 1, 9) == (0, 2)  # 2.0: the largest epoch <= 1 and its end
    assert k279.answer(log, 6, 9) == (-1, -1)  # 2.0: epoch 9 is not cached before its first write
    assert k320.answer(log, 6, 9) == (5, 5)  # 2.1 (KAFKA-7415): epoch 9 cached at the LEO
    one = log_of(2, 5)
    assert k279.answer(one, 1, 9) == (-1, -1)  # 2.0: below every cached epoch: UNDEFINED
    assert k320.answer(one, 1, 9) == (1, 0)  # 2.1: the asked epoch, the first entry's start


def test_truncation_rules_per_version():
    follower = log_of(0, 0, 1, 1)
    follower.hw = 1
    assert strategy("hw-truncation").truncate_on_become_follower(follower) == 1
    assert strategy("kip-101").truncate_on_become_follower(follower) == 4
    assert strategy("hw-truncation").truncate_on_restart(follower, 1) == 1
    assert strategy("kip-320").truncate_on_restart(follower, 1) == 4


def test_kip279_walks_back_epoch_by_epoch_where_kip101_stops_early():
    # Leader: epoch 0 ends at 3, then epoch 1. Follower: epoch 0 up to 5, then its own epoch 2.
    # Then epoch 3 (a later leader's): before 2.1 a leader's cache knows only epochs it wrote.
    leader = log_of(0, 0, 0, 1, 1, 1, 1, 3)
    follower = log_of(0, 0, 0, 0, 0, 2)
    k101 = strategy("kip-101")
    ep, end = k101.answer(leader, follower.latest_epoch())
    assert k101.follower_offset(follower, ep, end, 0) == (6, True)  # keeps the divergent tail
    k279 = strategy("kip-279")
    ep, end = k279.answer(leader, follower.latest_epoch())
    assert (ep, end) == (1, 7)
    off, done = k279.follower_offset(follower, ep, end, 0)
    assert (off, done) == (5, False)
    follower.truncate_to(off)
    ep, end = k279.answer(leader, follower.latest_epoch())
    assert k279.follower_offset(follower, ep, end, off) == (3, True)  # the true divergence point


def test_fetcher_pool_hash_assignment_and_idle_fetchers_stop():
    pool = FetcherPool(3)
    f = pool.add(("t", 0), leader=1)
    assert f.fid == fetcher_id(("t", 0), 3)
    assert fetcher_id(("t", 0), 3) == fetcher_id(("t", 0), 3)  # stable across processes (crc32)
    pool.backoff(("t", 0), 500)
    assert pool.ready(f, 100) == [] and pool.ready(f, 500) == [("t", 0)]
    pool.remove(("t", 0))
    assert pool.fetchers == {}


def test_config_rejects_unknown_protocol():
    with pytest.raises(ValueError, match="unknown protocol"):
        Config(protocol="kip-999")


def test_consumer_ignores_an_answer_for_another_position():
    """A consumer applies only the answer to the offset it asked for: a late answer to an older
    poll (delayed or duplicated by the network) must not move its position back or record the
    entries of a log the leader may have truncated since. (A mutation run found no test failing
    when the offset check was weakened.)"""
    from isr.impl.core import messages as m
    from isr.impl.core.clients import ConsumerClient

    c = ConsumerClient("k", metadata={("t", 0): 0})
    first = m.ConsumeResponse(0, 1, "t", 0, m.NONE, 2, 0, ((1, "a", "v"), (1, "b", "v")))
    assert c.on_response(first) == 2 and c.positions[("t", 0)] == 2
    assert c.on_response(first) == 0  # the same answer again
    stale = m.ConsumeResponse(0, 1, "t", 0, m.NONE, 2, 1, ((1, "x", "v"),))
    assert c.on_response(stale) == 0
    assert c.positions[("t", 0)] == 2
    assert c.seen == {(("t", 0), 0): "a", (("t", 0), 1): "b"}
