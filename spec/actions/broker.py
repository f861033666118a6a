"""A broker's own actions: applying LeaderAndIsr requests (R10, R11), checkpointing its HW, and
crashing and restarting (R13)."""

from __future__ import annotations

from ..state import NO_EPOCH, NO_LEADER, Replica, Request, State
from .common import Ctx, advance_leader_hw, set_replica


def _without(requests: tuple[Request, ...], q: Request) -> tuple[Request, ...]:
    return tuple(x for x in requests if x is not q)


def broker_become_leader(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """BrokerBecomeLeader(replica, epoch): a live replica applies a LeaderAndIsr naming itself,
    with a newer epoch (R9: older ones are ignored). It stops fetching, adopts the epoch and ISR,
    caches the request's zkVersion, forgets the followers' LEOs (unknown until they fetch) and
    re-evaluates its HW (R4, R11); its HW may lag the old leader's. Produce requests waiting in
    its purgatory survive a re-election of the same leader."""
    for q in s.requests:
        i = q.dest
        r = s.replicas[i]
        if q.leader != i or not r.alive or q.epoch <= r.epoch:
            continue
        nr = Replica(
            r.log,
            r.hw,
            r.hw_ckpt,
            True,
            i,
            q.epoch,
            q.isr,
            q.fresh,
            ctx.unknown_leos,
            False,
            r.pending if r.leader == i else (),
        )
        t = set_replica(s, i, nr)
        t = State(t.replicas, t.coord, _without(s.requests, q), t.history)
        out.append(((kind, (i, q.epoch)), advance_leader_hw(ctx, t, i)))


def broker_become_follower(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """BrokerBecomeFollower(replica, leader, epoch): a live replica applies a LeaderAndIsr naming
    another leader, with a newer epoch (R10). It stops taking produce (its purgatory is answered
    NotLeaderForPartition) and truncates by the protocol version's rule: to its HW at once
    (hw-truncation, then checkpoints it), or later by asking the leader (the fetcher starts in
    the truncating state, kip-101 and later). Then its fetcher follows the new leader."""
    proto = ctx.protocol
    for q in s.requests:
        i = q.dest
        r = s.replicas[i]
        if q.leader == i or not r.alive or q.epoch <= r.epoch:
            continue
        if proto.truncate_to_hw_on_become_follower:
            log = r.log[: r.hw]
            hw = r.hw
            ckpt = r.hw
            truncating = False
        else:
            log = r.log
            hw = r.hw
            ckpt = r.hw_ckpt
            truncating = bool(log)
        nr = Replica(
            log, hw, ckpt, True, q.leader, q.epoch, q.isr, False, ctx.unknown_leos, truncating, ()
        )
        t = set_replica(s, i, nr)
        out.append(
            (
                (kind, (i, q.leader, q.epoch)),
                State(t.replicas, t.coord, _without(s.requests, q), t.history),
            )
        )


def broker_ignore_stale_request(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """BrokerIgnoreStaleRequest(replica, epoch): a LeaderAndIsr whose epoch is not newer than the
    replica's is dropped on receipt (R9)."""
    for q in s.requests:
        r = s.replicas[q.dest]
        if r.alive and q.epoch <= r.epoch:
            out.append(
                (
                    (kind, (q.dest, q.epoch)),
                    State(s.replicas, s.coord, _without(s.requests, q), s.history),
                )
            )


def network_lose_leader_and_isr(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """NetworkLoseLeaderAndIsr(replica, epoch): a request in flight is lost (R8)."""
    for q in s.requests:
        out.append(
            (
                (kind, (q.dest, q.epoch)),
                State(s.replicas, s.coord, _without(s.requests, q), s.history),
            )
        )


def broker_checkpoint_hw(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """BrokerCheckpointHw(replica): the periodic HW checkpoint reaches the disk (R13). Lazy on
    purpose: the checkpoint lagging the in-memory HW is the window of the KIP-101 data loss."""
    for i, r in enumerate(s.replicas):
        if r.alive and r.hw_ckpt != r.hw:
            out.append(((kind, (i,)), set_replica(s, i, r._replace(hw_ckpt=r.hw))))


def broker_crash(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """BrokerCrash(replica): the broker stops; everything in memory is lost (HW, its view of the
    leader, epoch and ISR, remote LEOs, purgatory), the log and the HW checkpoint survive (R8).
    Requests in flight to it stay in the network and may arrive after a restart (R8: delayed)."""
    h = s.history
    if h.crashes >= ctx.config.crashes:
        return
    h2 = h._replace(crashes=h.crashes + 1)
    for i, r in enumerate(s.replicas):
        if r.alive:
            nr = Replica(
                r.log,
                0,
                r.hw_ckpt,
                False,
                NO_LEADER,
                NO_EPOCH,
                0,
                False,
                ctx.unknown_leos,
                False,
                (),
            )
            t = set_replica(s, i, nr)
            out.append(((kind, (i,)), t._replace(history=h2)))


def broker_restart(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """BrokerRestart(replica): the broker comes back, reads its HW checkpoint (R13) and, in the
    seeds' protocol, truncates its log to it. It registers again; unless it is itself the
    recorded (crashed) leader, which the controller must re-elect first, the controller sends it
    the current partition state."""
    c = s.coord
    for i, r in enumerate(s.replicas):
        if r.alive:
            continue
        ckpt = r.hw_ckpt
        log = r.log[:ckpt] if ctx.protocol.truncate_to_hw_on_restart else r.log
        nr = Replica(
            log, ckpt, ckpt, True, NO_LEADER, NO_EPOCH, 0, False, ctx.unknown_leos, False, ()
        )
        t = set_replica(s, i, nr)
        if c.leader != i:
            req = Request(i, c.leader, c.epoch, c.isr, True)
            if req not in t.requests:
                t = t._replace(requests=tuple(sorted((*t.requests, req))))
        out.append(((kind, (i,)), t))
