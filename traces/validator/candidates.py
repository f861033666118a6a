"""The validator's candidates: a spec state with what the trace has not resolved yet.

A candidate is (spec state, fetch responses held per follower, acknowledgements not yet seen).
The helpers here are shared by the per-partition validator (``partition.py``) and the event
handlers (``handlers/``): moving the spec's history out of a state (``strip_history``), holding and
dropping fetch responses (``with_held``, ``without_held``, ``refresh_held``), and ``Rejection``, raised
when no candidate explains an event.
"""

from __future__ import annotations

from typing import Any

from isr.spec.state import History, State

from .mapping import Event

MAX_CANDIDATES = 4096


# A candidate: (spec state, pending fetch responses per replica, acknowledgements not yet seen).
Pending = tuple[Any, ...]
Cand = tuple[State, Pending, frozenset]


class Rejection(Exception):
    def __init__(self, reason: str, mismatches: list[str], cands: list[Cand]) -> None:
        super().__init__(reason)
        self.reason = reason
        self.mismatches = mismatches
        self.cands = cands


def strip_history(t: State) -> tuple[State, frozenset]:
    """Move the history variables out of the state; return what they gained in this step."""
    h = t.history
    if not (h.acked or h.acked1 or h.refused or h.shown):
        return t, frozenset()
    gained = frozenset(h.acked) | frozenset(h.acked1)
    return (
        t._replace(history=History(h.next_record, (), (), (), (), h.crashes)),
        gained,
    )


# The offset slot of a held OffsetsForLeaderEpoch answer (handlers/fetch.py ``parked_answers``):
# no fetch offset, so a fetch's apply never takes it for a fetch response.
ANSWER = -1


def refresh_held(c: Cand) -> Cand:
    """A held fetch response is built when it is sent, which may be after the serve (a parked
    fetch): its HW is any HW its leader had at that epoch since, so the largest is remembered,
    and its entries come from the leader's log as last seen leading at that epoch (a power
    failure may cut that log before the follower applies the response, R14). A held
    OffsetsForLeaderEpoch answer is dropped once its follower no longer waits for one from
    that leader (it crashed, follows another, or truncated: ``AbstractFetcherThread.
    maybeTruncate`` applies an answer only to a partition still truncating)."""
    s, pend, ack = c
    if not any(pend):
        return c
    reps = s.replicas
    new = list(pend)
    changed = False
    for f, hs in enumerate(pend):
        r = reps[f]
        waits = r.leader if r.alive and r.truncating else None
        kept = tuple(h for h in hs if h[2] != ANSWER or h[0] == waits)
        if len(kept) < len(hs):
            hs = new[f] = kept
            changed = True
        for k, h in enumerate(hs):
            lr = reps[h[0]]
            leading = lr.alive and lr.leader == h[0] and lr.epoch == h[1]
            if leading and (lr.hw > h[4] or lr.log is not h[5]):
                h2 = (h[0], h[1], h[2], h[3], max(lr.hw, h[4]), lr.log)
                new[f] = new[f][:k] + (h2,) + new[f][k + 1 :]
                changed = True
    return (s, tuple(new), ack) if changed else c


MAX_HELD = 4  # fetch responses held per follower; more than one only with duplicated requests


def with_held(pend: Pending, f: int, held: tuple) -> Pending:
    """``pend`` with ``held`` (leader, epoch, offset, HW at serve, HW since, leader's log) added
    to follower ``f``'s responses in flight. A duplicated fetch request (R8: the network may
    duplicate) is served twice, and the follower applies whichever response still fits its
    log: one held response per (leader, epoch, offset), the oldest dropped beyond MAX_HELD."""
    hs = tuple(h for h in pend[f] if h[:3] != held[:3])[-(MAX_HELD - 1) :] + (held,)
    return pend[:f] + (hs,) + pend[f + 1 :]


def without_held(pend: Pending, f: int, held: tuple | None = None) -> Pending:
    """``pend`` without ``held`` (every response of ``f`` if None: it truncated, so none fits)."""
    hs = () if held is None else tuple(h for h in pend[f] if h is not held)
    return pend[:f] + (hs,) + pend[f + 1 :]


def reason_of(ev: Event) -> str:
    return (
        f"no spec step explains {ev['action']}({fmt_args(ev.get('args', {}))}) at node {ev['node']}"
    )


def fmt_args(args: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in args.items())


def follow_truncations(s: State, t: State) -> State:
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
