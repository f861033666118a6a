"""The leader's ISR management (R7): shrink and expand as compare-and-set writes of the
partition state, fenced by the zkVersion the leader cached (see spec.state.Coord). Not in
majority-quorum, which has no ISR; kip-966 keeps the ELR beside the ISR. kraft's leader proposes
ISR changes by AlterPartition (alter_partition.py); its end of KIP-704's leader recovery is
here (LeaderCompleteRecovery)."""

from __future__ import annotations

from ..state import Coord, Replica, State
from .alter_partition import alter_in_flight
from .common import Ctx, advance_leader_hw, stale_alters, with_stale_versions
from .controller import elr_after_shrink

_new = tuple.__new__  # NamedTuple construction without its Python-level __new__ (hot path)


def _leader_write(s: State, leader: int, new_isr: int) -> State:
    reps, reqs = with_stale_versions(s, writer=leader)
    r = reps[leader]
    r = _new(Replica, (*r[:6], new_isr, *r[7:]))  # isr is field 6
    reps = reps[:leader] + (r,) + reps[leader + 1 :]
    c = s.coord
    # (the kraft variables stay what they are: NO_KRAFT, or with --reassignments the replica
    # set, which a leader's own ISR writes do not touch)
    return _new(
        State, (reps, _new(Coord, (c[0], c[1], new_isr)), reqs, s.history, s.faults, s.kraft)
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


def leader_complete_recovery(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """LeaderCompleteRecovery(leader): kraft with ``leader_recovery_state`` and
    ``leader_recovers_at_once=False`` (KIP-704's design; R7, R9). The leader elected uncleanly
    has recovered its partition state and reports RECOVERED: an AlterPartition with its ISR
    unchanged, which the controller accepts, ending the partition's RECOVERING state (a new
    partition epoch). Until then its AlterPartitions say RECOVERING and an expansion is refused
    (ControllerHandleAlterPartition). Enabled for the current leader at the current leader
    epoch, with the current partition state and no AlterPartition of its own in flight (one at
    a time, Kafka's ``Partition``: a pending state blocks another).

    The request and its answer are one step: the one refusal it could meet, a stale partition
    epoch, is excluded by the guard. Kafka 3.2+ does not take this step: ``Partition.makeLeader``
    marks the partition RECOVERED on becoming leader and the next AlterPartition carries it
    (``leader_recovers_at_once``, the default). What the recovery itself does (KIP-704: the
    producer and transaction state) is not modelled: the spec has no producer state."""
    k = s.kraft
    if not k.leader_recovery:
        return
    c = s.coord
    l = c.leader
    r = s.replicas[l]
    if not (r.alive and r.leader == l and r.epoch == c.epoch and r.zk_fresh):
        return
    if s.faults.lead_renewed or k.fenced >> l & 1 or alter_in_flight(k, l):
        return
    reps, reqs = with_stale_versions(s, writer=l)
    t = _new(
        State,
        (reps, c, reqs, s.history, s.faults, stale_alters(k)._replace(leader_recovery=0)),
    )
    out.append(((kind, (l,)), t))
