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

kraft (KRaft, issue 28 item 2): the partition state lives in the replicated metadata log, so a
new active controller (a Raft leader election among the controllers) has every committed
record and changes nothing by taking office; brokers read the log and fence nothing by
controller epoch (``ctrl_epoch`` and ``ctrl_seen`` stay 1). What a failover does to the partition is through the
AlterPartitions in flight: an answer lost after the change committed
(NetworkLoseAlterPartitionResponse, spec/actions/alter_partition.py) and, before KAFKA-14154's
fix, the deposed controller's final-looking refusal of a request ahead of its state
(DeposedControllerHandleAlterPartition). A leader keeps sending to the controller it has cached
until a disconnect or NOT_CONTROLLER (``NodeToControllerRequestThread``: ``activeController``
is reset only in ``handleResponse``), so it may reach the deposed one after it applied metadata
the new one wrote. Not modelled (kraft): uncommitted records of the deposed controller (its
writes are atomic and committed here), the controllers' own Raft quorum.

Not modelled: the deposed controller's own coordination writes after it lost its session (Kafka
fences them by the zkVersion of /controller_epoch since KAFKA-6082, 2.2; here the controller is
one writer and its writes are atomic), controller-to-broker UpdateMetadata requests.
"""

from __future__ import annotations

from ..state import Request, State
from .common import Ctx, live_mask
from .fetch import with_kraft


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


def kraft_controller_failover(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """ControllerFailover() in kraft, before KAFKA-14154's fix only (``not_controller_if_ahead``
    off): another controller becomes active with every committed record (R9, R18); the
    deposed one, cut off from the quorum, still believes it is active for a while and answers
    AlterPartitions from the partition state it has (``Kraft.deposed``: its leader epoch, and
    whether the partition was written since). With the fix a failover is no step of its own: it
    changes no partition state, and what it does to answers in flight is
    NetworkLoseAlterPartitionResponse (a lost acceptance; every other answer is re-sent to the
    new controller and comes back the same). Takes one of --controller-failovers."""
    f = s.faults
    if f.failovers >= ctx.config.controller_failovers:
        return
    t = with_kraft(s, s.kraft._replace(deposed=(s.coord.epoch, 0)))
    out.append(((kind, ()), t._replace(faults=f._replace(failovers=f.failovers + 1))))


def deposed_controller_handle_alter_partition(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """DeposedControllerHandleAlterPartition(leader): the deposed controller answers a leader's
    AlterPartition made with a partition state newer than the one it knows (R9), which only a
    controller that lost office can see: a newer leader epoch, or the same one with a partition
    epoch the new controller wrote (the request carries the current partition state, and the
    partition was written since the failover). KRaft's controller of 3.0-3.2
    (``ReplicationControlManager.alterPartition``: ``leaderEpoch() != partition.leaderEpoch``,
    ``partitionEpoch() != partition.partitionEpoch``) answers FENCED_LEADER_EPOCH or
    INVALID_UPDATE_VERSION, which the leader takes as final: it keeps the change pending
    and does not retry (``Partition.handleAlterPartitionError``), waiting for newer metadata
    that will never come since it already holds the current state: KAFKA-14154's persistent
    under-replicated partition. Since 3.3.0 (#12514, ``validateAlterPartitionData``) the answer
    is NOT_CONTROLLER and the request goes to the new controller: no step, so this action
    exists only with ``not_controller_if_ahead`` off. Only requests made with the current
    partition state are answered here: a stale one is refused by the new controller too, with
    newer metadata on its way (whether it is also ahead of the deposed one is more than the
    partition epoch's abstraction, the cached-version bit, can tell). A request made with the
    deposed controller's own state it would accept and fail to commit (NOT_CONTROLLER when it
    resigns): re-sent, no step."""
    k = s.kraft
    dep = k.deposed
    if not dep:
        return
    for a in k.alter_partition:
        if a.answered or not a.fresh:
            continue
        if not (a.leader_epoch > dep[0] or (a.leader_epoch == dep[0] and dep[1])):
            continue  # the deposed one's own state: it would accept, fail to commit, resign
        alters = tuple(sorted(x._replace(answered=1) if x is a else x for x in k.alter_partition))
        out.append(((kind, (a.leader,)), with_kraft(s, k._replace(alter_partition=alters))))
