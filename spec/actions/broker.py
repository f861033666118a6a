"""A broker's own actions: applying LeaderAndIsr requests (R10, R11), checkpointing its HW, and
crashing and restarting (R13)."""

from __future__ import annotations

from ..epoch_cache import assign, truncate_from_end, truncate_from_start
from ..state import NO_EPOCH, NO_LEADER, Faults, Replica, Request, State
from .common import (
    Ctx,
    advance_leader_hw,
    deliverable,
    live_mask,
    lost,
    partition_change,
    passed,
    set_replica,
    stale_alters,
    with_stale_versions,
)
from .controller import elr_after_shrink, fence_batch, leader_lost
from .fetch import with_epoch_cache, with_view

# NamedTuples built with tuple.__new__ (fields in their declared order): NamedTuple's own
# __new__ is a Python function, a visible cost on the checker's hot path.
_new = tuple.__new__


def _without(requests: tuple[Request, ...], q: Request) -> tuple[Request, ...]:
    """The requests once ``q`` is applied or ignored (kraft: a partition change applied
    passes those written before it, ``passed``)."""
    if q[7]:
        return passed(requests, q)
    return tuple([x for x in requests if x is not q])


def _applied(t: State, s: State, i: int, q: Request) -> State:
    """``t`` once replica ``i`` has applied request ``q`` of ``s``: the request is gone and its
    controller epoch is the highest ``i`` has heard from (R9)."""
    return _new(
        State,
        (t.replicas, t.coord, _without(s.requests, q), t.history, _seen(t.faults, i, q), t.kraft),
    )


def _apply(s: State, i: int, nr: Replica, q: Request) -> State:
    """``_applied(set_replica(s, i, nr), s, i, q)`` in one State (a hot path)."""
    reps = list(s.replicas)
    reps[i] = nr
    return _new(
        State,
        (tuple(reps), s.coord, _without(s.requests, q), s.history, _seen(s.faults, i, q), s.kraft),
    )


def _seen(f: Faults, i: int, q: Request) -> Faults:
    """The replica accepted a request of controller epoch q.ctrl_epoch (controller failover)."""
    seen = f.ctrl_seen
    if not seen or seen[i] >= q.ctrl_epoch:
        return f
    return f._replace(ctrl_seen=seen[:i] + (q.ctrl_epoch,) + seen[i + 1 :])


def broker_become_leader(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """BrokerBecomeLeader(replica, epoch): a live replica applies a LeaderAndIsr naming itself,
    with a newer epoch (R9: older ones are ignored). It stops fetching, adopts the epoch and ISR,
    caches the request's zkVersion and re-evaluates its HW (R4, R11); its HW may lag the old
    leader's. A new leader knows none of its followers' LEOs (kraft: nor their broker epochs)
    until they fetch; a re-elected one (leader already, in memory) keeps them, as it keeps the
    produce requests waiting in its purgatory: Kafka's ``Partition.makeLeader`` resets a
    follower's state only ``if (isNewLeader)`` (2.x: ``updateLogReadResult(UnknownLogReadResult)``;
    3.5+: ``Replica.resetReplicaState(isNewLeader)``, which keeps the LEO and the broker epoch
    otherwise). In the original design (R16) the new leader sets HW := its own LEO instead.
    With controller failover, a request from a controller older than one the replica has heard
    from is not applied (R9)."""
    new_leader_hw = ctx.new_leader_hw
    seen = s.faults.ctrl_seen
    for q in deliverable(ctx, s.requests):
        i = q.dest
        r = s.replicas[i]
        if q.leader != i or not r.alive or q.epoch <= r.epoch:
            continue
        if seen and q.ctrl_epoch < seen[i]:
            continue
        again = r.leader == i  # re-elected: isNewLeader false
        nr = _new(
            Replica,
            (
                r.log,
                new_leader_hw(r.log, r.hw),
                r.hw_ckpt,
                True,
                i,
                q.epoch,
                q.isr,
                q.fresh,
                r.remote_leo if again else ctx.unknown_leos,
                False,
                r.pending if again else (),
            ),
        )
        if ctx.split_fetch:
            if ctx.reassign:  # KIP-455: the replica set it leads (its followers outside it are
                # dropped, ``Partition.updateAssignmentAndIsr``: remoteReplicasMap.removeAll)
                rl = nr[8]
                nr = nr._replace(
                    remote_leo=tuple(x if q.replicas >> j & 1 else -1 for j, x in enumerate(rl))
                )
            t = set_replica(s, i, nr)
            if ctx.reassign:
                t = with_view(t, i, q.replicas)
            t = _applied(t if again else _forget_remote_epochs(t, i), s, i, q)
            if t.kraft.epoch_cache:  # the new epoch starts at the LEO, before any record
                t = with_epoch_cache(
                    t, i, assign(t.kraft.epoch_cache[i], q.epoch, len(r.log)), True
                )
        else:
            if ctx.reassign:  # (ZooKeeper era, KIP-455: the replica set it leads, as kraft's;
                # ``Partition.makeLeader`` removes the replicas no longer assigned)
                rl = nr[8]
                nr = nr._replace(
                    remote_leo=tuple(x if q.replicas >> j & 1 else -1 for j, x in enumerate(rl))
                )
                t = with_view(_apply(s, i, nr, q), i, q.replicas)
            else:
                t = _apply(s, i, nr, q)
        out.append(((kind, (i, q.epoch)), advance_leader_hw(ctx, t, i)))


def _is_partition_change(q: Request, r: Replica) -> bool:
    """kraft: ``q`` is a partition change for the leader ``r`` in its own leader epoch, newer
    than the partition state it holds: an ISR change the controller wrote without a new leader
    epoch (KAFKA-15021), ranked (``Request.pc``) among those in flight to it. Not only the
    newest: a KRaft broker reads the metadata log in order and may publish an image after each
    record or after several (MetadataLoader), so it may apply an intermediate change written
    before the current one, never one older than what it holds (``Partition.makeLeader``
    skips a partition epoch below its own). Found by the kit's random kraft schedules."""
    return q.pc > 0 and q.epoch == r.epoch and q.leader == q.dest == r.leader


def broker_apply_partition_change(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """BrokerApplyPartitionChange(replica): kraft only. The live leader replays a partition
    change in its own leader epoch (R9, KAFKA-15021): it adopts the ISR and the partition epoch
    and, the leader being unchanged, keeps everything it knows of its followers (their fetched
    LEOs and broker epochs) and its purgatory; it re-evaluates its HW, which a shrink may
    advance (R4). Its followers' fetches, fenced by the leader epoch only, go on untouched."""
    seen = s.faults.ctrl_seen
    # (the newest first: a listed step names the replica only, and a replay takes the first)
    for q in sorted([q for q in s.requests if q[7]], key=lambda q: -q[7]):
        i = q.dest
        r = s.replicas[i]
        if not r.alive or not _is_partition_change(q, r):
            continue
        if seen and q.ctrl_epoch < seen[i]:
            continue
        t = set_replica(s, i, r._replace(isr=q.isr, zk_fresh=q.fresh))
        t = _passed_pending(t, i)
        if ctx.reassign:  # KIP-455: replicas added keep the leader epoch (only a removal bumps
            # it, ``PartitionChangeBuilder.triggerLeaderEpochBumpForReplicaReassignmentIfNeeded``)
            # and reach the leader here: ``Partition.makeLeader`` with the same leader epoch
            # updates the assignment (``updateAssignmentAndIsr``) and keeps the followers' state
            t = with_view(t, i, q.replicas)
        out.append(((kind, (i,)), advance_leader_hw(ctx, _applied(t, s, i, q), i)))


def _passed_pending(s: State, i: int) -> State:
    """kraft: leader ``i`` applied a partition change newer than the one its answered pending
    ISR change was made with, which drops that pending state in Kafka (``Partition.makeLeader``
    sets a committed state whatever was pending): marked for LeaderClearPendingAlterPartition
    (``AlterReq.answered`` 2), also when what it applied is not the newest change written."""
    k = s.kraft
    for a in k.alter_partition:
        if a.leader == i and a.answered == 1:
            alters = tuple(
                sorted(x._replace(answered=2) if x is a else x for x in k.alter_partition)
            )
            return s._replace(kraft=k._replace(alter_partition=alters))
    return s


def broker_become_follower(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """BrokerBecomeFollower(replica, leader, epoch): a live replica applies a LeaderAndIsr naming
    another leader, with a newer epoch (R10). It stops taking produce (its purgatory is answered
    NotLeaderForPartition) and truncates by the protocol version's rule: to its HW at once
    (hw-truncation, then checkpoints it), or later by asking the leader (the fetcher starts in
    the truncating state, kip-101 and later). Then its fetcher follows the new leader."""
    become_follower = ctx.become_follower
    seen = s.faults.ctrl_seen
    for q in deliverable(ctx, s.requests):
        i = q.dest
        r = s.replicas[i]
        if q.leader == i or not r.alive or q.epoch <= r.epoch:
            continue
        if seen and q.ctrl_epoch < seen[i]:
            continue
        log, hw, ckpt, truncating = become_follower(r.log, r.hw, r.hw_ckpt)
        nr = _new(
            Replica,
            (
                log,
                hw,
                ckpt,
                True,
                q.leader,
                q.epoch,
                q.isr,
                False,
                ctx.unknown_leos,
                truncating,
                (),
            ),
        )
        t = _apply(s, i, nr, q)
        if ctx.reassign:
            t = with_view(t, i, 0)  # (a follower's view of the replica set is read by nothing)
        out.append(((kind, (i, q.leader, q.epoch)), t))


def broker_ignore_stale_request(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """BrokerIgnoreStaleRequest(replica, epoch): a LeaderAndIsr whose epoch is not newer than the
    replica's (kraft: unless it is a partition change in the leader's own epoch, see
    BrokerApplyPartitionChange), or (controller failover) whose controller epoch is older than one the replica has
    accepted, is dropped on receipt (R9). A newer controller epoch is remembered even so."""
    seen = s.faults.ctrl_seen
    kraft = ctx.split_fetch
    for q in deliverable(ctx, s.requests):
        r = s.replicas[q.dest]
        if not r.alive:
            continue
        if seen and q.ctrl_epoch < seen[q.dest]:
            faults = s.faults
        elif q.epoch < r.epoch or (
            q.epoch == r.epoch and not (kraft and _is_partition_change(q, r))
        ):
            faults = _seen(s.faults, q.dest, q)
        else:
            continue
        out.append(
            (
                (kind, (q.dest, q.epoch)),
                _new(
                    State,
                    (s.replicas, s.coord, lost(s.requests, q), s.history, faults, s.kraft),
                ),
            )
        )


def network_lose_leader_and_isr(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """NetworkLoseLeaderAndIsr(replica, epoch): requests in flight are lost (R8).

    ZooKeeper era (``ctx.fifo``): what Kafka's controller loses is a whole queue, never one
    request on a live connection: ``RequestSendThread.doWork`` retries a request, reconnecting,
    until it is sent, and only ``removeExistingBroker`` clears a queue (its ``messageQueue.clear``)
    (core/src/main/scala/kafka/controller/ControllerChannelManager.scala). That happens when the
    controller handles the broker's failure (KafkaController's BrokerChange event calls
    ``removeBroker`` for each dead broker before ``onBrokerFailure``; since 2.2 also for a
    bounced one) and when the controller resigns (``onControllerResignation`` ->
    ``resetContext`` -> ``ControllerChannelManager.shutdown``). So the step drops every request
    of one queue, the broker's from one controller (``epoch`` names the oldest), when the
    broker is gone to the controller (crashed, or its session expired: the handling comes at
    some moment after that) or the controller has been deposed (controller failover). A request
    already on the wire when its queue is dropped may still arrive: that is delivering it before
    the drop. A restarted broker the controller handled is sent the current state anew
    (BrokerRestart); the requests of the previous incarnation that no step dropped reach the new
    one first, in order: the bounce the controller handled late or, before KIP-380, missed.

    kraft: a request superseded by a newer one in flight to the same broker (a higher leader
    epoch, or a partition change written later in the same epoch) may be lost: the broker
    published an image after both records and skipped the older. A KRaft broker reads every
    record of the replicated metadata log, so the newest is never lost: were it, the broker
    would stay behind for ever (liveness false alarms, and a lost election would make a live,
    unfenced leader look lost to ControllerElectLeader, a reason Kafka's controller never
    elects for). A broker that crashes is sent the current state on registering."""
    reqs = s.requests
    if not reqs:
        return
    reps, coord, _, h, f, k = s
    if not ctx.fifo:
        kraft = ctx.split_fetch  # (the validator's unordered ZooKeeper-era queues: any request)
        for q in reqs:
            if not kraft or _superseded(reqs, q):
                out.append(
                    ((kind, (q[0], q[2])), _new(State, (reps, coord, lost(reqs, q), h, f, k)))
                )
        return
    live = live_mask(s)
    ctrl = f.ctrl_epoch
    for head in deliverable(ctx, reqs):
        d, ce = head[0], head[5]
        if live >> d & 1 and ce >= ctrl:
            continue  # a live broker's queue of the current controller is never lost
        rest = tuple([q for q in reqs if q[0] != d or q[5] != ce])
        out.append(((kind, (d, head[2])), _new(State, (reps, coord, rest, h, f, k))))


def _superseded(reqs: tuple[Request, ...], q: Request) -> bool:
    """kraft: another request in flight to ``q``'s broker is newer than ``q``."""
    d, e, j = q[0], q[2], q[7]
    return any(x[0] == d and (x[2] > e or (j and x[2] == e and x[7] > j)) for x in reqs)


def broker_checkpoint_hw(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """BrokerCheckpointHw(replica): the periodic HW checkpoint reaches the disk (R13). Lazy on
    purpose: the checkpoint lagging the in-memory HW is the window of the KIP-101 data loss."""
    for i, r in enumerate(s.replicas):
        if r.alive and r.hw_ckpt != r.hw:
            nr = _new(Replica, (r[0], r[1], r[1], *r[3:]))  # hw_ckpt := hw
            out.append(((kind, (i,)), set_replica(s, i, nr)))


def broker_crash(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """BrokerCrash(replica): the broker stops; everything in memory is lost (HW, its view of the
    leader, epoch and ISR, remote LEOs, purgatory), the log and the HW checkpoint survive (R8).
    Requests in flight to it stay queued until the controller handles the failure and drops
    them (NetworkLoseLeaderAndIsr); those it does not drop reach the restarted broker first, in
    order (R8, see NetworkLoseLeaderAndIsr).
    With lose-unflushed (R14) only the flushed prefix of the log survives (followers acknowledge
    before fsync, so this may drop committed records), and the HW checkpoint cannot exceed it.
    A broker whose session had expired (a zombie) is simply dead now (its restart registers
    anew). kraft (Kafka): the controller does not know yet; it learns of the crash when the
    broker's session times out (ControllerFenceBroker), and until then counts it live and, if
    it was in controlled shutdown, shutting down. kraft with ``fence_at_crash``: the
    controller fences it at once and a controlled shutdown in progress is over."""
    h = s.history
    if h.crashes >= ctx.config.crashes:
        return
    h2 = h._replace(crashes=h.crashes + 1)
    flushed = s.faults.flushed
    for i, r in enumerate(s.replicas):
        if r.alive:
            log = r.log[: flushed[i]] if flushed else r.log
            nr = _new(
                Replica,
                (
                    log,
                    0,
                    min(r.hw_ckpt, len(log)),
                    False,
                    NO_LEADER,
                    NO_EPOCH,
                    0,
                    False,
                    ctx.unknown_leos,
                    False,
                    (),
                ),
            )
            if not ctx.split_fetch and not s.faults.expired >> i & 1:
                # the common case in one State: the replica and the crash count (a hot path)
                reps = list(s.replicas)
                reps[i] = nr
                t = _new(State, (tuple(reps), s.coord, s.requests, h2, s.faults, s.kraft))
                out.append(((kind, (i,)), t))
                continue
            t = set_replica(s, i, nr)
            if ctx.split_fetch:
                t = _crash_connections(t, i)
                if t.kraft.epoch_cache:  # the restart rebuilds the cache from its file
                    cache = truncate_from_end(t.kraft.epoch_ckpt[i], len(log))
                    starts = t.faults.log_start
                    if starts:  # and from the log start (LogLoader.load, R12)
                        cache = truncate_from_start(cache, min(starts[i], len(log)))
                    t = with_epoch_cache(t, i, cache, ctx.protocol.sync_truncation_ckpt)
                k = t.kraft
                if ctx.protocol.fence_at_crash:  # fenced at once, its shutdown over
                    t = t._replace(kraft=k._replace(shutting_down=k.shutting_down & ~(1 << i)))
                    if not k.fenced >> i & 1:  # the fence's batch (fence_batch)
                        for u in fence_batch(ctx, t, i):
                            u = _new(State, (u[0], u[1], u[2], h2, u[4], u[5]))
                            out.append(((kind, (i,)), u))
                        continue
                elif _stop_kind_matters(ctx):
                    lost = bool(flushed) and flushed[i] < len(r.log)
                    for u in _clean_or_not(t, i, lost):
                        out.append(((kind, (i,)), _new(State, (u[0], u[1], u[2], h2, u[4], u[5]))))
                    continue
            f = t.faults
            if f.expired >> i & 1:  # session expiry: the crash ends the session too
                t = t._replace(faults=f._replace(expired=f.expired & ~(1 << i)))
            out.append(((kind, (i,)), _new(State, (t[0], t[1], t[2], h2, t[4], t[5]))))


def _stop_kind_matters(ctx: Ctx) -> bool:
    """kraft with ELR and the registration's shutdown handling (Kafka 4.1+): whether a stopped
    broker stopped cleanly decides what its next registration does (see broker_restart)."""
    return ctx.elr and ctx.protocol.unclean_shutdown_on_register


def _clean_or_not(t: State, i: int, lost: bool) -> list[State]:
    """kraft (Kafka): the two ways broker ``i``'s process may have ended, as its next
    registration will tell the controller (``previousBrokerEpoch``, from the clean-shutdown
    file a completed shutdown writes; -1 after a kill or a power failure). A clean exit needs
    the controller's leave: a broker in controlled shutdown, or a fenced one (the controller
    answers a fenced broker's shutdown request at once); and it flushes the log, so it loses
    nothing (``lost``: a power failure dropped unflushed records). Both are marked on bits the
    controller does not read for a broker that is already ineligible (shutting down) or
    fenced: a clean stop is the shutting-down bit kept (or set, for a fenced broker), an
    unclean one ``Faults.unclean`` (set at the registration otherwise)."""
    b = 1 << i
    k, f = t.kraft, t.faults
    if k.shutting_down & b:
        unclean = t._replace(faults=f._replace(unclean=f.unclean | b))
        return [unclean] if lost else [t, unclean]
    if k.fenced & b and not lost:
        return [t, t._replace(kraft=k._replace(shutting_down=k.shutting_down | b))]
    return [t]


def broker_restart(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """BrokerRestart(replica): the broker comes back, reads its HW checkpoint (R13) and, in the
    seeds' protocol, truncates its log to it. It registers again; unless it is itself the
    recorded (crashed) leader, which the controller must re-elect first, the controller sends it
    the current partition state.

    kip-966 with lose-unflushed: the restart follows an unclean shutdown, which the broker
    reports when it registers; the controller removes it from the ELR and, unless it is the last
    member or the recorded leader (which the controller replaces first), from the ISR, and never
    elects it cleanly until it is back in the ISR. With broker epochs (kip-966 here) nothing of
    its previous incarnation counts: requests still in flight to it are rejected (KIP-380), and
    a leader no longer counts the fetches it made (KIP-903: an ISR expansion carries the broker
    epoch of the fetch that justified it). kraft: the broker restarts only once the controller
    has fenced its previous incarnation (ControllerFenceBroker, or BrokerCrash with
    ``fence_at_crash``): Kafka refuses a registration while the old session is valid
    (``ClusterControlManager.registerBroker``: DuplicateBrokerRegistrationException), and a
    process that has not registered takes no part in the partition. It is fenced until
    BrokerRegister, which is where its new broker epoch and the partition state come from. In
    Kafka (``fence_at_crash`` off) this step is the registration itself: its batch holds the
    unclean-shutdown handling (``registerBroker`` → ``handleBrokerUncleanShutdown``: out of
    the ISR, unless the last member, and of the ELR) and the fenced registration record;
    with ``fence_at_crash`` that handling comes with BrokerRegister. A clean stop (see
    ``_clean_or_not``: Kafka 4.0.2 and 4.4.0's ``registerBroker`` compares the request's
    ``previousBrokerEpoch`` with the registered epoch and calls ``handleBrokerShutdown(id,
    isCleanShutdown)``) is handled as a shutdown: out of the ISR only (the fence has done it),
    its ELR seat kept and no bar on its election; only an unclean one takes it out of the ELR
    and bars it (with ELR on; without ELR the two are the same)."""
    kraft = ctx.split_fetch
    unclean_restart = ctx.elr and ctx.config.lose_unflushed and not kraft
    # kraft (Kafka): the registration's batch handles an unclean shutdown (see broker_register)
    unclean_at_restart = kraft and not ctx.protocol.fence_at_crash and _unclean_register(ctx)
    fenced = s.kraft.fenced
    fence = ctx.fence_incarnations
    on_restart = ctx.on_restart
    retention = bool(s.faults.log_start)  # (--retention; kraft: or --delete-records)
    for i, r in enumerate(s.replicas):
        if r.alive or (kraft and not fenced >> i & 1):
            continue  # (kraft: a restart waits for the fence of the previous incarnation)
        ckpt = r.hw_ckpt
        log = on_restart(r.log, ckpt)
        hw = ckpt
        if retention:  # Kafka keeps the HW at or above the log start offset (its own checkpoint
            # file): a lazy HW checkpoint below what retention deleted comes back at the start
            start = s.faults.log_start[i]
            if start > hw:
                hw = min(start, len(log))
        nr = _new(
            Replica,
            (log, hw, ckpt, True, NO_LEADER, NO_EPOCH, 0, False, ctx.unknown_leos, False, ()),
        )
        t = set_replica(s, i, nr)
        if fence:
            t = _fence_previous_incarnation(t, i, forget_fetches=not kraft)
        if kraft:  # the unfencing is its own step (BrokerRegister)
            k, f, b = t.kraft, t.faults, 1 << i
            clean = k.shutting_down & b and not f.unclean & b  # (see _clean_or_not)
            if k.shutting_down & b:  # a new registration: not in controlled shutdown
                t = t._replace(kraft=k._replace(shutting_down=k.shutting_down & ~b))
            if unclean_at_restart:  # handleBrokerShutdown(id, isCleanShutdown)
                t = _register_shutdown(ctx, t, i, clean)
            out.append(((kind, (i,)), t))
            continue
        if fence:  # KIP-380: the controller sees the bounce (a new broker epoch)
            c = t.coord
            # (a lost leader, dead or itself restarted, is elected first: ControllerElectLeader;
            # a partition change naming it would make it lead without an election)
            if (
                c.isr >> i & 1
                and c.leader != i
                and c.isr != 1 << i
                and c.leader >= 0
                and not leader_lost(t)
            ):
                if c.epoch >= ctx.config.epochs:
                    continue  # (the bound: the bounce's ISR removal takes a leader epoch)
                t = _bounce_handled(ctx, t, i)
        out.append(((kind, (i,)), _registered(ctx, t, i, unclean_restart)))


def _bounce_handled(ctx: Ctx, t: State, i: int) -> State:
    """KIP-380 (Kafka 2.2+, ZooKeeper controller): a broker that re-registers with a new broker
    epoch (its znode's czxid) while the controller still counts it live is a bounce, handled as
    a failure and then a startup: KafkaController's BrokerChange event calls
    ``onBrokerFailure(bouncedBrokerIds)`` with the broker out of the live set, so a follower
    still in the ISR is removed from it (``ReplicaStateMachine`` OfflineReplica,
    ``removeReplicasFromIsr``: a controller write with leader epoch + 1, sent to the live
    replicas), and then ``onBrokerStartup`` sends it the new state (``_registered``). Before
    KIP-380 the same registration was a missed bounce (``startup_needs_failure``). A bounced
    leader is left to ControllerElectLeader, which does not pick it while another candidate
    exists (``elections``)."""
    c = t.coord
    new_isr = c.isr & ~(1 << i)
    if ctx.elr:
        t = elr_after_shrink(ctx, t, c.isr, new_isr)
    return partition_change(ctx, t, new_isr, live_mask(t))


def broker_register(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """BrokerRegister(replica): kraft only (KIP-841, KIP-903, KIP-966). A restarted broker,
    fenced, registers with the controller: it gets a new broker epoch (its previous
    incarnation's fetches and AlterPartition additions no longer count, KIP-903) and is unfenced
    (heartbeats resume; the catch-up of the metadata log before unfencing is folded into this
    step). With lose-unflushed it reports its unclean shutdown (kip-966: out of the ELR, and out
    of the ISR unless it is the last member or the recorded leader, a partition change the
    leader is told of). Unless it is the recorded (lost) leader, which the controller must elect
    first, it is sent the current partition state. In Kafka (``fence_at_crash`` off) the
    registration record and the unclean-shutdown handling came with BrokerRestart: this step is
    the unfencing (``handleBrokerUnfenced``) once the broker has caught up with the metadata log."""
    unclean = ctx.protocol.fence_at_crash and _unclean_register(ctx)
    k0 = s.kraft
    for i, r in enumerate(s.replicas):
        if not (r.alive and k0.fenced >> i & 1 and r.epoch == NO_EPOCH and r.leader == NO_LEADER):
            continue
        epochs = k0.broker_epoch
        k = k0._replace(
            broker_epoch=epochs[:i] + (epochs[i] + 1,) + epochs[i + 1 :],
            fenced=k0.fenced & ~(1 << i),
        )
        out.append(((kind, (i,)), _registered(ctx, s._replace(kraft=k), i, unclean)))


def _unclean_register(ctx: Ctx) -> bool:
    """kraft: whether the controller handles a new incarnation's registration as an unclean
    shutdown: always at metadata version 4.0-IV1+ (``unclean_shutdown_on_register``), else
    (kip-966's rule) when the broker reports one, after a power failure with ELR on."""
    return (ctx.elr and ctx.config.lose_unflushed) or ctx.protocol.unclean_shutdown_on_register


def _registered(ctx: Ctx, t: State, i: int, unclean: bool) -> State:
    """What the controller does when broker ``i`` registers (BrokerRestart; kraft's
    BrokerRegister): record an unclean shutdown (kip-966) if ``unclean``, and, unless ``i`` is the
    recorded (lost) leader, which must be elected first, send it the current partition state;
    with ``startup_needs_failure`` (a ZooKeeper controller before KIP-380) not to a follower still
    in the ISR, whose bounce the controller missed (ProtocolVersion.startup_needs_failure)."""
    if unclean:
        t = _register_shutdown(ctx, t, i)
    c = t.coord
    rs = t.kraft.assigned  # (KIP-455: a broker that is no replica is sent no partition state)
    if (
        c.leader != i
        and not (ctx.protocol.startup_needs_failure and c.isr >> i & 1)
        and (not rs or rs >> i & 1)
    ):
        # (kraft with leader -1 recorded, ``Faults.lead_renewed``: told there is no leader)
        leader = (
            NO_LEADER if (ctx.split_fetch or ctx.reassign) and t.faults.lead_renewed else c.leader
        )
        # (ZooKeeper era with --reassignments: leader -1 after KAFKA-14808's stop of the leader)
        req = Request(i, leader, c.epoch, c.isr, True, t.faults.ctrl_epoch, t.kraft.assigned)
        if req not in t.requests:
            t = t._replace(requests=tuple(sorted((*t.requests, req))))
    return t


def _fence_previous_incarnation(s: State, i: int, forget_fetches: bool = True) -> State:
    """KIP-380: requests in flight to the previous incarnation are rejected. ``forget_fetches``:
    the leaders stop counting its fetches at once (kip-966's atomic stand-in for KIP-903); kraft
    instead carries broker epochs in fetches and checks them at the ISR expansion."""
    if any(q.dest == i for q in s.requests):
        s = s._replace(requests=tuple(q for q in s.requests if q.dest != i))
    if not forget_fetches:
        return s
    reps = s.replicas
    new = tuple(
        r._replace(remote_leo=r.remote_leo[:i] + (-1,) + r.remote_leo[i + 1 :])
        if r.remote_leo[i] != -1
        else r
        for r in reps
    )
    return s if new == reps else s._replace(replicas=new)


def _forget_remote_epochs(s: State, i: int) -> State:
    """kraft: a new leader (or a crashed one) knows no follower's broker epoch yet, as it knows
    no remote LEO (Replica.remote_leo is reset beside it)."""
    k = s.kraft
    row = k.remote_epoch[i]
    if all(x == -1 for x in row):
        return s
    unknown = (-1,) * len(row)
    return s._replace(
        kraft=k._replace(remote_epoch=k.remote_epoch[:i] + (unknown,) + k.remote_epoch[i + 1 :])
    )


def _crash_connections(s: State, i: int) -> State:
    """kraft: a crash closes the broker's connections: fetches in flight *to* it and answers in
    flight *to* it are gone. Its own fetches in flight to a leader stay in that leader's socket
    queue (KAFKA-15221), and its memory of the followers' broker epochs is lost."""
    s = _forget_remote_epochs(s, i)
    k = s.kraft
    reqs = tuple(q for q in k.fetch_requests if q.leader != i)
    resps = tuple(p for p in k.fetch_responses if p.follower != i)
    if len(reqs) == len(k.fetch_requests) and len(resps) == len(k.fetch_responses):
        return s
    return s._replace(kraft=k._replace(fetch_requests=reqs, fetch_responses=resps))


def _register_shutdown(ctx: Ctx, s: State, i: int, clean: bool = False) -> State:
    """The controller's answer to a new incarnation's registration (BrokerRestart; kraft's
    BrokerRegister). Unclean (kip-966, ``handleBrokerUncleanShutdown``): barred, out of the ELR,
    and out of the ISR unless the last member or the recorded leader. Clean (kraft,
    ``handleBrokerShutdown`` with ``isCleanShutdown``): only the ISR removal, ELR membership
    kept and the removed replica eligible for it, no bar (the fence's batch has normally done it
    already). kraft: the ISR shrink is a partition change the leader is told of
    (``partition_change``, KAFKA-15021); before, the write reached no broker (the leader learnt
    it when its next ISR write failed)."""
    b = 1 << i
    if not clean and ctx.elr:  # (kraft without ELR: out of the ISR unless the last, no bar)
        f = s.faults
        s = s._replace(faults=f._replace(unclean=f.unclean | b, elr=f.elr & ~b))
    c = s.coord
    if not (c.isr & b and c.isr != b and c.leader != i):
        return s
    if ctx.split_fetch:
        t = elr_after_shrink(ctx, s, c.isr, c.isr & ~b) if clean and ctx.elr else s
        return partition_change(ctx, t, c.isr & ~b, live_mask(t))
    reps, reqs = with_stale_versions(s, writer=-1)
    return State(reps, c._replace(isr=c.isr & ~b), reqs, s.history, s.faults, stale_alters(s.kraft))


def broker_flush(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """BrokerFlush(replica): the log is fsynced up to its end (R14, lose-unflushed only): the
    prefix a crash keeps becomes the whole log. (Kafka flushes on segment roll, on
    log.flush.interval.* or from the OS; any of them may happen between two steps.)"""
    flushed = s.faults.flushed
    for i, r in enumerate(s.replicas):
        if r.alive and flushed[i] < len(r.log):
            f = s.faults._replace(flushed=flushed[:i] + (len(r.log),) + flushed[i + 1 :])
            out.append(((kind, (i,)), s._replace(faults=f)))
