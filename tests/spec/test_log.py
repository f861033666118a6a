"""Leader-epoch lookups and the truncation rules of KIP-101 and KIP-279."""

from __future__ import annotations

from isr.spec.log import UNDEFINED, end_offset_kip101, end_offset_kip279, epoch_starts
from isr.spec.protocols import KIP_101, KIP_279


def log(*epochs):
    return tuple((i + 1, e) for i, e in enumerate(epochs))


def test_epoch_starts_include_the_leaders_current_epoch():
    assert epoch_starts(log(1, 1, 3)) == [(1, 0), (3, 2)]
    assert epoch_starts(log(1, 1), leader_epoch=4) == [(1, 0), (4, 2)]


def test_end_offsets():
    leader = log(1, 1, 3)
    assert end_offset_kip101(leader, 3, 3) == 3
    assert end_offset_kip101(leader, 3, 2) == 2  # start of the first epoch above 2
    assert end_offset_kip101(leader, 3, 5) == UNDEFINED
    assert end_offset_kip279(leader, 3, 2) == (1, 2)
    assert end_offset_kip279(leader, 3, 0) == (UNDEFINED, UNDEFINED)


def test_kip101_hole_closed_by_kip279():
    """The follower's last epoch (2) is unknown to the leader: KIP-101 keeps the divergent entry
    at offset 1, KIP-279 walks back to epoch 1 and truncates it."""
    leader = log(1, 1, 3)
    follower = log(1, 2, 2)
    assert KIP_101.truncation_offset(follower, 0, leader, 3) == 2
    assert KIP_279.truncation_offset(follower, 0, leader, 3) == 1
    assert KIP_279.truncation_offset(log(1, 1), 0, log(1, 1, 2), 2) == 2  # a prefix: keep it all
