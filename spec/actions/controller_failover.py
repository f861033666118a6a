"""The controller's own failover (R9, R18; --controller-failovers N only).

The controller's session expires and another broker wins the /controller race: /controller_epoch
is incremented, the new controller reads the partition state and sends it to every live replica
with its new controller epoch. The deposed controller is a zombie: the LeaderAndIsr requests it
sent are still in flight, carrying its old controller epoch. Its queues went when it resigned
(NetworkLoseLeaderAndIsr drops what has not reached the broker); what does reach a broker comes
in order and may interleave with the new controller's requests, another connection (R8). A
broker that has accepted a request of the newer controller ignores them
(BrokerIgnoreStaleRequest, R9), one that has not may still apply them (R8: acting on stale
beliefs). Brokers that are themselves zombies (a deposed leader
still taking writes, a follower fetching from it) are in the other actions already.

Not modelled: the deposed controller's own coordination writes after it lost its session (Kafka
fences them by the zkVersion of /controller_epoch since KAFKA-6082, 2.2; here the controller is
one writer and its writes are atomic), controller-to-broker UpdateMetadata requests.
"""

from __future__ import annotations

from ..state import Request, State
from .common import Ctx, live_mask


def controller_failover(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """ControllerFailover(): a new controller is elected with controller epoch + 1 and sends the
    current partition state to the live replicas (R9). It reads the state without writing it, so
    the cached zkVersions stay current; the leader epoch does not change either, so a replica
    already at it ignores the request but learns the new controller epoch."""
    f = s.faults
    if f.failovers >= ctx.config.controller_failovers:
        return
    epoch = f.ctrl_epoch + 1
    c = s.coord
    live = live_mask(s)
    new = [Request(d, c.leader, c.epoch, c.isr, True, epoch) for d in range(ctx.n) if live >> d & 1]
    faults = f._replace(ctrl_epoch=epoch, failovers=f.failovers + 1)
    reqs = tuple(sorted(set(s.requests).union(new)))
    out.append(((kind, ()), State(s.replicas, c, reqs, s.history, faults, s.kraft)))
