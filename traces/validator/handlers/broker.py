"""Handlers of a broker's own events: becoming leader or follower (``view_is``), crash
(deferred), pause, flush; restart and HW checkpoint are generic handlers (``__init__``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from isr.spec.state import State

from ..candidates import Cand
from ..mapping import Event, Unsupported

if TYPE_CHECKING:
    from .view import PartitionView as PartitionValidator


def view_is(v: PartitionValidator, ev: Event, s: State, i: int) -> bool:
    """Become* already applied (the implementation's first election is the spec's Init)."""
    a = ev["args"]
    r = s.replicas[i]
    leader = v.pm.rep_or_none(a.get("leader", ev["node"]))
    return r.alive and r.epoch == v.pm.epoch(a["epoch"]) and r.leader == leader


def leader_answers_first(become: Callable) -> Callable:
    """BrokerBecomeFollower or BrokerBecomeLeader of a replica leading in the candidate (a
    leader deposed alive, or re-elected at a newer epoch: a leadership move or a controller's
    ISR change, R9; a zombie after its session expired): before it, it may have answered
    parked fetches it never logged (a fetch at the offset it had recorded changes nothing on
    it; the answer goes out when data arrives), which its followers apply after the change (a
    new leader forgets the followers' LEOs, a re-elected one keeps them). As for a crashing
    leader (VALIDATION.md, mapping decision 11 a), such responses are held from its log as it
    was while it led at that epoch (``parked_responses``)."""

    def handler(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
        from .fetch import parked_responses

        s, pend, ack = c
        i = v.pm.rep(ev["args"]["replica"])
        r = s.replicas[i]
        if r.alive and r.leader == i:
            c = (s, parked_responses(v, s, pend, i), ack)
        return become(v, ev, c, mism)

    return handler


def prepare_crash(v: PartitionValidator, ev: Event) -> None:
    """Only the online validator gets here: its spec is built before any power failure is seen
    (an offline trace with one selects lose-unflushed, ``mapping.derive_config``)."""
    if ev["args"].get("lose_unflushed") and not v.flushed:
        raise Unsupported(
            "unflushed-tail-loss", detail="a power failure needs the spec's --lose-unflushed mode"
        )


def on_crash(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
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
        return [
            (u, pend, ack)
            for _a, t in v.steps(s, "BrokerRestart", (i,))
            for u in v.silent_register(t, i)
        ]
    return [c]


def on_pause(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
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


def mark_crash(v: PartitionValidator, ev: Event) -> None:
    v.down[v.pm.rep(ev["args"]["replica"])] = bool(ev["args"].get("lose_unflushed"))


def on_flush(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
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
