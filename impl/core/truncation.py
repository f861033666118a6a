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

    def answer(
        self, leader_log: PartitionLog, epoch: int, current_epoch: int | None = None
    ) -> tuple[int, int]:
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

    def answer(
        self, leader_log: PartitionLog, epoch: int, current_epoch: int | None = None
    ) -> tuple[int, int]:
        return epoch, leader_log.end_offset_kip101(epoch)

    def follower_offset(
        self, log: PartitionLog, answer_epoch: int, answer_offset: int
    ) -> tuple[int, bool]:
        return min(answer_offset, log.leo), True


class Kip279(Kip101):
    """KIP-279: the leader names the largest epoch it has <= ours; we truncate to the smaller of its
    end offset on both sides, which is the true divergence point after fast leader changes."""

    name = "kip-279"

    def answer(
        self, leader_log: PartitionLog, epoch: int, current_epoch: int | None = None
    ) -> tuple[int, int]:
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
        if own_epoch < 0:
            # We have no epoch that old: to the leader's end offset (Kafka's
            # getOffsetTruncationState, "below any replica's tracked epochs").
            return min(answer_offset, log.leo), True
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

    def answer(
        self, leader_log: PartitionLog, epoch: int, current_epoch: int | None = None
    ) -> tuple[int, int]:
        """Kafka 2.1+ (KAFKA-7415): the leader's cache holds its current epoch from the moment it
        leads, and an epoch below every one it has is answered with itself and the start of
        the first (the spec's kip-320 ``answers_below_first_epoch``)."""
        return _end_offset_for(leader_log, current_epoch, epoch)


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
        ``last_fetched_epoch`` (-1: empty), or None. Kafka 2.1+'s ``endOffsetFor`` (KAFKA-7415;
        the spec's ``epoch_cache.end_offset``): the asked epoch is the leader's current one: its
        LEO (even before its first entry); below every epoch the leader has: the asked epoch with
        the start of the leader's first; else the largest epoch <= the asked one and the start of
        the next. Diverging when that epoch is below the asked one or its end below the fetch
        offset."""
        if last_fetched_epoch < 0:
            return None
        if last_fetched_epoch >= leader_epoch:
            ep, end = leader_epoch, leader_log.leo
        else:
            ep, end = _end_offset_for(leader_log, leader_epoch, last_fetched_epoch)
        if ep < last_fetched_epoch or end < offset:
            return ep, end
        return None

    def follower_truncation(self, log: PartitionLog, epoch: int, end: int) -> int:
        """Where a follower cuts its log on a DivergingEpoch (epoch, end) answer, as Kafka's
        ``AbstractFetcherThread.getOffsetTruncationState`` (the spec's
        FollowerHandleFetchResponse): an answer with no epoch leaves the log (not reached: a
        leader knows its own epoch); it looks ``epoch`` up in its own log: when it knows no epoch
        <= it, to the leader's end offset; when its largest epoch <= it is below it, to that
        epoch's end (the next fetch asks again); else to the smaller of the two end offsets.
        Never past its LEO."""
        if epoch < 0:
            return log.leo
        own_epoch, own_end = _end_offset_for(log, None, epoch)
        if own_epoch < 0:
            return min(log.leo, end)
        if own_epoch != epoch:
            return min(log.leo, own_end)
        return min(log.leo, end, own_end)


def _end_offset_for(log: PartitionLog, current_epoch: int | None, epoch: int) -> tuple[int, int]:
    """Kafka 2.1+'s ``LeaderEpochFileCache.endOffsetFor`` on the epochs of ``log`` (with the
    leader's ``current_epoch`` starting at its LEO when it has no entry of it yet), as the
    spec's ``epoch_cache.end_offset``: (-1, -1) when it knows no epoch or ``epoch`` is above
    every one; the latest epoch ends at the LEO; an epoch below every known one is answered
    with itself and the first epoch's start; else the largest epoch <= it, ending where the
    next begins."""
    cache = log.epochs()
    if current_epoch is not None and (not cache or cache[-1][0] < current_epoch):
        cache.append((current_epoch, log.leo))
    if not cache or epoch > cache[-1][0]:
        return -1, -1
    if epoch == cache[-1][0]:
        return epoch, log.leo
    floor = -1
    for i, (ep, _start) in enumerate(cache):
        if ep <= epoch:
            floor = i
    if floor < 0:
        return epoch, cache[0][1]
    return cache[floor][0], cache[floor + 1][1]


STRATEGIES = {s.name: s for s in (HwTruncation(), Kip101(), Kip279(), Kip320(), Kraft())}


def strategy(protocol: str) -> HwTruncation:
    return STRATEGIES[protocol]
