"""The controller's actions (R9). One controller, never failing here; it learns of a broker's
crash at once (its coordination session expires) and reacts by a versioned write of the partition
state followed by LeaderAndIsr requests to the live replicas."""

from __future__ import annotations

from ..state import Coord, State
from .common import Ctx, alive_mask, controller_write


def _leader_lost(s: State) -> bool:
    """The recorded leader cannot lead: its broker is gone, or it is back from a restart (or
    missed its request) and will never take up the recorded epoch: it is not at that epoch and no
    request for it is in flight. Kafka's controller treats such a bounced broker as failed."""
    c = s.coord
    r = s.replicas[c.leader]
    if not r.alive:
        return True
    if r.epoch == c.epoch:
        return False
    return not any(q.dest == c.leader and q.epoch == c.epoch for q in s.requests)


def controller_elect_leader(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """ControllerElectLeader(leader): the leader is lost (see _leader_lost); pick any live ISR
    member, the old leader too if it is back, as the leader with ISR = the live ISR members and
    leader epoch + 1 (R9). With no live ISR member the partition stays offline (no unclean
    election here) until one restarts."""
    c = s.coord
    if c.epoch >= ctx.config.epochs or not _leader_lost(s):
        return
    live = alive_mask(s)
    new_isr = c.isr & live
    for cand in range(ctx.n):
        if new_isr >> cand & 1:
            coord = Coord(cand, c.epoch + 1, new_isr)
            out.append(((kind, (cand,)), controller_write(s, coord, live)))


def controller_shrink_isr(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """ControllerShrinkIsr(replica): a follower's broker is gone; remove it from the ISR, bump the
    leader epoch and tell the live replicas (R9). Kafka's controller never empties the ISR."""
    c = s.coord
    if c.epoch >= ctx.config.epochs or not s.replicas[c.leader].alive:
        return
    live = alive_mask(s)
    for j in range(ctx.n):
        if j != c.leader and c.isr >> j & 1 and not live >> j & 1:
            coord = Coord(c.leader, c.epoch + 1, c.isr & ~(1 << j))
            out.append(((kind, (j,)), controller_write(s, coord, live)))
