"""The consumer's action (R5)."""

from __future__ import annotations

from ..state import State
from .common import Ctx, sorted_add


def consumer_fetch(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """ConsumerFetch(leader): a consumer reads everything below the HW of a replica that believes
    it leads (R5: only offsets < HW are visible). Reading the whole visible prefix at once loses
    nothing: any partial read shows a subset, and the safety property is about what was shown.
    Listed only when it shows something new."""
    h = s.history
    shown = None  # the set of what was shown, made only when some replica could show something
    for l, r in enumerate(s.replicas):
        hw = r.hw
        if not hw or not r.alive or r.leader != l:
            continue
        if shown is None:
            shown = set(h.shown)
        log = r.log
        new = [e for e in [(o, log[o][0]) for o in range(hw)] if e not in shown]
        if new:
            out.append(
                ((kind, (l,)), s._replace(history=h._replace(shown=sorted_add(h.shown, new))))
            )


def consumer_fetch_from_replica(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """ConsumerFetch(replica), kraft: the one consumer reads at its position from the leader or,
    KIP-392 (Kafka 2.4+), from a follower (its preferred read replica; any live follower here,
    which only adds behaviours). A replica serves offsets below its HW (R5); a follower's HW
    lags the leader's (it learns it from fetch responses, KAFKA-7104) and may be behind, reset
    by a restart or cut by a truncation. The consumer reads [position, HW) in one fetch and its
    position becomes that HW: listed only when that shows something (a fetch between the HW
    and the LEO is answered empty, one above a follower's LEO is OFFSET_OUT_OF_RANGE, upon
    which the consumer goes back to the leader (it clears its preferred read replica): neither
    changes the state). The fetch carries the consumer's leader epoch (KIP-320): a replica at
    an older epoch refuses it, one at a newer epoch fences it and the consumer refreshes its
    metadata and retries (folded in: it takes up the replica's epoch). Flags:
    ``follower_reads=False`` reads from replicas that presume to lead only (as before KIP-392);
    ``follower_reads_below_hw=False`` lets a follower serve up to its LEO (the bug a follower
    read must not have: it shows records that are not committed). Not modelled: the consumer's
    truncation detection after an epoch change (KIP-320's OffsetsForLeaderEpoch validation),
    several consumers, partial reads (a subset of one: nothing the properties need). A position
    below the replica's log start offset (R12: retention, DeleteRecords) is OFFSET_OUT_OF_RANGE
    there too (``UnifiedLog.read``): no read (at the leader, ConsumerResetOffset)."""
    k = s.kraft
    starts = s.faults.log_start
    pos = k.consumer_pos
    cepoch = k.consumer_epoch
    proto = ctx.protocol
    follower_reads = proto.follower_reads
    to_leo = not proto.follower_reads_below_hw
    h = s.history
    for i, r in enumerate(s.replicas):
        if not r.alive or r.leader < 0 or r.epoch < cepoch or (starts and pos < starts[i]):
            continue
        leads = r.leader == i
        if not leads and not follower_reads:
            continue
        log = r.log
        end = len(log) if to_leo and not leads else r.hw
        if pos >= end:
            continue
        shown = sorted_add(h.shown, [(o, log[o][0]) for o in range(pos, end)])
        t = s._replace(
            history=h._replace(shown=shown),
            kraft=k._replace(consumer_pos=end, consumer_epoch=r.epoch),
        )
        out.append(((kind, (i,)), t))


def consumer_reset_offset(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """ConsumerResetOffset(leader), kraft: the consumer's position is beyond the log end of a
    replica that presumes to lead (at the consumer's leader epoch or newer): the fetch is
    OFFSET_OUT_OF_RANGE from the leader itself, and the consumer resets its position by
    auto.offset.reset (latest, Kafka's default: ListOffsets answers the leader's HW). The
    position goes back: MonotonicReads is violated, as it should be, since this happens only
    when records the consumer read are gone from that leader's log. (Out of range at a
    follower is no reset: the consumer returns to the leader, see ConsumerFetch.) A position
    below the leader's log start offset (R12: retention or DeleteRecords removed what it would
    read) is out of range too, and the same reset moves it forward, to the HW."""
    k = s.kraft
    starts = s.faults.log_start
    pos = k.consumer_pos
    cepoch = k.consumer_epoch
    for i, r in enumerate(s.replicas):
        if not r.alive or r.leader != i or r.epoch < cepoch:
            continue
        if pos <= len(r.log) and not (starts and pos < starts[i]):
            continue
        t = s._replace(kraft=k._replace(consumer_pos=r.hw, consumer_epoch=r.epoch))
        out.append(((kind, (i,)), t))
