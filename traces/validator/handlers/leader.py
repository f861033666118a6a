"""Handlers of a leader's ISR changes: shrink (R7's lag shrink included); the expansion is a
generic handler (``__init__``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from isr.spec.state import State

from ..candidates import Cand, strip_history
from ..mapping import Event

if TYPE_CHECKING:
    from .view import PartitionView as PartitionValidator


def on_shrink(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
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
        layer = [(t, g | g0) for s0, g0 in layer for t, g in shrink_one(v, s0, l, j)]
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


def shrink_one(v: PartitionValidator, s: State, l: int, f: int) -> list[tuple[State, frozenset]]:
    out = [strip_history(t) for _a, t in v.steps(s, "LeaderShrinkIsr", (l, f))]
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
        t, gained = strip_history(t)
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
