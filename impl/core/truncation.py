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
    diverging_epoch_fetch = False  # kraft: DivergingEpoch in the fetch, no truncation round
    hw_needs_min_isr = False  # kraft (KIP-966): the HW advances only with min ISR members
    follower_reads = False  # kraft (KIP-392, Kafka 2.4+): a follower serves consumers too

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


class Kraft(Kip320):
    """kraft (Kafka 2.7+ fetch, 3.7+/4.x controller; spec/protocols/kraft.py): no separate
    OffsetsForLeaderEpoch round. The follower fetches at its LEO with the epoch of its last
    entry; the leader answers a fetch whose epoch it does not have up to that offset with the
    diverging epoch and its end offset (``diverging``), and the follower truncates on that
    answer (``follower_truncation``) and fetches again. The HW advances only while the ISR has
    min.insync.replicas members (KIP-966, as the spec's kraft). ``asks_leader`` stays True: the
    follower still learns where to truncate from the leader, in the fetch itself."""

    name = "kraft"
    diverging_epoch_fetch = True
    hw_needs_min_isr = True
    follower_reads = True

    def diverging(
        self, leader_log: PartitionLog, leader_epoch: int, last_fetched_epoch: int, offset: int
    ) -> tuple[int, int] | None:
        """The leader's DivergingEpoch answer to a fetch at ``offset`` whose last entry has
        ``last_fetched_epoch`` (-1: empty), or None: KIP-279's end offset of the largest epoch <=
        the asked one, the leader's current epoch ending at its LEO even before its first entry
        (the spec's ``end_offset_kip279`` with the leader epoch); diverging when that epoch is
        below the asked one or its end below the fetch offset. (-1, -1): no epoch that old."""
        if last_fetched_epoch < 0:
            return None
        if last_fetched_epoch >= leader_epoch:
            ep, end = leader_epoch, leader_log.leo
        else:
            ep, end = leader_log.end_offset_for_epoch(last_fetched_epoch)
            if ep < 0:
                end = -1
        if ep < last_fetched_epoch or end < offset:
            return ep, end
        return None

    def follower_truncation(self, log: PartitionLog, epoch: int, end: int) -> int:
        """Where a follower cuts its log on a DivergingEpoch (epoch, end) answer (the spec's
        FollowerHandleFetchResponse): to its HW when the leader had no epoch that old; else to
        the smaller of the leader's end offset and its own end offset of the largest epoch <=
        ``epoch`` it has (0 when it has none); the next fetch asks again from there."""
        if epoch < 0:
            return min(log.hw, log.leo)
        own_epoch, own_end = log.end_offset_for_epoch(epoch)
        if own_epoch < 0:
            return 0
        return min(log.leo, end, own_end)


STRATEGIES = {s.name: s for s in (HwTruncation(), Kip101(), Kip279(), Kip320(), Kraft())}


def strategy(protocol: str) -> HwTruncation:
    return STRATEGIES[protocol]
