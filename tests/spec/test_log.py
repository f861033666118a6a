"""Leader-epoch lookups and the truncation rules of KIP-101, KIP-279 and KIP-320, release by
release (Kafka 0.11-1.1, 2.0, 2.1: LeaderEpochFileCache.endOffsetFor, Partition.makeLeader,
AbstractFetcherThread.getOffsetTruncationState; KAFKA-7415)."""

from __future__ import annotations

from isr.spec.epoch_cache import (
    end_offset,
    end_offset_kip101,
    end_offset_kip279,
    truncation_state,
)
from isr.spec.log import UNDEFINED, epoch_starts
from isr.spec.protocols import KIP_101, KIP_279, KIP_320


def log(*epochs):
    return tuple((i + 1, e) for i, e in enumerate(epochs))


def test_epoch_starts_include_the_leaders_current_epoch():
    assert epoch_starts(log(1, 1, 3)) == [(1, 0), (3, 2)]
    assert epoch_starts(log(1, 1), leader_epoch=4) == [(1, 0), (4, 2)]


def test_which_cache_a_leader_answers_from():
    """Before Kafka 2.1 a leader's cache holds the epochs of its batches only; from 2.1
    (KAFKA-7415) also its current epoch, at the LEO it became leader with."""
    leader = log(1, 1)
    assert KIP_101.leader_epochs(leader, 4) == KIP_279.leader_epochs(leader, 4) == [(1, 0)]
    assert KIP_320.leader_epochs(leader, 4) == [(1, 0), (4, 2)]


def test_end_offsets_per_release():
    cache, leo = [(1, 0), (3, 2)], 3
    # Kafka 0.11-1.1: the end offset alone
    assert end_offset_kip101(cache, leo, 3) == 3  # the latest cached epoch: the LEO
    assert end_offset_kip101(cache, leo, 2) == 2  # the start of the first epoch above 2
    assert end_offset_kip101(cache, leo, 1) == 2
    assert end_offset_kip101(cache, leo, 5) == UNDEFINED  # nothing above it
    assert end_offset_kip101([(2, 0)], 1, 1) == UNDEFINED  # below every cached epoch
    # Kafka 2.0: (the largest epoch <= the asked one, its end)
    assert end_offset_kip279(cache, leo, 2) == (1, 2)
    assert end_offset_kip279(cache, leo, 3) == (3, 3)
    assert end_offset_kip279(cache, leo, 0) == (UNDEFINED, UNDEFINED)  # below every one
    assert end_offset_kip279(cache, leo, 5) == (UNDEFINED, UNDEFINED)  # above every one
    assert end_offset_kip279([], 0, 1) == (UNDEFINED, UNDEFINED)
    # Kafka 2.1+: below every entry, the asked epoch and the first entry's start
    assert end_offset(cache, leo, 2) == (1, 2)
    assert end_offset(cache, leo, 0) == (0, 0)
    assert end_offset([(2, 1)], 2, 1) == (1, 1)
    assert end_offset(cache, leo, 5) == (UNDEFINED, UNDEFINED)


def test_the_follower_side_of_an_answer():
    """getOffsetTruncationState's cases, with the follower's own lookup of each release."""
    own, leo = [(2, 0), (4, 2)], 3  # the follower: epoch 2 from 0, epoch 4 from 2
    for lookup in (end_offset_kip279, end_offset):
        assert truncation_state(lookup, own, leo, 1, UNDEFINED, UNDEFINED) == (1, True)
        assert truncation_state(lookup, own, leo, 1, 3, 5) == (2, False)  # epoch 3 unknown
        assert truncation_state(lookup, own, leo, 1, 2, 1) == (1, True)  # common: the smaller
        assert truncation_state(lookup, own, leo, 1, 4, 9) == (3, True)  # never past the LEO
    # the leader names epoch 1, below all the follower has: 2.0 keeps what lies below the
    # leader's end; 2.1 has epoch 1 "at" the follower's first entry and cuts to it
    assert truncation_state(end_offset_kip279, own, leo, 1, 1, 2) == (2, True)
    assert truncation_state(end_offset, own, leo, 1, 1, 2) == (0, True)


def test_kip101_hole_closed_by_kip279():
    """The follower's last epoch (2) is unknown to the leader: KIP-101 keeps the divergent entry
    at offset 1, KIP-279 walks back to epoch 1 and truncates it."""
    leader = log(1, 1, 3)
    follower = log(1, 2, 2)
    assert KIP_101.truncation_offset(follower, 0, leader, 3) == 2
    assert KIP_279.truncation_offset(follower, 0, leader, 3) == 1
    assert KIP_320.truncation_offset(follower, 0, leader, 3) == 1
    assert KIP_279.truncation_offset(log(1, 1), 0, log(1, 1, 2), 2) == 2  # a prefix: keep it all


def test_a_leader_that_has_not_written_in_its_epoch():
    """The follower holds epoch 2, which the leader (now at epoch 3, nothing written in it)
    never had. Before 2.1 the leader's cache ends at epoch 1, so it cannot answer (UNDEFINED)
    and the follower falls back to its HW; from 2.1 epoch 3 is cached at the leader's LEO and
    the follower walks back to the end of epoch 1."""
    leader, follower = log(1, 1), log(1, 2)
    for proto in (KIP_101, KIP_279):
        assert proto.truncation_offset(follower, 0, leader, 3) == 0  # its HW
        assert proto.truncation_offset(follower, 1, leader, 3) == 1
    assert KIP_320.truncation_offset(follower, 0, leader, 3) == 1
    assert KIP_279.truncation_rounds(follower, 0, leader, 3) == [
        (2, (UNDEFINED, UNDEFINED), 0, True)
    ]
    assert KIP_320.truncation_rounds(follower, 0, leader, 3) == [(2, (1, 2), 1, True)]


def test_kafka_2_0_keeps_entries_of_epochs_the_leader_never_had():
    """KAFKA-7415's follower case. The leader holds epoch 1 then 3; the follower holds only
    epoch 2. 2.0's leader answers (1, 1); the follower has no epoch <= 1 and truncates to the
    leader's end offset, keeping its epoch-2 entry at offset 0 where the leader has epoch 1's.
    2.1's follower finds epoch 1 "at" its first entry and truncates to 0."""
    leader, follower = log(1, 3), log(2, 2)
    assert KIP_279.truncation_offset(follower, 0, leader, 3) == 1
    assert KIP_320.truncation_offset(follower, 0, leader, 3) == 0


def test_a_later_round_that_cannot_be_answered():
    """2.0: after one round walked back, the leader cannot answer the next (the follower's new
    latest epoch is below every epoch the leader has): the follower truncates to its fetch
    offset, which is now where the last round cut, not the HW."""
    leader, follower = log(2, 2, 4), log(1, 1, 3)
    assert KIP_279.truncation_rounds(follower, 0, leader, 4) == [
        (3, (2, 2), 2, False),
        (1, (UNDEFINED, UNDEFINED), 2, True),
    ]
    assert KIP_320.truncation_offset(follower, 0, leader, 4) == 0  # 2.1: (1, 0) from the leader
