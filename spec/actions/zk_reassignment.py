"""Partition reassignment in the ZooKeeper-era versions (issue 28 item 1, the ZooKeeper side),
behind --reassignments N: the operator's new target replica set, the ZooKeeper controller's
completion once the target is in the ISR, and a removed broker deleting its replica (R1, R7,
R9, R11). The kraft versions have spec/actions/reassignment.py.

Kafka: ``core/src/main/scala/kafka/controller/KafkaController.scala`` (apache/kafka trunk
2024-10, the ZooKeeper controller, the same steps since 2.4.0's KIP-455 rewrite; 0.8 to 2.3 had
the same writes without addingReplicas/removingReplicas): ``onPartitionReassignment`` with
RS = the replica set, ORS = the original replicas, TRS = the target, AR = TRS - ORS (adding),
RR = ORS - TRS (removing):

* Phase U (``updateCurrentReassignment``): U1/U2 write RS = ORS + TRS, AR, RR to ZooKeeper and
  memory (``ReplicaAssignment.reassignTo``: ORS is the current replicas less the current adding
  ones, so adding replicas of a reassignment in progress that the new target drops are
  *unneeded*); U3 stops the unneeded ones (``stopRemovedReplicasOfReassignedPartition``:
  ``ReplicaStateMachine`` OfflineReplica removes each from the ISR in ZooKeeper, the leader
  epoch bumped, leader -1 if it led (``doRemoveReplicasFromIsr``: KAFKA-14808), a LeaderAndIsr
  to the other replicas, then StopReplica with delete).
* Phase A (TRS not within the ISR): A1 ``updateLeaderEpochAndSendRequest``: the leader epoch
  bumped in ZooKeeper (``updateLeaderEpoch``: leader and ISR unchanged), LeaderAndIsr with the
  new RS to every replica in RS; A2 the adding replicas started (NewReplica: the same request).
* Phase B (TRS within the ISR, ``isReassignmentComplete``; reached again from the ISR change,
  ``maybeCompleteReassignment``): B2 RS = TRS in memory; B3 ``moveReassignedPartitionLeaderIfRequired``:
  a leader outside TRS or dead is replaced (``ReassignPartitionLeaderElectionStrategy``: a live
  TRS member in the ISR), else the leader epoch is bumped, either way a LeaderAndIsr with
  RS = TRS and the ISR *unchanged* (the removed replicas still in it) to TRS; B4/B5 each
  removed replica OfflineReplica (its own ZooKeeper write: ISR less it, leader epoch bumped,
  LeaderAndIsr to the others) and StopReplica with delete; B6 RS = TRS in ZooKeeper.

The state is the kraft version's (``Kraft.assigned``/``adding``/``removing``/``reassignments``/
``views``, ``Request.replicas``: every other Kraft field keeps NO_KRAFT's value, so the ZooKeeper
paths that test ``k.broker_epoch`` stay ZooKeeper paths). ``assigned`` is the controller's
replica set in memory, which is ZooKeeper's but during phase B (B2 before B6, one step here).

Each phase is one step, as Kafka runs it within one controller event (the controller does
nothing else meanwhile): OperatorReassignPartition is U then A (or B at once),
ControllerCompleteReassignment is B. Their ZooKeeper writes stay separate writes: each bumps the
leader epoch and sends its own LeaderAndIsr requests, which each broker receives in order (R8),
so a broker may apply B3's request and act on it before B4's arrives (KAFKA-6638's state: its
ISR holds a replica outside the replica set it applied). What the one step leaves out: a
leader's own compare-and-set ISR write between two of the controller's writes of one event
(the controller's next write re-reads ZooKeeper and retries on a version conflict, so it takes
the leader's change up; here the leader's write waits for the last request of the event,
which carries the current zkVersion).

Deliberately not modelled: the cancel (KIP-455's null target, 2.4+), the replica order (the
preferred replica: any live ISR member of the target may be elected), a change of the
replication factor (every target has R-1 replicas), more than one partition, throttles, a
controller failover during a reassignment (ConfigError) and a phase-B election that finds no
live target replica in the ISR (Kafka logs the failed election and goes on with B4; the step
is not taken here: it removes behaviours, never adds one). The --epochs bound stops a step
whose writes need a leader epoch beyond it (a search bound)."""

from __future__ import annotations

from ..state import NO_LEADER, Coord, Replica, Request, State
from .common import Ctx, controller_write, live_mask, stale_alters, with_stale_versions
from .controller import elr_next

_new = tuple.__new__


def reassignment_keeps_leader(ctx: Ctx) -> bool:
    """KAFKA-14808's fix (apache/kafka#13451, closed unmerged: Kafka's ZooKeeper controller never
    had it): a new target that makes the current leader an unneeded replica is refused
    (INVALID_REPLICA_ASSIGNMENT). True unless a version says otherwise."""
    return getattr(ctx.protocol, "reassignment_keeps_leader", True)


def _isr_write(ctx: Ctx, s: State, coord: Coord, send_to: int, no_leader: bool) -> State:
    """One controller write of the partition state (a leader epoch bump) and its LeaderAndIsr
    to ``send_to`` (only replicas: ``controller_write``). ``no_leader``: the write records
    leader -1 (``doRemoveReplicasFromIsr`` on the leader, KAFKA-14808): the recorded leader stays
    in ``Coord`` marked lost (``Faults.lead_renewed``, as kraft's leader -1) and the requests
    name no leader."""
    f = s.faults
    if ctx.elr and coord.isr != s.coord.isr:
        elr = elr_next(ctx, f, s.coord.isr, coord.isr)
        if elr != f.elr:
            s = s._replace(faults=f._replace(elr=elr))
    if not no_leader:
        if s.faults.lead_renewed:
            s = s._replace(faults=s.faults._replace(lead_renewed=False))
        return controller_write(s, coord, send_to)
    reps, reqs = with_stale_versions(s, writer=-1)
    rs = s.kraft.assigned
    new = [
        Request(d, NO_LEADER, coord.epoch, coord.isr, True, s.faults.ctrl_epoch, rs)
        for d in range(len(reps))
        if (send_to & rs) >> d & 1
    ]
    return State(
        reps,
        coord,
        tuple(sorted(set(reqs).union(new))),
        s.history,
        s.faults._replace(lead_renewed=True),
        stale_alters(s.kraft),
    )


def _offline_replica(ctx: Ctx, s: State, r: int) -> State | None:
    """``ReplicaStateMachine`` OfflineReplica for replica ``r`` (U3, B4): if it is in the ISR, the
    controller writes the ISR without it (kept if it is the last member), leader -1 if it led,
    the leader epoch bumped, and sends the other replicas a LeaderAndIsr; None past --epochs.
    Its StopReplica (with delete) is BrokerStopReplica's."""
    c = s.coord
    if not c.isr >> r & 1:
        return s
    if c.epoch >= ctx.config.epochs:
        return None
    isr = c.isr if c.isr == 1 << r else c.isr & ~(1 << r)
    to = live_mask(s) & s.kraft.assigned & ~(1 << r)
    no_leader = c.leader == r or s.faults.lead_renewed  # (leader -1 already: stays so)
    return _isr_write(ctx, s, Coord(c.leader, c.epoch + 1, isr), to, no_leader)


def _complete(ctx: Ctx, s: State) -> list[State]:
    """Phase B on ``s`` (TRS within the ISR): B2 RS = TRS, B3 the leader kept (epoch bump) or
    moved to a live TRS member of the ISR, LeaderAndIsr with RS = TRS and the ISR unchanged to
    TRS; B4 each removed replica out of the ISR (its own write and requests); B6."""
    k = s.kraft
    c = s.coord
    target = k.assigned & ~k.removing
    removed = k.removing
    if c.epoch >= ctx.config.epochs:
        return []
    t = s._replace(kraft=k._replace(assigned=target, adding=0, removing=0))
    live = live_mask(t)
    lost = t.faults.lead_renewed or not live >> c.leader & 1
    if target >> c.leader & 1 and not lost:
        leaders = [c.leader]
    else:  # ReassignPartitionLeaderElectionStrategy: a live target replica in the ISR
        leaders = [j for j in range(ctx.n) if (target & live & c.isr) >> j & 1]
    out = []
    for leader in leaders:
        u = _isr_write(ctx, t, Coord(leader, c.epoch + 1, c.isr), live & target, False)
        for r in range(ctx.n):
            if removed >> r & 1 and u is not None:
                u = _offline_replica(ctx, u, r)
        if u is not None:
            out.append(u)
    return out


def zk_operator_reassign_partition(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """OperatorReassignPartition(target): the operator asks for the replica set ``target`` (R-1
    brokers; kafka-reassign-partitions --execute: /admin/reassign_partitions, or 2.4+'s
    AlterPartitionReassignments), at most --reassignments times; while one is in progress only
    with KIP-455 (``alter_reassignment_in_progress``, Kafka 2.4+). The ZooKeeper controller
    checks the adding replicas are live (``areNewReplicasAlive``) and runs phase U (the replica
    set ORS + TRS; an unneeded adding replica of the reassignment in progress stopped, leader -1
    if it led: KAFKA-14808, refused with ``reassignment_keeps_leader``), then phase A (a leader
    epoch bump, LeaderAndIsr with the new replica set to every replica in it) or, when the ISR
    already holds the target, phase B (``_complete``)."""
    k = s.kraft
    if k.reassignments >= ctx.config.reassignments:
        return
    if (k.adding or k.removing) and not ctx.protocol.alter_reassignment_in_progress:
        return  # (before KIP-455: "There is an existing assignment running.")
    c = s.coord
    current = k.assigned
    origin = current & ~k.adding
    now_target = current & ~k.removing
    live = live_mask(s)
    keeps_leader = reassignment_keeps_leader(ctx)
    for target in range(1, 1 << ctx.n):
        if target.bit_count() != ctx.n - 1 or target == now_target:
            continue
        rs = target | origin
        adding = rs & ~origin
        if adding & ~live:
            continue  # INVALID_REPLICA_ASSIGNMENT: "Replica assignment has brokers that are not alive"
        unneeded = current & ~rs
        if keeps_leader and unneeded >> c.leader & 1:
            continue  # KAFKA-14808's fix: "Current leader is inside unneeded adding replicas"
        t = s._replace(
            kraft=k._replace(
                assigned=rs,
                adding=adding,
                removing=rs & ~target,
                reassignments=k.reassignments + 1,
            )
        )
        for r in range(ctx.n):  # U3
            if unneeded >> r & 1 and t is not None:
                t = _offline_replica(ctx, t, r)
        if t is None:
            continue
        if target & ~t.coord.isr:  # phase A
            tc = t.coord
            if tc.epoch >= ctx.config.epochs:
                continue
            u = _isr_write(
                ctx,
                t,
                Coord(tc.leader, tc.epoch + 1, tc.isr),
                live_mask(t) & rs,
                t.faults.lead_renewed,
            )
            out.append(((kind, (target,)), u))
        else:
            for u in _complete(ctx, t):
                out.append(((kind, (target,)), u))


def controller_complete_reassignment(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """ControllerCompleteReassignment(): the ISR holds every target replica (the controller
    learns it from the ISR change: ``PartitionReassignmentIsrChangeHandler`` or, with AlterIsr,
    ``processAlterPartition`` → ``maybeCompleteReassignment``); phase B (``_complete``)."""
    k = s.kraft
    if not k.adding and not k.removing:
        return
    target = k.assigned & ~k.removing
    if target & ~s.coord.isr:
        return
    for t in _complete(ctx, s):
        out.append(((kind, ()), t))


_STOPPED = Replica((), 0, 0, True, NO_LEADER, 0, 0, False, (), False, ())


def zk_broker_stop_replica(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """BrokerStopReplica(replica): a live broker the controller removed from the replica set
    (B4/B5, or U3) applies its StopReplica with delete (``ReplicaManager.stopReplicas``: the
    fetcher removed, the partition and its log deleted, ``LogManager.asyncDelete``). A removed
    leader not yet told it was replaced stops leading here; its purgatory is answered
    NOT_LEADER_FOR_PARTITION (not acknowledged). The LeaderAndIsr requests still queued to it
    come before its StopReplica (one queue per broker, R8) and change nothing it keeps: they are
    dropped with it. Its view of the replica set goes."""
    rs = s.kraft.assigned
    k = s.kraft
    for i, r in enumerate(s.replicas):
        if not r.alive or rs >> i & 1:
            continue
        nr = _new(Replica, (*_STOPPED[:8], ctx.unknown_leos, False, ()))
        reqs = tuple(q for q in s.requests if q.dest != i)
        views = (*k.views[:i], 0, *k.views[i + 1 :])
        f = s.faults
        if f.flushed or f.log_start:
            f = f._replace(
                flushed=(*f.flushed[:i], 0, *f.flushed[i + 1 :]) if f.flushed else (),
                log_start=(*f.log_start[:i], 0, *f.log_start[i + 1 :]) if f.log_start else (),
            )
        reps = (*s.replicas[:i], nr, *s.replicas[i + 1 :])
        t = State(reps, s.coord, reqs, s.history, f, k._replace(views=views))
        if t != s:
            out.append(((kind, (i,)), t))
