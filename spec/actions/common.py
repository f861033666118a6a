"""What every action module shares: the context of one model, and state-update helpers that
several actors use (the leader's HW rule, the controller's versioned write)."""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass

from ..config import Config
from ..log import epoch_start
from ..producer_state import answer_waiting
from ..protocols import ProtocolVersion, get_protocol
from ..state import (
    NO_EPOCH,
    NO_FAULTS,
    NO_KRAFT,
    NO_LEADER,
    NO_PRODUCER,
    Coord,
    Faults,
    History,
    Kraft,
    Log,
    Replica,
    Request,
    State,
    initial_kraft,
    initial_zk_reassign,
)


@dataclass(frozen=True)
class Ctx:
    """One model's constants, computed once from its Config, and the protocol version's hooks
    bound once (a bound method read from here costs what the flag test it replaced did)."""

    config: Config
    protocol: ProtocolVersion
    n: int
    full: int  # bitmask of every assigned replica (AR)
    unknown_leos: tuple[int, ...]
    acks_all: bool
    quorum: bool = False  # majority-quorum: commit and election by majority (R17)
    majority: int = 0  # the size of a majority of the assigned replicas
    elr: bool = False  # kip-966
    hw_needs_min_isr: bool = False  # kip-966: the HW advances only with |ISR| >= min ISR
    clamp: bool = False  # a per-replica offset of a fault mode must follow truncations
    initial_faults: Faults = NO_FAULTS
    # the version's hooks (spec.protocols.base.ProtocolVersion), bound
    become_follower: Callable[[Log, int, int], tuple[Log, int, int, bool]] | None = None
    on_restart: Callable[[Log, int], Log] | None = None
    truncation_offset: Callable[[Log, int, Log, int], int] | None = None
    fetch_fenced: Callable[[int, int], bool] | None = None
    isr_join_floor: Callable[[Log, int, int], int] | None = None
    new_leader_hw: Callable[[Log, int], int] | None = None
    # None for the base rule (the minimum, computed inline: it runs on every fetch)
    high_watermark: Callable[[int, tuple[int, ...]], int] | None = None
    # None for the base election (every candidate; see pick_leaders)
    choose_leader: Callable[[int, tuple[Log, ...], str], int] | None = None
    on_divergence: bool = False  # kip-320-first-try: no truncation phase (LOG_TRUNCATION)
    fence_incarnations: bool = False  # KIP-380 broker epochs (kip-966)
    split_fetch: bool = False  # kraft: the fetch as request and response (spec.state.Kraft)
    fifo: bool = (
        False  # R8: LeaderAndIsr in order per (broker, controller); every version but kraft
    )
    initial_kraft: Kraft = NO_KRAFT
    reassign: bool = False  # --reassignments: the replica set moves (KIP-455; the ZooKeeper-era
    # versions' reassignment too, spec/actions/zk_reassignment.py)

    @staticmethod
    def of(config: Config, protocol: ProtocolVersion | None = None) -> Ctx:
        n = config.replicas
        proto = get_protocol(config.protocol) if protocol is None else protocol
        faults = NO_FAULTS._replace(
            flushed=(0,) * n if config.lose_unflushed else (),
            log_start=(0,) * n if config.retention or config.delete_records else (),
            # (kraft: constant, a failover bumps no controller epoch: brokers read the metadata
            # log and fence nothing by it; kept so that every state's JSON has the same keys)
            ctrl_seen=(1,) * n if config.controller_failovers else (),
            producer=NO_PRODUCER if config.idempotence else (),
            producer_state_start=(0,) * n
            if config.idempotence and (config.retention or config.delete_records)
            else (),
        )
        if faults == NO_FAULTS:
            faults = NO_FAULTS  # the very constant: TypeOK and permute skip it by identity
        return Ctx(
            config=config,
            protocol=proto,
            n=n,
            full=(1 << n) - 1,
            unknown_leos=(-1,) * n,
            acks_all=config.acks == "all",
            quorum=proto.majority_quorum,
            majority=n // 2 + 1,
            elr=proto.eligible_leader_replicas,
            hw_needs_min_isr=proto.hw_needs_min_isr,
            clamp=config.lose_unflushed or config.retention or config.delete_records > 0,
            initial_faults=faults,
            become_follower=proto.become_follower,
            on_restart=proto.on_restart,
            truncation_offset=proto.truncation_offset,
            fetch_fenced=_fetch_fenced(proto),
            isr_join_floor=_isr_join_floor(proto),
            new_leader_hw=proto.new_leader_hw,
            high_watermark=(
                None
                if type(proto).high_watermark is ProtocolVersion.high_watermark
                else proto.high_watermark
            ),
            choose_leader=(
                None
                if type(proto).choose_leader is ProtocolVersion.choose_leader
                else proto.choose_leader
            ),
            on_divergence=proto.truncate_on_divergence,
            fence_incarnations=proto.broker_epoch_fencing,
            split_fetch=proto.split_fetch,
            fifo=not proto.split_fetch,
            initial_kraft=(
                initial_kraft(
                    n,
                    getattr(proto, "epoch_cache", False),
                    spare=proto.split_fetch and config.reassignments > 0,
                )
                if proto.split_fetch
                else initial_zk_reassign(n)
                if config.reassignments > 0 and not proto.majority_quorum
                else NO_KRAFT
            ),
            # (the ZooKeeper-era versions too: spec/actions/zk_reassignment.py)
            reassign=config.reassignments > 0 and not proto.majority_quorum,
        )


def pick_leaders(ctx: Ctx, s: State, candidates: int, election: str) -> int:
    """The candidates of an election that the version's ``choose_leader`` keeps (R9): all of
    them unless the version overrides the hook, and never one outside them."""
    if ctx.choose_leader is None or not candidates:
        return candidates
    return ctx.choose_leader(candidates, tuple(r.log for r in s.replicas), election) & candidates


def _never(leader_epoch: int, follower_epoch: int) -> bool:
    return False


def _fetch_fenced(proto: ProtocolVersion) -> Callable[[int, int], bool]:
    """The version's fetch_fenced, bound. The base rule (a flag) becomes a C comparison or a
    constant: it runs for every follower in every explored state (FollowerFetch)."""
    if type(proto).fetch_fenced is ProtocolVersion.fetch_fenced:
        return operator.ne if proto.fenced_fetch else _never
    return proto.fetch_fenced


def _hw_floor(log: Log, epoch: int, hw: int) -> int:
    return hw


def _epoch_start_floor(log: Log, epoch: int, hw: int) -> int:
    s = epoch_start(log, epoch)
    return s if s > hw else hw


def _isr_join_floor(proto: ProtocolVersion) -> Callable[[Log, int, int], int]:
    """The version's isr_join_floor, bound; the base rule (a flag) as a plain function: it runs
    for every leader in every explored state (LeaderExpandIsr)."""
    if type(proto).isr_join_floor is ProtocolVersion.isr_join_floor:
        return _epoch_start_floor if proto.isr_join_needs_epoch_start else _hw_floor
    return proto.isr_join_floor


def min_isr(ctx: Ctx, s: State) -> int:
    """min.insync.replicas now (R6): the configured value, or the operator's last change
    (OperatorSetMinIsr, kraft with --min-isr-changes: ``Kraft.min_isr``, 0 until a change).
    One value for the controller and the brokers: a change reaches every broker in the step
    the controller records it (Kafka's brokers replay the ConfigRecord each at its own time;
    not modelled)."""
    return s.kraft.min_isr or ctx.config.min_isr


def follower_hw(log_start: tuple[int, ...], f: int, leo: int, leader_hw: int) -> int:
    """A follower's HW from its leader's (R4): at most its own LEO and, with retention, at least
    its log start offset (Kafka's ``UnifiedLog.updateHighWatermark`` bounds it both ways; a new
    leader's HW may lag what retention deleted on the follower)."""
    hw = leo if leader_hw > leo else leader_hw
    if log_start and hw < log_start[f]:
        return log_start[f]
    return hw


def raise_log_start(s: State, i: int, start: int) -> State:
    """``s`` with replica ``i``'s log start offset raised to ``start`` (R12: retention,
    DeleteRecords, a follower taking up its leader's, a reset to it; kraft). As Kafka's
    ``UnifiedLog.updateLogStartOffset``, the recovery point follows it (with --lose-unflushed:
    the flushed prefix, so a crash never brings back less than the log start); the HW, which
    ``maybeIncrementLogStartOffset`` never lets it pass, is the caller's."""
    f = s.faults
    starts = f.log_start
    if starts[i] >= start:
        return s
    flushed = f.flushed
    if flushed and flushed[i] < start:
        flushed = flushed[:i] + (start,) + flushed[i + 1 :]
    f = f._replace(log_start=starts[:i] + (start,) + starts[i + 1 :], flushed=flushed)
    return _new(State, (s.replicas, s.coord, s.requests, s.history, f, s.kraft))


def set_replica(s: State, i: int, r: Replica) -> State:
    # a list and tuple.__new__: about 40% cheaper than slicing and NamedTuple's __new__ (it runs
    # about twice per explored state)
    reps = list(s.replicas)
    reps[i] = r
    return _new(State, (tuple(reps), s.coord, s.requests, s.history, s.faults, s.kraft))


_new = tuple.__new__


def clamp_offsets(s: State) -> State:
    """After a step, a fault mode's per-replica offsets that a truncation left past the log end
    follow it down: the flushed prefix (R14), the log start offset (R12) and, with
    --idempotence, where the producer state is rebuilt from. No step both
    truncates a log and appends to it, so clamping after the step is exact."""
    f = s.faults
    flushed = f.flushed
    start = f.log_start
    changed = False
    reps = s.replicas
    if flushed:
        new = tuple(min(x, len(reps[i].log)) for i, x in enumerate(flushed))
        if new != flushed:
            flushed = new
            changed = True
    if start:
        new = tuple(min(x, len(reps[i].log)) for i, x in enumerate(start))
        if new != start:
            start = new
            changed = True
    pstart = f.producer_state_start  # --idempotence: where a producer state rebuild starts
    if pstart:
        new = tuple(min(x, len(reps[i].log)) for i, x in enumerate(pstart))
        if new != pstart:
            pstart = new
            changed = True
    if not changed:
        return s
    return s._replace(
        faults=f._replace(flushed=flushed, log_start=start, producer_state_start=pstart)
    )


def forget_producers(s: State, i: int, at: int) -> State:
    """--idempotence: replica ``i`` keeps no producer state below offset ``at`` (a follower's
    log emptied and started at its leader's log start: ``UnifiedLog.truncateFullyAndStartAt``
    clears the producer state and deletes every snapshot, ``ProducerStateManager
    .truncateFullyAndStartAt``; R6, R12). Unchanged without idempotence."""
    f = s.faults
    ps = f.producer_state_start
    if not ps:
        return s
    return s._replace(faults=f._replace(producer_state_start=ps[:i] + (at,) + ps[i + 1 :]))


def replica_set(ctx: Ctx, s: State) -> int:
    """The partition's replica set as the controller has it (KIP-455, ``Kraft.assigned``):
    every broker when --reassignments is off."""
    return s.kraft.assigned or ctx.full


def alive_mask(s: State) -> int:
    m = 0
    for i, r in enumerate(s.replicas):
        if r.alive:
            m |= 1 << i
    return m


def live_mask(s: State) -> int:
    """The brokers the controller counts as live (R9, R18): alive and holding a coordination
    session (/brokers/ids/[id]). Without session expiry, exactly the alive ones. kraft: alive
    and not fenced (KIP-841: registered and heartbeating); a broker in controlled shutdown is
    live but not eligible (``ineligible``). kraft counts a crashed broker live until it is
    fenced (the controller learns of a crash at the session timeout, ControllerFenceBroker);
    with ``fence_at_crash`` a crashed broker is fenced at once, so this is the same set."""
    k = s.kraft
    if k.broker_epoch:  # kraft: every broker is registered; the unfenced ones are live
        return ((1 << len(s.replicas)) - 1) & ~k.fenced & ~s.faults.expired
    return alive_mask(s) & ~s.faults.expired


def ineligible(s: State) -> int:
    """kraft: the live brokers the controller will not put in an ISR nor elect: those in
    controlled shutdown (KIP-841). 0 in every other version."""
    return s.kraft.shutting_down


def is_true_leader(s: State, i: int) -> bool:
    """The coordination's leader, alive, having applied the coordination's current epoch."""
    c = s.coord
    r = s.replicas[i]
    return c.leader == i and r.alive and r.leader == i and r.epoch == c.epoch


def with_stale_versions(s: State, writer: int) -> tuple[tuple[Replica, ...], tuple[Request, ...]]:
    """Every cached zkVersion but the writer's becomes stale (a write bumped the version).
    (Fields by position, zk_fresh 7 and Request.fresh 4, and tuple.__new__: a hot path.)"""
    reps = []
    i = 0
    for r in s.replicas:
        if r[7] and i != writer:
            r = _new(Replica, (r[0], r[1], r[2], r[3], r[4], r[5], r[6], False, r[8], r[9], r[10]))
        reps.append(r)
        i += 1  # noqa: SIM113 - cheaper than enumerate on this hot path
    reqs = tuple([_new(Request, (*q[:4], False, *q[5:])) if q[4] else q for q in s.requests])
    return tuple(reps), reqs


def queue_key(q: Request) -> tuple:
    """Where ``q`` stands in its queue (R8): the queues are per (destination, controller epoch)
    and this key orders each one as the controller sent it. One controller sends a broker
    leader epochs in non-decreasing order (every ZooKeeper-era controller write bumps the leader
    epoch; a registration or a session renewal re-sends the current epoch; a new controller has a
    queue of its own). At one leader epoch, a request made stale by a write (``fresh`` False) was
    sent before that write, so before any fresh one. Two stale ones at one epoch come only from
    a controller write or a registration and a later registration of the same broker, with
    leader ISR writes between: they name the same leader (not the broker itself: a broker that
    is the recorded leader is sent nothing when it registers) and differ in the ISR alone, which
    a follower does not read. The key does not order them (either may come first: an order by
    their content would not survive the renaming of replicas that symmetry reduction applies,
    spec/symmetry.py ``permute``)."""
    return (q[2], q[4])


def deliverable(ctx: Ctx, requests: tuple[Request, ...]) -> tuple[Request, ...]:
    """The LeaderAndIsr requests a broker may receive now (R8, R9): in every ZooKeeper-era
    version only the oldest in flight to each broker from each controller (``queue_key``),
    since Kafka's controller keeps one FIFO queue and one RequestSendThread per broker, one
    request in flight, retried on the same connection until sent (core/src/main/scala/kafka/
    controller/ControllerChannelManager.scala: ``sendRequest`` puts on the broker's
    ``messageQueue``, ``RequestSendThread.doWork`` takes one and loops until
    ``isSendSuccessful``). Requests of two controllers (a failover) travel on two connections
    and interleave freely. kraft (``fifo`` False): every request, in any order. A KRaft broker
    reads the metadata log in order but publishes what it has read as one image (MetadataLoader,
    ReplicaManager.applyDelta: each partition's latest registration), so it may skip to a later
    state; applying a newer request first and ignoring the older one as stale (the epoch checks
    of BrokerBecome*, ``fresh`` for a partition change) is that skip. No older state is acted on
    after a newer one (traces/counterexample/reorder.py, ``coalescing``)."""
    if len(requests) < 2 or not ctx.fifo:
        return requests
    first: dict[tuple[int, int], tuple] = {}
    for q in requests:
        key = (q[0], q[5])
        k = (q[2], q[4])
        h = first.get(key)
        if h is None or k < h:
            first[key] = k
    out = tuple([q for q in requests if (q[2], q[4]) == first[(q[0], q[5])]])
    return requests if len(out) == len(requests) else out


def controller_write(s: State, coord: Coord, send_to: int) -> State:
    """The controller's versioned write of the partition state (R9, R18), then a LeaderAndIsr
    request with the new state to each replica in the ``send_to`` bitmask."""
    reps, reqs = with_stale_versions(s, writer=-1)
    rs = s.kraft.assigned  # (KIP-455: the replica set the request's partition state has)
    if rs:  # only a replica acts on the partition's state (``ReplicaManager.applyDelta``:
        # ``TopicsDelta.localChanges`` are the partitions this broker is a replica of)
        send_to &= rs
    new = [
        Request(d, coord.leader, coord.epoch, coord.isr, True, s.faults.ctrl_epoch, rs)
        for d in range(len(reps))
        if send_to >> d & 1
    ]
    old = s.coord
    if coord.epoch == old.epoch and coord.leader == old.leader and send_to >> coord.leader & 1:
        # kraft: a partition change to the leader in its own leader epoch, ranked after those
        # still in flight to it (``Request.pc``)
        d = coord.leader
        rank = 1 + max([q[7] for q in reqs if q[0] == d and q[2] == coord.epoch], default=0)
        new = [q._replace(pc=rank) if q.dest == d else q for q in new]
    return _new(
        State,
        (
            reps,
            coord,
            tuple(sorted(set(reqs).union(new))),
            s.history,
            s.faults,
            stale_alters(s.kraft),
        ),
    )


def passed(requests: tuple[Request, ...], q: Request) -> tuple[Request, ...]:
    """kraft: the requests in flight once ``q`` is no longer (applied or lost), with the ranks
    of the partition changes to ``q``'s broker in ``q``'s leader epoch kept dense
    (``Request.pc``). When ``q`` was applied and was one of them, those written before it are
    passed (rank 0: the broker read past them; only BrokerIgnoreStaleRequest takes them now)
    and those after it rank from 1. When ``q`` was lost, only the ranks above it close up."""
    d, e, j = q[0], q[2], q[7]
    out = []
    for x in requests:
        if x is q:
            continue
        k = x[7]
        if k and x[0] == d and x[2] == e and j:
            x = _new(Request, (*x[:7], 0 if k < j else k - j))
        out.append(x)
    return tuple(out)


def lost(requests: tuple[Request, ...], q: Request) -> tuple[Request, ...]:
    """kraft: the requests in flight once ``q``, superseded, is lost (``passed``'s dense ranks:
    the partition changes written after ``q`` move down by one)."""
    d, e, j = q[0], q[2], q[7]
    out = []
    for x in requests:
        if x is q:
            continue
        k = x[7]
        if j and k > j and x[0] == d and x[2] == e:
            x = _new(Request, (*x[:7], k - 1))
        out.append(x)
    return tuple(out)


def partition_change(ctx: Ctx, s: State, new_isr: int, live: int) -> State:
    """The controller's write of an ISR change that keeps the leader (R9, R18). Before KRaft it
    bumps the leader epoch (the ZooKeeper controller's rule) and goes to every live replica. In
    kraft it bumps only the partition epoch (KAFKA-15021): the leader epoch, which fences
    fetches, stays, so followers fetch on across it, and only the leader is told (it applies it
    with BrokerApplyPartitionChange, keeping its followers' fetch state). Followers replay the
    record too in Kafka, but a follower's ISR view is read by nothing here, so it is not sent to
    them (fewer interleavings, no behaviour lost). The partition epoch is abstracted as the
    cached-version bit (Coord's docstring): every write makes every cached copy stale."""
    c = s.coord
    if not ctx.split_fetch:
        return controller_write(s, Coord(c.leader, c.epoch + 1, new_isr), live)
    # (with leader -1 recorded, ``Faults.lead_renewed``, there is no leader to tell; nor when
    # the recorded leader is a new incarnation, restarted since, that was never elected: it is
    # lost (``leader_lost``) and must be elected first, at a new leader epoch. A partition
    # change in the old epoch would hand it that epoch: without ``atomic_fence`` its fence
    # wrote no leader -1, but in Kafka its fence's batch did, and its unfencing elects it with
    # another new epoch (``handleBrokerUnfenced``); found by the kit's random kraft schedules,
    # docs/conformance.md)
    tell = 0 if s.faults.lead_renewed or _renewed_unelected(s) else live & (1 << c.leader)
    return controller_write(s, Coord(c.leader, c.epoch, new_isr), tell)


def _renewed_unelected(s: State) -> bool:
    """kraft: the recorded leader is a live incarnation restarted since it was elected, which
    has applied nothing yet (no leader, no epoch: a restart's state) and has no request of the
    recorded epoch in flight to it (as ``leader_lost``). (Not merely a leader that has not yet
    applied its election: a batch that elects and changes the ISR, such as a controlled
    shutdown's, composes its writes in turn.)"""
    c = s.coord
    r = s.replicas[c.leader]
    if not r.alive or r.epoch != NO_EPOCH or r.leader != NO_LEADER:
        return False
    return not any(q.dest == c.leader and q.epoch == c.epoch for q in s.requests)


def stale_alters(k: Kraft) -> Kraft:
    """kraft: a write of the partition state makes every AlterPartition in flight stale (its
    partition epoch is no longer the current one), and a deposed controller that still
    answers (``Kraft.deposed``) is behind from now on. NO_KRAFT has none."""
    alters = k.alter_partition
    if alters and any(a.fresh for a in alters):
        k = k._replace(alter_partition=tuple(a._replace(fresh=False) for a in alters))
    dep = k.deposed
    if dep and not dep[1]:
        k = k._replace(deposed=(dep[0], 1))
    return k


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
    the race that rule guards against (HW moving during the ISR write) cannot happen.

    kraft: while the leader's AlterPartition is in flight the HW counts the *maximal* ISR, its
    ISR with the proposed one (KIP-497's rule, Vanlightly's MaximalIsr); ``maximal_isr=False``
    counts the proposed ISR alone. min.insync.replicas is checked on the ISR itself for the HW
    (``Partition.maybeIncrementLeaderHW``: ``isUnderMinIsr`` reads the committed ISR) and on the
    maximal ISR for the acks=all answer (``checkEnoughReplicasReachOffset``)."""
    r = s.replicas[leader]
    hw = r.hw
    isr = r.isr
    counted = isr
    if ctx.split_fetch:
        for a in s.kraft.alter_partition:
            if a.leader == leader:
                counted = isr | a.new_isr if ctx.protocol.maximal_isr else a.new_isr
    if ctx.reassign and not ctx.split_fetch:  # (ZooKeeper era: ISR members outside the
        # replica set it applied are not counted, ``maybeIncrementLeaderHW`` reads the assigned
        # replicas: KAFKA-6638's state, after phase B's first request)
        counted &= s.kraft.views[leader]
    if ctx.quorum:
        new_hw = quorum_hw(ctx, r, leader)
    else:
        if ctx.hw_needs_min_isr and isr.bit_count() < min_isr(ctx, s):
            return s
        remote = r.remote_leo
        if ctx.high_watermark is not None:  # a version's own commit rule
            new_hw = ctx.high_watermark(
                len(r.log),
                tuple(remote[j] for j in range(ctx.n) if j != leader and counted >> j & 1),
            )
        else:
            new_hw = len(r.log)
            for j in range(ctx.n):
                if j != leader and counted >> j & 1:
                    rl = remote[j]
                    if rl < new_hw:
                        new_hw = rl
    if new_hw <= hw:
        return s
    history = s.history
    faults = s.faults
    pending = r.pending
    if pending:
        done = [o for o in pending if o < new_hw]
        if done:
            pending = tuple(o for o in pending if o >= new_hw)
            log = r.log
            # acks=all: min ISR against the ISR; kraft with the maximal ISR, against that
            # (Kafka's ``Partition.checkEnoughReplicasReachOffset``: ``curMaximalIsr.size``)
            acks_isr = counted if ctx.split_fetch and ctx.protocol.maximal_isr else isr
            ok = acks_isr.bit_count() >= min_isr(ctx, s)
            if ok:
                history = history._replace(
                    acked=sorted_add(history.acked, [(o, log[o][0]) for o in done])
                )
            else:
                history = history._replace(
                    refused=sorted_add(history.refused, [log[o][0] for o in done])
                )
            if faults.producer:  # --idempotence: the producer's batches waiting there
                faults = faults._replace(producer=answer_waiting(faults.producer, leader, done, ok))
    r = _new(Replica, (r[0], new_hw, r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], pending))
    reps = s.replicas
    return _new(
        State,
        (
            reps[:leader] + (r,) + reps[leader + 1 :],
            s.coord,
            s.requests,
            history,
            faults,
            s.kraft,
        ),
    )


def quorum_hw(ctx: Ctx, r: Replica, leader: int) -> int:
    """majority-quorum (R17): the largest offset a majority of all assigned replicas holds (the
    leader's LEO and the followers' fetched LEOs), advanced only onto an entry of the leader's own
    epoch (Raft's rule: earlier entries are committed with it, never by counting alone)."""
    leos = sorted(
        (len(r.log) if j == leader else r.remote_leo[j] for j in range(ctx.n)), reverse=True
    )
    hw = leos[ctx.majority - 1]
    if hw <= 0 or r.log[hw - 1][1] != r.epoch:
        return r.hw
    return hw


__all__ = ["Coord", "Ctx", "History", "Replica", "Request", "State"]
