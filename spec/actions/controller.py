"""The controller's actions (R9). One controller at a time; it learns of a broker's crash at once
(its coordination session expires) and reacts by a versioned write of the partition state followed
by LeaderAndIsr requests to the live replicas. Its own failover is in controller_failover.py.

"Live" is the controller's view (``live_mask``): alive and holding a coordination session. With
--session-expiries a running broker may lose its session (session.py); the controller then treats
it exactly as a crashed one, though the process runs on."""

from __future__ import annotations

from ..log import last_epoch
from ..state import NO_EPOCH, NO_LEADER, Coord, Faults, Request, State
from .common import (
    Ctx,
    controller_write,
    ineligible,
    live_mask,
    partition_change,
    pick_leaders,
    replica_set,
    stale_alters,
    with_stale_versions,
)


def leader_lost(s: State) -> bool:
    """The recorded leader cannot lead: its broker is gone, or it is back from a restart (or
    missed its request) and will never take up the recorded epoch: it is not at that epoch and no
    request for it is in flight. Kafka's controller treats such a bounced broker as failed. With
    session expiry also: its session expired (it is gone to the controller, though it may run
    on as a zombie), or it registered a new session since (``Faults.lead_renewed``: a new
    incarnation, which must be elected anew, never resume the old epoch)."""
    c = s.coord
    r = s.replicas[c.leader]
    f = s.faults
    if f.expired >> c.leader & 1 or f.lead_renewed or s.kraft.fenced >> c.leader & 1:
        return True  # (kraft: a fenced leader is lost, as a crashed one: KIP-841)
    if not r.alive:  # (kraft: a crashed leader is lost only once fenced; before, the
        # controller does not know: see BrokerCrash)
        return not s.kraft.broker_epoch
    if r.epoch == c.epoch:
        return False
    return not any(q.dest == c.leader and q.epoch == c.epoch for q in s.requests)


def elections(ctx: Ctx, s: State) -> list[tuple[int, int, int]]:
    """Every (leader, ISR, ELR) the version's election rule allows now, ignoring the epoch
    bound (see ``elections_marked``, which also tells the unclean ones apart)."""
    return [e[:3] for e in elections_marked(ctx, s)]


def elections_marked(ctx: Ctx, s: State) -> list[tuple[int, int, int, bool]]:
    """Every (leader, ISR, ELR, unclean) the version's election rule allows now, ignoring the
    epoch bound; ``unclean`` as Kafka's ``PartitionChangeBuilder.electAnyLeader`` counts it: the
    --unclean step and the last known leader's election (KIP-704 marks both RECOVERING).

    ISR versions (R9): any live ISR member, with ISR = the live ISR members. kip-966 never picks a
    replica back from an unclean shutdown, and with no such ISR member falls back to a live
    eligible leader replica (ISR = {it}); kraft (``elect_last_known_leader``) then to the last
    known leader when ISR and ELR are empty, live, even back from an unclean shutdown (Kafka
    4.x's ``PartitionChangeBuilder.canElectLastKnownLeader``, with
    ``useLastKnownLeaderInBalancedRecovery`` true by default: the pre-4.0 availability when
    every replica was offline). With none of those the partition is offline, unless
    unclean election is on: then any live replica may lead with ISR = {it} (data may be lost).
    majority-quorum (R17): needs a live majority; elects a live replica at least as up to date
    (last epoch, then LEO) as a majority of the replicas, with the ISR left at every replica."""
    c = s.coord
    live = live_mask(s)
    if ctx.reassign:  # KIP-455: only a replica is elected (PartitionChangeBuilder reads
        # ``targetReplicas``; a non-replica in the ELR would make ``LeaderAcceptor`` throw,
        # ``PartitionRegistration.directory``: not modelled, it is simply not elected)
        live &= replica_set(ctx, s)
    f = s.faults
    reps = s.replicas
    out: list[tuple[int, int, int, bool]] = []
    if ctx.quorum:
        if live.bit_count() < ctx.majority:
            return out
        keys = [(last_epoch(r.log), len(r.log)) for r in reps]
        voted = 0
        for cand in range(ctx.n):
            if live >> cand & 1:
                votes = sum(1 for j in range(ctx.n) if live >> j & 1 and keys[j] <= keys[cand])
                if votes >= ctx.majority:
                    voted |= 1 << cand
        picked = pick_leaders(ctx, s, voted, "quorum")
        return [(cand, c.isr, f.elr, False) for cand in range(ctx.n) if picked >> cand & 1]
    # The first step with a candidate applies (Kafka's order); the version's choose_leader
    # then picks among that step's candidates, and an empty pick leaves the partition offline.
    new_isr = c.isr & live
    barred = f.unclean | ineligible(s)
    if not ctx.split_fetch and live >> c.leader & 1 and new_isr & ~barred & ~(1 << c.leader):
        # ZooKeeper era: a recorded leader that is back (restarted) was not live when the
        # controller ran this election, at its failure (``onBrokerFailure``; KIP-380's bounce
        # handling, or the failure handled before the restart): it is picked only when no
        # other ISR member can lead, at its own startup (``onBrokerStartup`` ->
        # ``triggerOnlinePartitionStateChange`` for the offline partition)
        barred |= 1 << c.leader
    if eligible := new_isr & ~barred:
        picked = pick_leaders(ctx, s, eligible, "isr")
        elr = elr_next(ctx, f, c.isr, new_isr, s.kraft.min_isr) if ctx.elr else f.elr
        return [(cand, new_isr, elr, False) for cand in range(ctx.n) if picked >> cand & 1]
    if ctx.elr and (eligible := f.elr & live & ~barred):
        picked = pick_leaders(ctx, s, eligible, "elr")
        return [
            (cand, 1 << cand, elr_next(ctx, f, c.isr, 1 << cand, s.kraft.min_isr), False)
            for cand in range(ctx.n)
            if picked >> cand & 1
        ]
    if (
        ctx.elr
        and ctx.split_fetch
        and ctx.protocol.elect_last_known_leader
        and not f.elr
        and c.isr == 1 << c.leader
        and live >> c.leader & 1
        and not ineligible(s) >> c.leader & 1
    ):
        # kraft with ELR (Kafka 4.x, KIP-966's balanced recovery): ISR and ELR empty (the
        # spec keeps the last member in the ISR, barred), so the last known leader is elected,
        # unclean shutdown or not (PartitionChangeBuilder.canElectLastKnownLeader)
        picked = pick_leaders(ctx, s, 1 << c.leader, "unclean")
        if picked:
            return [(c.leader, 1 << c.leader, 0, True)]
    if ctx.config.unclean and (eligible := live & ~ineligible(s)):
        picked = pick_leaders(ctx, s, eligible, "unclean")
        return [(cand, 1 << cand, 0, True) for cand in range(ctx.n) if picked >> cand & 1]
    return out


def controller_elect_leader(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """ControllerElectLeader(leader): the leader is lost (see leader_lost); pick a new one by the
    version's rule (see ``elections``) with leader epoch + 1 (R9). The old leader, back from a
    restart, is picked only when no other live ISR member can lead (ZooKeeper era: see
    ``elections``). With no candidate the partition stays offline (the recorded leader is
    the dead one, as Kafka's leader -1) until a broker restarts. An election ends a renewed
    leader's old incarnation (``Faults.lead_renewed``)."""
    c = s.coord
    if c.epoch >= ctx.config.epochs or not leader_lost(s):
        return
    live = live_mask(s)
    f = s.faults
    if f.lead_renewed:
        f = f._replace(lead_renewed=False)
        s = s._replace(faults=f)
    for cand, isr, elr, unclean in elections_marked(ctx, s):
        t = s
        if elr != f.elr or f.unclean >> cand & 1:
            # kip-966: an ELR member elected leaves the ELR; an unclean election clears it
            t = s._replace(faults=f._replace(elr=elr, unclean=f.unclean & ~(1 << cand)))
        if unclean:
            t = mark_recovering(ctx, t)
        out.append(((kind, (cand,)), controller_write(t, Coord(cand, c.epoch + 1, isr), live)))


def mark_recovering(ctx: Ctx, s: State) -> State:
    """KIP-704 (``leader_recovery_state``, Kafka 3.2+): an unclean election marks the partition
    RECOVERING (``PartitionChangeBuilder.tryElection``: with ``electionResult.unclean``, unless
    it is RECOVERING already: the state is kept across a later election until the leader says
    RECOVERED, ControllerHandleAlterPartition or LeaderCompleteRecovery)."""
    if not getattr(ctx.protocol, "leader_recovery_state", False) or s.kraft.leader_recovery:
        return s
    return s._replace(kraft=s.kraft._replace(leader_recovery=1))


def elr_after_shrink(ctx: Ctx, s: State, old_isr: int, new_isr: int) -> State:
    """kip-966: a replica removed while the ISR falls below min.insync.replicas joins the ELR (it
    has everything below the HW, which cannot advance without min ISR); an ISR of at least min
    ISR clears it; a replica that joins the ISR leaves the ELR (the two are disjoint: Kafka's
    PartitionChangeBuilder keeps ELR members out of the target ISR; a real 4.4.0 run showed
    ``ISR [0, 2], ELR [1]`` after broker 2 rejoined from ``ISR [0], ELR [1, 2]``)."""
    f = s.faults
    elr = elr_next(ctx, f, old_isr, new_isr, s.kraft.min_isr)
    if elr == f.elr:
        return s
    return s._replace(faults=f._replace(elr=elr))


def elr_next(ctx: Ctx, f: Faults, old_isr: int, new_isr: int, min_isr: int = 0) -> int:
    """kip-966: the ELR after any partition change from ``old_isr`` to ``new_isr``, elections
    included (Kafka's ``PartitionChangeBuilder.maybePopulateTargetElr`` runs on every change):
    empty if the new ISR has min.insync.replicas, else the old ELR and ISR less the new ISR and
    the replicas back from an unclean shutdown. An election from the ELR thus takes the leader
    out of it (a real 4.4.0 run: ``ISR [] ELR [1]`` became ``leader 1 ISR [1] ELR []`` in the
    unfencing's batch), as does a clean election of a last ISR member the spec kept barred in
    the ISR. ``min_isr``: min.insync.replicas as the operator last set it (``Kraft.min_isr``),
    0 for the configured value."""
    if new_isr.bit_count() >= (min_isr or ctx.config.min_isr):
        return 0
    return (f.elr | (old_isr & ~new_isr)) & ~f.unclean & ~new_isr


def controller_shrink_isr(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """ControllerShrinkIsr(replica): a follower's broker is gone; remove it from the ISR, bump the
    leader epoch and tell the live replicas (R9); kraft bumps only the partition epoch and tells
    the leader (``partition_change``, KAFKA-15021). Kafka's controller never empties the ISR. (Not
    in majority-quorum, which has no ISR.) "Gone" is the controller's view: dead, or its session
    expired; a leader that is gone that way is replaced by an election, not kept."""
    c = s.coord
    live = live_mask(s)
    if (c.epoch >= ctx.config.epochs and not ctx.split_fetch) or not live >> c.leader & 1:
        return  # (kraft: an ISR change takes no leader epoch, so --epochs does not bound it)
    f = s.faults
    if f.unclean >> c.leader & 1:
        return  # kip-966: a leader back from an unclean shutdown is replaced, not kept
    if f.lead_renewed:
        return  # (kraft: leader -1 recorded) the leader is lost to the controller
    for j in range(ctx.n):
        if j != c.leader and c.isr >> j & 1 and not live >> j & 1:
            new_isr = c.isr & ~(1 << j)
            t = elr_after_shrink(ctx, s, c.isr, new_isr) if ctx.elr else s
            out.append(((kind, (j,)), partition_change(ctx, t, new_isr, live)))


def _leader_in_place(ctx: Ctx, s: State) -> bool:
    """The recorded leader is live and in office: the case in which Kafka's controller moves
    leadership on purpose rather than replacing a lost leader (the complement of leader_lost,
    and, for kip-966, not a leader back from an unclean shutdown, which is replaced anyway)."""
    c = s.coord
    if c.epoch >= ctx.config.epochs or leader_lost(s):
        return False
    return not s.faults.unclean >> c.leader & 1


def controller_move_leader(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """ControllerMoveLeader(leader): the controller moves leadership away from a live leader to
    another live ISR member (R9): preferred-replica election (auto.leader.rebalance.enable, on
    by default), an operator's kafka-leader-election, or the end of a reassignment. Kafka's
    preferred-replica strategy keeps the ISR as it is; the write bumps the leader epoch and
    LeaderAndIsr goes to the live replicas. The deposed leader learns it only when it applies
    its request: until then it acts on its stale view (takes writes, answers fetches, advances
    its HW) exactly as far as the protocol version lets it. These moves in quick succession, with
    requests delayed (each broker applies its own in order, R8, but brokers apply theirs at
    different times), are what opened the holes KIP-279 and KIP-320 closed. Bounded only by --epochs. (Not in majority-quorum, which has no ISR.)

    Not modelled: which replica is preferred (replica ids are symmetric, so any live ISR member
    may be chosen: the preferred one is one of them)."""
    if not _leader_in_place(ctx, s):
        return
    c = s.coord
    live = live_mask(s)
    eligible = c.isr & live & ~s.faults.unclean & ~ineligible(s) & ~(1 << c.leader)
    eligible = pick_leaders(ctx, s, eligible, "move")
    for cand in range(ctx.n):
        if eligible >> cand & 1:
            out.append(
                ((kind, (cand,)), controller_write(s, Coord(cand, c.epoch + 1, c.isr), live))
            )


def controller_shutdown_broker(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """ControllerShutdownBroker(replica, leader): controlled shutdown of a live broker (R9,
    controlled.shutdown.enable, on by default). The broker asks the controller, which in one
    write moves leadership off it if it leads (to another live ISR member; the ISR loses the
    broker) or removes it from the ISR if it follows (``leader`` names the leader after the
    write); either way the leader epoch is bumped (the ZooKeeper controller's rule) and
    LeaderAndIsr goes to the live replicas. A leader with no other live ISR member cannot be
    moved: the ZooKeeper controller then retries and the broker finally shuts down uncleanly,
    which is BrokerCrash here (kraft: leader -1, below); a follower outside the ISR needs no
    write.

    The broker process runs on after this step: it may stop later (BrokerCrash, within
    --crashes) or act on as a zombie until it applies the request (a slow shutdown, or a lost
    StopReplica); in the model it then follows the new leader like any replica outside the ISR
    and may fetch its way back in. Not modelled: StopReplica itself (its effect on this
    partition is the LeaderAndIsr that deposes the broker), and the other partitions of the
    broker.

    kraft (KIP-841, KAFKA-15021): the broker is marked shutting down (``Kraft.shutting_down``)
    until its process stops: it stays live (it fetches, it is told the metadata) but the
    controller neither elects it nor lets an AlterPartition put it back in the ISR
    (ControllerHandleAlterPartition); a follower outside the ISR is marked with no write. The
    leader epoch moves only with the leadership; a follower's removal bumps only the partition
    epoch (``partition_change``). A leader no other ISR member can replace enters the
    shutting-down state anyway and the partition gets leader -1 with a new leader epoch
    (``leader`` = -1; Kafka's ``handleBrokerInControlledShutdown``, issue 25: before, the step
    did not exist and the broker kept leading until it stopped)."""
    c = s.coord
    kraft = ctx.split_fetch
    at_bound = c.epoch >= ctx.config.epochs
    if at_bound and not kraft:
        return
    live = live_mask(s)
    f = s.faults
    shutting = s.kraft.shutting_down
    in_place = _leader_in_place(ctx, s)
    leader_gone = not live >> c.leader & 1 or f.unclean >> c.leader & 1 or f.lead_renewed
    for j in range(ctx.n):
        if not live >> j & 1 or shutting >> j & 1 or not s.replicas[j].alive:
            continue  # (kraft: a crashed broker not yet fenced is live, but asks nothing)
        t = s
        if kraft:
            t = s._replace(kraft=s.kraft._replace(shutting_down=shutting | 1 << j))
        if not c.isr >> j & 1:
            if kraft and j != c.leader:
                out.append(((kind, (j, c.leader)), t))
            continue
        new_isr = c.isr & ~(1 << j)
        if ctx.elr:
            t = elr_after_shrink(ctx, t, c.isr, new_isr)
        if j == c.leader:
            if not in_place or at_bound:
                continue
            eligible = pick_leaders(ctx, s, new_isr & live & ~f.unclean & ~shutting, "shutdown")
            for cand in range(ctx.n):
                if eligible >> cand & 1:
                    coord = Coord(cand, c.epoch + 1, new_isr)
                    out.append(((kind, (j, cand)), controller_write(t, coord, live)))
            if kraft and not eligible:
                out.append(((kind, (j, NO_LEADER)), _leaderless(s, t, live)))
        elif not leader_gone:
            # (with the leader lost, offline or a past incarnation: an election comes first)
            out.append(((kind, (j, c.leader)), partition_change(ctx, t, new_isr, live)))


def fence_batch(ctx: Ctx, s: State, i: int) -> list[State]:
    """kraft: the controller fences broker ``i`` (KIP-841): the states after the fence's one
    batch of metadata records. With ``atomic_fence`` (Kafka's
    ``ReplicationControlManager.handleBrokerFenced``: ``generateLeaderAndIsrUpdates`` with the
    broker to remove, then the fence record, appended together) the broker leaves the ISR in the
    same step and, if it led, the PartitionChangeBuilder elects another leader in it
    (``electAnyLeader``: a live ISR member not barred, else with ELR a live eligible leader
    replica; kip-966's ELR rule applies to the ISR left) or, with none, records leader -1
    (``Faults.lead_renewed`` marks the recorded leader as lost until an election; the leader
    epoch is bumped, as by any leader change of Kafka's PartitionChangeBuilder, and the live
    brokers are told leader -1; Kafka keeps the ISR as it is when it would be empty without
    ELR, and with ELR moves the broker to the ELR, which elects it the same way: the spec keeps
    it as the ISR's last member, barred, which traces/validator/greybox.py shows as Kafka's
    empty ISR). At the --epochs bound the fence of the leader is not taken (its batch needs a
    new leader epoch): a search bound, which removes runs, never adds one. Without ``atomic_fence`` (the spec before Kafka 4.x was read) only
    the fence is recorded; ControllerShrinkIsr and ControllerElectLeader follow as their own
    steps."""
    k = s.kraft
    t = s._replace(kraft=k._replace(fenced=k.fenced | 1 << i))
    if not ctx.protocol.atomic_fence:
        return [t]
    c = t.coord
    b = 1 << i
    live = live_mask(t)
    if c.leader == i:
        f = t.faults
        if c.epoch < ctx.config.epochs:
            out = []
            for cand, isr, elr, unclean in elections_marked(ctx, t):
                u = t
                if elr != f.elr or f.unclean >> cand & 1 or f.lead_renewed:
                    u = t._replace(
                        faults=f._replace(
                            elr=elr, unclean=f.unclean & ~(1 << cand), lead_renewed=False
                        )
                    )
                if unclean:
                    u = mark_recovering(ctx, u)
                out.append(controller_write(u, Coord(cand, c.epoch + 1, isr), live))
            if out:
                return out
        elif not f.lead_renewed:
            return []  # (the batch would need a leader epoch beyond the --epochs bound)
        if f.lead_renewed:
            return [t]  # (leader -1 already: the fence changes no partition)
        return [_leaderless(t, t, live)]  # leader -1 with a new leader epoch, told to the live
    if not c.isr & b:
        return [t]
    new_isr = c.isr & ~b
    u = elr_after_shrink(ctx, t, c.isr, new_isr) if ctx.elr else t
    return [partition_change(ctx, u, new_isr, live)]


def _leaderless(s: State, t: State, live: int) -> State:
    """kraft: the controlled shutdown of a leader no other ISR member can replace
    (``handleBrokerInControlledShutdown``: ``generateLeaderAndIsrUpdates`` with the broker to
    remove finds no acceptable leader, so PartitionChangeBuilder records leader -1 with a new
    leader epoch; without ELR the ISR, which would be empty, stays as it is; with ELR the broker
    moves to the ELR, which elects it the same way). ``t`` is ``s`` with the broker marked
    shutting down. The recorded leader stays in ``Coord`` with the new epoch and is marked lost
    (``Faults.lead_renewed``) until an election; the live replicas are told leader -1 (they stop
    leading and fetching: a LeaderAndIsr naming no leader)."""
    c = s.coord
    reps, reqs = with_stale_versions(t, writer=-1)
    epoch = c.epoch + 1
    new = [
        Request(d, NO_LEADER, epoch, c.isr, True, t.faults.ctrl_epoch, t.kraft.assigned)
        for d in range(len(reps))
        if (live & (t.kraft.assigned or live)) >> d & 1
    ]
    f = t.faults._replace(lead_renewed=True)
    return State(
        reps,
        Coord(c.leader, epoch, c.isr),
        tuple(sorted(set(reqs).union(new))),
        t.history,
        f,
        stale_alters(t.kraft),
    )


def controller_fence_broker(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """ControllerFenceBroker(replica): kraft only (KIP-841). A running broker's heartbeats stop
    reaching the controller (a pause past broker.session.timeout.ms, a network partition): the
    controller fences it (``maybeFenceOneStaleBroker`` → ``handleBrokerFenced``), and with
    ``atomic_fence`` takes it out of the ISR and of leadership in the same batch
    (``fence_batch``). The broker itself runs on, a zombie acting on what it last knew, until
    it stops (BrokerCrash) and registers again (BrokerRegister), or its heartbeats get through
    again and it is unfenced with its old broker epoch (BrokerUnfence, the end of a pause).
    Each fence of a running broker counts as one of the --crashes (the bound Vanlightly's spec
    puts on fences), so the default bounds stay finite and small.

    The same step fences a crashed broker whose session has timed out (kraft without
    ``fence_at_crash``, Kafka: the controller learns of a crash only this way,
    ``BrokerHeartbeatManager`` and ``maybeFenceOneStaleBroker``); its crash was counted, the
    fence is not. (Its shutting-down bit stays: for a stopped broker it records a clean stop,
    which its next registration reads; see spec/actions/broker.py ``_clean_or_not``.)"""
    h = s.history
    k = s.kraft
    counted = s._replace(history=h._replace(crashes=h.crashes + 1))
    for i, r in enumerate(s.replicas):
        if k.fenced >> i & 1:
            continue
        if r.alive:
            if h.crashes >= ctx.config.crashes:
                continue
            base = counted
        else:
            base = s
        for t in fence_batch(ctx, base, i):
            out.append(((kind, (i,)), t))


def _paused(r, i: int, k) -> bool:
    """A running broker the controller fenced while its process went on (a pause, lost
    heartbeats), as opposed to a restarted one not yet registered (no leader, no epoch)."""
    return r.alive and k.fenced >> i & 1 and not (r.epoch == NO_EPOCH and r.leader == NO_LEADER)


def broker_unfence(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """BrokerUnfence(replica): kraft with ``unfence_on_heartbeat`` (KIP-841). A fenced broker
    whose process ran on (SIGSTOP past the session timeout, then SIGCONT; heartbeats lost, then
    through again) heartbeats with its *old* broker epoch, catches up with the metadata log and
    is unfenced (``BrokerHeartbeatManager``, ``ReplicationControlManager.handleBrokerUnfenced``):
    no restart, no new incarnation, so no registration and no unclean-shutdown handling. It
    learns the partition state it missed (a LeaderAndIsr with the current state: it follows the
    leader elected meanwhile and truncates by asking it) unless it is itself the recorded
    leader, lost since its fence: Kafka elects it again in the unfence's batch when it is an
    acceptable leader; here ControllerElectLeader does, as a later step (a new leader epoch)."""
    if not ctx.protocol.unfence_on_heartbeat:
        return
    k = s.kraft
    if not k.fenced:
        return
    c = s.coord
    for i, r in enumerate(s.replicas):
        if not _paused(r, i, k):
            continue
        t = s._replace(kraft=k._replace(fenced=k.fenced & ~(1 << i)))
        if c.leader != i and (not k.assigned or k.assigned >> i & 1):  # (leader -1: told so)
            leader = NO_LEADER if t.faults.lead_renewed else c.leader
            req = Request(i, leader, c.epoch, c.isr, True, t.faults.ctrl_epoch, t.kraft.assigned)
            if req not in t.requests:
                t = t._replace(requests=tuple(sorted((*t.requests, req))))
        out.append(((kind, (i,)), t))
