"""Truncation rule per protocol version, as one small strategy object each (R10, R13, KIP-101/279/320).

A version overrides one decision, as the spec's protocol modules do:
- where a follower truncates when it becomes follower (to HW, or after asking the leader);
- what the leader answers to OffsetsForLeaderEpoch;
- whether fetches are fenced by the current leader epoch (KIP-320);
- what a restarting broker does with its log (R13: truncate to the HW checkpoint, or keep it);
- whether a follower must reach the leader's epoch start offset to rejoin the ISR (KAFKA-7128).

The implementation does not import the spec; tests/impl/test_strategies_match_spec.py checks this
table against the spec's registry (spec.protocols): one strategy per spec version the
implementation runs, agreeing on every rule both have.
"""

from __future__ import annotations

from .log import PartitionLog


class HwTruncation:
    """The seeds' protocol: truncate to the HW on becoming follower and on restart."""

    name = "hw-truncation"
    asks_leader = False
    fences_fetch = False
    isr_join_needs_epoch_start = False  # KAFKA-7128: only with KIP-320, as in the spec

    def truncate_on_restart(self, log: PartitionLog, hw_checkpoint: int) -> int:
        return hw_checkpoint

    def truncate_on_become_follower(self, log: PartitionLog) -> int:
        return log.hw

    def answer(self, leader_log: PartitionLog, epoch: int) -> tuple[int, int]:
        raise NotImplementedError("hw-truncation has no OffsetsForLeaderEpoch")

    def follower_offset(
        self, log: PartitionLog, answer_epoch: int, answer_offset: int
    ) -> tuple[int, bool]:
        """(offset to truncate to, whether truncation is complete)."""
        raise NotImplementedError


class Kip101(HwTruncation):
    """KIP-101: ask the leader for the end offset of our latest epoch; truncate there, once."""

    name = "kip-101"
    asks_leader = True

    def truncate_on_restart(self, log: PartitionLog, hw_checkpoint: int) -> int:
        return log.leo  # the whole recovered log is kept; truncation waits for the leader

    def truncate_on_become_follower(self, log: PartitionLog) -> int:
        return log.leo

    def answer(self, leader_log: PartitionLog, epoch: int) -> tuple[int, int]:
        return epoch, leader_log.end_offset_kip101(epoch)

    def follower_offset(
        self, log: PartitionLog, answer_epoch: int, answer_offset: int
    ) -> tuple[int, bool]:
        return min(answer_offset, log.leo), True


class Kip279(Kip101):
    """KIP-279: the leader names the largest epoch it has <= ours; we truncate to the smaller of its
    end offset on both sides, which is the true divergence point after fast leader changes."""

    name = "kip-279"

    def answer(self, leader_log: PartitionLog, epoch: int) -> tuple[int, int]:
        return leader_log.end_offset_for_epoch(epoch)

    def follower_offset(
        self, log: PartitionLog, answer_epoch: int, answer_offset: int
    ) -> tuple[int, bool]:
        if answer_epoch < 0:
            # The leader has nothing as old as our epochs (UNDEFINED): fall back to the HW, as
            # Kafka does and the spec's kip-279 rule says; a fetch from there beyond the
            # leader's log end then truncates further (R12). Possible only once committed
            # records are lost: a power failure (R14) or an unclean election.
            return max(log.log_start, min(log.hw, log.leo)), True
        own_epoch, own_end = log.end_offset_for_epoch(answer_epoch)
        if own_epoch != answer_epoch:
            # We never had the leader's epoch: cut to the end of our largest epoch below it and
            # ask again with that epoch (walk back epoch by epoch).
            return min(own_end, log.leo), False
        return min(answer_offset, own_end, log.leo), True


class Kip320(Kip279):
    """KIP-320: fetches carry the current leader epoch; stale or future epochs are refused."""

    name = "kip-320"
    fences_fetch = True
    isr_join_needs_epoch_start = True


STRATEGIES = {s.name: s for s in (HwTruncation(), Kip101(), Kip279(), Kip320())}


def strategy(protocol: str) -> HwTruncation:
    return STRATEGIES[protocol]
