"""Partial-order reduction for the ISR spec (``IsrSpec(config, reduction="por")``; the argument
is docs/reduction.md, "Partial-order reduction").

From each state the reduced model takes the successors of a *stubborn set* of actions instead
of all of them, when one is safe; otherwise every successor (the state is *fully expanded*).
Which set is safe is decided from **footprints**: what each action instance may read and write,
over *cells* (parts of the state: a replica's log, its HW, a fetcher's messages in flight...).

The rules a footprint declaration keeps (the whole soundness argument rests on them):

* An action is grouped by its replica-valued parameters (``replica``, ``leader``, ``follower``;
  the other parameters, epochs, records, acks, are merged into one group). A declaration is a
  function ``fp(por, s, args) -> (reads, writes) | None`` of the group's replica arguments
  (``args``, by the parameter positions ``FOOTPRINTS`` names), with ``s`` a state or None.
* With ``s`` None it covers every firing of the group in any state. With a state it may be
  smaller, but it must cover every firing **in ``s`` and in every state reachable from ``s``**
  (a footprint that holds from now on); ``None`` then says: the group is disabled in ``s`` and
  in every state reachable from ``s`` (retired, e.g. a crash once the crash budget is spent).
* ``reads`` covers every cell the group's enabling condition or its successors depend on;
  ``writes`` every cell any of its successors changes (``changed``). Over-approximating either
  is sound (it only costs reduction).
* An action whose function has no entry in ``FOOTPRINTS`` reads and writes everything: it is
  dependent on every action (the conservative default, for actions added later).
* Optional ``guard(por, s, args) -> cells``: for a group disabled in ``s``, cells one of which
  must change before it can be enabled (a necessary enabling set). Default: its reads.

The property side: ``PROPERTY_READS`` says which cells each property reads; a property not
listed reads everything. ``tests/spec/test_por.py`` checks the declared writes against every
transition of small models (a declaration that misses a write fails there).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .actions import alter_partition as _alter
from .actions import broker as _broker
from .actions import consumer as _consumer
from .actions import controller as _controller
from .actions import fetch as _fetch
from .actions import follower as _follower
from .actions import leader as _leader
from .actions import producer as _producer
from .actions import retention as _retention
from .actions import session as _session
from .actions.controller_failover import controller_failover as _controller_failover
from .state import NO_EPOCH, NO_FAULTS, NO_KRAFT, State

# Per-replica cells, one per replica and kind. ``fresh`` is the cached-version bits (a
# replica's zk_fresh and its AlterPartition's ``fresh``): every controller write clears them
# everywhere, so they are kept apart from the ISR view that the HW rule reads.
REPLICA_KINDS = (
    "log",  # Replica.log
    "hw",  # Replica.hw
    "ckpt",  # what only a crash reads: Replica.hw_ckpt, Faults.flushed[i], Kraft.epoch_ckpt[i]
    "alive",  # Replica.alive
    "view",  # Replica.leader, Replica.epoch
    "isr",  # Replica.isr
    "fresh",  # Replica.zk_fresh, the fresh flag of its AlterPartition in flight
    "lead",  # as leader: Replica.remote_leo, Replica.pending, Kraft.remote_epoch[i]
    "trunc",  # Replica.truncating
    "cache",  # Kraft.epoch_cache[i]
    "be",  # Kraft.broker_epoch[i]
    "ctl",  # the controller's per-broker state: fenced, shutting down, unclean, ELR, session
    # expired bits, Faults.ctrl_seen[i], Faults.log_start[i], Faults.producer_state_start[i]
    "req",  # the LeaderAndIsr requests in flight to it (State.requests with dest i)
    "alter",  # kraft: its AlterPartition in flight (all fields but ``fresh``)
)
# Whole-state cells.
GLOBAL_KINDS = (
    "coord",  # Coord, Faults.ctrl_epoch, failovers, expiries, lead_renewed; Kraft fields 11 on
    "next",  # History.next_record
    "acked",  # History.acked, acked1, refused; Faults.lost_replies, retries, producer
    "shown",  # History.shown
    "crashes",  # History.crashes
    "consumer",  # Kraft.consumer_pos, consumer_epoch
)
# And one cell per ordered pair (f, l): kraft's fetch requests and responses of follower f's
# fetcher for leader l (``fetch``).


class Cells:
    """The cells of a model with ``n`` replicas as bits of an int (a set of cells is a mask)."""

    def __init__(self, n: int) -> None:
        self.n = n
        bit = 0
        self.rep: dict[str, list[int]] = {}
        for k in REPLICA_KINDS:
            self.rep[k] = [1 << (bit + i) for i in range(n)]
            bit += n
        self.glob: dict[str, int] = {}
        for k in GLOBAL_KINDS:
            self.glob[k] = 1 << bit
            bit += 1
        self.fetch = [[1 << (bit + f * n + l) for l in range(n)] for f in range(n)]
        bit += n * n
        self.all = (1 << bit) - 1
        self.every: dict[str, int] = {k: sum(v) for k, v in self.rep.items()}
        self.every.update(self.glob)
        self.every["fetch"] = sum(sum(row) for row in self.fetch)
        self.nofetch = self.all & ~self.every["fetch"]
        self.names: dict[int, str] = {}
        for k, v in self.rep.items():
            for i, b in enumerate(v):
                self.names[b] = f"{k}[{i}]"
        for k, b in self.glob.items():
            self.names[b] = k
        for f in range(n):
            for l in range(n):
                self.names[self.fetch[f][l]] = f"fetch[{f},{l}]"

    def r(self, i: int, *kinds: str) -> int:
        """Replica ``i``'s cells of ``kinds``."""
        m = 0
        for k in kinds:
            m |= self.rep[k][i]
        return m

    def g(self, *kinds: str) -> int:
        m = 0
        for k in kinds:
            m |= self.glob[k]
        return m

    def of(self, *kinds: str) -> int:
        """Every cell of ``kinds`` (every replica's, for a per-replica kind)."""
        m = 0
        for k in kinds:
            m |= self.every[k]
        return m

    def replica(self, i: int) -> int:
        """Every cell of replica ``i`` (not the fetch pairs)."""
        return self.r(i, *REPLICA_KINDS)

    def describe(self, mask: int) -> list[str]:
        return [name for b, name in sorted(self.names.items()) if mask & b]


def _split_by(items: Sequence, key: Callable[[Any], Any]) -> dict:
    out: dict = {}
    for x in items:
        out.setdefault(key(x), []).append(x)
    return out


def changed(C: Cells, s: State, t: State) -> int:
    """The cells in which ``t`` differs from ``s``."""
    if s is t:
        return 0
    m = 0
    rep = C.rep
    sr, tr = s[0], t[0]
    if sr is not tr:
        for i in range(C.n):
            a, b = sr[i], tr[i]
            if a is b or a == b:
                continue
            if a[0] != b[0]:
                m |= rep["log"][i]
            if a[1] != b[1]:
                m |= rep["hw"][i]
            if a[2] != b[2]:
                m |= rep["ckpt"][i]
            if a[3] != b[3]:
                m |= rep["alive"][i]
            if a[4] != b[4] or a[5] != b[5]:
                m |= rep["view"][i]
            if a[6] != b[6]:
                m |= rep["isr"][i]
            if a[7] != b[7]:
                m |= rep["fresh"][i]
            if a[8] != b[8] or a[10] != b[10]:
                m |= rep["lead"][i]
            if a[9] != b[9]:
                m |= rep["trunc"][i]
    if s[1] != t[1]:
        m |= C.glob["coord"]
    if s[2] != t[2]:
        a_ = _split_by(s[2], lambda q: q[0])
        b_ = _split_by(t[2], lambda q: q[0])
        for i in set(a_) | set(b_):
            if a_.get(i) != b_.get(i):
                m |= rep["req"][i]
    hs, ht = s[3], t[3]
    if hs != ht:
        if hs.next_record != ht.next_record:
            m |= C.glob["next"]
        if hs.acked != ht.acked or hs.acked1 != ht.acked1 or hs.refused != ht.refused:
            m |= C.glob["acked"]
        if hs.shown != ht.shown:
            m |= C.glob["shown"]
        if hs.crashes != ht.crashes:
            m |= C.glob["crashes"]
    fs, ft = s[4], t[4]
    if fs is not ft and fs != ft:
        m |= _faults_changed(C, fs, ft)
    ks, kt = s[5], t[5]
    if ks is not kt and ks != kt:
        m |= _kraft_changed(C, ks, kt)
    return m


def _per(C: Cells, kind: str, a: tuple, b: tuple) -> int:
    m = 0
    if a != b:
        for i in range(C.n):
            if (a[i] if a else None) != (b[i] if b else None):
                m |= C.rep[kind][i]
    return m


def _bits(C: Cells, kind: str, a: int, b: int) -> int:
    m = 0
    d = a ^ b
    for i in range(C.n):
        if d >> i & 1:
            m |= C.rep[kind][i]
    return m


def _faults_changed(C: Cells, a: Any, b: Any) -> int:
    m = _per(C, "ckpt", a.flushed, b.flushed) | _per(C, "ctl", a.log_start, b.log_start)
    m |= _bits(C, "ctl", a.unclean, b.unclean) | _bits(C, "ctl", a.elr, b.elr)
    m |= _bits(C, "ctl", a.expired, b.expired) | _per(C, "ctl", a.ctrl_seen, b.ctrl_seen)
    if a.lost_replies != b.lost_replies or a.retries != b.retries or a.producer != b.producer:
        m |= C.glob["acked"]
    m |= _per(C, "ctl", a.producer_state_start, b.producer_state_start)
    if (a.ctrl_epoch, a.failovers, a.expiries, a.lead_renewed) != (
        b.ctrl_epoch,
        b.failovers,
        b.expiries,
        b.lead_renewed,
    ):
        m |= C.glob["coord"]
    return m


def _kraft_changed(C: Cells, a: Any, b: Any) -> int:
    m = 0
    if a.fetch_requests != b.fetch_requests or a.fetch_responses != b.fetch_responses:
        pa = _split_by((*a.fetch_requests, *a.fetch_responses), lambda x: (x[0], x[1]))
        pb = _split_by((*b.fetch_requests, *b.fetch_responses), lambda x: (x[0], x[1]))
        for f, l in set(pa) | set(pb):
            if pa.get((f, l)) != pb.get((f, l)):
                m |= C.fetch[f][l]
    m |= _per(C, "lead", a.remote_epoch, b.remote_epoch)
    m |= _per(C, "be", a.broker_epoch, b.broker_epoch)
    if a.alter_partition != b.alter_partition:
        aa = {x.leader: x for x in a.alter_partition}
        ab = {x.leader: x for x in b.alter_partition}
        for l in set(aa) | set(ab):
            xa, xb = aa.get(l), ab.get(l)
            if (xa is None) != (xb is None) or (
                xa is not None and xa[:5] + xa[6:] != xb[:5] + xb[6:]
            ):  # type: ignore[index]
                m |= C.rep["alter"][l]
            elif xa is not None and xa.fresh != xb.fresh:  # type: ignore[union-attr]
                m |= C.rep["fresh"][l]
    m |= _bits(C, "ctl", a.fenced, b.fenced) | _bits(C, "ctl", a.shutting_down, b.shutting_down)
    if a.consumer_pos != b.consumer_pos or a.consumer_epoch != b.consumer_epoch:
        m |= C.glob["consumer"]
    m |= _per(C, "cache", a.epoch_cache, b.epoch_cache)
    m |= _per(C, "ckpt", a.epoch_ckpt, b.epoch_ckpt)
    if a[11:] != b[11:]:
        # the controller's later kraft fields (a deposed controller's view, KIP-704's recovery
        # state, an operator's min.insync.replicas and its count): partition-level controller
        # state, the coord cell. A field added after them lands here too: never unseen.
        m |= C.glob["coord"]
    return m


# --- the footprints -------------------------------------------------------------------------
# Each: fp(por, s, args) -> (reads, writes) | None, args the replica-valued arguments (see the
# module docstring). ``por`` is the Por object below: its cells (``por.C``), bounds and the
# "settled" predicates. Writes of a step that changes a log also cover the clamp of the fault
# modes' offsets (spec.actions.common.clamp_offsets: flushed, log start) of that replica.


def _log_writes(C: Cells, i: int) -> int:
    return C.r(i, "log", "ckpt", "ctl")


def _fp_everything(por: Por, s: State | None, args: tuple) -> tuple[int, int]:
    return por.C.all, por.C.all


def _fp_controller(por: Por, s: State | None, args: tuple) -> tuple[int, int]:
    """The controller's writes (elections, ISR changes, fences, shutdowns, failover, sessions):
    the partition state, the requests it sends, every cached version bit (a write makes them
    stale), the per-broker registry and (a fence of a running broker) the crash count. It reads
    no fetch in flight."""
    C = por.C
    return C.nofetch, C.g("coord", "crashes") | C.of("req", "fresh", "ctl")


def _fp_become(por: Por, s: State | None, args: tuple) -> tuple[int, int] | None:
    """BrokerBecomeLeader/Follower(i): replica i's own state, its requests and, as a new leader,
    the acks its HW completes. Retired once i can take no newer epoch: it is running, no crash
    (so no restart) is left, and its epoch is at the --epochs bound (every request's epoch is
    within it: TypeOK)."""
    C = por.C
    (i,) = args
    if s is not None and por.view_final(s, i):
        return None
    return C.nofetch, (C.replica(i) & ~C.r(i, "alive", "be")) | C.g("acked")


def _fp_apply_change(por: Por, s: State | None, args: tuple) -> tuple[int, int] | None:
    """BrokerApplyPartitionChange(i): only for a replica that leads in its own view; retired
    once its view is final and names another leader."""
    C = por.C
    (i,) = args
    if s is not None and por.view_final(s, i) and s[0][i][4] != i:
        return None
    return C.nofetch, C.r(i, "isr", "fresh", "req", "ctl", "hw", "lead") | C.g("acked")


def _fp_request_only(por: Por, s: State | None, args: tuple) -> tuple[int, int]:
    """BrokerIgnoreStaleRequest, NetworkLoseLeaderAndIsr: a request to i goes (and the
    controller epoch i has seen)."""
    C = por.C
    (i,) = args
    return C.nofetch, C.r(i, "req", "ctl")


def _fp_produce(por: Por, s: State | None, args: tuple) -> tuple[int, int] | None:
    """ProducerSend(l, ...): the leader appends (its log, its epoch cache, its purgatory, its HW
    with acks=1 or a lone ISR) and the history records the write. Retired once every record of
    the bound is written."""
    C = por.C
    (l,) = args
    if s is not None and (
        (por.retirements and s[3].next_record >= por.records)
        or (por.view_final(s, l) and s[0][l][4] != l)
    ):
        return None
    return C.nofetch, _log_writes(C, l) | C.r(l, "hw", "lead", "cache") | C.g("next", "acked")


def _guard_produce(por: Por, s: State, args: tuple) -> int:
    """ProducerSend(l) disabled: l is down, does not lead in its own view, or every record is
    written."""
    (l,) = args
    return por.C.r(l, "alive", "view") | por.C.g("next")


def _guard_produce_idempotent(por: Por, s: State, args: tuple) -> int:
    """ProducerSend(l), --idempotence, disabled: as _guard_produce, or five batches in flight."""
    return _guard_produce(por, s, args) | por.C.g("acked")


def _guard_request(por: Por, s: State, args: tuple) -> int:
    """A step that applies a LeaderAndIsr to i (BrokerBecomeLeader/Follower,
    BrokerApplyPartitionChange) disabled: its enabling reads i's requests, whether it runs, its
    view (epoch, leader) and the controller epoch it has seen."""
    (i,) = args
    return por.C.r(i, "req", "alive", "view", "ctl")


def _fp_retry(por: Por, s: State | None, args: tuple) -> tuple[int, int]:
    C = por.C
    (l,) = args
    return C.nofetch, _log_writes(C, l) | C.r(l, "hw", "lead", "cache") | C.g("acked")


def _fp_producer_only(por: Por, s: State | None, args: tuple) -> tuple[int, int]:
    """ProducerCompleteBatch, ProducerBumpEpoch (--idempotence): the producer's own state and
    the records written (a bump marks the batches written so far as rewritten)."""
    C = por.C
    return C.g("acked", "next"), C.g("acked")


def _fp_two_replicas(por: Por, s: State | None, args: tuple) -> tuple[int, int]:
    """The atomic fetch and truncation of the older versions (FollowerFetch, FollowerTruncate)
    and the retention reset: both replicas' state and the acks (not a target of the reduction:
    declared wide)."""
    C = por.C
    f, l = args
    keep = ~C.r(f, "alive", "view") & ~C.r(l, "alive", "view")
    return C.nofetch, (C.replica(f) | C.replica(l)) & keep | C.g("acked")


def _fp_leader_isr(por: Por, s: State | None, args: tuple) -> tuple[int, int]:
    """LeaderShrinkIsr/LeaderExpandIsr (ZooKeeper era): the leader's compare-and-set write."""
    C = por.C
    (l,) = args[:1]
    writes = C.replica(l) & ~C.r(l, "alive", "view")
    return C.nofetch, writes | C.g("coord", "acked") | C.of("req", "fresh", "ctl")


def _fp_send_fetch(por: Por, s: State | None, args: tuple) -> tuple[int, int] | None:
    """FollowerSendFetch(f, l): reads what the request carries and whether both ends are up and
    the fetcher idle; writes only the fetcher's messages. Retired once f's view is final and
    names another leader."""
    C = por.C
    f, l = args
    if s is not None and por.view_final(s, f) and s[0][f][4] != l:
        return None
    reads = C.r(f, "alive", "view", "log", "cache", "be") | C.r(l, "alive") | C.fetch[f][l]
    return reads, C.fetch[f][l]


def _fp_handle_fetch(por: Por, s: State | None, args: tuple) -> tuple[int, int]:
    """LeaderHandleFetch(l, f): the leader reads its log, epoch, cache and follower state and
    re-evaluates its HW (advance_leader_hw: its ISR, its AlterPartition in flight, its
    purgatory); the answer reads whether f's incarnation is still connected. Once l's view is
    final and names another leader, only the error answer is left: the request goes."""
    C = por.C
    l, f = args
    if s is not None and por.view_final(s, l) and s[0][l][4] != l:
        return C.r(l, "alive", "view", "lead") | C.fetch[f][l], C.fetch[f][l]
    reads = (
        C.r(l, "alive", "view", "log", "hw", "lead", "cache", "isr", "alter")
        | C.r(f, "alive", "view", "be")
        | C.fetch[f][l]
    )
    if por.log_start:  # (R12: the leader's log start, OFFSET_OUT_OF_RANGE and the answer)
        reads |= C.r(l, "ctl")
    return reads, C.r(l, "lead", "hw") | C.g("acked") | C.fetch[f][l]


def _guard_fetch_slot(por: Por, s: State, args: tuple) -> int:
    """LeaderHandleFetch(l, f) disabled: no request from f to l (only a write of that fetcher's
    messages can bring one), or l is down."""
    l, f = args
    for q in s[5].fetch_requests:
        if q.follower == f and q.leader == l:
            return por.C.r(l, "alive")
    return por.C.fetch[f][l]


def _fp_handle_response(por: Por, s: State | None, args: tuple) -> tuple[int, int]:
    """FollowerHandleFetchResponse(f, l): the follower's log, HW, checkpoint, epoch cache (and
    its file) and log start; once f's view is final and names another leader, every answer
    from l is ignored: only the message goes."""
    C = por.C
    f, l = args
    if s is not None and por.view_final(s, f) and s[0][f][4] != l:
        return C.r(f, "view") | C.fetch[f][l], C.fetch[f][l]
    cells = C.r(f, "view", "log", "hw", "ckpt", "cache", "ctl") | C.fetch[f][l]
    return cells, cells & ~C.r(f, "view")


def _guard_response(por: Por, s: State, args: tuple) -> int:
    f, l = args
    return por.C.fetch[f][l]


def _fp_fetch_during_truncation(por: Por, s: State | None, args: tuple) -> tuple[int, int]:
    C = por.C
    f, l = args
    cells = C.r(f, "view", "log", "hw", "ckpt", "cache", "ctl", "alive") | C.fetch[f][l]
    return cells | C.g("consumer", "shown"), cells & ~C.r(f, "view", "alive") | C.g(
        "consumer", "shown"
    )


def _fp_send_alter(por: Por, s: State | None, args: tuple) -> tuple[int, int]:
    """LeaderSendAlterPartition(l, j): reads the leader's state (its followers' LEOs and broker
    epochs, its epoch start); writes its AlterPartition and re-evaluates its HW."""
    C = por.C
    l, _j = args
    return C.nofetch, C.r(l, "alter", "hw", "lead") | C.g("acked")


def _fp_handle_alter(por: Por, s: State | None, args: tuple) -> tuple[int, int]:
    C = por.C
    (l,) = args
    writes = (
        C.r(l, "alter", "isr", "hw", "lead") | C.g("coord", "acked") | C.of("req", "fresh", "ctl")
    )
    return C.nofetch, writes


def _fp_consumer(por: Por, s: State | None, args: tuple) -> tuple[int, int]:
    C = por.C
    return C.nofetch, C.g("consumer", "shown")


def _fp_ckpt(por: Por, s: State | None, args: tuple) -> tuple[int, int]:
    """BrokerCheckpointHw, BrokerCheckpointEpochCache, BrokerFlush: what only a crash reads."""
    C = por.C
    (i,) = args
    return C.nofetch, C.r(i, "ckpt")


def _fp_delete_segment(por: Por, s: State | None, args: tuple) -> tuple[int, int]:
    C = por.C
    (i,) = args
    return C.nofetch, C.r(i, "ctl")


def _fp_crash(por: Por, s: State | None, args: tuple) -> tuple[int, int] | None:
    """BrokerCrash(i): everything (its connections' messages, a fence at the crash). Retired
    once the crash budget is spent."""
    if s is not None and por.crashes_spent(s):
        return None
    return por.C.all, por.C.all


def _fp_restart(por: Por, s: State | None, args: tuple) -> tuple[int, int] | None:
    """BrokerRestart(i), BrokerRegister(i): everything. Restart is enabled only for a broker
    that is down, and only a crash takes one down; Register only for a running broker at epoch
    0 that no leader, which only a restart makes: both retired once i runs and no crash is
    left (and, Register, i has an epoch)."""
    (i,) = args
    if s is not None and por.crashes_spent(s) and s[0][i][3] and s[0][i][5] != NO_EPOCH:
        return None
    return por.C.all, por.C.all


# The actions whose effects on liveness, views, the crash count and the records written the
# retirement arguments read (see Por.retirements): BrokerCrash (the only step that takes a
# broker down), BrokerRestart and BrokerRegister, the LeaderAndIsr steps (a view only moves to
# a newer epoch, within --epochs: TypeOK bounds every request's), the produces, and the
# controller's steps (of which only a fence of a running broker writes the crash count, adding
# to it).
RETIREMENT_ARGUED = {
    _broker.broker_crash,
    _broker.broker_restart,
    _broker.broker_register,
    _broker.broker_become_leader,
    _broker.broker_become_follower,
    _producer.producer_send,
    _producer.producer_send_choosing_acks,
    _producer.producer_send_idempotent,
    _controller.controller_fence_broker,
    _controller.controller_elect_leader,
    _controller.controller_shrink_isr,
    _controller.controller_move_leader,
    _controller.controller_shutdown_broker,
    _controller.broker_unfence,
    _controller_failover,
    _session.coordination_expire_session,
    _session.broker_renew_session,
}


class Decl:
    """One action's footprint declaration: ``fp`` (see the module docstring), the positions of
    its replica-valued parameters (its groups), and an optional necessary-enabling ``guard``."""

    __slots__ = ("fp", "guard", "keep")

    def __init__(
        self,
        fp: Callable[..., Any],
        keep: tuple[int, ...],
        guard: Callable[..., int] | None = None,
    ) -> None:
        self.fp = fp
        self.keep = keep
        self.guard = guard


# Keyed by the action's function (two ActionDefs share the name ConsumerFetch). An action
# whose function is not here is dependent on everything.
FOOTPRINTS: dict[Callable, Decl] = {
    _controller.controller_elect_leader: Decl(_fp_controller, ()),
    _controller.controller_shrink_isr: Decl(_fp_controller, ()),
    _controller.controller_move_leader: Decl(_fp_controller, ()),
    _controller.controller_shutdown_broker: Decl(_fp_controller, ()),
    _controller.controller_fence_broker: Decl(_fp_controller, ()),
    _controller.broker_unfence: Decl(_fp_controller, ()),
    _controller_failover: Decl(_fp_controller, ()),
    _session.coordination_expire_session: Decl(_fp_controller, ()),
    _session.broker_renew_session: Decl(_fp_controller, ()),
    _broker.broker_become_leader: Decl(_fp_become, (0,), _guard_request),
    _broker.broker_become_follower: Decl(_fp_become, (0,), _guard_request),
    _broker.broker_apply_partition_change: Decl(_fp_apply_change, (0,), _guard_request),
    _broker.broker_ignore_stale_request: Decl(_fp_request_only, (0,)),
    _broker.network_lose_leader_and_isr: Decl(_fp_request_only, (0,)),
    _broker.broker_checkpoint_hw: Decl(_fp_ckpt, (0,)),
    _broker.broker_flush: Decl(_fp_ckpt, (0,)),
    _broker.broker_crash: Decl(_fp_crash, (0,)),
    _broker.broker_restart: Decl(_fp_restart, (0,)),
    _broker.broker_register: Decl(_fp_restart, (0,)),
    _producer.producer_send: Decl(_fp_produce, (0,), _guard_produce),
    _producer.producer_send_choosing_acks: Decl(_fp_produce, (0,), _guard_produce),
    _producer.producer_retry: Decl(_fp_retry, (0,)),
    _producer.producer_send_idempotent: Decl(_fp_produce, (0,), _guard_produce_idempotent),
    _producer.producer_retry_idempotent: Decl(_fp_retry, (0,)),
    _producer.producer_complete_batch: Decl(_fp_producer_only, ()),
    _producer.producer_bump_epoch: Decl(_fp_producer_only, ()),
    _follower.follower_fetch: Decl(_fp_two_replicas, (0, 1)),
    _follower.follower_truncate: Decl(_fp_two_replicas, (0, 1)),
    _retention.follower_reset_to_log_start: Decl(_fp_two_replicas, (0, 1)),
    _retention.broker_delete_old_segment: Decl(_fp_delete_segment, (0,)),
    _leader.leader_shrink_isr: Decl(_fp_leader_isr, (0,)),
    _leader.leader_expand_isr: Decl(_fp_leader_isr, (0,)),
    _fetch.follower_send_fetch: Decl(_fp_send_fetch, (0, 1)),
    _fetch.leader_handle_fetch: Decl(_fp_handle_fetch, (0, 1), _guard_fetch_slot),
    _fetch.follower_handle_fetch_response: Decl(_fp_handle_response, (0, 1), _guard_response),
    _fetch.consumer_fetch_during_truncation: Decl(_fp_fetch_during_truncation, (0, 1)),
    _fetch.broker_checkpoint_epoch_cache: Decl(_fp_ckpt, (0,)),
    _alter.leader_send_alter_partition: Decl(_fp_send_alter, (0, 1)),
    _alter.controller_handle_alter_partition: Decl(_fp_handle_alter, (0,)),
    _consumer.consumer_fetch: Decl(_fp_consumer, ()),
    _consumer.consumer_fetch_from_replica: Decl(_fp_consumer, ()),
    _consumer.consumer_reset_offset: Decl(_fp_consumer, ()),
}


# --- what the properties read ---------------------------------------------------------------
# Per property name, the cell kinds it reads (of every replica). A property not listed here
# reads every cell. The `action` and transition `sometimes` properties listed read the action's
# kind besides, which a reordering of independent steps does not change.
PROPERTY_READS: dict[str, tuple[str, ...]] = {
    "HwAtMostLeo": ("log", "hw", "ckpt"),  # hw and ckpt through LOCAL_CLAUSES
    "LeaderInIsr": ("coord",),
    "IsrWithinAssigned": ("coord", "isr"),
    "StrongIsr": ("hw", "alive", "view", "log", "coord"),
    "WeakIsr": ("hw", "alive", "view", "isr", "log"),
    "NoCommittedLoss": ("acked", "coord", "log", "alive", "view"),
    "NoAckedLoss": ("acked", "coord", "log", "alive", "view"),
    "NoPhantomRead": ("shown", "coord", "log", "alive", "view"),
    "LogMatching": ("log",),
    "NoDuplicates": ("acked", "log"),
    "HwMonotonic": ("hw", "alive", "view"),
    "MonotonicReads": ("consumer",),
    "SometimesCommitted": ("alive", "view", "hw"),
    "SometimesLeaderChange": ("coord",),
    "SometimesIsrShrinkAndExpand": ("coord",),
    "SometimesLogStartReset": (),
    "LogStartAtMostHw": ("hw", "alive", "ctl"),
    "DeletedOnlyCommitted": ("hw", "alive", "ctl"),
}
# Two invariants are conjunctions of clauses each about one cell, or about a few cells of one
# replica: TypeOK (a fetcher's messages: at most one per incarnation, ids in range; a leader's
# AlterPartition; a request's ids and epoch in range; a leader's remote LEOs and broker epochs
# in range and its purgatory within its log; a checkpoint in range, the flushed prefix within
# the log) and HwAtMostLeo (HW <= LEO, checkpoint <= LEO, per replica). A step that changes such
# a cell, and reads or writes the rest of the clause, leaves the clause where it found it in
# the state it left, in which the invariant was checked (docs/reduction.md): such a change is
# not visible to that invariant. Per property and kind: the other kinds of the clause (same
# replica). TypeOK reads every other cell; HwAtMostLeo reads the logs besides.
LOCAL_CLAUSES: dict[str, dict[str, tuple[str, ...]]] = {
    "TypeOK": {"fetch": (), "alter": (), "req": (), "lead": ("log",), "ckpt": ("log",)},
    "HwAtMostLeo": {"hw": ("log",), "ckpt": ("log",)},
}


class Por:
    """The stubborn-set reduction of one IsrSpec (docs/reduction.md, "Partial-order
    reduction"). ``reduce(s, successors)`` returns the successors to keep."""

    def __init__(
        self, spec: Any, properties: Sequence[str] | None = None, dead_state: bool = True
    ) -> None:
        ctx = spec.ctx
        self.n = n = ctx.n
        self.C = C = Cells(n)
        cfg = spec.config
        self.log_start = bool(ctx.initial_faults.log_start)  # R12: a log start that moves
        self.crash_budget = cfg.crashes
        self.epochs = cfg.epochs
        self.records = cfg.records
        self.kind_of_action = list(spec.actions)
        # the groups: (kind, replica args) -> its declaration and static footprint
        self.decls: list[Decl | None] = [FOOTPRINTS.get(a.fn) for a in spec.actions]
        self.keep: list[tuple[int, ...]] = [d.keep if d is not None else () for d in self.decls]
        self.groups: list[tuple[int, tuple[int, ...]]] = []
        for kind, keep in enumerate(self.keep):
            for args in _product(len(keep), n):
                self.groups.append((kind, args))
        self.static: dict[tuple[int, tuple[int, ...]], tuple[int, int]] = {
            g: self._fp(g, None) or (0, 0) for g in self.groups
        }
        # a footprint from a state is within the static one, so only groups that conflict
        # statically can conflict from a state: the lists, once
        self.static_conflicts: dict[tuple[int, tuple[int, ...]], list] = {}
        for g, (r, w) in self.static.items():
            self.static_conflicts[g] = [
                h for h, (hr, hw) in self.static.items() if h != g and (hw & (r | w) or hr & w)
            ]
        # per cell, the groups that may write it
        self._writers_memo: dict[int, list] = {}
        self.writers: list[list] = [
            [h for h, (_r, w) in self.static.items() if w >> b & 1]
            for b in range(C.all.bit_length())
        ]
        # The retirements (crashes_spent, view_final, a produce's) argue from what every
        # action of the model does: only BrokerCrash takes a broker down or counts a crash
        # (with the controller's fence, which only adds to the count), only a restart, a
        # registration or a LeaderAndIsr sets a view, only a produce writes a record. An
        # action outside that argument (a new one, or one without a footprint) that may write
        # those cells turns them off: every group is then as its static footprint says.
        guarded = C.of("alive", "view") | C.g("next", "crashes")
        self.retirements = all(
            a.fn in RETIREMENT_ARGUED or not self._static_writes(kind) & guarded
            for kind, a in enumerate(spec.actions)
        )
        # The measure must be the same on every state of a class the search merges: replica
        # renamings (it counts, it sums over replicas), and the dead-state reduction's
        # forgetting, which rewrites the checkpoints and flushed prefixes: with that on, they
        # are not in the measure.
        self.ckpt_in_measure = dead_state is False
        self.set_properties(spec, properties)

    def set_properties(self, spec: Any, names: Sequence[str] | None) -> None:
        """The cells the checked properties read (all of the model's safety properties when
        ``names`` is None): a step that changes one of them is visible."""
        C = self.C
        props = [p for p in spec.properties if p.kind != "eventually"]
        if names is not None:
            props = [p for p in props if p.name in names]
        visible = 0
        # per cell kind read only through local clauses: the clauses' other kinds, over all
        # the properties that read it so
        local: dict[str, set[str]] = {}
        for p in props:
            kinds = PROPERTY_READS.get(p.name)
            reads = C.all if kinds is None else C.of(*kinds)
            clauses = LOCAL_CLAUSES.get(p.name, {})
            for kind, rest in clauses.items():
                reads &= ~C.of(kind)
                local.setdefault(kind, set()).update(rest)
            visible |= reads
        # a kind some property reads plainly is visible whatever the clauses say
        self.local = [
            (C.of(kind), kind, tuple(rest))
            for kind, rest in local.items()
            if not C.of(kind) & visible
        ]
        self.visible = visible

    def _static_writes(self, kind: int) -> int:
        w = 0
        for g in self.groups:
            if g[0] == kind:
                w |= self.static[g][1]
        return w

    # --- the predicates the declarations use ------------------------------------------------
    def crashes_spent(self, s: State) -> bool:
        return self.retirements and s[3].crashes >= self.crash_budget

    def view_final(self, s: State, i: int) -> bool:
        """Replica ``i``'s leader and epoch never change again: it runs, no crash is left (so
        it neither crashes nor restarts, the only steps besides a newer request that set
        them), and its epoch is at the --epochs bound (no request is newer)."""
        r = s[0][i]
        return (
            self.retirements and r[3] and r[5] >= self.epochs and s[3].crashes >= self.crash_budget
        )

    # --- the reduction ----------------------------------------------------------------------
    def group_of(self, action: tuple) -> tuple[int, tuple[int, ...]]:
        kind, args = action
        return kind, tuple([args[p] for p in self.keep[kind]])

    def _fp(self, g: tuple[int, tuple[int, ...]], s: State | None) -> tuple[int, int] | None:
        d = self.decls[g[0]]
        if d is None:
            return self.C.all, self.C.all
        return d.fp(self, s, g[1])

    def measure(self, s: State) -> int:
        """The proviso's measure, a fixed function of the state that every step taken from a
        state that is not fully expanded must increase (checked on each): kraft's fetch
        requests count 1, responses 2, AlterPartitions 1, LeaderAndIsr requests -3, each
        record written, answered, shown and each crash 1 (the history only grows), and the
        HW checkpoints and flushed prefixes their offsets. So a fetch sent, a fetch answered
        with data, an AlterPartition sent, a request dropped or ignored, a checkpoint or flush
        that moves forward may be taken alone; an answer taken in, or a checkpoint moving back,
        only from a fully expanded state. (The checkpoints only without dead-state, see
        ``ckpt_in_measure``.)"""
        h = s[3]
        # the history variables only grow (records written, answers given, records shown,
        # crashes): a step that adds to them moves forward
        m = h[0] + len(h[1]) + len(h[2]) + len(h[3]) + len(h[4]) + h[5] - 3 * len(s[2])
        if self.ckpt_in_measure:
            for r in s[0]:
                m += r[2]
            f = s[4]
            if f is not NO_FAULTS:
                m += sum(f.flushed)
        k = s[5]
        if k is NO_KRAFT:
            return m
        return m + len(k.fetch_requests) + 2 * len(k.fetch_responses) + len(k.alter_partition)

    def reduce(self, s: State, succs: list) -> list:
        if len(succs) < 2:
            return succs
        by_group: dict[tuple[int, tuple[int, ...]], list[int]] = {}
        group_of = self.group_of
        for idx, (a, _t) in enumerate(succs):
            by_group.setdefault(group_of(a), []).append(idx)
        if len(by_group) < 2:
            return succs
        m0 = self.measure(s)
        fps: dict = {}
        oks: dict = {}
        for seed in by_group:
            if self.decls[seed[0]] is None:
                continue
            t_set = self._stubborn(s, seed, by_group, succs, fps, m0, oks)
            if t_set is None:
                continue
            keep = sorted(i for g in t_set if g in by_group for i in by_group[g])
            return [succs[i] for i in keep]
        return succs

    def _ok_step(
        self, s: State, g, idxs: list[int], succs: list, rw: tuple[int, int], m0: int
    ) -> bool:
        """Every successor of enabled group ``g`` is invisible and increases the measure."""
        C = self.C
        visible = self.visible
        reads, writes = rw
        for i in idxs:
            t = succs[i][1]
            if self.measure(t) <= m0:
                return False
            ch = changed(C, s, t)
            if ch & ~writes:
                raise AssertionError(
                    f"por: {self.kind_of_action[g[0]].name}{g[1]} changed "
                    f"{C.describe(ch & ~writes)} outside its declared writes"
                )
            if ch & visible:
                return False
            # a local clause is left as found only if the step reads or writes the rest of it
            for mask, kind, rest in self.local:
                hit = ch & mask
                if hit and rest:
                    for r in range(self.n):
                        if hit & C.rep[kind][r] and C.r(r, *rest) & ~(reads | writes):
                            return False
        return True

    def _writers_of(self, need: int) -> list:
        """The groups that may write a cell of ``need`` (static; memoised per mask)."""
        out = self._writers_memo.get(need)
        if out is None:
            seen: set = set()
            out = []
            b = 0
            m = need
            while m:
                if m & 1:
                    for h in self.writers[b]:
                        if h not in seen:
                            seen.add(h)
                            out.append(h)
                m >>= 1
                b += 1
            self._writers_memo[need] = out
        return out

    def _stubborn(self, s, seed, by_group, succs, fps, m0, oks):
        """A strong stubborn set containing ``seed`` whose enabled members are all invisible
        steps that increase the measure, or None. ``fps``, ``oks``: this state's footprints
        and step verdicts, shared between seeds."""

        def fp(g):
            if g not in fps:
                fps[g] = self._fp(g, s)
            return fps[g]

        def enabled_ok(g) -> bool:
            ok = oks.get(g)
            if ok is None:
                rw = fp(g)
                if rw is None:
                    raise AssertionError(f"por: {g} is enabled but declared retired")
                ok = oks[g] = self._ok_step(s, g, by_group[g], succs, rw, m0)
            return ok

        if not enabled_ok(seed):
            return None
        t_set = {seed}
        work = [seed]
        n_enabled = 1
        total = len(by_group)
        while work:
            g = work.pop()
            rw = fp(g)
            if rw is None:
                continue  # retired: never enabled from here
            if g in by_group:
                reads, writes = rw
                for h in self.static_conflicts[g]:
                    if h in t_set:
                        continue
                    hrw = fp(h)
                    if hrw is None:
                        continue
                    hr, hw = hrw
                    if hw & (reads | writes) or hr & writes:
                        if h in by_group:
                            n_enabled += 1
                            if n_enabled == total or not enabled_ok(h):
                                return None
                        t_set.add(h)
                        work.append(h)
            else:
                d = self.decls[g[0]]
                need = d.guard(self, s, g[1]) if d is not None and d.guard else rw[0]
                for h in self._writers_of(need):
                    if h in t_set:
                        continue
                    hrw = fp(h)
                    if hrw is None or not hrw[1] & need:
                        continue
                    if h in by_group:
                        n_enabled += 1
                        if n_enabled == total or not enabled_ok(h):
                            return None
                    t_set.add(h)
                    work.append(h)
        return t_set


def _product(k: int, n: int) -> list[tuple[int, ...]]:
    out: list[tuple[int, ...]] = [()]
    for _ in range(k):
        out = [(*a, i) for a in out for i in range(n)]
    return out


__all__ = ["FOOTPRINTS", "LOCAL_CLAUSES", "PROPERTY_READS", "Cells", "Decl", "Por", "changed"]
