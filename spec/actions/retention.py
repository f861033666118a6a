"""Log retention and the fetch below the log start offset (R12, --retention only).

Deleted entries keep their values in the log tuple (see spec.state.Faults.log_start): offsets
stay positions, and nothing reads an entry below the log start offset except the epoch lookups,
as Kafka's leader-epoch cache keeps the epoch of the first retained entry.

Not modelled: segments (one record is one segment), retention by size or time (any deletion may
happen at any moment), the log start offset a follower learns from fetch responses (KIP-107),
the consumer's own out-of-range handling (auto.offset.reset).
"""

from __future__ import annotations

from ..state import State, with_log
from .common import Ctx, set_replica


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
        fs = t.faults._replace(log_start=start[:f] + (ls,) + start[f + 1 :])
        if fs.producer_state_start:  # --idempotence: the producer state starts empty there
            ps = fs.producer_state_start
            fs = fs._replace(producer_state_start=ps[:f] + (ls,) + ps[f + 1 :])
        out.append(((kind, (f, l)), t._replace(faults=fs)))
