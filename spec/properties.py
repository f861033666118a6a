"""The properties of docs/PROTOCOL.md, by name. Each is symmetric in the replica ids (it says the
same of every replica), which is what makes symmetry reduction sound for it.

This module is compiled (pyproject.toml's ``[tool.isr] compiled``), and the Spark engine ships
the properties to its executors with cloudpickle, which cannot pickle a compiled closure: so every
check is a module-level function (pickled by reference) or an instance of a module-level class
with ``__call__`` whose fields are plain values (TypeOk, IsrWithinAssigned, Available,
ActionFires, AlterPartitionExpandsIsr); no check is a closure or a lambda
(tests/spec/test_properties_pickle.py)."""

from __future__ import annotations

import itertools

from isr.checker.model import Property

from .actions.common import Ctx, alive_mask, is_true_leader, live_mask
from .actions.controller import elections
from .state import NO_FAULTS, NO_KRAFT, State


class TypeOk:
    """TypeOK: every variable holds a value of its type and within the bounds.

    A class, not a closure: its fields are plain ints and bools, so the check pickles by
    reference to this class when the module is compiled (the Spark engine ships the properties
    with cloudpickle, which cannot pickle a compiled closure). Replica values recur across many
    states (successors share unchanged parts), so the per-replica check is memoised by value in
    ``good_replicas``; a bounded cache keeps memory flat, and a pickle leaves it out (a copy
    starts empty: the cache changes speed, never a verdict)."""

    def __init__(self, ctx: Ctx) -> None:
        cfg = ctx.config
        self.n: int = ctx.n
        self.full: int = ctx.full
        self.records: int = cfg.records
        self.epochs: int = cfg.epochs
        self.max_len: int = cfg.records + cfg.retries  # a retry may append a record twice
        self.crashes: int = cfg.crashes
        self.retries: int = cfg.retries
        self.lose_unflushed: bool = cfg.lose_unflushed
        self.retention: bool = cfg.retention or cfg.delete_records > 0  # a log start tracked
        self.controller_failovers: int = cfg.controller_failovers
        self.session_expiries: int = cfg.session_expiries
        # kraft: a failover bumps no controller epoch brokers read (they read the metadata log)
        self.split_fetch: bool = ctx.split_fetch
        self.min_isr_changes: int = cfg.min_isr_changes
        self.delete_records: int = cfg.delete_records
        self.reassignments: int = cfg.reassignments
        # kraft: a broker that is down is fenced (at once), or not yet (at its session timeout)
        self.fence_at_crash: bool = bool(getattr(ctx.protocol, "fence_at_crash", True))
        # --idempotence: log entries carry the batch header; every bump answers an attempt
        self.idempotence: bool = cfg.idempotence
        self.entry_width: int = 4 if cfg.idempotence else 2
        self.producer_epochs: int = cfg.records + cfg.retries
        self.good_replicas: set = set()

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        del state["good_replicas"]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.good_replicas = set()

    def replica_ok(self, r) -> bool:
        n, max_len, records, epochs = self.n, self.max_len, self.records, self.epochs
        if len(r.log) > max_len or len(r.remote_leo) != n:
            return False
        width = self.entry_width
        for e in r.log:
            if not (len(e) == width and 1 <= e[0] <= records and 1 <= e[1] <= epochs):
                return False
            if width == 4 and not (0 <= e[2] <= self.producer_epochs and 0 <= e[3] < records):
                return False  # --idempotence: the batch header (producer epoch, sequence)
        if not (0 <= r.hw <= max_len and 0 <= r.hw_ckpt <= max_len):
            return False
        if not (-1 <= r.leader < n and 0 <= r.epoch <= epochs and 0 <= r.isr <= self.full):
            return False
        if not all(-1 <= x <= max_len for x in r.remote_leo):
            return False
        return all(0 <= o < len(r.log) for o in r.pending)

    def __call__(self, s: State) -> bool:
        n = self.n
        if len(s.replicas) != n:
            return False
        good_replicas = self.good_replicas
        for r in s.replicas:
            if r not in good_replicas:
                if not self.replica_ok(r):
                    return False
                if len(good_replicas) > 20_000:
                    good_replicas.clear()
                good_replicas.add(r)
        epochs = self.epochs
        c = s.coord
        if not (0 <= c.leader < n and 1 <= c.epoch <= epochs and 0 < c.isr <= self.full):
            return False
        lo = 0 if s.kraft is NO_KRAFT else -1  # kraft: leader -1 (an unmovable shutdown)
        for q in s.requests:
            if not (0 <= q.dest < n and lo <= q.leader < n and 1 <= q.epoch <= epochs):
                return False
        h = s.history
        if not (0 <= h.next_record <= self.records and 0 <= h.crashes <= self.crashes):
            return False
        f = s.faults
        if not (f is NO_FAULTS or self.faults_ok(s, f)):
            return False
        k = s.kraft
        # equality too: a state read back from a checkpoint or a worker holds an equal copy
        return k is NO_KRAFT or k == NO_KRAFT or self.kraft_ok(s, k)

    def kraft_ok(self, s: State, k) -> bool:
        """kraft: per-replica tuples of the right length, broker epochs within 1 + restarts, at
        most one fetch in flight per fetcher (follower, leader, broker epoch) and one
        AlterPartition per leader, every id a replica; with ``fence_at_crash``, every broker
        that is down is fenced (KIP-841)."""
        n, full, max_len, epochs = self.n, self.full, self.max_len, self.epochs
        if not k.broker_epoch:  # a ZooKeeper-era version with --reassignments: the KIP-455
            return self.zk_reassign_ok(k)  # fields alone (spec.state.initial_zk_reassign)
        top_be = 1 + self.crashes
        if len(k.broker_epoch) != n or len(k.remote_epoch) != n:
            return False
        if not all(1 <= b <= top_be for b in k.broker_epoch):
            return False
        if not all(len(row) == n and all(-1 <= x <= top_be for x in row) for row in k.remote_epoch):
            return False
        fetchers = [
            (m.follower, m.leader, m.broker_epoch) for m in (*k.fetch_requests, *k.fetch_responses)
        ]
        if len(set(fetchers)) != len(fetchers):
            return False
        if not all(0 <= f < n and 0 <= l < n and f != l for f, l, _ in fetchers):
            return False
        if not (0 <= k.fenced <= full and 0 <= k.shutting_down <= full):
            return False
        if not (0 <= k.consumer_pos <= max_len and 0 <= k.consumer_epoch <= epochs):
            return False
        for caches in (k.epoch_cache, k.epoch_ckpt):  # per replica, epochs and starts increasing
            if caches and (
                len(caches) != n
                or not all(
                    all(1 <= e <= epochs and 0 <= o <= max_len for e, o in c)
                    and all(a[0] < b[0] and a[1] < b[1] for a, b in itertools.pairwise(c))
                    for c in caches
                )
            ):
                return False
        if self.fence_at_crash and full & ~alive_mask(s) & ~k.fenced:
            return False  # KIP-841: a broker that is down is fenced
        dep = k.deposed  # a deposed controller's view: only after a failover
        if dep and not (
            len(dep) == 2 and 1 <= dep[0] <= epochs and dep[1] in (0, 1) and s.faults.failovers
        ):
            return False
        if not (0 <= k.leader_recovery <= 1 and 0 <= k.min_isr <= n):
            return False  # (KIP-704's state; KAFKA-16540's min.insync.replicas, 0: unchanged)
        if not 0 <= k.min_isr_changes <= self.min_isr_changes:
            return False
        if not 0 <= k.delete_records <= self.delete_records:
            return False
        for p in k.fetch_responses:  # (R12: an out-of-range answer carries no records)
            if not 0 <= p.log_start <= max_len or (p.out_of_range and (p.records or p.diverging)):
                return False
        leaders = [a.leader for a in k.alter_partition]
        if len(set(leaders)) != len(leaders):
            return False
        return all(
            0 <= l < n and 0 < a.new_isr <= full and 1 <= a.leader_be <= top_be
            for l, a in zip(leaders, k.alter_partition, strict=True)
        )

    def zk_reassign_ok(self, k) -> bool:
        """ZooKeeper era with --reassignments: every kraft-only field at NO_KRAFT's value; the
        replica set R-1 brokers, or during a reassignment R-1 targets plus the removing ones;
        adding and removing within it and apart; a view per broker; the count within bound."""
        n, full = self.n, self.full
        if k[:16] != NO_KRAFT[:16] or len(k.views) != n:
            return False
        if not (0 < k.assigned <= full and 0 <= k.reassignments <= self.reassignments):
            return False
        if (k.adding | k.removing) & ~k.assigned or k.adding & k.removing:
            return False
        if (k.assigned & ~k.removing).bit_count() != n - 1:
            return False
        return all(0 <= v <= full for v in k.views)

    def faults_ok(self, s: State, f) -> bool:
        n, full = self.n, self.full
        reps = s.replicas
        for per, on in ((f.flushed, self.lose_unflushed), (f.log_start, self.retention)):
            if len(per) != (n if on else 0):
                return False
            if not all(0 <= x <= len(reps[i].log) for i, x in enumerate(per)):
                return False
        # (a live replica's HW at or above its log start offset: LogStartAtMostHw)
        if not (0 <= f.unclean <= full and 0 <= f.elr <= full):
            return False
        if not all(1 <= x <= s.history.next_record for x in f.lost_replies):
            return False
        if not self.producer_ok(s, f):
            return False
        if not (0 <= f.retries <= self.retries and 0 <= f.failovers <= self.controller_failovers):
            return False
        if f.ctrl_epoch != (1 if self.split_fetch else 1 + f.failovers):
            return False
        if len(f.ctrl_seen) != (n if self.controller_failovers else 0):
            return False
        if not 0 <= f.expiries <= self.session_expiries:
            return False
        if f.expired & ~alive_mask(s) or f.expired.bit_count() > f.expiries:
            return False  # only a running broker's session can be expired
        if f.lead_renewed and not f.expiries and s.kraft is NO_KRAFT:
            return False  # (kraft: also a leader -1 the controller recorded, see fence_batch)
        return all(1 <= x <= f.ctrl_epoch for x in f.ctrl_seen)

    def producer_ok(self, s: State, f) -> bool:
        """--idempotence: the producer's state (spec.state.Producer) in range: its epoch within
        the bumps the attempts allow, sequences below the records written, the batches in
        flight at most five, of written records, sequenced 0.. in order from the last bump on,
        each answer one of the four; and where a replica's producer state starts, within its
        log (with --retention). () for both when idempotence is off."""
        p = f.producer
        if not self.idempotence:
            return p == () and f.producer_state_start == ()
        written = s.history.next_record
        if len(f.producer_state_start) != (self.n if self.retention else 0):
            return False
        reps = s.replicas
        if not all(0 <= x <= len(reps[i].log) for i, x in enumerate(f.producer_state_start)):
            return False
        if not 0 <= p.epoch <= self.producer_epochs:
            return False
        if not 0 <= p.leader_epoch <= self.epochs:
            return False
        if not -1 <= p.last_acked < p.next_seq <= written:
            return False
        bs = p.batches
        if len(bs) > 5 or [b[0] for b in bs] != sorted({b[0] for b in bs}):
            return False
        n = self.n
        if any(
            not (1 <= b[0] <= written and 0 <= b[1] < p.next_seq and 0 <= b[2] <= 3)
            or not (b[3] == -1 if b[2] == 0 else 0 <= b[3] < n)
            for b in bs
        ):
            return False
        return all(a[1] < b[1] for a, b in itertools.pairwise(bs))


def hw_at_most_leo(s: State) -> bool:
    """HwAtMostLeo: HW <= LEO on every replica, in memory and in its checkpoint (R4, R13)."""
    for r in s.replicas:  # a loop, not all(): it runs on every new state
        leo = len(r.log)
        if r.hw > leo or r.hw_ckpt > leo:
            return False
    return True


def leader_in_isr(s: State) -> bool:
    """LeaderInIsr: the recorded leader is a member of the recorded ISR (R9)."""
    return bool(s.coord.isr >> s.coord.leader & 1)


class IsrWithinAssigned:
    """IsrWithinAssigned: the recorded ISR and every replica's view of it are subsets of the
    assigned replicas, and the recorded ISR is never empty (R7, R9). A class with plain int
    fields (the assigned replicas as a bitmask), so that it pickles when compiled."""

    def __init__(self, full: int) -> None:
        self.full = full
        self.outside = ~full

    def __call__(self, s: State) -> bool:
        full = self.full
        outside = self.outside
        if not 0 < s.coord.isr <= full or s.coord.isr & outside:
            return False
        for r in s.replicas:  # noqa: SIM110 - a loop is cheaper than all() on this hot path
            if r.isr & outside:
                return False
        return True


def _isr_agrees(reps, i: int, r, isr: int) -> bool:
    """Every member ``j`` of ``isr`` holds presumed leader ``r``'s log below its HW: both logs
    reach the HW and agree below it (``r`` = reps[i]). Written for the hot path: the leader's
    prefix is cut once, and a member holding the very same log object agrees."""
    hw = r[1]
    log = r[0]
    if len(log) < hw:
        return not any(isr >> j & 1 for j in range(len(reps)))
    prefix = log[:hw]
    j = 0
    for other in reps:
        if isr >> j & 1:
            ol = other[0]
            if ol is not log and (len(ol) < hw or ol[:hw] != prefix):
                return False
        j += 1  # noqa: SIM113 - cheaper than enumerate on this hot path
    return True


def strong_isr(s: State) -> bool:
    """StrongIsr: everything below a presumed leader's HW is identical on every member of the
    recorded ISR (R5, R17). A presumed leader is any live replica that believes it leads."""
    reps = s.replicas
    isr = s.coord.isr
    i = 0
    for r in reps:  # fields by position: hw 1, alive 3, leader 4
        if r[1] and r[3] and r[4] == i and not _isr_agrees(reps, i, r, isr):
            return False
        i += 1  # noqa: SIM113 - cheaper than enumerate on this hot path
    return True


def weak_isr(s: State) -> bool:
    """WeakIsr: as StrongIsr, for the ISR as the presumed leader itself records it; with
    --reassignments its members within the replica set it applied and within the controller's
    (a ZooKeeper-era leader may hold a removed replica in its ISR until phase B's second
    request, KAFKA-6638's state: it neither counts it for the HW nor serves its fetches; and a
    removed broker may apply its StopReplica, deleting its log, before the leader applies the
    change that removed it: the controller's ISR and elections have dropped it already)."""
    reps = s.replicas
    k = s.kraft
    views = k.views
    rs = k.assigned
    i = 0
    for r in reps:  # fields by position: hw 1, alive 3, leader 4, isr 6
        if (
            r[1]
            and r[3]
            and r[4] == i
            and not _isr_agrees(reps, i, r, r[6] & views[i] & rs if views else r[6])
        ):
            return False
        i += 1  # noqa: SIM113 - cheaper than enumerate on this hot path
    return True


def log_start_at_most_hw(s: State) -> bool:
    """LogStartAtMostHw (with --retention, kraft also --delete-records; R4, R12): on every live
    replica the log start offset is at most the HW, so the log start moving deletes committed
    records only, never one a later commit, an acknowledgement or an election still needs.
    Kafka states it in ``UnifiedLog.maybeIncrementLogStartOffset`` (OFFSET_OUT_OF_RANGE above
    the HW), ``deletableSegments`` (KAFKA-5634: retention "to ensure that the log start offset
    can never exceed" the HW) and ``updateLogStartOffset``/``truncateFullyAndStartAt``
    (KAFKA-9491: the HW follows a full truncation); ``updateHighWatermark`` bounds a HW below
    by the log start. A crashed broker's HW in memory is gone (0): not counted."""
    starts = s.faults.log_start
    reps = s.replicas
    for i, x in enumerate(starts):
        r = reps[i]
        if x > r.hw and r.alive:
            return False
    return True


def deleted_only_committed(s: State, action, t: State) -> bool:
    """DeletedOnlyCommitted (an action property, with --retention, kraft also --delete-records;
    R5, R6, R12): a step that moves a replica's log start offset up deletes only committed
    records: the new log start is at most the highest HW of a live replica before the step, or
    the replica's own HW after it (a follower taking up its leader's log start with the
    leader's HW). Otherwise a record is deleted before it is committed: a follower is reset
    past it, the HW passes it and an acks=all producer is told it is committed, while no
    replica ever held it and no consumer can read it (KAFKA-5634's retention beyond the HW).
    NoCommittedLoss cannot see that loss: a deleted entry keeps its value in the log
    (spec.state.Faults.log_start), and the reset copies the leader's."""
    a, b = s.faults.log_start, t.faults.log_start
    if a is b or a == b:
        return True
    top = 0
    for r in s.replicas:
        if r.alive and r.hw > top:
            top = r.hw
    after = t.replicas
    return all(x <= a[i] or x <= top or x <= after[i].hw for i, x in enumerate(b))


class LogStartResets:
    """(kraft) A `sometimes` on transitions: FollowerHandleOffsetOutOfRange (action kind
    ``kind``) truncates a follower fully to its leader's log start (R12)."""

    def __init__(self, kind: int) -> None:
        self.kind = kind

    def __call__(self, s: State, action: tuple, t: State) -> bool:
        return action[0] == self.kind and t.faults.log_start != s.faults.log_start


def no_committed_loss(s: State) -> bool:
    """NoCommittedLoss: every record acknowledged to an acks=all producer is at its offset on the
    leader (the recorded leader, once it has taken up its epoch) (R6, R17)."""
    acked = s.history.acked
    if not acked:
        return True
    lead = s.coord.leader
    if not is_true_leader(s, lead):
        return True
    log = s.replicas[lead].log
    leo = len(log)
    for o, rec in acked:  # noqa: SIM110 - a loop is cheaper than all() on this hot path
        if o >= leo or log[o][0] != rec:
            return False
    return True


def no_acked_loss(s: State) -> bool:
    """NoAckedLoss: as NoCommittedLoss, for every acknowledged record: acks=1 ones too (R6). With
    acks=all it says what NoCommittedLoss says; it is the column that shows what acks=1 loses."""
    h = s.history
    if not h.acked1:
        return no_committed_loss(s)
    lead = s.coord.leader
    if not is_true_leader(s, lead):
        return True
    log = s.replicas[lead].log
    return all(o < len(log) and log[o][0] == rec for o, rec in (*h.acked, *h.acked1))


def no_duplicates(s: State) -> bool:
    """NoDuplicates: no record is in a replica's log twice (R6, R15: a retry after a lost reply
    must not append it again). Holds trivially without retries."""
    if not s.faults.retries:
        return True
    for r in s.replicas:
        recs = [e[0] for e in r.log]
        if len(set(recs)) != len(recs):
            return False
    return True


class Available:
    """Available: whenever the recorded leader's broker is down (or its session expired), the
    version's election rule has a live candidate (R8, R9, R17): the partition is never offline.
    (The epoch bound of the model is not counted: it limits the search, not the protocol.)

    It holds the Ctx, which the election needs (the version's hooks): a Ctx pickles (its
    protocol by reference for a built-in version, by value under cloudpickle for a user's
    protocol file, as the closure this class replaced did)."""

    def __init__(self, ctx: Ctx) -> None:
        self.ctx = ctx

    def __call__(self, s: State) -> bool:
        c = s.coord
        # alive, and (session expiry) holding a session (kraft: unfenced)
        alive = alive_mask(s)
        live = live_mask(s) & alive
        if live >> c.leader & 1:
            return True
        if not live:
            return False
        k = s.kraft
        down = self.ctx.full & ~alive
        if k.broker_epoch and down & ~k.fenced:
            # kraft: the brokers that are down as the controller sees them once their
            # sessions time out (fenced), which is when it elects
            s = s._replace(kraft=k._replace(fenced=k.fenced | down))
        return bool(elections(self.ctx, s))


def no_phantom_read(s: State) -> bool:
    """NoPhantomRead: a record once shown to a consumer never changes or disappears: no offset was
    ever shown with two records, and each shown record is at its offset on the leader (R5)."""
    shown = s.history.shown
    if not shown:
        return True
    offsets = [o for o, _ in shown]
    if len(set(offsets)) != len(offsets):
        return False
    lead = s.coord.leader
    if not is_true_leader(s, lead):
        return True
    log = s.replicas[lead].log
    leo = len(log)
    for o, rec in shown:  # noqa: SIM110 - a loop is cheaper than all() on this hot path
        if o >= leo or log[o][0] != rec:
            return False
    return True


def _logs_match(logs) -> bool:
    for a in range(len(logs)):
        la = logs[a]
        for b in range(a + 1, len(logs)):
            lb = logs[b]
            m = min(len(la), len(lb))
            # the last offset where the epochs agree decides: the prefixes must be equal up to it
            for o in range(m - 1, -1, -1):
                if la[o][1] == lb[o][1]:
                    if la[: o + 1] != lb[: o + 1]:
                        return False
                    break
    return True


_MATCHING_LOGS: dict = {}


def log_matching(s: State) -> bool:
    """LogMatching: two logs holding an entry of the same epoch at the same offset agree on every
    entry up to and including it. (Memoised on the tuple of logs, which few steps change.)"""
    logs = tuple([r[0] for r in s.replicas])  # the logs (field 0)
    ok = _MATCHING_LOGS.get(logs)
    if ok is None:
        ok = _logs_match(logs)
        if len(_MATCHING_LOGS) > 20_000:
            _MATCHING_LOGS.clear()
        _MATCHING_LOGS[logs] = ok
    return ok


def hw_monotonic(s: State, action, t: State) -> bool:
    """HwMonotonic (an action property): a replica that presumes leadership before and after a
    step never lowers its HW in that step (R4)."""
    before = s.replicas
    after = t.replicas
    if before is after:
        return True
    # Replica fields by position (hw 1, alive 3, leader 4): this runs on every transition
    for i in range(len(before)):
        b = after[i]
        if b is not before[i]:
            a = before[i]
            if b[1] < a[1] and a[4] == i and b[4] == i and a[3] and b[3]:
                return False
    return True


def monotonic_reads(s: State, action, t: State) -> bool:
    """MonotonicReads (an action property, kraft): the consumer's position never goes back
    (R5, KIP-392): it reads each offset once, in order, from whichever replica it fetches; a
    step that moves it back is an offset reset (ConsumerResetOffset), after which it would
    read offsets it read before."""
    return t.kraft.consumer_pos >= s.kraft.consumer_pos


def pending_alter_partition_resolvable(s: State) -> bool:
    """PendingAlterPartitionResolvable (kraft with --controller-failovers; R7): a leader whose
    AlterPartition was answered with an error it takes as final, and which keeps the ISR change
    pending (``AlterReq.answered``), is behind the controller's partition state: the request was
    made with a partition state since rewritten (so newer metadata exists and will override the
    pending change, LeaderClearPendingAlterPartition), or the leader has left the leader epoch it
    was made in. Violated when such a change is pending at a leader that holds the current
    state: nothing will ever override it, so the follower it adds never rejoins the ISR (a
    persistent under-replicated partition), a member it removes stays counted for the HW, and
    the leader proposes no other ISR change (Kafka's ``partitionState.isInflight``), until some
    unrelated event makes the controller write the partition again: KAFKA-14154.

    An invariant in place of the liveness property it stands for (a caught-up follower
    eventually rejoins, CaughtUpFollowerRejoinsIsr): the pending change can end only by a
    controller answer, and an answered change gets none; so "answered, and made with the
    current state by a leader still in that epoch" is a state from which only an environment
    event (a crash, a fence, a move) can free the partition, which is what the liveness
    property's fairness does not promise. BFS checks it; the liveness engine need not (and
    CaughtUpFollowerRejoinsIsr fails with the fix too once kraft's NetworkLoseLeaderAndIsr
    loses the metadata that would override the change, which a KRaft broker replaying the
    log cannot lose: docs/design/kraft.md)."""
    reps = s.replicas
    for a in s.kraft.alter_partition:
        if not a.answered or not a.fresh:
            continue
        r = reps[a.leader]
        if r.alive and r.leader == a.leader and r.epoch == a.leader_epoch:
            return False
    return True


def recovering_isr_alone(s: State) -> bool:
    """RecoveringIsrAlone (kraft with KIP-704's leader recovery state): while the partition is
    RECOVERING after an unclean election, the recorded ISR is the leader alone: no replica
    joins it from a leader that has not recovered (KIP-704; the controller's INVALID_REQUEST,
    ``ReplicationControlManager.validateAlterPartitionData``). With no producer state in the
    spec, this is the contract the recovery rests on, not a loss of data."""
    return not s.kraft.leader_recovery or s.coord.isr == 1 << s.coord.leader


def elr_holds_committed(s: State) -> bool:
    """ElrHoldsCommitted (kip-966's eligible leader replicas, stated with --min-isr-changes): every
    member of the ELR holds every acks=all acknowledged record at its offset, KIP-966's ground
    for electing it cleanly (a replica enters the ELR only while the ISR is below
    min.insync.replicas, when the HW cannot advance without it). KAFKA-16540: a lowered
    min.insync.replicas lets the HW advance without it, so the controller must clear the ELR."""
    elr = s.faults.elr
    if not elr or not s.history.acked:
        return True
    reps = s.replicas
    for j in range(len(reps)):
        if elr >> j & 1:
            log = reps[j].log
            for offset, record in s.history.acked:
                if offset >= len(log) or log[offset][0] != record:
                    return False
    return True


def some_committed(s: State) -> bool:
    """A presumed leader's HW passes a record: something is committed."""
    return any(r.alive and r.leader == i and r.hw > 0 for i, r in enumerate(s.replicas))


class ActionFires:
    """A `sometimes` on transitions: an action of kind ``kind`` (its index in the model's
    actions) fires. An int field only, so it pickles when compiled."""

    def __init__(self, kind: int) -> None:
        self.kind = kind

    def __call__(self, s: State, action: tuple, t: State) -> bool:
        return action[0] == self.kind


class AlterPartitionExpandsIsr:
    """(kraft) An accepted AlterPartition (action kind ``kind``) adds a member to the ISR."""

    def __init__(self, kind: int) -> None:
        self.kind = kind

    def __call__(self, s: State, action: tuple, t: State) -> bool:
        return action[0] == self.kind and bool(t.coord.isr & ~s.coord.isr)


def _isr_expands(kind_of: dict[str, int]) -> ActionFires | AlterPartitionExpandsIsr:
    """An ISR expansion fires: LeaderExpandIsr, or (kraft) an accepted AlterPartition that adds
    a member."""
    if "LeaderExpandIsr" in kind_of:
        return ActionFires(kind_of["LeaderExpandIsr"])
    return AlterPartitionExpandsIsr(kind_of["ControllerHandleAlterPartition"])


def leader_is_replica(s: State) -> bool:
    """LeaderIsReplica (KIP-455, --reassignments): the recorded leader is in the recorded
    replica set (R1, R9): a completion or a cancel that removes the leader elects another."""
    k = s.kraft
    return not k.assigned or bool(k.assigned >> s.coord.leader & 1)


def isr_within_replicas(s: State) -> bool:
    """IsrWithinReplicas (KIP-455): the recorded ISR is within the recorded replica set, and
    (kraft) so is every live leader's own ISR within the replica set it applied (its view): the
    KRaft counterpart of KAFKA-6638 and KAFKA-9672, where the ZooKeeper controller left a removed
    replica in the ISR (R7, R9). The ZooKeeper era is held to the first half only: its phase B
    sends the new replica set with the old ISR first and the ISR shrink after (two writes, by
    design at every release), so a leader's own ISR holds a removed replica until the second
    request (KAFKA-6638's state; docs/design/kraft.md)."""
    k = s.kraft
    if not k.assigned:
        return True
    if s.coord.isr & ~k.assigned:
        return False
    if not k.broker_epoch:
        return True  # (ZooKeeper era: see above)
    views = k.views
    for i, r in enumerate(s.replicas):
        if r.alive and r.leader == i and r.isr & ~views[i]:
            return False
    return True


class ReassignmentKeepsMinIsr:
    """ReassignmentKeepsMinIsr (KIP-455, KAFKA-15665): a step that completes a reassignment
    (the replica set loses its removing replicas) leaves an ISR of at least min(min ISR, the
    replica count): the completion must not shrink the ISR below min.insync.replicas. A class
    with an int field, so that it pickles when compiled."""

    def __init__(self, min_isr: int) -> None:
        self.min_isr = min_isr

    def __call__(self, s: State, action: tuple, t: State) -> bool:
        k, k2 = s.kraft, t.kraft
        if not k.removing or k2.removing or k2.assigned != k.assigned & ~k.removing:
            return True  # (not a completion: none in progress, still in progress, or a cancel)
        need = min(k2.min_isr or self.min_isr, k2.assigned.bit_count())
        return t.coord.isr.bit_count() >= need


def reassigned(s: State) -> bool:
    """A reassignment has completed: the replica set holds broker R-1, the initial spare,
    and no reassignment is in progress."""
    k = s.kraft
    n = len(s.replicas)
    return bool(k.assigned >> (n - 1) & 1) and not k.adding and not k.removing


def leader_changes(s: State, action: tuple, t: State) -> bool:
    """The recorded leader moves to another replica in this step."""
    return t.coord.leader != s.coord.leader


def make_properties(ctx: Ctx, kind_of: dict[str, int]) -> list[Property]:
    """The named properties. majority-quorum has no ISR, so StrongIsr and WeakIsr (and the ISR
    shrink witness) are not stated for it; Available only with Config.availability."""
    props = [
        Property("TypeOK", "always", TypeOk(ctx), "every variable in its type and bounds"),
        Property(
            "HwAtMostLeo", "always", hw_at_most_leo, "HW <= LEO on every replica", requirement="R4"
        ),
        Property(
            "LeaderInIsr",
            "always",
            leader_in_isr,
            "recorded leader is in the recorded ISR",
            requirement="R9",
        ),
        Property(
            "IsrWithinAssigned",
            "always",
            IsrWithinAssigned(ctx.full),
            "ISR non-empty and within the assigned replicas",
            requirement="R7",
        ),
        Property(
            "StrongIsr",
            "always",
            strong_isr,
            "below a presumed leader's HW, the recorded ISR agrees",
            requirement="R17",
        ),
        Property(
            "WeakIsr",
            "always",
            weak_isr,
            "below a presumed leader's HW, its own ISR agrees",
            requirement="R17",
        ),
        Property(
            "NoCommittedLoss",
            "always",
            no_committed_loss,
            "acks=all acknowledged records stay on the leader",
            requirement="R6",
        ),
        Property(
            "NoPhantomRead",
            "always",
            no_phantom_read,
            "records shown to consumers never change or vanish",
            requirement="R5",
        ),
        Property(
            "LogMatching", "always", log_matching, "same offset and epoch implies same prefix"
        ),
        Property(
            "HwMonotonic", "action", hw_monotonic, "a leader's HW never decreases", requirement="R4"
        ),
        Property(
            "NoAckedLoss",
            "always",
            no_acked_loss,
            "acknowledged records (acks=1 and acks=all) stay on the leader",
            requirement="R6",
        ),
        Property(
            "NoDuplicates",
            "always",
            no_duplicates,
            "no record is appended twice (retries)",
            requirement="R6, R15",
        ),
        Property("SometimesCommitted", "sometimes", some_committed, "a record can be committed"),
        Property(
            "SometimesLeaderChange",
            "sometimes",
            leader_changes,
            "the controller can move leadership to another replica (by an election after a"
            " failure, a preferred-replica election or a controlled shutdown)",
            on_transitions=True,
        ),
    ]
    if ctx.split_fetch:
        props.insert(
            props.index(next(p for p in props if p.name == "HwMonotonic")) + 1,
            Property(
                "MonotonicReads",
                "action",
                monotonic_reads,
                "the consumer's position never goes back (KIP-392 follower reads)",
                requirement="R5",
            ),
        )
    if ctx.split_fetch and ctx.config.controller_failovers:
        props.insert(
            props.index(next(p for p in props if p.name == "HwMonotonic")),
            Property(
                "PendingAlterPartitionResolvable",
                "always",
                pending_alter_partition_resolvable,
                "an ISR change left pending by an answer is overridden by newer partition state",
                requirement="R7",
            ),
        )
    if ctx.split_fetch and getattr(ctx.protocol, "leader_recovery_state", False):
        props.insert(
            props.index(next(p for p in props if p.name == "LogMatching")) + 1,
            Property(
                "RecoveringIsrAlone",
                "always",
                recovering_isr_alone,
                "while RECOVERING after an unclean election, the ISR is the leader alone (KIP-704)",
                requirement="R7, R9",
            ),
        )
    if ctx.elr and ctx.config.min_isr_changes:
        props.insert(
            props.index(next(p for p in props if p.name == "LogMatching")) + 1,
            Property(
                "ElrHoldsCommitted",
                "always",
                elr_holds_committed,
                "every eligible leader replica holds every acks=all acknowledged record"
                " (KIP-966, KAFKA-16540)",
                requirement="R6, R9",
            ),
        )
    if ctx.quorum:
        props = [p for p in props if p.name not in ("StrongIsr", "WeakIsr")]
    else:
        props.insert(
            len(props) - 1,
            Property(
                "SometimesIsrShrinkAndExpand",
                "sometimes",
                _isr_expands(kind_of),
                "a follower can leave the ISR and rejoin it (the initial ISR is full)",
                on_transitions=True,
            ),
        )
    if ctx.config.availability:
        props.append(
            Property(
                "Available",
                "always",
                Available(ctx),
                "a dead leader can always be replaced (the partition is never offline)",
                requirement="R8, R17",
            )
        )
    if ctx.initial_faults.log_start:  # --retention (kraft: or --delete-records)
        props.insert(
            props.index(next(p for p in props if p.name == "LogMatching")) + 1,
            Property(
                "LogStartAtMostHw",
                "always",
                log_start_at_most_hw,
                "a live replica's log start offset never passes its HW (only committed records"
                " are deleted)",
                requirement="R4, R12",
            ),
        )
        props.insert(
            props.index(next(p for p in props if p.name == "HwMonotonic")) + 1,
            Property(
                "DeletedOnlyCommitted",
                "action",
                deleted_only_committed,
                "a log start offset moves only over committed records (none is deleted before"
                " it is committed)",
                requirement="R5, R6, R12",
            ),
        )
        reset = (
            LogStartResets(kind_of["FollowerHandleOffsetOutOfRange"])
            if ctx.split_fetch
            else ActionFires(kind_of["FollowerResetToLogStart"])
        )
        props.append(
            Property(
                "SometimesLogStartReset",
                "sometimes",
                reset,
                "a follower can fetch below the leader's log start and be reset to it",
                on_transitions=True,
                requirement="R12",
            )
        )
    if ctx.reassign:  # KIP-455 (--reassignments, issue 28 item 1)
        props += [
            Property(
                "LeaderIsReplica",
                "always",
                leader_is_replica,
                "the recorded leader is one of the partition's replicas",
                requirement="R1, R9",
            ),
            Property(
                "IsrWithinReplicas",
                "always",
                isr_within_replicas,
                "the recorded ISR, and each leader's own, is within the replica set",
                requirement="R7, R9",
            ),
            Property(
                "ReassignmentKeepsMinIsr",
                "action",
                ReassignmentKeepsMinIsr(ctx.config.min_isr),
                "a completed reassignment leaves at least min(min ISR, replicas) in the ISR",
                requirement="R6, R9",
            ),
            Property(
                "SometimesReassigned",
                "sometimes",
                reassigned,
                "a reassignment can complete",
                requirement="R1",
            ),
        ]
    return props
