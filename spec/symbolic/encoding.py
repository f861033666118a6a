"""z3 encoding of the core ISR actions for a fixed replica count and logs and epochs of any length.

A symbolic state (:class:`Sym`) holds, per replica ``i``: the log as two arrays offset -> record
and offset -> leader epoch with a length (the LEO, R3), the HW (R4) and its checkpoint (R13),
alive, the leader and epoch of the last LeaderAndIsr applied, the KIP-101 "truncating" flag; the
coordination's leader, leader epoch and ISR (R9, R18); and two ghost variables, not protocol
state: ``leader_of`` (epoch -> the leader the controller recorded for it) and the *committed log*
``committed`` (everything any leader's HW ever passed, R5).

Each action is a function from a state to ``(guard, successor)`` over z3 terms, with fresh
variables for its nondeterministic choices, so ``Init => Inv`` and ``Inv /\\ guard => Inv'`` are
plain satisfiability queries with no frame conditions.

Each encoded action contains the executable spec's step (its abstraction) wherever both are
defined, and is the same step where the spec is deterministic in the variables kept here. What is
abstracted (documented so that a proof is read for what it is), as over-approximations:

* The leader's HW rule (R4: min over its ISR view of the remote LEOs) is abstracted by what it
  means: every action after which the spec re-evaluates the HW (ProducerSend, FollowerFetch,
  LeaderShrinkIsr, BrokerBecomeLeader) ends with a fresh HW h' for the acting leader, either
  unchanged or, for the recorded leader, any h' <= LEO such that every recorded ISR member held
  the leader's log below h' (``_advance_hw``). The fetch is atomic as in the spec: the leader's
  HW advances with the fetch offset (the follower's LEO *before* the response) and the follower
  takes HW = min(its new LEO, h') in the same step. There is no stand-alone HW step.
* The remote LEOs are not in the state. LeaderExpandIsr takes the follower's fetched LEO as a
  fresh p with what the spec guarantees of it (the follower holds the leader's log below p,
  p <= both LEOs) and needs p >= the leader's HW (and the epoch start, KAFKA-7128); the
  follower need not be alive or fetching now. LeaderShrinkIsr may drop any follower (time and
  the lag test are not modelled).
* zkVersion bits: leader ISR writes (shrink, expand) need the recorded leader at the current
  epoch instead of a current cached zkVersion (which implies it).
* LeaderAndIsr requests are not in the state: a live broker whose epoch is older than the
  coordination's may apply the *current* partition state (BrokerBecomeLeader/Follower), as if
  its request were in flight; a lost request is one never applied. Requests lost or ignored
  and client histories (acks, shown records, refused writes) change nothing encoded. This
  over-approximates the spec, where a broker takes its requests in the order sent (R8): the
  older ones queued before the current state come first.
* FollowerTruncate (KIP-279/320) truncates to the first offset where the follower's and the
  leader's entries differ: what the epoch-by-epoch walk back computes when LogMatching holds
  (which `isr check` verifies on the spec, and the cross-check confirms on reachable states).

Under-approximations (spec steps with no encoded counterpart; the cross-check identifies each
and does not follow it, see ``out_of_scope`` in tests/symbolic/test_crosscheck.py):

* a *stale* LeaderAndIsr request (older than the coordination's epoch) applied after a newer one
  was sent, e.g. by a restarted broker: it would make zombie leaders;
* the controller's re-election of a *bounced* leader (alive, its request lost): here the
  recorded leader must be dead;
* BrokerRestart of the recorded leader before the controller has elected another leader;
* the controller moving leadership off a *live* leader (ControllerMoveLeader, and
  ControllerShutdownBroker): the deposed leader would act on as a zombie, which the HW
  abstraction (only the recorded leader's HW rises) does not cover. A proof here is therefore
  about the crash-only election model; leader moves are checked by `isr check` (explicit state);
* hw-truncation only: LeaderExpandIsr on a stale remote LEO, when the follower truncated its
  log at a restart after its last fetch (the spec lets it rejoin without the records; the
  encoding asks that it still holds them). A second way for hw-truncation to lose committed
  records, left out so that every BMC violation and counterexample to induction found here
  is a behaviour of the spec rather than of a looser abstraction.

Not encoded: producer/consumer histories, acks=1, the purgatory, min.insync.replicas, the
brokers' own ISR views.

The cross-check against the executable spec (tests/symbolic/test_crosscheck.py, hypothesis)
compares every encoded action with the spec's on random reachable concrete states (random walks
and uniform samples of small models' reachable sets): every in-scope spec successor is allowed
by the mapped encoded action, and every enabled encoded action has a spec successor, except
LeaderShrinkIsr and LeaderExpandIsr (over-approximated on purpose: checked one way only).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any

import z3

from ..protocols import PROTOCOLS, ProtocolVersion

Int = z3.IntSort()
ARR = z3.ArraySort(Int, Int)
_counter = [0]


def fresh(prefix: str) -> z3.ArithRef:
    _counter[0] += 1
    return z3.Int(f"{prefix}!{_counter[0]}")


@dataclass(frozen=True)
class Sym:
    rec: tuple  # per replica: Array offset -> record id
    ep: tuple  # per replica: Array offset -> leader epoch of the entry
    leo: tuple  # per replica: Int, the log length
    hw: tuple
    ckpt: tuple
    alive: tuple  # Bool
    lead: tuple  # Int, -1: none
    epoch: tuple  # Int, 0: none
    trunc: tuple  # Bool
    cl: Any  # coordination leader
    ce: Any  # coordination leader epoch
    cisr: tuple  # Bool per replica
    leader_of: Any  # ghost: Array epoch -> leader
    crec: Any  # ghost: committed log, records
    cep: Any  # ghost: committed log, epochs
    clen: Any  # ghost: committed log length

    @property
    def n(self) -> int:
        return len(self.leo)

    def set(self, field: str, i: int, value: Any) -> Sym:
        t = getattr(self, field)
        return replace(self, **{field: t[:i] + (value,) + t[i + 1 :]})


def variables(prefix: str, n: int) -> Sym:
    def per(name: str, mk: Callable[[str], Any]) -> tuple:
        return tuple(mk(f"{prefix}.{name}{i}") for i in range(n))

    return Sym(
        rec=per("rec", lambda s: z3.Array(s, Int, Int)),
        ep=per("ep", lambda s: z3.Array(s, Int, Int)),
        leo=per("leo", z3.Int),
        hw=per("hw", z3.Int),
        ckpt=per("ckpt", z3.Int),
        alive=per("alive", z3.Bool),
        lead=per("lead", z3.Int),
        epoch=per("epoch", z3.Int),
        trunc=per("trunc", z3.Bool),
        cl=z3.Int(f"{prefix}.cl"),
        ce=z3.Int(f"{prefix}.ce"),
        cisr=per("cisr", z3.Bool),
        leader_of=z3.Array(f"{prefix}.leader_of", Int, Int),
        crec=z3.Array(f"{prefix}.crec", Int, Int),
        cep=z3.Array(f"{prefix}.cep", Int, Int),
        clen=z3.Int(f"{prefix}.clen"),
    )


# In a bounded unrolling no log is longer than the number of steps taken (one ProducerSend appends
# one entry; a fetch copies at most the leader's log), so BMC states agreement offset by offset
# below that bound: a quantifier-free query z3 always decides. Under a universally quantified
# ``agree`` in action guards z3's quantifier instantiation sometimes answered "unknown
# (incomplete quantifiers)", depending on the process (seen in CI). The induction proof, about
# logs of any length, keeps the quantifier (bound None).
_OFFSET_BOUND: ContextVar[int | None] = ContextVar("offset_bound", default=None)


@contextmanager
def offsets_below(bound: int) -> Iterator[None]:
    """Within this block every log is shorter than ``bound`` (the BMC depth): ``agree`` is a
    finite conjunction instead of a quantifier."""
    token = _OFFSET_BOUND.set(bound)
    try:
        yield
    finally:
        _OFFSET_BOUND.reset(token)


def agree(ra, ea, rb, eb, upto) -> z3.BoolRef:
    """Two logs hold the same entries at every offset below ``upto``."""
    bound = _OFFSET_BOUND.get()
    if bound is not None:
        return z3.And(
            z3.BoolVal(True),
            *[z3.Implies(o < upto, z3.And(ra[o] == rb[o], ea[o] == eb[o])) for o in range(bound)],
        )
    k = z3.Int("k")
    return z3.ForAll(
        [k], z3.Implies(z3.And(k >= 0, k < upto), z3.And(ra[k] == rb[k], ea[k] == eb[k]))
    )


def init(n: int) -> Sym:
    """Replica 0 leads at epoch 1 with the full ISR; empty logs (spec.state.initial_state)."""
    empty = z3.K(Int, 0)
    return Sym(
        rec=(empty,) * n,
        ep=(empty,) * n,
        leo=(z3.IntVal(0),) * n,
        hw=(z3.IntVal(0),) * n,
        ckpt=(z3.IntVal(0),) * n,
        alive=(z3.BoolVal(True),) * n,
        lead=(z3.IntVal(0),) * n,
        epoch=(z3.IntVal(1),) * n,
        trunc=(z3.BoolVal(False),) * n,
        cl=z3.IntVal(0),
        ce=z3.IntVal(1),
        cisr=(z3.BoolVal(True),) * n,
        leader_of=z3.Store(z3.K(Int, -1), 1, 0),
        crec=empty,
        cep=empty,
        clen=z3.IntVal(0),
    )


# --- actions -----------------------------------------------------------------------------------
Step = tuple[str, tuple, z3.BoolRef, Sym]


def _presumes(s: Sym, i: int) -> z3.BoolRef:
    return z3.And(s.alive[i], s.lead[i] == i)


def _serving(s: Sym, f: int, l: int, fenced: bool) -> z3.BoolRef:
    """``f`` fetches from ``l``: both alive, f follows l, l presumes leadership (R2); with
    KIP-320 fencing, at the same epoch."""
    c = [s.alive[f], s.lead[f] == l, _presumes(s, l)]
    if fenced:
        c.append(s.epoch[f] == s.epoch[l])
    return z3.And(*c)


def _isr_holds_below(s: Sym, l: int, h) -> z3.BoolRef:
    return z3.And(
        *[
            z3.Implies(
                s.cisr[j], z3.And(s.leo[j] >= h, agree(s.rec[j], s.ep[j], s.rec[l], s.ep[l], h))
            )
            for j in range(s.n)
            if j != l
        ]
    )


def _advance_hw(t: Sym, l: int, logs: Sym | None = None) -> tuple[z3.BoolRef, Sym]:
    """R4, abstracted, applied to ``t`` (the state after an action of the spec that re-evaluates
    the leader's HW): l's HW either stays, or, if l is the recorded leader and presumes
    leadership, rises to any h <= LEO such that every recorded ISR member holds l's log below h.
    The spec's HW (min over l's ISR view of the remote LEOs, each a prefix of l's log that the
    follower held when it fetched) is one such h. The followers' logs are judged in ``logs``
    (default ``t``; a fetch passes the state before it: the remote LEO is the fetch offset, not
    the LEO after the response). Returns the constraint on the fresh h and the state with it;
    the committed log (ghost) grows to h."""
    h = fresh("hw_after")
    u = t if logs is None else replace(logs, cisr=t.cisr)
    ok = z3.Or(
        h == t.hw[l],
        z3.And(_presumes(t, l), t.cl == l, t.hw[l] < h, h <= t.leo[l], _isr_holds_below(u, l, h)),
    )
    grow = h > t.clen
    u = replace(
        t.set("hw", l, h),
        crec=z3.If(grow, t.rec[l], t.crec),
        cep=z3.If(grow, t.ep[l], t.cep),
        clen=z3.If(grow, h, t.clen),
    )
    return ok, u


def producer_send(s: Sym, l: int) -> Step:
    """ProducerSend(l, record): append (record, epoch) at the LEO of a presumed leader (R6), then
    re-evaluate its HW (R4, see _advance_hw). A refused write changes nothing encoded."""
    rec = fresh("record")
    o = s.leo[l]
    t = s.set("rec", l, z3.Store(s.rec[l], o, rec)).set("ep", l, z3.Store(s.ep[l], o, s.epoch[l]))
    t = t.set("leo", l, o + 1)
    ok, t = _advance_hw(t, l)
    return ("ProducerSend", (l,), z3.And(_presumes(s, l), ok), t)


def follower_fetch(s: Sym, f: int, l: int, fenced: bool) -> Step:
    """FollowerFetch(f, l) (R2-R4, R12), atomic as in the spec: the leader records f's LEO as its
    remote LEO and re-evaluates its HW (R4, abstracted by _advance_hw: a fresh HW h' that R4
    allows with f's new log), then f appends the leader's entries from its LEO and sets HW =
    min(its new LEO, h'). A fetch offset past the leader's LEO truncates f to it (the leader's
    remote LEO and HW do not change)."""
    k = z3.Int("k")
    past = s.leo[f] > s.leo[l]
    new_leo = s.leo[l]
    rec = z3.If(past, s.rec[f], z3.Lambda([k], z3.If(k < s.leo[f], s.rec[f][k], s.rec[l][k])))
    ep = z3.If(past, s.ep[f], z3.Lambda([k], z3.If(k < s.leo[f], s.ep[f][k], s.ep[l][k])))
    t = s.set("rec", f, rec).set("ep", f, ep).set("leo", f, new_leo)
    ok, adv = _advance_hw(t, l, logs=s)
    t = replace(
        adv,
        hw=tuple(z3.If(past, a, b) for a, b in zip(t.hw, adv.hw, strict=True)),
        crec=z3.If(past, t.crec, adv.crec),
        cep=z3.If(past, t.cep, adv.cep),
        clen=z3.If(past, t.clen, adv.clen),
    )
    hw_new = z3.If(past, _min(s.hw[f], new_leo), _min(new_leo, t.hw[l]))
    t = t.set("hw", f, hw_new).set("ckpt", f, z3.If(past, _min(s.ckpt[f], new_leo), s.ckpt[f]))
    guard = z3.And(l != f, _serving(s, f, l, fenced), z3.Not(s.trunc[f]), z3.Or(past, ok))
    return ("FollowerFetch", (f, l), guard, t)


def _min(a, b):
    return z3.If(a < b, a, b)


def follower_truncate(s: Sym, f: int, l: int) -> Step:
    """FollowerTruncate(f, l) (KIP-279/320): truncate to the first offset where the epochs of the
    follower's and the leader's logs differ; HW and checkpoint follow."""
    t_ = fresh("trunc_at")
    m = _min(s.leo[f], s.leo[l])
    point = z3.And(
        t_ >= 0,
        t_ <= m,
        agree(s.rec[f], s.ep[f], s.rec[l], s.ep[l], t_),
        z3.Or(t_ == m, s.ep[f][t_] != s.ep[l][t_], s.rec[f][t_] != s.rec[l][t_]),
    )
    guard = z3.And(l != f, s.trunc[f], _serving(s, f, l, True), point)
    t = s.set("leo", f, t_).set("hw", f, _min(s.hw[f], t_)).set("ckpt", f, _min(s.ckpt[f], t_))
    t = t.set("trunc", f, z3.BoolVal(False))
    return ("FollowerTruncate", (f, l), guard, t)


def become_leader(s: Sym, i: int) -> Step:
    """BrokerBecomeLeader(i) (R11): the recorded leader applies the current, newer epoch and
    re-evaluates its HW (R4: with its remote LEOs unknown, only a lone ISR member's HW moves)."""
    guard = z3.And(s.alive[i], s.cl == i, s.epoch[i] < s.ce)
    t = s.set("lead", i, z3.IntVal(i)).set("epoch", i, s.ce).set("trunc", i, z3.BoolVal(False))
    ok, t = _advance_hw(t, i)
    return ("BrokerBecomeLeader", (i,), z3.And(guard, ok), t)


def become_follower(s: Sym, i: int, truncate_to_hw: bool) -> Step:
    """BrokerBecomeFollower(i) (R10): apply the current, newer epoch naming another leader;
    truncate to the HW (hw-truncation) or start the epoch-based truncation (KIP-101 and later)."""
    guard = z3.And(s.alive[i], s.cl != i, s.epoch[i] < s.ce)
    t = s.set("lead", i, s.cl).set("epoch", i, s.ce)
    if truncate_to_hw:
        t = t.set("leo", i, s.hw[i]).set("ckpt", i, s.hw[i]).set("trunc", i, z3.BoolVal(False))
    else:
        t = t.set("trunc", i, s.leo[i] > 0)
    return ("BrokerBecomeFollower", (i,), guard, t)


def controller_elect_leader(s: Sym, c: int) -> Step:
    """ControllerElectLeader(c) (R9): the recorded leader is dead; a live ISR member c leads with
    ISR = live ISR members and epoch + 1."""
    dead = z3.Or(*[z3.And(s.cl == i, z3.Not(s.alive[i])) for i in range(s.n)])
    guard = z3.And(dead, s.alive[c], s.cisr[c])
    e = s.ce + 1
    t = replace(
        s,
        cl=z3.IntVal(c),
        ce=e,
        cisr=tuple(z3.And(s.cisr[j], s.alive[j]) for j in range(s.n)),
        leader_of=z3.Store(s.leader_of, e, c),
    )
    return ("ControllerElectLeader", (c,), guard, t)


def controller_shrink_isr(s: Sym, j: int) -> Step:
    """ControllerShrinkIsr(j) (R9): a dead follower leaves the ISR; epoch + 1, same leader."""
    alive_leader = z3.Or(*[z3.And(s.cl == i, s.alive[i]) for i in range(s.n)])
    guard = z3.And(alive_leader, s.cl != j, s.cisr[j], z3.Not(s.alive[j]))
    e = s.ce + 1
    t = replace(s.set("cisr", j, z3.BoolVal(False)), ce=e, leader_of=z3.Store(s.leader_of, e, s.cl))
    return ("ControllerShrinkIsr", (j,), guard, t)


def leader_shrink_isr(s: Sym, l: int, j: int) -> Step:
    """LeaderShrinkIsr(l, j) (R7): the recorded leader drops a follower (time may pass; the lag
    test on the remote LEO is abstracted away), then re-evaluates its HW (R4)."""
    guard = z3.And(_presumes(s, l), s.cl == l, s.epoch[l] == s.ce, l != j, s.cisr[j])
    ok, t = _advance_hw(s.set("cisr", j, z3.BoolVal(False)), l)
    return ("LeaderShrinkIsr", (l, j), z3.And(guard, ok), t)


def leader_expand_isr(s: Sym, l: int, j: int, epoch_start: bool) -> Step:
    """LeaderExpandIsr(l, j) (R7): a follower whose fetched LEO p (the leader's remote LEO for j:
    a fresh variable here, constrained to what the spec guarantees of it: j holds l's log below
    p) reached the leader's HW rejoins; with KAFKA-7128 (kip-320) p must also reach the start of
    the leader's epoch (with epochs non-decreasing along a log: p is the LEO or the entry at p is
    of the leader's epoch). j need not be alive or fetching now: the spec judges its last fetch."""
    p = fresh("fetched")
    c = [
        _presumes(s, l),
        s.cl == l,
        s.epoch[l] == s.ce,
        l != j,
        z3.Not(s.cisr[j]),
        p >= s.hw[l],
        p <= s.leo[j],
        p <= s.leo[l],
        agree(s.rec[j], s.ep[j], s.rec[l], s.ep[l], p),
    ]
    if epoch_start:
        c.append(z3.Or(p >= s.leo[l], s.ep[l][p] == s.epoch[l]))
    return ("LeaderExpandIsr", (l, j), z3.And(*c), s.set("cisr", j, z3.BoolVal(True)))


def broker_checkpoint_hw(s: Sym, i: int) -> Step:
    """BrokerCheckpointHw(i) (R13)."""
    guard = z3.And(s.alive[i], s.ckpt[i] != s.hw[i])
    return ("BrokerCheckpointHw", (i,), guard, s.set("ckpt", i, s.hw[i]))


def broker_crash(s: Sym, i: int) -> Step:
    """BrokerCrash(i) (R8): memory lost (HW, leader, epoch), the log and checkpoint survive."""
    t = s.set("alive", i, z3.BoolVal(False)).set("hw", i, z3.IntVal(0))
    t = t.set("lead", i, z3.IntVal(-1)).set("epoch", i, z3.IntVal(0))
    t = t.set("trunc", i, z3.BoolVal(False))
    return ("BrokerCrash", (i,), s.alive[i], t)


def broker_restart(s: Sym, i: int, truncate_to_ckpt: bool) -> Step:
    """BrokerRestart(i) (R13): read the HW checkpoint; the seeds' protocol truncates to it. No
    leader or epoch until a LeaderAndIsr is applied. The recorded leader waits for re-election."""
    t = s.set("alive", i, z3.BoolVal(True)).set("hw", i, s.ckpt[i])
    t = t.set("lead", i, z3.IntVal(-1)).set("epoch", i, z3.IntVal(0))
    t = t.set("trunc", i, z3.BoolVal(False))
    if truncate_to_ckpt:
        t = t.set("leo", i, s.ckpt[i])
    return ("BrokerRestart", (i,), z3.And(z3.Not(s.alive[i]), s.cl != i), t)


@dataclass(frozen=True)
class SymProtocol:
    """The rules of a protocol version the encoding has, read from the one registry's flags
    (spec.protocols): the encoding reads no hook, so only a version whose rules are these flags
    can be encoded (its truncation point, when asked, is not encoded: see SYM_PROTOCOLS)."""

    name: str
    fenced: bool
    truncate_to_hw: bool
    epoch_start: bool

    @staticmethod
    def of(p: ProtocolVersion) -> SymProtocol:
        if p.truncate_to_hw_on_become_follower != p.truncate_to_hw_on_restart:
            raise ValueError(f"{p.name}: the encoding truncates to the HW on both or neither")
        return SymProtocol(
            p.name,
            fenced=p.fenced_fetch,
            truncate_to_hw=p.truncate_to_hw_on_become_follower,
            epoch_start=p.isr_join_needs_epoch_start,
        )


# The versions the encoding covers: kip-320 (the induction proof's subject) and hw-truncation
# (its known-bad contrast). The others differ in truncation points or elections the encoding
# does not model. Derived from the registry, so a change of a version's flags reaches it.
SYM_PROTOCOLS = {name: SymProtocol.of(PROTOCOLS[name]) for name in ("kip-320", "hw-truncation")}


def steps(s: Sym, proto: SymProtocol) -> list[Step]:
    """Every encoded action instance from ``s``."""
    n = s.n
    out: list[Step] = []
    for i in range(n):
        out.append(producer_send(s, i))
        out.append(become_leader(s, i))
        out.append(become_follower(s, i, proto.truncate_to_hw))
        out.append(controller_elect_leader(s, i))
        out.append(controller_shrink_isr(s, i))
        out.append(broker_checkpoint_hw(s, i))
        out.append(broker_crash(s, i))
        out.append(broker_restart(s, i, proto.truncate_to_hw))
        for j in range(n):
            if i == j:
                continue
            out.append(follower_fetch(s, i, j, proto.fenced))
            if not proto.truncate_to_hw:
                out.append(follower_truncate(s, i, j))
            out.append(leader_shrink_isr(s, i, j))
            out.append(leader_expand_isr(s, i, j, proto.epoch_start))
    return out
