"""The ``kraft`` version's ISR changes as AlterPartition request and controller answer (R7, R9,
R18; issue 18 step 2, docs/design/kraft.md §4-§5). They replace LeaderShrinkIsr and
LeaderExpandIsr there: the leader proposes, keeps counting the *maximal* ISR (its ISR and the
proposed one together) for its HW until the controller answers, and the controller accepts only
a proposal made with the current partition state and, for an added follower, the broker epoch
of its current incarnation (KIP-903).

The partition epoch is apart from the leader epoch (KAFKA-15021): an accepted change bumps only
the partition epoch, abstracted as the cached-version bit ``fresh`` (Coord's docstring explains
the abstraction for the zkVersion: only equality with the current one is ever asked).
The controller refuses a proposed ISR with a fenced or shutting-down broker in it (KIP-841).
With ``--controller-failovers N`` (kraft; issue 28 item 2) an answer may be lost: the controller
records the change but the leader never hears of it (NetworkLoseAlterPartitionResponse), its
channel manager re-sends the request, and the controller refuses the retry as stale; the leader
then keeps the change pending until newer partition state overrides it
(LeaderClearPendingAlterPartition), as Kafka's ``Partition.handleAlterPartitionError`` does.
A request lost before it reached the controller is simply re-sent by the channel manager
(``NodeToControllerRequestThread.handleResponse``: ``wasDisconnected`` -> ``putFirst``; an
AlterPartition never times out, ``retryTimeoutMs = Long.MaxValue``), the same request in flight
again: no step. Not modelled: the leader's own KIP-841 filter (it proposes from its followers'
fetches alone; its metadata view of fencing is not modelled, so only the controller's check
stands)."""

from __future__ import annotations

from ..epoch_cache import epoch_start as cache_epoch_start
from ..log import epoch_start
from ..state import AlterReq, Kraft, State
from .common import (
    Ctx,
    advance_leader_hw,
    live_mask,
    partition_change,
    stale_alters,
    with_stale_versions,
)
from .controller import elr_after_shrink
from .fetch import with_kraft
from .reassignment import build_change, maybe_complete

_new = tuple.__new__


def alter_in_flight(k: Kraft, leader: int) -> AlterReq | None:
    for a in k.alter_partition:
        if a.leader == leader:
            return a
    return None


def leader_send_alter_partition(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """LeaderSendAlterPartition(leader, follower): a leader with no AlterPartition of its own in
    flight proposes one ISR change: a shrink of a member whose last fetch did not reach its LEO
    (replica.lag.time.max.ms may pass at any moment), or an expansion by a follower whose
    counted fetch reached its HW and its epoch's start offset (KAFKA-7128), carrying the broker
    epoch of that fetch (KIP-903) (the join rule's halves are flags: ``isr_join_needs_hw``,
    ``isr_join_needs_epoch_start``). Only with a current cached partition state: a stale one is
    refused by the controller for certain, so it is not listed (with ``partition_epoch_check``
    off it is listed, and may be accepted). The leader's maximal ISR is now
    its ISR with the proposal's; the HW is re-evaluated (``maximal_isr=False`` counts only the
    proposed ISR: a shrink then lets the HW pass records the dropped member lacks before the
    controller agreed)."""
    k = s.kraft
    any_version = not ctx.protocol.partition_epoch_check
    join_hw = ctx.protocol.isr_join_needs_hw
    join_epoch = ctx.protocol.isr_join_needs_epoch_start
    for l, r in enumerate(s.replicas):
        if not (r.alive and r.leader == l and (r.zk_fresh or any_version)):
            continue
        if alter_in_flight(k, l):
            continue
        lleo = len(r.log)
        # the join rule (R7): the HW (``isr_join_needs_hw``) and the start of the leader's epoch
        # (KAFKA-7128, ``isr_join_needs_epoch_start``); 0 with both off: any counted fetch
        floor = r.hw if join_hw else 0
        if join_epoch:
            if k.epoch_cache:
                start = cache_epoch_start(k.epoch_cache[l], r.epoch, lleo)
            else:
                start = epoch_start(r.log, r.epoch)
            floor = max(floor, start)
        rem_epochs = k.remote_epoch[l]
        for j in range(ctx.n):
            if j == l:
                continue
            if r.isr >> j & 1:
                if r.remote_leo[j] >= lleo:
                    continue
                a = AlterReq(l, r.epoch, r.isr & ~(1 << j), -1, -1, r.zk_fresh, k.broker_epoch[l])
            elif r.remote_leo[j] >= floor:
                a = AlterReq(
                    l, r.epoch, r.isr | (1 << j), j, rem_epochs[j], r.zk_fresh, k.broker_epoch[l]
                )
            else:
                continue
            t = with_kraft(s, k._replace(alter_partition=tuple(sorted((*k.alter_partition, a)))))
            out.append(((kind, (l, j)), advance_leader_hw(ctx, t, l)))


def _keeps_pending(ctx: Ctx) -> bool:
    """A refused-as-stale AlterPartition stays pending at the leader (``answered``) rather than
    being dropped at the refusal. Only where answers can be lost (kraft with
    --controller-failovers): without lost answers the recorded ISR never holds a change the
    leader has not adopted from its answer, so dropping it at once loses nothing and keeps the
    pinned state counts (the spec's rule before issue 28)."""
    return ctx.config.controller_failovers > 0 and getattr(
        ctx.protocol, "keep_pending_on_refusal", True
    )


def _verdict(ctx: Ctx, s: State, a: AlterReq) -> tuple[bool, bool]:
    """(accepted, refused as stale) for the controller's checks of ``a`` (R7, R9, R18), in
    ``ReplicationControlManager.validateAlterPartitionData``'s terms: stale is
    INVALID_UPDATE_VERSION or FENCED_LEADER_EPOCH, the answers after which Kafka's leader keeps
    its change pending; the others (STALE_BROKER_EPOCH of a leader that restarted since,
    INELIGIBLE_REPLICA) make it give the change up."""
    k = s.kraft
    c0 = s.coord
    l = a.leader
    barred = k.fenced | k.shutting_down if ctx.protocol.ineligible_replica_check else 0
    current = (
        a.fresh
        if ctx.protocol.partition_epoch_check
        else (c0.leader == l and c0.epoch == a.leader_epoch)
    )
    accept = (
        current
        and a.leader_be == k.broker_epoch[l]
        and not (  # KIP-455: an ISR outside the replica set is INVALID_REQUEST
            k.assigned and a.new_isr & ~k.assigned and ctx.protocol.isr_within_replicas_check
        )
        and not a.new_isr & barred
        and (
            a.added < 0
            or not ctx.protocol.broker_epoch_check
            or a.added_be == k.broker_epoch[a.added]
        )
    )
    proto = ctx.protocol
    # KIP-704: with the partition RECOVERING, a leader that recovers in its own step
    # (LeaderCompleteRecovery) says RECOVERING until then; the controller refuses such a request
    # with more than the leader in its ISR (INVALID_REQUEST: given up, not stale)
    if (
        accept
        and k.leader_recovery
        and not proto.leader_recovers_at_once
        and a.new_isr != 1 << l
        and proto.recovering_isr_check
    ):
        accept = False
    return accept, not current and a.leader_be == k.broker_epoch[l]


def _record_change(ctx: Ctx, t: State, old_isr: int, a: AlterReq) -> State:
    """kip-966's consequences of a recorded ISR change: the ELR, and an added member eligible
    again; KIP-704's: a leader that recovers at once (Kafka's ``Partition.makeLeader``) says
    RECOVERED in its request, which ends the partition's RECOVERING state."""
    if ctx.elr:
        t = elr_after_shrink(ctx, t, old_isr, a.new_isr)
    if t.kraft.leader_recovery and ctx.protocol.leader_recovers_at_once:
        t = with_kraft(t, t.kraft._replace(leader_recovery=0))
    if a.added >= 0 and t.faults.unclean >> a.added & 1:  # kip-966: eligible again
        f = t.faults
        t = t._replace(faults=f._replace(unclean=f.unclean & ~(1 << a.added)))
    return t


def controller_handle_alter_partition(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """ControllerHandleAlterPartition(leader): the controller answers a leader's AlterPartition.
    It accepts when the proposal was made with the current partition state (its partition epoch
    is the current one, else INVALID_UPDATE_VERSION; ``partition_epoch_check=False`` checks only
    the leader and its leader epoch, FENCED_LEADER_EPOCH) by the leader's current
    incarnation (a leader that restarted since sent it from its previous life: STALE_BROKER_EPOCH,
    KIP-497's check of the sender), no member of the proposed ISR is fenced or in controlled
    shutdown (KIP-841, INELIGIBLE_REPLICA; ``ineligible_replica_check``) and, for an expansion, the
    added follower's broker epoch is its registered one (KIP-903; ``broker_epoch_check``). It
    then records the new ISR (kip-966's ELR rule applies) and answers the leader, which adopts
    it if it still leads in that epoch. A refusal changes nothing recorded; either way the
    leader's maximal ISR falls back to its ISR and its HW is re-evaluated, except that with
    lost answers (``_keeps_pending``) a refusal as stale leaves the change pending at the leader
    (``AlterReq.answered``; Kafka's ``Partition.handleAlterPartitionError``). KIP-704
    (``leader_recovery_state``, Kafka 3.2+): an accepted request saying RECOVERED ends the
    partition's RECOVERING state; one saying RECOVERING with more than the leader in its ISR is
    refused (INVALID_REQUEST, ``ReplicationControlManager.validateAlterPartitionData``;
    ``recovering_isr_check``): see ``_verdict`` and ``_record_change``."""
    keep = _keeps_pending(ctx)
    k = s.kraft
    for a in k.alter_partition:
        if a.answered:
            continue  # not in flight: the leader awaits newer partition state
        l = a.leader
        accept, stale = _verdict(ctx, s, a)
        if not accept and stale and keep:
            alters = tuple(
                sorted(a._replace(answered=1) if x is a else x for x in k.alter_partition)
            )
            out.append(((kind, (l,)), with_kraft(s, k._replace(alter_partition=alters))))
            continue
        alters = tuple(x for x in k.alter_partition if x is not a)
        t = with_kraft(s, k._replace(alter_partition=alters))
        if accept and ctx.reassign and (k.adding or k.removing):
            # (the leader keeps its change pending, awaiting the metadata: see _completing)
            kept = tuple(sorted((*alters, a._replace(answered=1))))
            done = _completing(ctx, with_kraft(s, k._replace(alter_partition=kept)), a)
            if done is not None:  # the change completes the reassignment (KIP-455)
                for u in done:
                    r = u.replicas[l]
                    if r.alive and r.leader == l:
                        u = advance_leader_hw(ctx, u, l)
                    out.append(((kind, (l,)), u))
                continue
        if accept:
            c = t.coord
            old_isr = c.isr
            reps, reqs = with_stale_versions(t, writer=l)
            r = reps[l]
            if r.alive and r.leader == l and r.epoch == a.leader_epoch:
                reps = reps[:l] + (r._replace(isr=a.new_isr, zk_fresh=True),) + reps[l + 1 :]
                if any(q.pc and q.dest == l for q in reqs):  # (only with the partition epoch
                    # check off: the changes in flight to it are older than what it adopts)
                    reqs = tuple(q._replace(pc=0) if q.dest == l else q for q in reqs)
            t = State(
                reps, c._replace(isr=a.new_isr), reqs, t.history, t.faults, stale_alters(t.kraft)
            )
            t = _record_change(ctx, t, old_isr, a)
        r = t.replicas[l]
        if r.alive and r.leader == l:
            t = advance_leader_hw(ctx, t, l)
        out.append(((kind, (l,)), t))


def _completing(ctx: Ctx, t: State, a: AlterReq) -> list[State] | None:
    """KIP-455: the states after an accepted AlterPartition whose new ISR completes the
    reassignment in progress (``PartitionChangeBuilder.build`` runs
    ``completeReassignmentIfNeeded`` on the ISR the leader asked for), or None when it does
    not. The completion shrinks the replica set, so the leader epoch is bumped: the leader does
    not adopt the answer (a new leader elected: NEW_LEADER_ELECTED,
    ``Partition.handleAlterPartitionError``; the same leader: an answer in a newer leader epoch,
    which ``handleAlterPartitionUpdate`` ignores): either way it keeps its change pending, its
    maximal ISR counting the added follower, until the metadata overrides it
    (``AlterReq.answered``, LeaderClearPendingAlterPartition once it applied BrokerBecomeLeader,
    BrokerBecomeFollower or BrokerStopReplica). [] when that leader epoch is beyond --epochs (the
    step is not taken)."""
    k = t.kraft
    if maybe_complete(ctx, a.new_isr, k.assigned, k.adding, k.removing) is None:
        return None
    if a.added >= 0 and t.faults.unclean >> a.added & 1:
        # kip-966: eligible again, and so for this build's election too: Kafka's
        # ``PartitionChangeBuilder.isValidNewLeader`` accepts any active member of the
        # target ISR, the follower this request adds included (found by the kit's random
        # kraft schedules: the reference elected the spare it had just added)
        f = t.faults
        t = t._replace(faults=f._replace(unclean=f.unclean & ~(1 << a.added)))
    out = []
    for u in build_change(ctx, t, a.new_isr, k.assigned, k.adding, k.removing):
        if t.kraft.leader_recovery and ctx.protocol.leader_recovers_at_once:
            u = with_kraft(u, u.kraft._replace(leader_recovery=0))
        out.append(u)
    return out


def network_lose_alter_partition_response(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """NetworkLoseAlterPartitionResponse(leader): the controller records the change a leader's
    AlterPartition asks for, as ControllerHandleAlterPartition would, but its answer never
    reaches the leader (R7, R8, R9). In KRaft that is the old active controller's renounce
    after the record committed but before it saw the commit (``QuorumController.renounce`` ->
    ``deferredEventQueue.failAll``: NOT_CONTROLLER), or a connection dropped after the
    handling (``NodeToControllerRequestThread.handleResponse``: ``wasDisconnected``). Either way
    the leader's channel manager re-sends the same request, now stale (the AlterReq stays in
    flight, its partition epoch no longer current), and the controller refuses it
    (INVALID_UPDATE_VERSION: ``ReplicationControlManager.validateAlterPartitionData`` has no
    idempotence for a change already applied, KAFKA-14144 being the ZooKeeper controller's).
    The leader learns the change from the metadata (BrokerApplyPartitionChange), which the
    controller sends as for any partition change. Takes one of --controller-failovers (a failover
    or a lost connection to the controller: the leader cannot tell them apart). Only a lost
    acceptance is a step: a lost refusal is re-sent and refused again, the same as a late one."""
    f = s.faults
    if f.failovers >= ctx.config.controller_failovers:
        return
    k = s.kraft
    for a in k.alter_partition:
        if a.answered or not _verdict(ctx, s, a)[0]:
            continue
        if ctx.reassign and (k.adding or k.removing):
            done = _completing(ctx, s, a)
            if done is not None:  # (KIP-455: the lost answer's change completes it)
                for u in done:
                    u = u._replace(faults=u.faults._replace(failovers=u.faults.failovers + 1))
                    out.append(((kind, (a.leader,)), u))
                continue
        old_isr = s.coord.isr
        t = partition_change(ctx, s, a.new_isr, live_mask(s))  # makes ``a`` stale
        t = _record_change(ctx, t, old_isr, a)
        t = t._replace(faults=t.faults._replace(failovers=t.faults.failovers + 1))
        out.append(((kind, (a.leader,)), t))


def leader_clear_pending_alter_partition(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """LeaderClearPendingAlterPartition(leader): a leader's pending ISR change that an answer
    left waiting (``AlterReq.answered``) is overridden by partition state newer than the one it
    was made with (R7, R9): Kafka's ``Partition.makeLeader`` (``ReplicaManager.applyDelta``)
    sets ``partitionState`` to the committed ISR whatever was pending. Enabled once the
    leader has applied a later partition state (the request is stale and the leader holds the
    current state), has moved to another leader epoch or role, or crashed (its memory is
    gone). Its own step after the metadata's (the pending change lingers in the maximal ISR one
    step longer: a lower HW, never a higher one). The maximal ISR falls back to the ISR and the
    HW is re-evaluated."""
    k = s.kraft
    for a in k.alter_partition:
        if not a.answered:
            continue
        l = a.leader
        r = s.replicas[l]
        same = r.alive and r.leader == l and r.epoch == a.leader_epoch
        if same and (a.fresh or (not r.zk_fresh and a.answered != 2)):
            continue  # the state it was made with, or no newer one applied yet
        alters = tuple(x for x in k.alter_partition if x is not a)
        t = with_kraft(s, k._replace(alter_partition=alters))
        if same:
            t = advance_leader_hw(ctx, t, l)
        out.append(((kind, (l,)), t))
