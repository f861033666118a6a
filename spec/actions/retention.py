"""Log retention and the fetch below the log start offset (R12, --retention; kraft also
--delete-records).

Deleted entries keep their values in the log tuple (see spec.state.Faults.log_start): offsets
stay positions, and nothing reads an entry below the log start offset except the properties
and, up to kip-966, the epoch lookups, as Kafka's leader-epoch cache keeps the epoch of the
first retained entry.

Not modelled: segments (one record is one segment), retention by size or time (any deletion may
happen at any moment). Up to kip-966: the log start offset a follower learns from fetch
responses (KIP-107), the consumer's own out-of-range handling (auto.offset.reset). kraft has
both (spec/actions/fetch.py, consumer.py), the operator's DeleteRecords (LeaderDeleteRecords)
and the leader-epoch cache truncated from the start.
"""

from __future__ import annotations

from ..state import State, with_log
from .common import Ctx, forget_producers, set_replica
from .fetch import move_log_start


def broker_delete_old_segment(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """BrokerDeleteOldSegment(replica): retention deletes the oldest record of a live replica's
    log, advancing its log start offset by one (R12). Only below the replica's HW, as Kafka
    deletes only segments below the high watermark."""
    start = s.faults.log_start
    for i, r in enumerate(s.replicas):
        if r.alive and start[i] < r.hw:
            f = s.faults._replace(log_start=start[:i] + (start[i] + 1,) + start[i + 1 :])
            out.append(((kind, (i,)), s._replace(faults=f)))


def follower_reset_to_log_start(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """FollowerResetToLogStart(follower, leader): the follower's fetch offset (its LEO) is below
    the leader's log start offset: retention deleted what it would fetch while it was away. The
    answer is OffsetOutOfRange; the follower drops its local log and starts at the leader's log
    start offset (R12), with its HW there too. (The other out-of-range case, a fetch offset past
    the leader's LEO, is in FollowerFetch.) With --idempotence its producer state starts empty
    there: Kafka's ``UnifiedLog.truncateFullyAndStartAt`` clears it and deletes every producer
    snapshot (``ProducerStateManager.truncateFullyAndStartAt``), so the producer's batches below
    the leader's log start, which the leader still knows (KAFKA-7190), the follower does not."""
    start = s.faults.log_start
    fenced = ctx.fetch_fenced
    for f, r in enumerate(s.replicas):
        l = r.leader
        if not r.alive or l < 0 or l == f or r.truncating:
            continue
        lr = s.replicas[l]
        if not lr.alive or lr.leader != l or fenced(lr.epoch, r.epoch):
            continue
        ls = start[l]
        if len(r.log) >= ls:
            continue
        nr = with_log(r, lr.log[:ls], ls, min(r.hw_ckpt, ls))
        t = set_replica(s, f, nr)
        t = t._replace(faults=t.faults._replace(log_start=start[:f] + (ls,) + start[f + 1 :]))
        out.append(((kind, (f, l)), forget_producers(t, f, ls)))


def broker_delete_old_segment_kraft(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """BrokerDeleteOldSegment(replica), kraft: retention (time or size: any moment) deletes the
    oldest segment of a live replica, leader or follower (``LogManager.cleanupLogs`` →
    ``UnifiedLog.deleteOldSegments``; one record is one segment here), and its log start offset
    moves past it (``deleteSegments`` → ``incrementStartOffset`` →
    ``maybeIncrementLogStartOffset``), the epoch cache truncated from the start (R12). Kafka
    4.x's ``deletableSegments`` takes a segment only if the HW is at or past its end
    (``highWatermark >= upperBoundOffset``, KAFKA-5634, Kafka 0.11.0.1: "to ensure that the log
    start offset can never exceed it"), the active segment too when the HW reaches the log end
    (a new one is rolled first). ``retention_below_hw=False``: 0.11.0.0's rule, any segment but
    an empty active one, so up to the log end."""
    below_hw = ctx.protocol.retention_below_hw
    start = s.faults.log_start
    for i, r in enumerate(s.replicas):
        if not r.alive:
            continue
        if start[i] < (r.hw if below_hw else len(r.log)):
            out.append(((kind, (i,)), move_log_start(ctx, s, i, start[i] + 1)))
