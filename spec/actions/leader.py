"""The leader's ISR management (R7): shrink and expand as compare-and-set writes of the
partition state, fenced by the zkVersion the leader cached (see spec.state.Coord). Not in
majority-quorum, which has no ISR; kip-966 keeps the ELR beside the ISR."""

from __future__ import annotations

from ..state import NO_KRAFT, Coord, Replica, State
from .common import Ctx, advance_leader_hw, with_stale_versions
from .controller import elr_after_shrink

_new = tuple.__new__  # NamedTuple construction without its Python-level __new__ (hot path)


def _leader_write(s: State, leader: int, new_isr: int) -> State:
    reps, reqs = with_stale_versions(s, writer=leader)
    r = reps[leader]
    r = _new(Replica, (*r[:6], new_isr, *r[7:]))  # isr is field 6
    reps = reps[:leader] + (r,) + reps[leader + 1 :]
    c = s.coord
    # (the kraft variables stay NO_KRAFT: the leader's own ISR writes are not kraft's)
    return _new(
        State, (reps, _new(Coord, (c[0], c[1], new_isr)), reqs, s.history, s.faults, NO_KRAFT)
    )


def leader_shrink_isr(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """LeaderShrinkIsr(leader, follower): a follower whose last fetch did not reach the leader's
    LEO is removed once replica.lag.time.max.ms passes (time is not modelled: it may pass
    between any two steps). Only with a current zkVersion (the CAS succeeds); a failed CAS changes
    nothing and the leader waits for the controller's LeaderAndIsr. Then the HW is re-evaluated
    (R4): the shrink may let it advance."""
    for l, r in enumerate(s.replicas):
        if not (r.alive and r.leader == l and r.zk_fresh):
            continue
        lleo = len(r.log)
        for j in range(ctx.n):
            if j != l and r.isr >> j & 1 and r.remote_leo[j] < lleo:
                t = _leader_write(s, l, r.isr & ~(1 << j))
                if ctx.elr:
                    t = elr_after_shrink(ctx, t, r.isr, r.isr & ~(1 << j))
                out.append(((kind, (l, j)), advance_leader_hw(ctx, t, l)))


def leader_expand_isr(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """LeaderExpandIsr(leader, follower): a follower whose fetched LEO reached the leader's HW
    rejoins the ISR (R7), a CAS write like the shrink. The version's ``isr_join_floor`` may ask
    more: with KAFKA-7128 (kip-320 here) also the start offset of the leader's epoch, since a new
    leader's HW may lag."""
    isr_join_floor = ctx.isr_join_floor
    for l, r in enumerate(s.replicas):
        if not (r.alive and r.leader == l and r.zk_fresh):
            continue
        floor = isr_join_floor(r.log, r.epoch, r.hw)
        for j in range(ctx.n):
            if j != l and not r.isr >> j & 1 and r.remote_leo[j] >= floor:
                t = _leader_write(s, l, r.isr | (1 << j))
                if ctx.elr:
                    t = elr_after_shrink(ctx, t, r.isr, r.isr | (1 << j))
                if t.faults.unclean >> j & 1:  # kip-966: back in sync, eligible again
                    t = t._replace(faults=t.faults._replace(unclean=t.faults.unclean & ~(1 << j)))
                out.append(((kind, (l, j)), t))
