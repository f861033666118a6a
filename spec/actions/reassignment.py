"""KIP-455 partition reassignment in the ``kraft`` family (issue 28 item 1), behind
--reassignments N: the operator's AlterPartitionReassignments (a new target replica set, or a
cancel), the KRaft controller's completion of a reassignment once the ISR allows it, and a
removed broker deleting its replica (R1, R7, R9, R11).

Kafka (apache/kafka trunk 2024-10, 3.3+; ``metadata/src/main/java/org/apache/kafka/controller``):
``ReplicationControlManager.alterPartitionReassignment`` → ``changePartitionReassignment``:
``PartitionReassignmentReplicas(current, target)`` makes the replicas target + (current -
target), adding = target - current, removing = current - target, written by one
PartitionChangeRecord built by ``PartitionChangeBuilder.build``. Adding replicas keeps the
leader epoch (only the partition epoch moves): the leader learns the new replicas from the
metadata in its own epoch (``Partition.makeLeader`` → ``updateAssignmentAndIsr``), the new
replicas learn that they follow it and fetch from an empty log. Every later build (here: the
controller's handling of an AlterPartition) first runs ``completeReassignmentIfNeeded``
(``PartitionReassignmentReplicas.maybeCompleteReassignment``): once the ISR holds every target
replica (KAFKA-15665, Kafka 3.8.0: ``reassignment_needs_full_isr``; before, only every adding
replica) the replicas become the target, the ISR loses the removed ones, a removed leader is
replaced by an election among the remaining ISR (``tryElection``), and, the replica set having
shrunk, the leader epoch is bumped (``triggerLeaderEpochBumpForReplicaReassignmentIfNeeded``).
A cancel (``cancelPartitionReassignment``, ``PartitionReassignmentRevert``) goes back to the
replicas without the adding ones, the ISR without them (if that empties it, only an unclean
election may pick the first remaining replica, and only with unclean election enabled). A
broker that is no longer a replica deletes its replica when it applies the change
(``ReplicaManager.applyDelta``: ``TopicsDelta.localChanges().deletes()`` →
``stopPartitions(delete = true)``), BrokerStopReplica here.

Deliberately not modelled: the replica order (the preferred replica, ``targetReplicas.get(0)``:
the spec's elections pick any eligible replica, a superset of Kafka's choice), log directories
(JBOD: KAFKA-15608 is docs/design/kraft.md's, not a step), the replication throttle, the
reassignment of more than one partition, a change of the replication factor (every target has
R-1 replicas), and a completion that finds no acceptable leader in the ISR (leader -1): the step
is not taken, which removes behaviours, never adds one. The --epochs bound stops a change that
needs a leader epoch beyond it (a search bound, as the fence's batch)."""

from __future__ import annotations

from ..state import NO_EPOCH, NO_LEADER, Coord, Replica, State
from .common import Ctx, controller_write, ineligible, live_mask, replica_set
from .controller import elr_next
from .fetch import with_kraft

_new = tuple.__new__


def reassignment_needs_full_isr(ctx: Ctx) -> bool:
    return getattr(ctx.protocol, "reassignment_needs_full_isr", True)


def maybe_complete(ctx: Ctx, isr: int, assigned: int, adding: int, removing: int):
    """``PartitionReassignmentReplicas.maybeCompleteReassignment``: ``(replicas, isr)`` once the
    reassignment in progress can complete with target ISR ``isr``, else None. The new ISR is the
    ISR without the removing replicas, never empty; it must hold every target replica
    (KAFKA-15665's fix, Kafka 3.8.0) or, before it (``reassignment_needs_full_isr`` False,
    Kafka 3.3 to 3.7), every adding replica."""
    if not adding and not removing:
        return None
    new_isr = isr & ~removing
    target = assigned & ~removing
    if not new_isr or not target:
        return None
    need = target if reassignment_needs_full_isr(ctx) else adding
    if need & ~new_isr:
        return None
    return target, new_isr


def build_change(
    ctx: Ctx,
    before: State,
    isr: int,
    assigned: int,
    adding: int,
    removing: int,
    tell: int = 0,
) -> list[State]:
    """``PartitionChangeBuilder.build`` for a change of the ISR and of the assignment made on
    ``before`` (its own ISR change, if any, not yet recorded): complete the reassignment if it
    can (``completeReassignmentIfNeeded``), keep the leader if it is still valid (in the ISR,
    acceptable) or elect one from the ISR (each acceptable member a successor: the spec does
    not model the replica order), bump the leader epoch if the leader changes or the replica set
    loses a broker, update the ELR (kip-966, ``maybePopulateTargetElr``, from ``before``'s ISR),
    and write it all as one record. An unchanged leader epoch: a partition change, told to the
    leader and to ``tell`` (the adding replicas, which become its followers). A new one: told to
    every live replica (controller_write). [] when the change needs a leader epoch beyond
    --epochs or finds no leader."""
    c = before.coord
    k = before.kraft
    done = maybe_complete(ctx, isr, assigned, adding, removing)
    if done is not None:
        assigned, isr = done
        adding = removing = 0
    live = live_mask(before) & assigned
    barred = before.faults.unclean | ineligible(before) | k.fenced
    leaders = [c.leader]
    if not isr >> c.leader & 1 or barred >> c.leader & 1 or not assigned >> c.leader & 1:
        leaders = [j for j in range(ctx.n) if (isr & live & ~barred) >> j & 1]
    shrunk = bool(k.assigned & ~assigned)
    f = before.faults
    out = []
    for leader in leaders:
        bump = leader != c.leader or shrunk
        if bump and c.epoch >= ctx.config.epochs:
            continue
        t = with_kraft(
            before,
            k._replace(assigned=assigned, adding=adding, removing=removing),
        )
        if ctx.elr:
            elr = elr_next(ctx, f, c.isr, isr, k.min_isr)
            if elr != f.elr:
                t = t._replace(faults=f._replace(elr=elr))
        if bump:
            out.append(controller_write(t, Coord(leader, c.epoch + 1, isr), live))
        else:
            send = live & ((1 << leader) | tell)
            out.append(controller_write(t, Coord(leader, c.epoch, isr), send))
    return out


def _in_office(ctx: Ctx, s: State) -> bool:
    """The controller can build a change for the partition: it has a leader recorded (not
    leader -1, ``Faults.lead_renewed``)."""
    return not s.faults.lead_renewed


def operator_reassign_partition(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """OperatorReassignPartition(target): the operator asks for the replica set ``target`` (a
    bitmask of R-1 brokers; kafka-reassign-partitions --execute, ``Admin
    .alterPartitionReassignments``; at most --reassignments times with the cancels). The KRaft
    controller (``ReplicationControlManager.changePartitionReassignment``) records the replicas
    target + current, adding = target - current, removing = current - target, where current is
    the replica set recorded now, a reassignment in progress included (its adding replicas stay
    replicas: a new target never drops a previous adding replica before completing, PR 13521's
    ``testReassignPartitionsKeepsAllPreviousReassigningReplicas``, unlike the ZooKeeper
    controller of KAFKA-14808). The record may complete at once (a target the ISR already
    holds). The leader keeps its leader epoch; the adding replicas are told to follow it."""
    k = s.kraft
    if k.reassignments >= ctx.config.reassignments or not _in_office(ctx, s):
        return
    current = replica_set(ctx, s)
    now_target = current & ~k.removing
    rf = ctx.n - 1
    counted = with_kraft(s, k._replace(reassignments=k.reassignments + 1))
    for target in range(1, 1 << ctx.n):
        if target.bit_count() != rf or target == now_target:
            continue
        assigned = current | target
        adding = target & ~current
        removing = current & ~target
        for t in build_change(ctx, counted, s.coord.isr, assigned, adding, removing, adding):
            out.append(((kind, (target,)), t))


def operator_cancel_reassignment(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """OperatorCancelReassignment(): the operator cancels the reassignment in progress
    (kafka-reassign-partitions --cancel: a target of null; ``cancelPartitionReassignment``,
    ``PartitionReassignmentRevert``): the replicas without the adding ones, the ISR without
    them. An ISR that would be empty needs an unclean election (--unclean; the first remaining
    replica alone in the ISR, any of them here); without it the cancel is refused
    (InvalidReplicaAssignmentException). A removed leader is replaced as by any build. Counts
    as one of --reassignments."""
    k = s.kraft
    if k.reassignments >= ctx.config.reassignments or not _in_office(ctx, s):
        return
    if not k.adding and not k.removing:
        return  # NoReassignmentInProgressException
    counted = with_kraft(s, k._replace(reassignments=k.reassignments + 1))
    original = k.assigned & ~k.adding
    isr = s.coord.isr & ~k.adding
    if isr:
        for t in build_change(ctx, counted, isr, original, 0, 0):
            out.append(((kind, ()), t))
    elif ctx.config.unclean:
        for j in range(ctx.n):
            if original >> j & 1:
                for t in build_change(ctx, counted, 1 << j, original, 0, 0):
                    out.append(((kind, ()), t))


_STOPPED = Replica((), 0, 0, True, NO_LEADER, NO_EPOCH, 0, False, (), False, ())


def broker_stop_replica(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """BrokerStopReplica(replica): a live broker that is no longer a replica of the partition
    (the controller removed it: a completed reassignment or a cancel) applies that change: it
    stops its fetcher and deletes its replica, log, checkpoints and leader-epoch cache
    (``ReplicaManager.applyDelta``: ``localChanges.deletes`` → ``stopPartitions`` with
    ``deleteLocalLog``; a broker that restarts first deletes it at startup as a stray replica,
    ``LogManager`` with ``isStray``). A removed leader not yet told it was replaced stops
    leading here; what its purgatory held is answered NOT_LEADER_OR_FOLLOWER (not acknowledged).
    The requests in flight to it are superseded (it applies the newest metadata image), its
    fetches in flight and their answers are dropped with its fetcher."""
    rs = replica_set(ctx, s)
    k = s.kraft
    n = ctx.n
    for i, r in enumerate(s.replicas):
        if not r.alive or rs >> i & 1:
            continue
        nr = _new(Replica, (*_STOPPED[:8], ctx.unknown_leos, False, ()))
        reqs = tuple(q for q in s.requests if q.dest != i)
        fetch_requests = tuple(q for q in k.fetch_requests if q.follower != i)
        fetch_responses = tuple(p for p in k.fetch_responses if p.follower != i)
        rem = k.remote_epoch
        rem = (*rem[:i], (-1,) * n, *rem[i + 1 :])
        caches = k.epoch_cache
        ckpts = k.epoch_ckpt
        if caches:
            caches = (*caches[:i], (), *caches[i + 1 :])
            ckpts = (*ckpts[:i], (), *ckpts[i + 1 :])
        views = (*k.views[:i], 0, *k.views[i + 1 :])
        k2 = k._replace(
            fetch_requests=fetch_requests,
            fetch_responses=fetch_responses,
            remote_epoch=rem,
            epoch_cache=caches,
            epoch_ckpt=ckpts,
            views=views,
        )
        f = s.faults
        if f.flushed or f.log_start:
            f = f._replace(
                flushed=(*f.flushed[:i], 0, *f.flushed[i + 1 :]) if f.flushed else (),
                log_start=(*f.log_start[:i], 0, *f.log_start[i + 1 :]) if f.log_start else (),
            )
        reps = (*s.replicas[:i], nr, *s.replicas[i + 1 :])
        t = State(reps, s.coord, reqs, s.history, f, k2)
        if t != s:
            out.append(((kind, (i,)), t))
