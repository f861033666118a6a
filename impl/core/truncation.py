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
    """KIP-101 (Kafka 0.11-1.1): ask the leader for the end offset of our latest epoch; truncate
    there, once. The leader's cache holds the epochs of its log's batches only (nothing is
    assigned when a broker becomes leader before 2.1); it answers the LEO for its latest epoch,
    the start of the first epoch above the asked one, or UNDEFINED (-1) when the asked epoch is
    below all it has or none is above it, and then we truncate to our HW (0.11's
    ``ReplicaFetcherThread.maybeTruncate``; 1.1: the fetcher's initial offset, the HW)."""

    name = "kip-101"
    asks_leader = True

    def truncate_on_restart(self, log: PartitionLog, hw_checkpoint: int) -> int:
        return log.leo  # the whole recovered log is kept; truncation waits for the leader

    def truncate_on_become_follower(self, log: PartitionLog) -> int:
        return log.leo

    def answer(
        self, leader_log: PartitionLog, epoch: int, current_epoch: int | None = None
    ) -> tuple[int, int]:
        return epoch, _end_offset_kip101(leader_log.epochs(), leader_log.leo, epoch)

    def follower_offset(
        self, log: PartitionLog, answer_epoch: int, answer_offset: int, fetch_offset: int
    ) -> tuple[int, bool]:
        """(offset to truncate to, whether truncation is complete), given the leader's answer and
        the fetch offset (the HW the fetcher started from, then where the last round cut)."""
        if answer_offset < 0:
            return max(log.log_start, min(fetch_offset, log.leo)), True
        return min(answer_offset, log.leo), True


class Kip279(Kip101):
    """KIP-279 (Kafka 2.0): the leader names the largest epoch it has <= ours with its end offset
    (``lookup``: 2.0's ``endOffsetFor``, from a cache without the leader's current epoch until
    its first write); we look that epoch up in our own log the same way and truncate as
    ``AbstractFetcherThread.getOffsetTruncationState`` does: UNDEFINED, to the fetch offset; no
    epoch of ours <= it, to the leader's end offset; our largest one below it, to its end and ask
    again (walk back epoch by epoch); the same epoch, to the smaller end offset."""

    name = "kip-279"

    def lookup(self, log: PartitionLog, current_epoch: int | None, epoch: int) -> tuple[int, int]:
        """Kafka 2.0's ``LeaderEpochFileCache.endOffsetFor`` on ``log``'s epochs."""
        return _end_offset_kip279(log.epochs(), log.leo, epoch)

    def answer(
        self, leader_log: PartitionLog, epoch: int, current_epoch: int | None = None
    ) -> tuple[int, int]:
        return self.lookup(leader_log, current_epoch, epoch)

    def follower_offset(
        self, log: PartitionLog, answer_epoch: int, answer_offset: int, fetch_offset: int
    ) -> tuple[int, bool]:
        if answer_offset < 0:
            # The leader could not answer (UNDEFINED): truncate to the fetch offset (the HW in
            # the first round), as Kafka does and the spec's kip-279 rule says; a fetch from
            # there beyond the leader's log end then truncates further (R12).
            return max(log.log_start, min(fetch_offset, log.leo)), True
        own_epoch, own_end = self.lookup(log, None, answer_epoch)
        if own_end < 0:
            # We have no epoch as old as the leader's: to the leader's end offset (2.0 keeps our
            # entries below it, epochs the leader never had there; 2.1's lookup never gets here)
            return min(answer_offset, log.leo), True
        if own_epoch != answer_epoch:
            # We never had the leader's epoch: cut to the end of our largest epoch below it and
            # ask again with that epoch (walk back epoch by epoch).
            return min(own_end, log.leo), False
        return min(answer_offset, own_end, log.leo), True


class Kip320(Kip279):
    """KIP-320 (Kafka 2.1): fetches carry the current leader epoch; stale or future epochs are
    refused. With KAFKA-7415 the leader's cache holds its epoch from becoming leader on, and an
    epoch below every cached one is answered with itself and the first entry's start, on both
    sides (``lookup``: 2.1's ``endOffsetFor``)."""

    name = "kip-320"
    fences_fetch = True
    isr_join_needs_epoch_start = True

    def lookup(self, log: PartitionLog, current_epoch: int | None, epoch: int) -> tuple[int, int]:
        return _end_offset_for(log, current_epoch, epoch)


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
        """Where a follower cuts its log on a DivergingEpoch (epoch, end) answer: kip-320's rule
        (``follower_offset``, Kafka's ``AbstractFetcherThread.getOffsetTruncationState``, the
        spec's FollowerHandleFetchResponse) with the fetch offset at its LEO, so an answer with
        no epoch leaves the log (not reached: a leader knows its own epoch); when its largest
        epoch <= ``epoch`` is below it, the next fetch asks again."""
        return self.follower_offset(log, epoch, end, log.leo)[0]


def _end_offset_for(log: PartitionLog, current_epoch: int | None, epoch: int) -> tuple[int, int]:
    """Kafka 2.1+'s ``LeaderEpochFileCache.endOffsetFor`` on the epochs of ``log`` (with the
    leader's ``current_epoch`` starting at its LEO when it has no entry of it yet), as the
    spec's ``epoch_cache.end_offset``: (-1, -1) for an undefined epoch, when it knows no epoch,
    or ``epoch`` is above every one; the latest epoch ends at the LEO; an epoch below every
    known one is answered with itself and the first epoch's start; else the largest epoch <=
    it, ending where the next begins."""
    cache = log.epochs()
    if current_epoch is not None and (not cache or cache[-1][0] < current_epoch):
        cache.append((current_epoch, log.leo))
    if epoch < 0 or not cache or epoch > cache[-1][0]:
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


def _end_offset_kip279(cache: list[tuple[int, int]], leo: int, epoch: int) -> tuple[int, int]:
    """Kafka 2.0's ``endOffsetFor``: the latest epoch ends at the LEO; (-1, -1) for an epoch
    below every cached one, above every one, or an empty cache; else the largest epoch <= it,
    ending where the next begins."""
    if cache and epoch == cache[-1][0]:
        return epoch, leo
    if not cache or epoch < cache[0][0] or epoch > cache[-1][0]:
        return -1, -1
    floor = 0
    for i, (ep, _start) in enumerate(cache):
        if ep <= epoch:
            floor = i
    return cache[floor][0], cache[floor + 1][1]


def _end_offset_kip101(cache: list[tuple[int, int]], leo: int, epoch: int) -> int:
    """Kafka 0.11-1.1's ``endOffsetFor``: the LEO for the latest cached epoch; -1 for an epoch
    below every cached one or with none above it; else the start of the first epoch above it."""
    if cache and epoch == cache[-1][0]:
        return leo
    if not cache or epoch < cache[0][0]:
        return -1
    for ep, start in cache:
        if ep > epoch:
            return start
    return -1


STRATEGIES = {s.name: s for s in (HwTruncation(), Kip101(), Kip279(), Kip320(), Kraft())}


def strategy(protocol: str) -> HwTruncation:
    return STRATEGIES[protocol]
