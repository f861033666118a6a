"""Trace validation: does the spec allow what an implementation recorded? (issue 6, VALIDATION.md)

The validator keeps the set of spec states consistent with the trace so far (the *candidates*)
and advances it event by event. For each event it runs only the spec action the event names (not
the whole Next relation), keeps the successors whose arguments fit the event and whose acting
replica equals what the event observed, and drops the rest. Variables the trace does not observe
(requests in flight, other replicas' views) are whatever the spec's own nondeterminism makes them.
When no candidate explains an event, the hidden steps the implementation does not log (a
LeaderAndIsr lost in the network or dropped with its dead destination, a deferred crash, a
crashed leader's last ISR write, a paused broker's session expiring or being renewed) are
inserted, a bounded closure, and the event is tried again;
if it still fails, the trace is rejected at that event with the candidate states and the actions
enabled there. A ``BrokerCrash`` is deferred: until the broker's session expires the rest of the
cluster sees a live broker taking no steps, so the spec's crash is inserted when an event needs
it, at the latest before the broker's next event (VALIDATION.md, mapping decision 8). A
``BrokerPause`` changes nothing (a paused broker takes no steps); the spec's session expiry and
renewal of that broker are hidden steps, and the renewal happens at the latest before the
broker's next event (mapping decision 12).

Cost per event is proportional to the candidate set (usually one state) and to what the event
changed: histories the spec only keeps for its properties (acked, shown, refused) are moved out
of the candidates, logs are checked by their deltas.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checker.nogc import gc_paused
from spec import IsrSpec
from spec.actions.controller import _leader_lost
from spec.log import epoch_start
from spec.shared_log import SharedLog
from spec.state import History, Replica, State

from . import format as tformat
from .mapping import (
    Event,
    PartitionMap,
    TraceInputError,
    Unsupported,
    derive_config,
    observe_mismatch,
    part_key,
)

ACCEPTED, REJECTED, UNSUPPORTED, INCOMPLETE, BAD_INPUT = (
    "accepted",
    "rejected",
    "unsupported",
    "incomplete",
    "bad-input",
)
EXIT = {ACCEPTED: 0, REJECTED: 1, UNSUPPORTED: 2, BAD_INPUT: 2, INCOMPLETE: 3}
MAX_CANDIDATES = 4096
HIDDEN = ("NetworkLoseLeaderAndIsr",)  # spec steps the implementation never logs
IGNORED_IMPL = {"ControllerActivate", "IsrUpdateConflict", "StopReplica"}
# impl events of a fault the spec cannot express (none at the moment; see VALIDATION.md)
UNSUPPORTED_IMPL: dict[str, str] = {}

# A candidate: (spec state, pending fetch responses per replica, acknowledgements not yet seen).
Pending = tuple[Any, ...]
Cand = tuple[State, Pending, frozenset]


@dataclass
class Verdict:
    name: str
    verdict: str
    events: int = 0
    partitions: int = 0
    reason: str = ""
    index: int | None = None  # position of the first unexplained event in the merged order
    event: Event | None = None
    candidates: list[dict[str, Any]] = field(default_factory=list)
    enabled: list[list[str]] = field(default_factory=list)
    mismatches: list[str] = field(default_factory=list)
    max_candidates: int = 0
    seconds: float = 0.0
    fired: set[str] = field(default_factory=set)
    transitions: set[tuple[str, str]] = field(default_factory=set)

    @property
    def exit(self) -> int:
        return EXIT[self.verdict]

    def to_json(self) -> dict[str, Any]:
        d = {
            "trace": self.name,
            "verdict": self.verdict,
            "events": self.events,
            "partitions": self.partitions,
            "max_candidates": self.max_candidates,
            "seconds": round(self.seconds, 4),
        }
        if self.verdict != ACCEPTED:
            d.update(
                reason=self.reason,
                index=self.index,
                event=self.event,
                candidates=self.candidates,
                enabled=self.enabled,
                mismatches=self.mismatches,
            )
        return d


class Rejection(Exception):
    def __init__(self, reason: str, mismatches: list[str], cands: list[Cand]) -> None:
        super().__init__(reason)
        self.reason = reason
        self.mismatches = mismatches
        self.cands = cands


def _strip(t: State) -> tuple[State, frozenset]:
    """Move the history variables out of the state; return what they gained in this step."""
    h = t.history
    if not (h.acked or h.acked1 or h.refused or h.shown):
        return t, frozenset()
    gained = frozenset(h.acked) | frozenset(h.acked1)
    return (
        t._replace(history=History(h.next_record, (), (), (), (), h.crashes)),
        gained,
    )


class PartitionValidator:
    """Validates the events of one partition against one spec instance."""

    def __init__(self, pm: PartitionMap, spec: IsrSpec) -> None:
        self.pm = pm
        self.spec = spec
        self.ctx = spec.ctx
        self.n = spec.ctx.n
        self.kind = spec.kind_of
        self.fn = {a.name: a.fn for a in spec.actions}
        self.flushed = spec.config.lose_unflushed  # R14: faults.flushed follows truncations
        s0 = spec.init_states()[0]
        # Persistent logs: appends and prefixes in O(1), so a long trace costs linear time.
        s0 = s0._replace(replicas=tuple(r._replace(log=SharedLog.of(r.log)) for r in s0.replicas))
        self.cands: list[Cand] = [(s0, ((),) * self.n, frozenset())]
        self.max_cands = 1
        # Deferred crashes (VALIDATION.md, mapping decision 8): replica -> lose_unflushed, for a
        # broker whose BrokerCrash is in the trace and which has not been seen since. In a
        # candidate where that replica is still alive the spec's BrokerCrash is still to come:
        # inserted when an event needs it (hidden closure), at the latest before the broker's
        # next event. Trace-determined, so one set for every candidate.
        self.down: dict[int, bool] = {}
        # Paused brokers (mapping decision 12): a BrokerPause and no event of the broker since.
        # Its session may expire (the spec's CoordinationExpireSession, hidden) and, once it
        # resumes, is renewed (BrokerRenewSession, hidden), at the latest before its next event.
        self.paused: set[int] = set()
        self.fired: set[str] = set()  # spec actions this trace exercised (coverage)
        self.transitions: set[tuple[str, str]] = set()  # replica role changes (coverage)

    # ---- spec steps ------------------------------------------------------------------------
    def steps(self, s: State, name: str, args: tuple | None = None) -> list[tuple[tuple, State]]:
        """Successors of ``s`` by the spec action ``name`` (with exactly ``args`` if given)."""
        kind = self.kind.get(name)
        if kind is None:
            return []
        out: list = []
        self.fn[name](self.ctx, s, kind, out)
        if self.flushed:
            return [
                (a, _follow_truncations(s, t)) for (_k, a), t in out if args is None or a == args
            ]
        return [(a, t) for (_k, a), t in out if args is None or a == args]

    def crash_now(self, c: Cand, i: int, lose_unflushed: bool) -> list[Cand]:
        """The spec's BrokerCrash(i). A power failure is the spec's crash, which keeps the
        flushed prefix in lose-unflushed mode; a process crash keeps the whole log (the OS page
        cache survives): in that mode it is the spec's BrokerFlush, hidden, then BrokerCrash.
        A crashing leader may have answered a parked fetch it never logged (``_parked``)."""
        s, pend, ack = c
        pend = _parked(self, s, pend, i)
        pre = [s]
        if self.flushed and not lose_unflushed:
            pre = [t for _a, t in self.steps(s, "BrokerFlush", (i,))] or [s]
        return [(t, pend, ack) for p in pre for _a, t in self.steps(p, "BrokerCrash", (i,))]

    def force_crash(self, i: int) -> None:
        """Broker ``i`` is seen again: its deferred crash happened before, in every candidate."""
        lose = self.down.pop(i)
        out: list[Cand] = []
        for c in self.cands:
            if not c[0].replicas[i].alive:
                out.append(c)  # inserted already (hidden closure)
            else:
                out.extend(self.crash_now(c, i, lose))
        self.cands = list(dict.fromkeys(out))

    def session_steps(self, c: Cand, i: int) -> list[Cand]:
        """The hidden session steps of paused broker ``i``: its session expires (if it can), or
        it is renewed (if it expired)."""
        s, pend, ack = c
        f = s.faults
        name = "BrokerRenewSession" if f.expired >> i & 1 else "CoordinationExpireSession"
        return [(t, pend, ack) for _a, t in self.steps(s, name, (i,))]

    def force_resume(self, i: int) -> None:
        """Paused broker ``i`` is seen again: it resumed, and registered a new session if its
        old one had expired (the simulation registers before anything else the broker does)."""
        self.paused.discard(i)
        out: list[Cand] = []
        for c in self.cands:
            if c[0].faults.expired >> i & 1:
                out.extend(self.session_steps(c, i))
            else:
                out.append(c)
        self.cands = list(dict.fromkeys(out))

    def last_isr_writes(self, c: Cand, l: int) -> list[Cand]:
        """ISR writes of a crashed leader (crash deferred, so still leading in the candidate)
        that landed in the coordination service before it crashed: the leader traces its
        LeaderShrinkIsr/LeaderExpandIsr when the compare-and-set's answer arrives, which a
        crash prevents. The spec's steps, preconditions and all (R7; a shrink may be R7's lag
        shrink, ``_shrink_one``); whatever they change in the leader's memory, its crash
        loses."""
        s, pend, ack = c
        r = s.replicas[l]
        if r.leader != l:
            return []
        out: list[Cand] = []
        for f in range(self.n):
            if f == l:
                continue
            if r.isr >> f & 1:
                got = _shrink_one(self, s, l, f)
            else:
                got = [_strip(t) for _a, t in self.steps(s, "LeaderExpandIsr", (l, f))]
            out.extend((t, pend, ack | g if g else ack) for t, g in got)
        return out

    def hidden_closure(self, cands: list[Cand], actor: int = -1) -> list[Cand]:
        """Every candidate with any subset of its in-flight LeaderAndIsr requests lost, any
        subset of its deferred crashes taken, paused brokers' sessions expired or renewed (and
        the acting broker restarted if it holds nothing on disk)."""
        seen = {c: None for c in cands}
        frontier = list(cands)
        while frontier:
            nxt = []
            for cand in frontier:
                s, pend, ack = cand
                for name in HIDDEN:
                    for _a, t in self.steps(s, name):
                        c = (t, pend, ack)
                        if c not in seen:
                            seen[c] = None
                            nxt.append(c)
                for i, lose in self.down.items():
                    if s.replicas[i].alive:
                        for c in self.crash_now(cand, i, lose) + self.last_isr_writes(cand, i):
                            if c not in seen:
                                seen[c] = None
                                nxt.append(c)
                for i in self.paused:
                    for c in self.session_steps(cand, i):
                        if c not in seen:
                            seen[c] = None
                            nxt.append(c)
                # a broker holding nothing of the partition on disk restarts without an event
                for a, t in self.steps(s, "BrokerRestart", (actor,)):
                    r = s.replicas[a[0]]
                    if not r.log and not r.hw_ckpt:
                        c = (t, pend, ack)
                        if c not in seen:
                            seen[c] = None
                            nxt.append(c)
            frontier = nxt
            if len(seen) > MAX_CANDIDATES:
                break
        return list(seen)

    # ---- one event ---------------------------------------------------------------------------
    def advance(self, ev: Event) -> None:
        handler = HANDLERS.get(ev["action"])
        if handler is None:
            if ev.get("impl"):
                return
            raise TraceInputError(f"unknown action {ev['action']!r}")
        prep = PREPARE.get(ev["action"])
        if prep is not None:
            prep(self, ev)
        node = ev.get("node")
        if ev["action"] in ("BrokerCrash", "BrokerRestart"):
            node = ev["args"].get("replica", node)
        actor = self.pm.index.get(node, -1) if isinstance(node, int) else -1
        if actor in self.paused and not ev["action"].startswith("Controller"):
            # (the controller's events are the controller's, wherever it runs: the simulation
            # may even run it on a paused broker, which the abstract controller does not mind)
            if ev["action"] == "BrokerCrash":
                self.paused.discard(actor)  # it dies paused: the crash ends any session
            else:
                self.force_resume(actor)
        if actor in self.down:
            self.force_crash(actor)
        mism: list[str] = []
        nxt = self._try(handler, ev, self.cands, mism)
        if not nxt:
            closed = self.hidden_closure(self.cands, actor)
            if len(closed) > len(self.cands):
                nxt = self._try(handler, ev, closed, mism)
        if not nxt:
            raise Rejection(_reason(ev), mism, self.cands)
        nxt = [_refresh_held(c) for c in nxt]
        if ev["action"] == "BrokerCrash":
            _crash_mark(self, ev)
        elif ev["action"] == "BrokerPause":
            self.paused.add(self.pm.rep(ev["args"].get("replica", ev["node"])))
        self.fired.add(ev["action"])
        before, after = self.cands[0][0], nxt[0][0]
        if before.replicas is not after.replicas:
            for i in range(self.n):
                a, b = _role(before, i), _role(after, i)
                if a != b:
                    self.transitions.add((a, b))
        if len(nxt) > 1:
            nxt = list(dict.fromkeys(nxt))
            if len(nxt) > MAX_CANDIDATES:
                raise OverflowError(len(nxt))
            self.max_cands = max(self.max_cands, len(nxt))
        self.cands = nxt

    def _try(self, handler: Callable, ev: Event, cands: list[Cand], mism: list[str]) -> list[Cand]:
        out: list[Cand] = []
        for c in cands:
            out.extend(handler(self, ev, c, mism))
        return out

    # ---- helpers for handlers ----------------------------------------------------------------
    def fit(
        self, ev: Event, i: int, t: State, gained: frozenset, mism: list[str]
    ) -> tuple[State, frozenset] | None:
        """``check``, plus R4's joining-follower rule: a leader's HW may be held below the
        spec's min-over-ISR by a follower whose ISR expansion is in flight (its remote LEO is
        the observed HW, it is not yet in the ISR). The candidate keeps the lower HW, and the
        acknowledgements the spec made above it wait (VALIDATION.md, "HW held by a joining
        follower")."""
        if self.check(ev, i, t, mism):
            return t, gained
        st = ev.get("state") or {}
        obs = st.get("hw")
        r = t.replicas[i]
        if not (isinstance(obs, int) and r.alive and r.leader == i and obs < r.hw):
            return None
        joining = [
            j for j in range(self.n)
            if j != i and not r.isr >> j & 1 and r.remote_leo[j] == obs
        ]  # fmt: skip
        if not joining:
            return None
        late = sorted(o for o, _n in gained if o >= obs)
        nr = r._replace(hw=obs, pending=tuple(sorted(set(r.pending) | set(late))))
        t2 = State(
            t.replicas[:i] + (nr,) + t.replicas[i + 1 :], t.coord, t.requests, t.history, t.faults
        )
        mism.pop()
        if not self.check(ev, i, t2, mism):
            return None
        return t2, frozenset(x for x in gained if x[0] < obs)

    def check(self, ev: Event, i: int, t: State, mism: list[str], leo_only: bool = False) -> bool:
        st = ev.get("state")
        if not st:
            return True
        tail = st.get("log_append")
        if "log" in st and len(st["log"]) > 256:
            st = {k: v for k, v in st.items() if k != "log"}
            if tail is None:
                tail = []
        bad = observe_mismatch(self.pm, i, t.replicas[i], st, tail, leo_only)
        if bad:
            mism.append(f"{ev['action']}: {bad}")
            return False
        return True


def _follow_truncations(s: State, t: State) -> State:
    """The flushed prefix (R14) of a replica whose log the step cut follows it down (the spec's
    ``clamp_offsets``, which its Next applies after every step). Only logs cut relative to
    ``s`` count: a validator step on a virtual replica (a stale fetch's follower as it was)
    must not lower the real one's."""
    fl = t.faults.flushed
    new = list(fl)
    for i, (a, b) in enumerate(zip(s.replicas, t.replicas, strict=True)):
        if a is not b and len(b.log) < len(a.log) and fl[i] > len(b.log):
            new[i] = len(b.log)
    if new == list(fl):
        return t
    return t._replace(faults=t.faults._replace(flushed=tuple(new)))


def _role(s: State, i: int) -> str:
    r = s.replicas[i]
    if not r.alive:
        return "crashed"
    if r.leader == i:
        return "leader"
    return "follower" if r.leader >= 0 else "none"


def _refresh_held(c: Cand) -> Cand:
    """A held fetch response is built when it is sent, which may be after the serve (a parked
    fetch): its HW is any HW its leader had at that epoch since, so the largest is remembered,
    and its entries come from the leader's log as last seen leading at that epoch (a power
    failure may cut that log before the follower applies the response, R14)."""
    s, pend, ack = c
    if not any(pend):
        return c
    reps = s.replicas
    new = list(pend)
    changed = False
    for f, hs in enumerate(pend):
        for k, h in enumerate(hs):
            lr = reps[h[0]]
            leading = lr.alive and lr.leader == h[0] and lr.epoch == h[1]
            if leading and (lr.hw > h[4] or lr.log is not h[5]):
                h2 = (h[0], h[1], h[2], h[3], max(lr.hw, h[4]), lr.log)
                new[f] = new[f][:k] + (h2,) + new[f][k + 1 :]
                changed = True
    return (s, tuple(new), ack) if changed else c


MAX_HELD = 4  # fetch responses held per follower; more than one only with duplicated requests


def _hold(pend: Pending, f: int, held: tuple) -> Pending:
    """``pend`` with ``held`` (leader, epoch, offset, HW at serve, HW since, leader's log) added
    to follower ``f``'s responses in flight. A duplicated fetch request (R8: the network may
    duplicate) is served twice, and the follower applies whichever response still fits its
    log: one held response per (leader, epoch, offset), the oldest dropped beyond MAX_HELD."""
    hs = tuple(h for h in pend[f] if h[:3] != held[:3])[-(MAX_HELD - 1) :] + (held,)
    return pend[:f] + (hs,) + pend[f + 1 :]


def _parked(v: PartitionValidator, s: State, pend: Pending, l: int) -> Pending:
    """Responses leader ``l`` may have sent before it crashes without logging a serve (R2, R3;
    VALIDATION.md, mapping decision 11 a): a
    follower fetching at the offset the leader has already recorded changes nothing there
    (the leader logs only changes), and the leader answers it when data arrives (a parked
    fetch). Such a response is the spec's FollowerFetch with an unchanged leader half (as in
    ``_fetch_apply`` for a live leader), held with the leader's log as it is before the crash
    (a power failure cuts it). HW: anything up to the leader's."""
    lr = s.replicas[l]
    if not (lr.alive and lr.leader == l):
        return pend
    for f in range(v.n):
        r = s.replicas[f]
        if f == l or not r.alive or r.leader != l or lr.remote_leo[f] != len(r.log):
            continue
        if any(h[:3] == (l, lr.epoch, len(r.log)) for h in pend[f]):
            continue
        if v.steps(s, "FollowerFetch", (f, l)):
            pend = _hold(pend, f, (l, lr.epoch, len(r.log), 0, lr.hw, lr.log))
    return pend


def _without(pend: Pending, f: int, held: tuple | None = None) -> Pending:
    """``pend`` without ``held`` (every response of ``f`` if None: it truncated, so none fits)."""
    hs = () if held is None else tuple(h for h in pend[f] if h is not held)
    return pend[:f] + (hs,) + pend[f + 1 :]


def _reason(ev: Event) -> str:
    return f"no spec step explains {ev['action']}({_fmt_args(ev.get('args', {}))}) at node {ev['node']}"


def _fmt_args(args: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in args.items())


# ---- handlers: (validator, event, candidate, mismatches) -> next candidates ------------------
def _generic(
    name: str,
    args_of: Callable[[PartitionValidator, Event], tuple],
    actor: Callable[[PartitionValidator, Event], int],
    stutter: Callable[[PartitionValidator, Event, State, int], bool] | None = None,
) -> Callable:
    def handler(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
        s, pend, ack = c
        args = args_of(v, ev)
        i = actor(v, ev)
        out: list[Cand] = []
        for _a, t in v.steps(s, name, args):
            t, gained = _strip(t)
            got = (t, gained) if i < 0 else v.fit(ev, i, t, gained, mism)
            if got is not None:
                t, gained = got
                out.append((t, pend, ack | gained if gained else ack))
        if stutter is not None and stutter(v, ev, s, i) and (i < 0 or v.check(ev, i, s, mism)):
            out.append(c)
        if not out and not mism:
            mism.append(f"{name}{args} is not enabled")
        return out

    return handler


def _node(v: PartitionValidator, ev: Event) -> int:
    return v.pm.rep(ev["node"])


def _arg_rep(key: str) -> Callable[[PartitionValidator, Event], int]:
    return lambda v, ev: v.pm.rep(ev["args"][key])


def _view_is(v: PartitionValidator, ev: Event, s: State, i: int) -> bool:
    """Become* already applied (the implementation's first election is the spec's Init)."""
    a = ev["args"]
    r = s.replicas[i]
    leader = v.pm.rep_or_none(a.get("leader", ev["node"]))
    return r.alive and r.epoch == v.pm.epoch(a["epoch"]) and r.leader == leader


def _coord_is(v: PartitionValidator, ev: Event, s: State, i: int) -> bool:
    co = (ev.get("state") or {}).get("coord")
    return co is not None and _coord_matches(v, co, s)


def _coord_matches(v: PartitionValidator, co: dict, s: State) -> bool:
    c = s.coord
    return (
        v.pm.rep_or_none(co["leader"]) == c.leader
        and v.pm.epoch(co["leader_epoch"]) == c.epoch
        and v.pm.mask(co["isr"]) == c.isr
    )


def _controller(name: str, arg: str) -> Callable:
    def handler(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
        s, pend, ack = c
        out: list[Cand] = []
        co = (ev.get("state") or {}).get("coord")
        args = (v.pm.rep(ev["args"][arg]),)
        for _a, t in v.steps(s, name, args):
            if co is None or _coord_matches(v, co, t):
                out.append((t, pend, ack))
            else:
                mism.append(f"{name}: coordination {co} differs from the spec's {t.coord}")
        if co is not None and _coord_matches(v, co, s) and name == "ControllerElectLeader":
            out.append(c)  # the first election: the spec's initial state
        if not out and not mism:
            mism.append(f"{name}{args} is not enabled (leader not lost, or epoch bound)")
        return out

    return handler


def _offline_prepare(v: PartitionValidator, ev: Event) -> None:
    """An offline write's epoch is skipped by the epoch mapping from now on (it is in the trace,
    so every candidate sees it)."""
    co = (ev.get("state") or {}).get("coord")
    if int(ev["args"]["leader"]) < 0 and co is not None:
        v.pm.add_offline(int(co["leader_epoch"]))


def _offline(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
    """ControllerElectLeader(leader=-1): R9's offline partition. The implementation writes
    leader -1, the ISR kept and leader epoch + 1 (as Kafka); the spec's controller writes
    nothing (its recorded leader stays the dead one until a broker comes back). A stutter when
    the spec's leader is lost and it can elect nobody, with the recorded ISR equal; the written
    epoch is an offline epoch of the epoch mapping (VALIDATION.md, mapping decision 9). The
    brokers do not apply an offline state (nothing to follow, as Kafka's makeFollowers)."""
    s = c[0]
    co = (ev.get("state") or {}).get("coord")
    if not _leader_lost(s):
        mism.append("ControllerElectLeader(-1): the spec's recorded leader is not lost")
        return []
    if v.steps(s, "ControllerElectLeader"):
        mism.append("ControllerElectLeader(-1): the spec's controller can elect a leader")
        return []
    if co is not None and (
        v.pm.mask(co["isr"]) != s.coord.isr or v.pm.epoch(co["leader_epoch"]) != s.coord.epoch
    ):
        mism.append(
            f"ControllerElectLeader(-1): coordination {co} differs from the spec's {s.coord}"
        )
        return []
    return [c]


def _elect(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
    if int(ev["args"]["leader"]) < 0:
        return _offline(v, ev, c, mism)
    return _elect_leader(v, ev, c, mism)


def _stale_or_lost(name: str) -> Callable:
    """Requests dropped: the spec step if the request is in flight, else nothing happens (the
    implementation also drops duplicates and the controller's periodic re-sends)."""

    def handler(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
        s, pend, ack = c
        a = ev["args"]
        args = (v.pm.rep(a["replica"]), v.pm.epoch(a["epoch"]))
        out = [(t, pend, ack) for _a, t in v.steps(s, name, args)]
        out.append(c)
        return out

    return handler


def _produce_prepare(v: PartitionValidator, ev: Event) -> None:
    """Number the records in sending order (one number per send: retries get a new one)."""
    nxt = {c[0].history.next_record for c in v.cands}
    if len(nxt) != 1:  # every candidate has seen the same sends
        raise TraceInputError("candidates disagree on records written")
    base = nxt.pop()
    recs = ev["args"].get("records", [])
    ev["_nums"] = list(range(base + 1, base + 1 + len(recs)))
    del v.pm.rid_of[base + 1 :]
    v.pm.rid_of.extend(str(r) for r in recs)


def _produce(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
    i = _node(v, ev)
    refused = "error" in ev["args"]
    layer = [c]
    for num in ev["_nums"]:
        nl: list[Cand] = []
        for s, pend, ack in layer:
            for _a, t in v.steps(s, "ProducerSend", (i, num)):
                appended = len(t.replicas[i].log) > len(s.replicas[i].log)
                if appended == refused:
                    mism.append(
                        "ProducerSend: the spec "
                        + ("appends" if appended else "refuses (NotEnoughReplicas)")
                        + f" record {num}"
                    )
                    continue
                t, gained = _strip(t)
                nl.append((t, pend, ack | gained if gained else ack))
        layer = nl
    out = []
    for t, pend, ack in layer:
        got = v.fit(ev, i, t, ack - c[2], mism)
        if got is not None:
            out.append((got[0], pend, c[2] | got[1]))
    if not out and not mism:
        mism.append(f"ProducerSend({v.pm.broker(i)}) is not enabled (not a live presumed leader)")
    return out


def _fetch(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
    phase = ev["args"].get("phase")
    if phase == "serve":
        return _fetch_serve(v, ev, c, mism)
    if phase == "apply":
        return _fetch_apply(v, ev, c, mism)
    raise TraceInputError("FollowerFetch without phase serve/apply")


def _fetch_serve(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
    """The leader half of the spec's FollowerFetch: the spec step is taken with the follower's
    half held back until the follower applies the response (VALIDATION.md, "split fetch")."""
    s, pend, ack = c
    a = ev["args"]
    f, l, o = v.pm.rep(a["follower"]), v.pm.rep(a["leader"]), int(a["offset"])
    rf = s.replicas[f]
    out: list[Cand] = []
    if len(rf.log) == o and ("epoch" not in a or v.pm.epoch(a["epoch"]) == rf.epoch):
        # the follower is still where it sent the request from: the spec's own step
        steps = v.steps(s, "FollowerFetch", (f, l))
        if not steps and rf.truncating:
            # a request its previous incarnation sent before a bounce, at the same offset and
            # epoch: the follower now waits for its truncation (kip-101+), the request did not
            steps = _stale_fetch(v, s, f, l, o, a, mism)
        if not steps:
            mism.append(
                f"FollowerFetch({a['follower']}, {a['leader']}) is not enabled"
                " (leader not serving, fenced epoch or truncating follower)"
            )
    else:
        # the follower moved on (new epoch, truncation, crash) after sending the request: only
        # the leader half happens, on the follower's state at request time
        steps = _stale_fetch(v, s, f, l, o, a, mism)
    for _a, t in steps:
        t, gained = _strip(t)
        t = State(
            t.replicas[:f] + (rf,) + t.replicas[f + 1 :], t.coord, t.requests, t.history, t.faults
        )
        got = v.fit(ev, l, t, gained, mism)
        if got is not None:
            t, gained = got
            tl = t.replicas[l]
            held = (l, tl.epoch, o, tl.hw, tl.hw, tl.log)
            np = _hold(pend, f, held)
            out.append((t, np, ack | gained if gained else ack))
    return out


def _stale_fetch(
    v: PartitionValidator, s: State, f: int, l: int, o: int, a: dict, mism: list[str]
) -> list[tuple[tuple, State]]:
    """The spec's FollowerFetch(f, l) evaluated on the follower as it was when it sent the
    request (log cut or padded to the fetch offset, the request's epoch); only the leader's
    side of the result is kept by the caller."""
    lr = s.replicas[l]
    if not (lr.alive and lr.leader == l) or o > len(lr.log):
        mism.append("FollowerFetch serve: the leader does not serve (not leading, or offset > LEO)")
        return []
    epoch = v.pm.epoch(a["epoch"]) if "epoch" in a else lr.epoch
    rf = s.replicas[f]
    past = Replica(lr.log[:o], 0, 0, True, l, epoch, rf.isr, False, rf.remote_leo, False, ())
    virt = State(
        s.replicas[:f] + (past,) + s.replicas[f + 1 :], s.coord, s.requests, s.history, s.faults
    )
    steps = v.steps(virt, "FollowerFetch", (f, l))
    if not steps:
        mism.append("FollowerFetch serve: the spec's fetch is not enabled for the request's epoch")
    return steps


def _fetch_apply(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
    s, pend, ack = c
    a = ev["args"]
    f, l = v.pm.rep(a["follower"]), v.pm.rep(a["leader"])
    r = s.replicas[f]
    fits = [h for h in pend[f] if h[0] == l and h[1] == r.epoch and h[2] == len(r.log)]
    lr = s.replicas[l]
    helds: list[tuple] = []
    if r.alive and fits:
        helds.append(fits[-1])
    elif lr.remote_leo[f] == len(r.log) and v.steps(s, "FollowerFetch", (f, l)):
        # The leader logs a serve only when it changed something: a fetch at the offset the
        # leader already recorded is the spec's FollowerFetch with an unchanged leader half.
        helds.append((l, lr.epoch, len(r.log), 0, lr.hw, lr.log))
    if r.alive and not v.ctx.protocol.fenced_fetch:
        # Before KIP-320 a follower at an older epoch (a zombie, or one that missed a
        # LeaderAndIsr) also fetches from its leader at a newer one and applies whatever fits
        # its LEO: the responses held at another leader epoch are alternatives.
        helds += [h for h in pend[f][::-1] if h[0] == l and h[1] != r.epoch and h[2] == len(r.log)]
    if not helds:
        if pend[f]:
            hl, hepoch, o = pend[f][-1][:3]
            mism.append(
                f"FollowerFetch apply: the held response (leader {v.pm.broker(hl)}, epoch "
                f"{v.pm.trace_epoch(hepoch)}, offset {o}) does not fit the follower (leader "
                f"{v.pm.broker(r.leader)}, epoch {v.pm.trace_epoch(r.epoch)}, LEO {len(r.log)})"
            )
        else:
            mism.append("FollowerFetch apply: no fetch response of the spec is held for it")
        return []
    out: list[Cand] = []
    for held in helds:
        out.extend(_apply_held(v, ev, s, pend, ack, f, l, held, mism))
    return out


def _apply_held(
    v: PartitionValidator,
    ev: Event,
    s: State,
    pend: Pending,
    ack: frozenset,
    f: int,
    l: int,
    held: tuple,
    mism: list[str],
) -> list[Cand]:
    a = ev["args"]
    r = s.replicas[f]
    _hl, hepoch, o, hw0, hw1, hlog = held
    if r.leader != l:
        mism.append(f"FollowerFetch apply: the follower follows {v.pm.broker(r.leader)}")
        return []
    # The response was built between the serve and now (a parked fetch answers when data
    # arrives): the spec's fetch at the same offset, on the leader as it was then. A leader
    # never truncates while it leads, so its log now extends the one it sent from; its HW then
    # lies between the HW at serve time and its HW now. A leader that stopped leading since
    # (a crash, a power failure cutting its log) sent from its log as last seen leading.
    lr = s.replicas[l]
    leading = lr.alive and lr.leader == l and lr.epoch == hepoch
    src = lr.log if leading else hlog
    count = int(a.get("count", 0))
    if len(src) < o + count:
        mism.append(
            f"FollowerFetch apply: {count} records from offset {o}, the leader has {len(src)}"
        )
        return []
    log = r.log + src[o : o + count] if count else r.log
    lo = min(len(log), hw0)
    hi = min(len(log), max(hw1, lr.hw if leading else 0))
    obs = (ev.get("state") or {}).get("hw")
    hw = obs if isinstance(obs, int) and lo <= obs <= hi else hi
    nr = r._replace(log=log, hw=hw)
    t = State(
        s.replicas[:f] + (nr,) + s.replicas[f + 1 :], s.coord, s.requests, s.history, s.faults
    )
    if not v.check(ev, f, t, mism):
        return []
    return [(t, _without(pend, f, held), ack)]


def _truncate(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
    """FollowerTruncate: the spec's FollowerTruncate (KIP-101+), or the out-of-range branch of
    the spec's FollowerFetch (R12), or nothing at all when the log is already there."""
    s, pend, ack = c
    a = ev["args"]
    f, l = v.pm.rep(a["follower"]), v.pm.rep(a["leader"])
    out: list[Cand] = []
    for name in ("FollowerTruncate", "FollowerFetch"):
        for _a, t in v.steps(s, name, (f, l)):
            if name == "FollowerFetch" and len(t.replicas[f].log) >= len(s.replicas[f].log):
                continue
            t, _g = _strip(t)
            if v.check(ev, f, t, mism):
                np = _without(pend, f)
                out.append((t, np, ack))
    if not out and s.replicas[f].truncating:
        for t in _stale_truncate(v, s, f, l):
            if v.check(ev, f, t, mism):
                out.append((t, _without(pend, f), ack))
    if not out and not s.replicas[f].truncating:
        for t in _stale_out_of_range(v, s, f, l, int(a["offset"])):
            if v.check(ev, f, t, mism):
                out.append((t, _without(pend, f), ack))
    if not out and not s.replicas[f].truncating and v.check(ev, f, s, mism):
        out.append(c)
    return out


def _stale_truncate(v: PartitionValidator, s: State, f: int, l: int) -> list[State]:
    """The leader answered the follower's OffsetsForLeaderEpoch, then crashed or moved on before
    the follower applied the answer (the split of FollowerFetch, for truncation; the answer
    carries no event of its own). The spec's FollowerTruncate is taken on the leader as it was
    when it answered: leading in the follower's epoch (fencing), with its log now, which extends
    its log then; the truncation point depends only on entries the follower could have fetched
    from it, which were there then. Only the follower's side is kept."""
    r, lr = s.replicas[f], s.replicas[l]
    if r.leader != l or (lr.alive and lr.leader == l and lr.epoch == r.epoch):
        return []
    past = Replica(
        lr.log, lr.hw, lr.hw_ckpt, True, l, r.epoch, lr.isr, False, lr.remote_leo, False, ()
    )
    virt = State(
        s.replicas[:l] + (past,) + s.replicas[l + 1 :], s.coord, s.requests, s.history, s.faults
    )
    out = []
    for _a, t in v.steps(virt, "FollowerTruncate", (f, l)):
        t = _strip(t)[0]
        out.append(t._replace(replicas=t.replicas[:l] + (lr,) + t.replicas[l + 1 :]))
    return out


def _stale_out_of_range(v: PartitionValidator, s: State, f: int, l: int, o: int) -> list[State]:
    """R12's out-of-range answer, applied after the leader appended more: the follower fetched
    past the leader's log end, the leader answered with its LEO ``o`` then, and has appended
    since (the split of FollowerFetch: the serve changed nothing on the leader, so it is not
    logged). The spec's FollowerFetch is taken on the leader as it was: leading at the same
    epoch since, its log then is its log now cut to ``o``, no shorter than where its epoch
    began. Only the follower's side is kept."""
    r, lr = s.replicas[f], s.replicas[l]
    if not (r.leader == l and lr.alive and lr.leader == l and lr.epoch == r.epoch):
        return []
    if not (epoch_start(lr.log, lr.epoch) <= o < len(lr.log) and o < len(r.log)):
        return []
    past = lr._replace(log=lr.log[:o], hw=min(lr.hw, o))
    virt = State(
        s.replicas[:l] + (past,) + s.replicas[l + 1 :], s.coord, s.requests, s.history, s.faults
    )
    out = []
    for _a, t in v.steps(virt, "FollowerFetch", (f, l)):
        if len(t.replicas[f].log) == o:
            t = _strip(t)[0]
            out.append(t._replace(replicas=t.replicas[:l] + (lr,) + t.replicas[l + 1 :]))
    return out


def _shrink(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
    """LeaderShrinkIsr. The implementation removes every laggard in one compare-and-set and
    logs one event per removed follower, each with the state after the whole write: the spec
    steps for the other removed followers are taken with the first, the later events stutter.
    R7 shrinks a follower with no fetch reaching the LEO for the lag time, which includes a
    caught-up follower that stopped fetching (dead, partitioned); the spec only shrinks followers
    whose remote LEO is below the LEO. Such a shrink is taken as the spec's step on the leader's
    view with that follower's LEO unknown (its last fetch is older than the lag time), and the
    view restored after it (VALIDATION.md, "lag shrink")."""
    s, pend, ack = c
    l, f = v.pm.rep(ev["args"]["leader"]), v.pm.rep(ev["args"]["follower"])
    lr = s.replicas[l]
    obs = (ev.get("state") or {}).get("isr")
    target = v.pm.mask(obs) if isinstance(obs, list) else lr.isr & ~(1 << f)
    if not lr.isr >> f & 1:
        return [c] if lr.isr == target and v.check(ev, l, s, mism) else []
    layer = [(s, frozenset())]
    for j in [f] + [j for j in range(v.n) if j != f and lr.isr >> j & 1 and not target >> j & 1]:
        layer = [(t, g | g0) for s0, g0 in layer for t, g in _shrink_one(v, s0, l, j)]
    out: list[Cand] = []
    for t, gained in layer:
        got = v.fit(ev, l, t, gained, mism)
        if got is not None:
            out.append((got[0], pend, ack | got[1] if got[1] else ack))
    if not out and not mism:
        mism.append(
            f"LeaderShrinkIsr({ev['args']['leader']}, {ev['args']['follower']}) is not enabled"
        )
    return out


def _shrink_one(v: PartitionValidator, s: State, l: int, f: int) -> list[tuple[State, frozenset]]:
    out = [_strip(t) for _a, t in v.steps(s, "LeaderShrinkIsr", (l, f))]
    if out:
        return out
    lr = s.replicas[l]
    if lr.remote_leo[f] < len(lr.log):
        return []
    rl = lr.remote_leo
    virt_r = lr._replace(remote_leo=rl[:f] + (-1,) + rl[f + 1 :])
    virt = State(
        s.replicas[:l] + (virt_r,) + s.replicas[l + 1 :], s.coord, s.requests, s.history, s.faults
    )
    for _a, t in v.steps(virt, "LeaderShrinkIsr", (l, f)):
        t, gained = _strip(t)
        tr = t.replicas[l]
        t = State(
            t.replicas[:l] + (tr._replace(remote_leo=rl),) + t.replicas[l + 1 :],
            t.coord,
            t.requests,
            t.history,
            t.faults,
        )
        out.append((t, gained))
    return out


def _consume(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
    """ConsumerFetch changes only the spec's history (what consumers saw); its condition is
    checked here directly: a live replica presuming to lead returns offsets below its HW (R5)."""
    s = c[0]
    i = _node(v, ev)
    r = s.replicas[i]
    a = ev["args"]
    o = int(a.get("offset", 0))
    recs = a.get("records", [])
    if not (r.alive and r.leader == i):
        mism.append("ConsumerFetch: the replica does not presume to lead")
        return []
    if o + len(recs) > r.hw:
        mism.append(f"ConsumerFetch: offsets {o}..{o + len(recs) - 1} are not below the HW {r.hw}")
        return []
    for k, rid in enumerate(recs):
        if v.pm.rid_of[r.log[o + k][0]] != rid:
            mism.append(f"ConsumerFetch: offset {o + k} is not {rid} in the spec")
            return []
    return [c] if v.check(ev, i, s, mism) else []


def _acked(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
    """ProduceAcked (implementation history): each acknowledged (offset, record) must be one the
    spec acknowledged (acks=all: committed, R6)."""
    s, pend, ack = c
    a = ev["args"]
    base = int(a.get("base_offset", 0))
    rid_of = v.pm.rid_of
    left = set(ack)
    for k, rid in enumerate(a.get("records", [])):
        hit = next((x for x in left if x[0] == base + k and rid_of[x[1]] == rid), None)
        if hit is None:
            mism.append(
                f"ProduceAcked: {rid} at offset {base + k} acknowledged, but the spec has not "
                "acknowledged it (not committed)"
            )
            return []
        left.discard(hit)
    return [(s, pend, frozenset(left))]


def _crash_prepare(v: PartitionValidator, ev: Event) -> None:
    """Only the online validator gets here: its spec is built before any power failure is seen
    (an offline trace with one selects lose-unflushed, ``mapping.derive_config``)."""
    if ev["args"].get("lose_unflushed") and not v.flushed:
        raise Unsupported(
            "unflushed-tail-loss", detail="a power failure needs the spec's --lose-unflushed mode"
        )


def _crash(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
    """BrokerCrash: deferred (VALIDATION.md, mapping decision 8; R8, R9). Until its session
    expires a crashed broker is, to every other node, a live broker taking no steps, and the
    implementation's controller treats it so; the spec's controller sees a crash at once. So
    the candidates stay as they are and the broker is marked down; the spec's BrokerCrash
    (``PartitionValidator.crash_now``: a power failure keeps the flushed prefix, R14; a process
    crash the whole log) is inserted when an event cannot be explained without it (a
    controller reacting to the expired session), at the latest before the broker's next event
    (its BrokerRestart). Nothing of the replica changes in between (it takes no steps), so the
    late crash drops exactly what the implementation's did.

    A broker already down here crashed again without an event of this partition since: only
    possible if it held nothing of it on disk (no directory, no BrokerRestart), so the spec's
    restart is inserted first."""
    s, pend, ack = c
    i = v.pm.rep(ev["args"]["replica"])
    r = s.replicas[i]
    if not r.alive:
        if r.log or r.hw_ckpt:
            mism.append(f"BrokerCrash({ev['args']['replica']}): crashed, and never restarted")
            return []
        return [(t, pend, ack) for _a, t in v.steps(s, "BrokerRestart", (i,))]
    return [c]


def _pause(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
    """BrokerPause: nothing happens in the spec (VALIDATION.md, mapping decision 12; R8). A
    paused broker takes no steps; its session may expire meanwhile, and the controller then
    reacts as to a crash, but the implementation does not log the expiry, nor the renewal when
    the broker resumes: both are hidden steps (``PartitionValidator.session_steps``), inserted
    when an event needs them, the renewal at the latest before the broker's next event. The
    broker must be running."""
    i = v.pm.rep(ev["args"].get("replica", ev["node"]))
    if not c[0].replicas[i].alive:
        mism.append(f"BrokerPause({ev['args'].get('replica')}): the spec's broker is down")
        return []
    return [c]


def _crash_mark(v: PartitionValidator, ev: Event) -> None:
    v.down[v.pm.rep(ev["args"]["replica"])] = bool(ev["args"].get("lose_unflushed"))


def _flush(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
    """BrokerFlush: the spec's BrokerFlush (the log fsynced to its end, R14), or a stutter when
    it already is. The observed ``flushed`` must be the log end. Without lose-unflushed the
    spec has no such action (every crash keeps the log): a flush changes nothing it tracks."""
    s, pend, ack = c
    i = v.pm.rep(ev["args"]["replica"])
    r = s.replicas[i]
    obs = (ev.get("state") or {}).get("flushed")
    if not v.flushed:
        if isinstance(obs, int) and obs != len(r.log):
            mism.append(f"BrokerFlush: flushed={obs} but the spec's log ends at {len(r.log)}")
            return []
        return [c] if v.check(ev, i, s, mism) else []
    nxt = [t for _a, t in v.steps(s, "BrokerFlush", (i,))]
    if r.alive and s.faults.flushed[i] >= len(r.log):
        nxt.append(s)  # already flushed to the end
    out: list[Cand] = []
    for t in nxt:
        fl = t.faults.flushed[i]
        if isinstance(obs, int) and obs != fl:
            mism.append(f"BrokerFlush: flushed={obs} but the spec has flushed {fl}")
        elif v.check(ev, i, t, mism):
            out.append((t, pend, ack))
    if not out and not mism:
        mism.append(f"BrokerFlush({ev['args']['replica']}) is not enabled (not a live replica)")
    return out


_elect_leader = _controller("ControllerElectLeader", "leader")

HANDLERS: dict[str, Callable] = {
    "ControllerElectLeader": _elect,
    "ControllerShrinkIsr": _controller("ControllerShrinkIsr", "replica"),
    "BrokerBecomeLeader": _generic(
        "BrokerBecomeLeader",
        lambda v, ev: (v.pm.rep(ev["args"]["replica"]), v.pm.epoch(ev["args"]["epoch"])),
        _arg_rep("replica"),
        _view_is,
    ),
    "BrokerBecomeFollower": _generic(
        "BrokerBecomeFollower",
        lambda v, ev: (
            v.pm.rep(ev["args"]["replica"]),
            v.pm.rep_or_none(ev["args"]["leader"]),
            v.pm.epoch(ev["args"]["epoch"]),
        ),
        _arg_rep("replica"),
        _view_is,
    ),
    "BrokerIgnoreStaleRequest": _stale_or_lost("BrokerIgnoreStaleRequest"),
    "NetworkLoseLeaderAndIsr": _stale_or_lost("NetworkLoseLeaderAndIsr"),
    "ProducerSend": _produce,
    "FollowerFetch": _fetch,
    "FollowerTruncate": _truncate,
    "LeaderShrinkIsr": lambda v, ev, c, mism: _shrink(v, ev, c, mism),
    "LeaderExpandIsr": _generic(
        "LeaderExpandIsr",
        lambda v, ev: (v.pm.rep(ev["args"]["leader"]), v.pm.rep(ev["args"]["follower"])),
        _arg_rep("leader"),
    ),
    "ConsumerFetch": _consume,
    "BrokerCheckpointHw": _generic(
        "BrokerCheckpointHw",
        lambda v, ev: (v.pm.rep(ev["args"]["replica"]),),
        _arg_rep("replica"),
        lambda v, ev, s, i: True,
    ),
    "BrokerCrash": _crash,
    "BrokerPause": _pause,
    "BrokerFlush": _flush,
    "BrokerRestart": _generic(
        "BrokerRestart", lambda v, ev: (v.pm.rep(ev["args"]["replica"]),), _arg_rep("replica")
    ),
    "ProduceAcked": _acked,
}
PREPARE: dict[str, Callable] = {
    "ProducerSend": _produce_prepare,
    "BrokerCrash": _crash_prepare,
    "ControllerElectLeader": _offline_prepare,
}


# ---- whole traces -------------------------------------------------------------------------
def derive_assignments(events: list[Event]) -> dict[str, list[int]]:
    """Per-broker cluster files carry no assignment: rebuild it by R1 placement (replica j of
    partition i on broker (i + j) mod n over the sorted brokers), the replication factor being
    the largest ISR recorded for the partition (every replica starts in the ISR)."""
    brokers = sorted({int(e["node"]) for e in events if isinstance(e.get("node"), int)})
    width: dict[str, int] = {}
    for e in events:
        k = part_key(e)
        if k is None:
            continue
        st = e.get("state") or {}
        isr = (st.get("coord") or {}).get("isr", st.get("isr", []))
        width[k] = max(width.get(k, 0), len(isr))
    out = {}
    for k, rf in width.items():
        i = int(k.rsplit("-", 1)[1])
        out[k] = [brokers[(i + j) % len(brokers)] for j in range(rf)]
    return out


def _hosts(reps: list[Any], ev: Event) -> bool:
    """Whether a broker-wide event (no topic: ``BrokerCrash``, ``BrokerPause``) concerns a
    partition with replicas ``reps``: only if its broker holds one of them. With replication
    below the broker count, a crash of a broker outside the partition is not an event of it."""
    b = (ev.get("args") or {}).get("replica", ev.get("node"))
    return not isinstance(b, int) or b in {int(x) for x in reps}


def split_partitions(header: dict[str, Any], events: list[Event]) -> dict[str, list[Event]]:
    """The events of each partition: its own, and the broker-wide ones of its brokers."""
    assignments = (header.get("cluster") or {}).get("assignments") or {}
    parts: dict[str, list[Event]] = {k: [] for k in assignments}
    for ev in events:
        k = part_key(ev)
        if k is None:
            for key, lst in parts.items():
                if _hosts(assignments[key], ev):
                    lst.append(ev)
        else:
            if k not in parts:
                raise TraceInputError(f"event for partition {k} not in the header's assignments")
            parts[k].append(ev)
    return parts


@gc_paused
def validate_events(
    header: dict[str, Any],
    events: list[Event],
    name: str = "trace",
    on_step: Callable | None = None,
) -> Verdict:
    """Validate one merged trace (header + events in merge order), with the cyclic garbage
    collector paused: its full collections walk every live state and made long traces
    super-linear (see checker.nogc)."""
    import time

    t0 = time.perf_counter()
    v = Verdict(name, ACCEPTED, events=len(events))
    try:
        if not (header.get("cluster") or {}).get("assignments"):
            header = {**header, "cluster": {"assignments": derive_assignments(events)}}
        _check_header(header)
        for idx, ev in enumerate(events):
            mode = UNSUPPORTED_IMPL.get(ev.get("action", ""))
            if mode:
                raise Unsupported(mode, idx)
        parts = split_partitions(header, events)
        v.partitions = len(parts)
        assignments = header["cluster"]["assignments"]
        index_of = {id(ev): k for k, ev in enumerate(events)}
        for key, evs in sorted(parts.items()):
            pm = PartitionMap(key, [int(b) for b in assignments[key]])
            cfg = derive_config(header, evs, len(pm.brokers))
            pv = PartitionValidator(pm, IsrSpec(cfg))
            for ev in evs:
                if ev.get("impl") and ev["action"] in IGNORED_IMPL:
                    continue
                try:
                    pv.advance(ev)
                except Rejection as rj:
                    v.verdict = REJECTED
                    v.reason = f"{key}: {rj.reason}"
                    v.index = index_of[id(ev)]
                    v.event = {k: x for k, x in ev.items() if not k.startswith("_")}
                    v.mismatches = list(dict.fromkeys(rj.mismatches))[:8]
                    v.candidates, v.enabled = _describe(pv, rj.cands)
                    v.max_candidates = max(v.max_candidates, pv.max_cands)
                    return v
                except (Unsupported, TraceInputError) as e:
                    if isinstance(e, Unsupported) and e.index is None:
                        e.index = index_of[id(ev)]
                    raise
                except OverflowError as e:
                    v.verdict = INCOMPLETE
                    v.reason = f"{key}: candidate set exceeded {MAX_CANDIDATES} ({e})"
                    v.index = index_of[id(ev)]
                    return v
                except (KeyError, TypeError, ValueError, IndexError) as e:
                    raise TraceInputError(
                        f"event {index_of[id(ev)]} ({ev.get('action')}): malformed: {e!r}"
                    ) from None
                if on_step is not None:
                    on_step(key, ev, pv)
            v.max_candidates = max(v.max_candidates, pv.max_cands)
            v.fired |= pv.fired
            v.transitions |= pv.transitions
    except Unsupported as e:
        v.verdict = UNSUPPORTED
        v.reason = f"unsupported: {e.mode}" + (f" ({e.detail})" if e.detail else "")
        v.index = e.index
        if e.index is not None:
            v.event = events[e.index]
    except TraceInputError as e:
        v.verdict = BAD_INPUT
        v.reason = str(e)
    finally:
        v.seconds = time.perf_counter() - t0
    return v


def _check_header(header: dict[str, Any]) -> None:
    from spec.config import PROTOCOL_NAMES

    if header.get("protocol") not in PROTOCOL_NAMES:
        raise TraceInputError(f"unknown protocol {header.get('protocol')!r} in the header")
    cl = header.get("cluster") or {}
    if not cl.get("assignments"):
        raise TraceInputError("the header has no cluster.assignments")
    for k, reps in cl["assignments"].items():
        if not 2 <= len(reps) <= 5:
            raise Unsupported(
                "replication-factor", detail=f"{k} has {len(reps)} replicas; the spec models 2..5"
            )


def _describe(pv: PartitionValidator, cands: list[Cand]) -> tuple[list, list]:
    spec = pv.spec
    states, enabled = [], []
    for s, _p, _a in cands[:3]:
        states.append(spec.state_to_json(s))
        names = []
        for (kind, args), _t in spec.successors(s):
            d = spec.describe_action((kind, args))
            names.append(f"{d['action']}({_fmt_args(d['args'])})")
        enabled.append(names)
    return states, enabled


def read_trace_texts(paths: Iterable[str | Path]) -> tuple[dict[str, Any], list[Event]]:
    """Read one or more files of one run and merge them by Lamport clock (FORMAT.md)."""
    heads, events = tformat.merge_files(paths)
    return _run_header(heads), events


def _run_header(heads: list[dict[str, Any]]) -> dict[str, Any]:
    """The header of a run of several files: the one with the cluster layout."""
    head = next((h for h in heads if h.get("cluster")), heads[0])
    protos = {h.get("protocol") for h in heads}
    if len(protos) > 1:
        raise TraceInputError(f"files of one run disagree on the protocol: {sorted(protos)}")
    return head


def _parse_stream(text: str, name: str) -> tuple[dict[str, Any], list[Event]]:
    import json

    head = None
    events: list[Event] = []
    for ln, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = tformat.parse_line(line)
        except json.JSONDecodeError as e:
            raise TraceInputError(f"{name}:{ln}: not JSON: {e.msg}") from None
        if head is None:
            if obj.get("format") != tformat.FORMAT:
                raise TraceInputError(f"{name}: not an {tformat.FORMAT} file (no header line)")
            head = obj
        elif obj.get("format") == tformat.FORMAT:
            continue
        else:
            events.append(obj)
    if head is None:
        raise TraceInputError(f"{name}: empty trace")
    return head, events


def parse_text(text: str | list[str], name: str = "trace") -> tuple[dict[str, Any], list[Event]]:
    """One run from the text of its file, or of its per-process files (merged by clock)."""
    parsed = [_parse_stream(t, name) for t in ([text] if isinstance(text, str) else text)]
    if not parsed:
        raise TraceInputError(f"{name}: no trace files")
    return _run_header([h for h, _e in parsed]), tformat.merge([e for _h, e in parsed])


def validate_text(text: str | list[str], name: str = "trace") -> Verdict:
    try:
        head, events = parse_text(text, name)
    except TraceInputError as e:
        return Verdict(name, BAD_INPUT, reason=str(e))
    return validate_events(head, events, name)


def validate_paths(
    paths: list[str | Path], name: str | None = None, on_step: Callable | None = None
) -> Verdict:
    nm = name or ",".join(str(p) for p in paths)
    try:
        head, events = read_trace_texts(paths)
    except (OSError, ValueError) as e:
        return Verdict(nm, BAD_INPUT, reason=str(e).splitlines()[0])
    return validate_events(head, events, nm, on_step)


def replica_of(pv: PartitionValidator, broker: int) -> Replica:
    return pv.cands[0][0].replicas[pv.pm.rep(broker)]


class OnlineValidator:
    """Checks events as they happen (issue 6, item 5): the bounds cannot come from a trace that
    is not written yet, so they are generous (they only cap what the spec may do)."""

    def __init__(self, header: dict[str, Any], records: int = 10_000, epochs: int = 1_000):
        from spec import Config

        _check_header(header)
        self.parts: dict[str, PartitionValidator] = {}
        cfg = header.get("config") or {}
        for key, reps in header["cluster"]["assignments"].items():
            pm = PartitionMap(key, [int(b) for b in reps])
            n = len(pm.brokers)
            spec = IsrSpec(
                Config(
                    replicas=n,
                    records=records,
                    epochs=epochs,
                    crashes=10_000,
                    acks="all",
                    min_isr=max(1, min(int(cfg.get("min_insync_replicas", 1)), n)),
                    protocol=header["protocol"],
                    session_expiries=10_000,
                )
            )
            self.parts[key] = PartitionValidator(pm, spec)
        self.seen = 0

    def feed(self, events: list[Event]) -> None:
        """Advance by ``events``; raises Rejection or Unsupported at the first bad one."""
        for ev in events:
            self.seen += 1
            mode = UNSUPPORTED_IMPL.get(ev.get("action", ""))
            if mode:
                raise Unsupported(mode, self.seen - 1)
            if ev.get("impl") and ev["action"] in IGNORED_IMPL:
                continue
            k = part_key(ev)
            if k is None:
                targets = [pv for pv in self.parts.values() if _hosts(pv.pm.brokers, ev)]
            else:
                targets = [self.parts[k]]
            for pv in targets:
                pv.advance(ev)
