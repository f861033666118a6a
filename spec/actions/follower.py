"""A follower's fetcher (R2, R3, R4, R10, R12, KIP-101/279/320)."""

from __future__ import annotations

from ..state import Replica, State, with_log
from .common import Ctx, advance_leader_hw, follower_hw, set_replica

_new = tuple.__new__  # NamedTuple construction without its Python-level __new__ (hot path)


def _leader_serving(ctx: Ctx, s: State, f: int):
    """The replica ``f`` fetches from, if it would answer: it is alive and believes it leads;
    with KIP-320 fencing also at exactly the follower's epoch (else FENCED/UNKNOWN_LEADER_EPOCH)."""
    r = s.replicas[f]
    l = r.leader
    if not r.alive or l < 0 or l == f:
        return None
    lr = s.replicas[l]
    if not lr.alive or lr.leader != l:
        return None
    if ctx.fetch_fenced(lr.epoch, r.epoch):
        return None
    return l


def diverges(flog, llog) -> bool:
    """KIP-320's first design: the leader's check of a fetch. The fetch carries the epoch of the
    follower's last entry; the logs disagree when the follower's log is longer than the leader's
    or the leader holds another epoch at the follower's last offset (LOG_TRUNCATION)."""
    n = len(flog)
    if n > len(llog):
        return True
    return n > 0 and llog[n - 1][1] != flog[n - 1][1]


def follower_fetch(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """FollowerFetch(follower, leader): one fetch, request and response as one step. The fetch
    offset is the follower's LEO, which tells the leader everything below it is replicated (R2):
    the leader records it as the remote LEO (R3) and re-evaluates its HW (R4). The response
    carries every record from that offset (the batch) and the leader's HW; the follower appends
    them and sets HW = min(its LEO, leader HW) (R4). A fetch offset past the leader's LEO (a
    longer, divergent follower log) is out of range: the follower truncates to the leader's LEO
    (R12). Fetches that would change nothing are not listed (they are stuttering steps). A fetch
    offset below the leader's log start (retention) is FollowerResetToLogStart's."""
    start = s.faults.log_start
    views = s.kraft.views if ctx.reassign else None  # (--reassignments: the leader serves the
    # replicas it applied; a fetch from another is refused, ``Partition.updateFollowerFetchState``
    # finds no replica: NOT_LEADER_FOR_PARTITION)
    on_divergence = ctx.on_divergence
    fetch_fenced = ctx.fetch_fenced
    reps = s.replicas
    for f, r in enumerate(reps):
        # _leader_serving(ctx, s, f), inlined (hot path); Replica fields by position: alive 3,
        # leader 4, epoch 5, truncating 9
        if r[9] or not r[3]:
            continue
        l = r[4]
        if l < 0 or l == f:
            continue
        lr = reps[l]
        if not lr[3] or lr[4] != l or fetch_fenced(lr[5], r[5]):
            continue
        if views is not None and not views[l] >> f & 1:
            continue
        if on_divergence and diverges(r.log, lr.log):
            continue  # answered LOG_TRUNCATION: FollowerTruncate's
        offset = len(r.log)
        if start and offset < start[l]:
            continue
        lleo = len(lr.log)
        if offset > lleo:
            log = r.log[:lleo]
            nr = with_log(r, log, min(r.hw, lleo), min(r.hw_ckpt, lleo))
            out.append(((kind, (f, l)), set_replica(s, f, nr)))
            continue
        t = s
        if lr.remote_leo[f] != offset:
            rl = lr.remote_leo
            # remote_leo (field 8) of the follower := its fetch offset
            lr2 = _new(Replica, (*lr[:8], rl[:f] + (offset,) + rl[f + 1 :], lr[9], lr[10]))
            t = advance_leader_hw(ctx, set_replica(s, l, lr2), l)
            lr = t.replicas[l]
        log = r.log + lr.log[offset:] if offset < lleo else r.log
        hw = follower_hw(start, f, len(log), lr.hw)
        if t is s and log is r.log and hw == r.hw:
            continue
        out.append(((kind, (f, l)), set_replica(t, f, with_log(r, log, hw, r.hw_ckpt))))


def follower_truncate(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """FollowerTruncate(follower, leader): the truncating fetcher asks the leader for the end
    offset of its latest epoch (OffsetsForLeaderEpoch) and truncates by the protocol's rule
    (KIP-101: one round; KIP-279: walk back until the epochs agree), then starts fetching. The
    HW and its checkpoint cannot stay above the truncated log.

    kip-320-first-try: there is no truncating phase; the follower truncates (by the same walk
    back) when a fetch is answered LOG_TRUNCATION, i.e. whenever its log diverges from the log of
    the leader it follows (see ``diverges``), whatever the epochs of the two."""
    on_divergence = ctx.on_divergence
    truncation_offset = ctx.truncation_offset
    for f, r in enumerate(s.replicas):
        if on_divergence:
            if not r.alive or r.leader < 0 or r.leader == f:
                continue
            if not diverges(r.log, s.replicas[r.leader].log):
                continue
        elif not r.truncating:
            continue
        l = _leader_serving(ctx, s, f)
        if l is None:
            continue
        lr = s.replicas[l]
        t = truncation_offset(r.log, r.hw, lr.log, lr.epoch)
        nr = r._replace(log=r.log[:t], hw=min(r.hw, t), hw_ckpt=min(r.hw_ckpt, t), truncating=False)
        out.append(((kind, (f, l)), set_replica(s, f, nr)))
