"""The ``kraft`` version's log start offset (R4, R12; issue 28 item 3): the operator's
DeleteRecords, retention's deletion of old segments, a follower taking up its leader's log
start from fetch responses, and OFFSET_OUT_OF_RANGE with the follower's reset. It mirrors the
spec's LeaderDeleteRecords (spec/actions/operator.py), BrokerDeleteOldSegment
(spec/actions/retention.py, ``broker_delete_old_segment_kraft``) and the log start half of
LeaderHandleFetch, FollowerHandleFetchResponse and FollowerHandleOffsetOutOfRange
(spec/actions/fetch.py).

Kafka 4.x's code paths:

* DeleteRecords (KIP-107): ``ReplicaManager.deleteRecords`` → ``Partition.deleteRecordsOnLeader``
  (the broker's own view, ``leaderLogIfLocal``: the request carries no leader epoch, so a
  deposed leader not yet told applies it too) → ``UnifiedLog.maybeIncrementLogStartOffset(
  offset, ClientRecordDeletion)``: an offset above the HW is OFFSET_OUT_OF_RANGE, one at or
  below the log start changes nothing, -1 stands for the HW.
* retention: ``LogManager.cleanupLogs`` → ``UnifiedLog.deleteOldSegments`` →
  ``deletableSegments``, which takes a segment only when the HW is at or past its end
  (``highWatermark >= upperBoundOffset``, KAFKA-5634, Kafka 0.11.0.1), the active one too when
  the HW reaches the log end (a new segment is rolled first) → ``deleteSegments`` →
  ``maybeIncrementLogStartOffset``. Segments here are ``Config.log_segment_records`` records,
  based at multiples of it: one segment deleted is one ``BrokerDeleteOldSegment`` event, which
  the validator maps onto as many of the spec's one-record steps (VALIDATION.md).
* the follower: ``ReplicaFetcherThread.processPartitionData`` →
  ``maybeIncrementLogStartOffset(leaderLogStartOffset, LeaderOffsetIncremented)``, after the HW
  (``updateHighWatermark`` keeps the HW at or above the log start). A fetch below the leader's
  log start (``Partition.readRecords``, checked before the divergence since KAFKA-12996), or
  without a last fetched epoch past the leader's end (``UnifiedLog.read``), is answered
  OFFSET_OUT_OF_RANGE; the follower then (``AbstractFetcherThread.handleOutOfRangeError`` →
  ``fetchOffsetAndTruncate``) truncates to the leader's log end if that is below its own, or,
  when the leader's log start is past its log end, empties its log and starts there
  (``truncateFullyAndStartAt``, its HW moved there too: KAFKA-9491).

The leader's ListOffsets answers are taken from the OFFSET_OUT_OF_RANGE answer itself (its log
end and log start when it answered), where Kafka asks in a round trip of its own and the spec
reads the leader's state when the follower handles the answer: the two differ only if the
leader's log start or end moved, or it lost its leadership, while the answer was in flight.

Mixed into impl.core.replica.Broker, whose state and helpers it uses."""

from __future__ import annotations

from typing import Any

from . import messages as m
from .messages import Effects
from .partition import LEADER, Partition


class LogStartRole:
    # Mutation points (impl/mutants.py): the bounds KAFKA-5634 put on the log start.
    def _delete_records_limit(self, p: Partition) -> int:
        """The highest offset DeleteRecords may move the log start to: the HW
        (``maybeIncrementLogStartOffset``'s OFFSET_OUT_OF_RANGE above it)."""
        return p.log.hw

    def _segment_deletable(self, p: Partition, upper: int) -> bool:
        """Retention may delete the oldest segment, which ends at ``upper``: only when the HW is
        at or past its end (KAFKA-5634, ``UnifiedLog.deletableSegments``)."""
        return p.log.hw >= upper

    def _hw_at_log_start_on_reset(self) -> bool:
        """KAFKA-9491: a follower reset to its leader's log start moves its HW there too."""
        return True

    # ---- the operator: LeaderDeleteRecords ----------------------------------------------------
    def delete_records(self, tp: m.TP, offset: int, now: int) -> tuple[Effects, str]:
        """LeaderDeleteRecords(leader, offset) (R4, R12): the operator's DeleteRecords for
        ``tp`` up to ``offset`` (-1: the HW), applied if this broker presumes to lead it.
        Returns the effects and the error answered (NONE, NOT_LEADER_FOR_PARTITION,
        OFFSET_OUT_OF_RANGE). Traced only when the log start moved (the spec lists no other)."""
        out: Effects = []
        p = self.partitions.get(tp)
        if p is None or p.role != LEADER:
            return out, m.NOT_LEADER
        target = p.log.hw if offset < 0 else offset
        if target > self._delete_records_limit(p) or target > p.log.leo:
            return out, m.OFFSET_OUT_OF_RANGE
        if target <= p.log.log_start:
            return out, m.NONE
        self._move_log_start(out, p, target)
        self._trace(out, "LeaderDeleteRecords", {"leader": self.id, "offset": target}, now, p)
        return out, m.NONE

    # ---- retention: BrokerDeleteOldSegment ----------------------------------------------------
    def delete_old_segments(self, now: int, tp: m.TP | None = None) -> Effects:
        """BrokerDeleteOldSegment(replica) (R4, R12): retention finds every segment past its
        retention (the caller says when: here, all of them) and deletes the deletable ones,
        oldest first, each moving the log start to its end; one event per segment, its
        ``offset`` the new log start. On every partition this broker holds, leader or follower,
        or only ``tp``."""
        out: Effects = []
        seg = max(1, self.config.log_segment_records)
        for key in sorted(self.partitions):
            if tp is not None and key != tp:
                continue
            p = self.partitions[key]
            while True:
                start = p.log.log_start
                upper = min((start // seg + 1) * seg, p.log.leo)  # the active one: its end
                if upper <= start or not self._segment_deletable(p, upper):
                    break
                self._move_log_start(out, p, upper)
                self._trace(
                    out, "BrokerDeleteOldSegment", {"replica": self.id, "offset": upper}, now, p
                )
        return out

    def _move_log_start(self, out: Effects, p: Partition, offset: int) -> None:
        """``UnifiedLog.maybeIncrementLogStartOffset``: the log start (and the durable log, the
        ``DeleteBefore`` effect) moves up to ``offset``; the derived epoch cache with it
        (``truncateFromStart``). The HW is the caller's (never passed, but by a mutant)."""
        p.log.delete_before(offset)
        out.append(m.DeleteBefore(p.tp, offset))

    # ---- the leader's answer: OFFSET_OUT_OF_RANGE -----------------------------------------------
    def _kraft_out_of_range(self, p: Partition, fp: m.FetchPartition) -> bool:
        """A fetch the leader answers OFFSET_OUT_OF_RANGE (R12): below its log start, or without
        a last fetched epoch (an empty log) past its log end."""
        if fp.fetch_offset < p.log.log_start:
            return True
        return fp.last_fetched_epoch < 0 and fp.fetch_offset > p.log.leo

    # ---- the follower ---------------------------------------------------------------------------
    def _kraft_take_hw(self, out: Effects, p: Partition, d: m.FetchPartitionData) -> None:
        """R4, R12: HW := min(LEO, the answer's HW), at least the log start
        (``updateHighWatermark``); then the leader's log start the answer carries is taken up,
        if it is above this log's and at most the HW (KIP-107; above the HW Kafka refuses it)."""
        p.log.hw = max(p.log.log_start, min(p.log.leo, d.high_watermark))
        if p.log.log_start < d.log_start_offset <= p.log.hw:
            self._move_log_start(out, p, d.log_start_offset)

    def _kraft_offset_out_of_range(
        self, out: Effects, leader: int, d: m.FetchPartitionData, p: Partition | None, now: int
    ) -> None:
        """FollowerHandleOffsetOutOfRange(follower, leader) (R10, R12): the fetcher takes an
        OFFSET_OUT_OF_RANGE answer. Ignored when the fetch offset or leader epoch changed while
        it was in flight. Otherwise: the leader's log end below this one's: truncate to it;
        the leader's log start past this log's end: empty the log and start there (its HW
        there too, KAFKA-9491); else (the leader's log grew meanwhile) nothing: fetch again."""
        tp = (d.topic, d.partition)
        args: dict[str, Any] = self._kraft_response_args(leader, d.base_offset, d.leader_epoch)
        if self._kraft_response_stale(p, leader, d.base_offset, d.leader_epoch):
            args["ignored"] = True
            self._trace_tp(out, "FollowerHandleOffsetOutOfRange", args, now, tp, p)
            return
        assert p is not None
        args["leader_log_start"] = d.log_start_offset
        args["leader_leo"] = d.leader_leo
        if d.leader_leo < p.log.leo:
            self._truncate(out, p, d.leader_leo)
            p.log.hw = min(p.log.hw, p.log.leo)
            args["offset"] = p.log.leo
        elif d.log_start_offset > p.log.leo:
            hw = p.log.hw
            p.log.reset_to(d.log_start_offset)
            if not self._hw_at_log_start_on_reset():
                p.log.hw = hw
            p.trace_mark = p.log.leo
            p.trace_cut = None
            out.append(m.DeleteBefore(p.tp, d.log_start_offset))
            args["offset"] = d.log_start_offset
        self._trace(out, "FollowerHandleOffsetOutOfRange", args, now, p)
