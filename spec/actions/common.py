"""What every action module shares: the context of one model, and state-update helpers that
several actors use (the leader's HW rule, the controller's versioned write)."""

from __future__ import annotations

from dataclasses import dataclass

from ..config import Config
from ..protocols import PROTOCOLS, ProtocolVersion
from ..state import Coord, History, Replica, Request, State


@dataclass(frozen=True)
class Ctx:
    """One model's constants, computed once from its Config."""

    config: Config
    protocol: ProtocolVersion
    n: int
    full: int  # bitmask of every assigned replica (AR)
    unknown_leos: tuple[int, ...]
    acks_all: bool

    @staticmethod
    def of(config: Config) -> Ctx:
        n = config.replicas
        return Ctx(
            config=config,
            protocol=PROTOCOLS[config.protocol],
            n=n,
            full=(1 << n) - 1,
            unknown_leos=(-1,) * n,
            acks_all=config.acks == "all",
        )


def set_replica(s: State, i: int, r: Replica) -> State:
    reps = s.replicas
    return State(reps[:i] + (r,) + reps[i + 1 :], s.coord, s.requests, s.history)


def alive_mask(s: State) -> int:
    m = 0
    for i, r in enumerate(s.replicas):
        if r.alive:
            m |= 1 << i
    return m


def presumes_leadership(r: Replica, i: int) -> bool:
    """A live replica whose last LeaderAndIsr (or its own ISR write) names itself leader."""
    return r.alive and r.leader == i


def is_true_leader(s: State, i: int) -> bool:
    """The coordination's leader, alive, having applied the coordination's current epoch."""
    c = s.coord
    r = s.replicas[i]
    return c.leader == i and r.alive and r.leader == i and r.epoch == c.epoch


def with_stale_versions(s: State, writer: int) -> tuple[tuple[Replica, ...], tuple[Request, ...]]:
    """Every cached zkVersion but the writer's becomes stale (a write bumped the version)."""
    reps = tuple(
        r._replace(zk_fresh=False) if r.zk_fresh and i != writer else r
        for i, r in enumerate(s.replicas)
    )
    reqs = tuple(q._replace(fresh=False) if q.fresh else q for q in s.requests)
    return reps, reqs


def controller_write(s: State, coord: Coord, send_to: int) -> State:
    """The controller's versioned write of the partition state (R9, R18), then a LeaderAndIsr
    request with the new state to each replica in the ``send_to`` bitmask."""
    reps, reqs = with_stale_versions(s, writer=-1)
    new = [
        Request(d, coord.leader, coord.epoch, coord.isr, True)
        for d in range(len(reps))
        if send_to >> d & 1
    ]
    return State(reps, coord, tuple(sorted(set(reqs).union(new))), s.history)


def sorted_add(items: tuple, new: list) -> tuple:
    if not new:
        return items
    return tuple(sorted(set(items).union(new)))


def advance_leader_hw(ctx: Ctx, s: State, leader: int) -> State:
    """R4: the leader's HW = min LEO over its ISR (its own LEO and the remote LEOs); it never
    decreases. Offsets it passes complete the acks=all writes waiting in the leader's purgatory
    (R6): acknowledged if the ISR still has min.insync.replicas members, otherwise answered
    NotEnoughReplicasAfterAppend.

    Not modelled: R4's extra rule that also counts followers about to re-enter the ISR. Here the
    ISR expansion checks the follower against the HW and writes the ISR in one atomic step, so
    the race that rule guards against (HW moving during the ISR write) cannot happen."""
    r = s.replicas[leader]
    hw = r.hw
    new_hw = len(r.log)
    isr = r.isr
    remote = r.remote_leo
    for j in range(ctx.n):
        if j != leader and isr >> j & 1:
            rl = remote[j]
            if rl < new_hw:
                new_hw = rl
    if new_hw <= hw:
        return s
    history = s.history
    pending = r.pending
    if pending:
        done = [o for o in pending if o < new_hw]
        if done:
            pending = tuple(o for o in pending if o >= new_hw)
            log = r.log
            if isr.bit_count() >= ctx.config.min_isr:
                history = history._replace(
                    acked=sorted_add(history.acked, [(o, log[o][0]) for o in done])
                )
            else:
                history = history._replace(
                    refused=sorted_add(history.refused, [log[o][0] for o in done])
                )
    r = Replica(
        r.log,
        new_hw,
        r.hw_ckpt,
        r.alive,
        r.leader,
        r.epoch,
        r.isr,
        r.zk_fresh,
        r.remote_leo,
        r.truncating,
        pending,
    )
    reps = s.replicas
    return State(reps[:leader] + (r,) + reps[leader + 1 :], s.coord, s.requests, history)


__all__ = ["Coord", "Ctx", "History", "Replica", "Request", "State"]
