"""The per-partition validator: the candidate set of one partition, advanced event by event.

``PartitionValidator.advance`` runs the handler of the event's action (``handlers/``) on every
candidate, inserting the hidden steps the implementation does not log (lost LeaderAndIsr
requests, deferred crashes, a crashed leader's last ISR writes, paused brokers' session expiry
and renewal) when no candidate explains the event (VALIDATION.md).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from isr.spec import IsrSpec
from isr.spec.shared_log import SharedLog
from isr.spec.state import State

from .candidates import (
    MAX_CANDIDATES,
    Cand,
    Rejection,
    follow_truncations,
    reason_of,
    refresh_held,
    strip_history,
)
from .handlers import HANDLERS, PREPARE
from .handlers.broker import mark_crash
from .handlers.fetch import parked_answers, parked_responses
from .handlers.leader import shrink_one
from .mapping import (
    Event,
    PartitionMap,
    TraceInputError,
    observe_mismatch,
    producer_answer_only,
)

HIDDEN = ("NetworkLoseLeaderAndIsr",)  # spec steps the implementation never logs
# The actions of the atomic fetch and ISR write (every version but kraft) and of kraft's split
# fetch and AlterPartition: a trace naming one its version does not have is bad input.
ATOMIC_ONLY = frozenset({"FollowerFetch", "FollowerTruncate", "LeaderShrinkIsr", "LeaderExpandIsr"})
KRAFT_ONLY = frozenset(
    {
        "FollowerSendFetch",
        "LeaderHandleFetch",
        "FollowerHandleFetchResponse",
        "LeaderSendAlterPartition",
        "ControllerHandleAlterPartition",
        "BrokerApplyPartitionChange",
        "BrokerRegister",
        "FollowerHandleOffsetOutOfRange",
        "LeaderDeleteRecords",
        "OperatorReassignPartition",
        "OperatorCancelReassignment",
        "BrokerStopReplica",
        "LeaderClearPendingAlterPartition",
    }
)


class PartitionValidator:
    """Validates the events of one partition against one spec instance."""

    def __init__(self, pm: PartitionMap, spec: IsrSpec) -> None:
        self.pm = pm
        self.spec = spec
        # R8 holds per connection, and an implementation's controller failover (its
        # ControllerActivate, ignored here) opens a second one, which this validator's spec
        # (no --controller-failovers) cannot tell from the first: the requests of the two
        # controllers would share one spec queue. So the validator lets a broker take any
        # request in flight, as before R8 was rewritten (a request it passes over is a hidden
        # loss, or a stale one it ignores later); the order is checked by the model checker's
        # spec and by traces/counterexample/reorder.py, not by trace validation.
        self.ctx = dataclasses.replace(spec.ctx, fifo=False)
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
        self.before: State | None = None  # the candidate a handler is stepping from
        # follower -> offset of its last served fetch while outside the leader's ISR (``fit``)
        self.fetched_outside: dict[int, int] = {}
        self.fetching: tuple[int, int] | None = None  # (follower, leader) of a FollowerFetch
        # Causal order of fetches (issue 17): replica -> the largest LEO and leader epoch its
        # own events observed. A follower sends a fetch at offset k with epoch e only once its
        # own log reached k and it learned e, so a leader cannot serve (and count for its HW)
        # an offset or epoch the follower's events have not shown yet (decision 2).
        self.reached: dict[int, int] = {}
        self.reached_epoch: dict[int, int] = {}
        # kraft: leaders whose AlterPartition was made on a stale partition epoch (a stutter,
        # handlers/kraft.py) and whose refusal is still to come
        self.stale_alter: set[int] = set()
        self.activations = 0  # ControllerActivate events seen: the first is the spec's Init
        self.crashed_once: set[int] = set()  # kraft: replicas with a BrokerCrash in the trace
        # KIP-455: fetch requests a BrokerStopReplica dropped (handlers/reassign.py)
        self.dropped_fetches: set = set()

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
                (a, follow_truncations(s, t)) for (_k, a), t in out if args is None or a == args
            ]
        return [(a, t) for (_k, a), t in out if args is None or a == args]

    def crash_now(self, c: Cand, i: int, lose_unflushed: bool) -> list[Cand]:
        """The spec's BrokerCrash(i). A power failure is the spec's crash, which keeps the
        flushed prefix in lose-unflushed mode; a process crash keeps the whole log (the OS page
        cache survives): in that mode it is the spec's BrokerFlush, hidden, then BrokerCrash.
        A crashing leader may have answered a parked fetch it never logged (``parked_responses``)
        and a truncating follower's OffsetsForLeaderEpoch (``parked_answers``)."""
        s, pend, ack = c
        pend = parked_answers(self, s, parked_responses(self, s, pend, i), i)
        pre = [s]
        if self.flushed and not lose_unflushed:
            pre = [t for _a, t in self.steps(s, "BrokerFlush", (i,))] or [s]
        return [(t, pend, ack) for p in pre for _a, t in self.steps(p, "BrokerCrash", (i,))]

    def silent_register(self, t: State, i: int) -> list[State]:
        """kraft: a broker restarted without an event of this partition (it holds nothing of
        it: KIP-455's spare, or a replica a reassignment removed) registers without one too
        (the spec's BrokerRegister: its new broker epoch, which its later fetches carry)."""
        if not self.ctx.split_fetch:
            return [t]
        return [u for _a, u in self.steps(t, "BrokerRegister", (i,))] or [t]

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
        if self.ctx.split_fetch:
            # kraft: the controller fences it (KIP-841); it comes back only by restarting, which
            # the trace shows (no renewal)
            if s.kraft.fenced >> i & 1:
                return []
            return [(t, pend, ack) for _a, t in self.steps(s, "ControllerFenceBroker", (i,))]
        f = s.faults
        name = "BrokerRenewSession" if f.expired >> i & 1 else "CoordinationExpireSession"
        return [(t, pend, ack) for _a, t in self.steps(s, name, (i,))]

    def force_resume(self, i: int) -> None:
        """Paused broker ``i`` is seen again: it resumed, and registered a new session if its
        old one had expired (the simulation registers before anything else the broker does)."""
        self.paused.discard(i)
        if self.ctx.split_fetch:
            return  # kraft: a fenced broker's next event is its crash (no renewal)
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
        shrink, ``shrink_one``); whatever they change in the leader's memory, its crash
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
                got = shrink_one(self, s, l, f)
            else:
                got = [strip_history(t) for _a, t in self.steps(s, "LeaderExpandIsr", (l, f))]
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
                # a follower's OffsetsForLeaderEpoch that cuts nothing need not be logged
                # (ADAPTER.md): the spec's no-op FollowerTruncate before its fetch
                if self.fetching is not None and s.replicas[self.fetching[0]].truncating:
                    f, l = self.fetching
                    for _a, t in self.steps(s, "FollowerTruncate", (f, l)):
                        if len(t.replicas[f].log) == len(s.replicas[f].log):
                            c = (strip_history(t)[0], pend, ack)
                            if c not in seen:
                                seen[c] = None
                                nxt.append(c)
                # a broker holding nothing of the partition on disk restarts without an event
                for a, t in self.steps(s, "BrokerRestart", (actor,)):
                    r = s.replicas[a[0]]
                    if not r.log and not r.hw_ckpt:
                        for u in self.silent_register(t, a[0]):
                            c = (u, pend, ack)
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
        if not self.spec.config.idempotence and producer_answer_only(ev):
            # without --idempotence (VALIDATION.md, decision 7) a dropped duplicate, a
            # sequence error and the producer's own steps change nothing
            return
        other = KRAFT_ONLY if not self.ctx.split_fetch else ATOMIC_ONLY
        if ev["action"] in other:
            raise TraceInputError(
                f"{ev['action']} is not an action of protocol {self.spec.config.protocol!r}"
                " (kraft splits the fetch and the ISR write: traces/FORMAT.md)"
            )
        prep = PREPARE.get(ev["action"])
        if prep is not None:
            prep(self, ev)
        node = ev.get("node")
        if ev["action"] in ("BrokerCrash", "BrokerRestart", "BrokerRegister"):
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
        if ev["action"] == "FollowerFetch":
            self._note_fetch(ev)
        self._note_reached(actor, ev)
        mism: list[str] = []
        failed: list[Cand] = []
        nxt = self._try(handler, ev, self.cands, mism, failed)
        if nxt and failed and self.paused:
            nxt += self._late_expiries(handler, ev, failed, mism)
        if not nxt:
            a = ev.get("args") or {}
            self.fetching = (
                (self.pm.rep(a["follower"]), self.pm.rep(a["leader"]))
                if ev["action"] == "FollowerFetch"
                else None
            )
            closed = self.hidden_closure(self.cands, actor)
            self.fetching = None
            if len(closed) > len(self.cands):
                nxt = self._try(handler, ev, closed, mism)
        if not nxt:
            raise Rejection(reason_of(ev), mism, self.cands)
        nxt = [refresh_held(c) for c in nxt]
        if ev["action"] == "ControllerHandleAlterPartition":
            self.stale_alter.discard(self.pm.rep(ev["args"]["leader"]))
        if ev["action"] == "BrokerCrash":
            mark_crash(self, ev)
            self.crashed_once.add(actor)
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

    def _try(
        self,
        handler: Callable,
        ev: Event,
        cands: list[Cand],
        mism: list[str],
        failed: list[Cand] | None = None,
    ) -> list[Cand]:
        out: list[Cand] = []
        idle = ev["action"] == "FollowerFetch"
        for c in cands:
            self.before = c[0]  # the state the step starts from (``fit``, decision 4)
            got = handler(self, ev, c, mism)
            if not got and idle and self._idle_fetch(ev, c[0], mism):
                got = [c]
            if not got and failed is not None:
                failed.append(c)
            out.extend(got)
        self.before = None
        return out

    def _late_expiries(
        self, handler: Callable, ev: Event, failed: list[Cand], mism: list[str]
    ) -> list[Cand]:
        """The paused brokers' session steps of the candidates that cannot explain ``ev``, taken
        although another candidate explains it (mapping decision 12). The hidden closure is
        otherwise consulted only when no candidate explains an event, but an earlier closure may
        have taken a paused broker's expiry already in one candidate and not in another, and the
        two differ in what the controller sent the broker meanwhile: the spec's controller sends
        no LeaderAndIsr to a broker whose session expired, while Kafka's sends one to a paused
        broker until it handles the expiry, and what was already on the wire then still arrives
        (2.1's ``ControllerChannelManager.removeBroker`` -> ``removeExistingBroker`` clears only
        the queue; a request the ``RequestSendThread`` took is in the paused broker's socket
        buffer, and no broker epoch fences it before KIP-380). The controller's decision that
        needs the expiry (``ControllerShrinkIsr`` of the paused broker) is explained at once by
        the candidate whose expiry came early, and the one whose expiry comes now, keeping that
        request in flight, was dropped (``isr conform --random 40 --seed 2``, random 23 and 24;
        ``tests/traces/test_pause.py``)."""
        late: list[Cand] = []
        for c in failed:
            for i in self.paused:
                late.extend(self._try(handler, ev, self.session_steps(c, i), mism))
        return late

    def _idle_fetch(self, ev: Event, s: State, mism: list[str]) -> bool:
        """A fetch that changes nothing (ADAPTER.md, "idle fetches"): the spec lists no step
        for it (a stutter), but an implementation may log it. A serve at the offset the
        leader already recorded for the follower, by a leader serving the follower's epoch
        (KIP-320), or an apply of no records that leaves the follower's HW as it was, each
        with the observed state unchanged."""
        a = ev["args"]
        f, l = self.pm.rep(a["follower"]), self.pm.rep(a["leader"])
        rf, lr = s.replicas[f], s.replicas[l]
        if not (lr.alive and lr.leader == l and rf.alive and rf.leader == l):
            return False
        if self.ctx.fetch_fenced(lr.epoch, rf.epoch):
            return False
        if a.get("phase") == "serve":
            o = int(a["offset"])
            if rf.truncating or len(rf.log) != o or lr.remote_leo[f] != o:
                return False
            if "epoch" in a and self.pm.epoch(a["epoch"]) != rf.epoch:
                return False
            return self.check(ev, l, s, mism)
        if a.get("phase") == "apply" and int(a.get("count", 0)) == 0:
            return self.check(ev, f, s, mism)
        return False

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
        late = sorted(o for o, _n in gained if o >= obs)
        nr = r._replace(hw=obs, pending=tuple(sorted(set(r.pending) | set(late))))
        t2 = State(
            t.replicas[:i] + (nr,) + t.replicas[i + 1 :], t.coord, t.requests, t.history, t.faults
        )
        if not any(self._joining(i, j, obs, t2) for j in range(self.n)):
            return None
        mism.pop()
        if not self.check(ev, i, t2, mism):
            return None
        return t2, frozenset(x for x in gained if x[0] < obs)

    def _joining(self, i: int, j: int, obs: int, t2: State) -> bool:
        """Whether follower ``j`` may hold leader ``i``'s HW at ``obs`` (R4, decision 4): an
        expansion of ``j`` is in flight in the candidate, i.e. ``j`` is outside the ISR, its
        remote LEO is the held HW, it was already outside the ISR before this step (a follower
        the step removes is no longer counted: R4's HW over the new ISR), and the spec's
        LeaderExpandIsr(i, j) is enabled on the candidate with the held HW (the leader's cached
        zkVersion is current, the follower reached the HW and, with KAFKA-7128, the epoch
        start)."""
        r = t2.replicas[i]
        if j == i or r.isr >> j & 1 or r.remote_leo[j] != obs:
            return False
        b = self.before.replicas[i] if self.before is not None else None
        if b is None or b.leader != i or b.isr >> j & 1:
            return False
        if self.fetched_outside.get(j) != obs:
            return False  # its expansion was never proposed: no fetch at ``obs`` while out
        return bool(self.steps(t2, "LeaderExpandIsr", (i, j)))

    def _note_reached(self, i: int, ev: Event) -> None:
        """What replica ``i``'s own event observed: its LEO and leader epoch (causal order of
        fetches, ``reached``)."""
        st = ev.get("state") or {}
        if i < 0 or "topic" not in ev:
            return
        leo, ep = st.get("leo"), st.get("leader_epoch")
        if isinstance(leo, int):
            self.reached[i] = max(self.reached.get(i, 0), leo)
        if isinstance(ep, int):
            self.reached_epoch[i] = max(self.reached_epoch.get(i, 0), ep)

    def _note_fetch(self, ev: Event) -> None:
        """Decision 4's trace-determined half: a leader proposes an ISR expansion only on a
        fetch of a follower outside its ISR (R7), so only a follower whose last served fetch
        was at ``offset`` while outside the observed ISR may hold the HW there."""
        a = ev["args"]
        isr = (ev.get("state") or {}).get("isr")
        if a.get("phase") != "serve" or not isinstance(isr, list):
            return
        j = self.pm.rep(a["follower"])
        if a["follower"] in isr:
            self.fetched_outside.pop(j, None)
        else:
            self.fetched_outside[j] = int(a["offset"])

    def check(self, ev: Event, i: int, t: State, mism: list[str], leo_only: bool = False) -> bool:
        st = ev.get("state")
        if not st:
            return True
        if ev["action"] in ("BrokerRestart", "BrokerRegister"):
            # A restarted broker has no leader until its first LeaderAndIsr; what it reports
            # of the previous incarnation's (a remembered epoch, role or ISR) is not protocol
            # state, so it is not compared (ADAPTER.md, "restarted brokers").
            st = {k: v for k, v in st.items() if k not in _RESTART_UNCHECKED}
        tail = st.get("log_append")
        if "log" in st and len(st["log"]) > 256:
            st = {k: v for k, v in st.items() if k != "log"}
            if tail is None:
                tail = []
        starts = t.faults.log_start
        bad = observe_mismatch(
            self.pm, i, t.replicas[i], st, tail, leo_only, starts[i] if starts else 0
        )
        if bad:
            mism.append(f"{ev['action']}: {bad}")
            return False
        return True


_RESTART_UNCHECKED = frozenset({"leader", "leader_epoch", "role", "isr", "remote_leo"})


def _role(s: State, i: int) -> str:
    r = s.replicas[i]
    if not r.alive:
        return "crashed"
    if r.leader == i:
        return "leader"
    return "follower" if r.leader >= 0 else "none"
