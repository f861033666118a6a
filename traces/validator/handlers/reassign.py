"""Handlers of partition reassignment's events (kraft, KIP-455; VALIDATION.md, "kraft:
partition reassignment"): the operator's request and its record (OperatorReassignPartition,
OperatorCancelReassignment: the controller's decision, whose written state, ``coord`` with its
``replicas``, must be the spec's), a removed broker's BrokerStopReplica, and a leader's
LeaderClearPendingAlterPartition (the change a completion's answer left pending, cleared by
newer metadata or by the leader's crash). The completion itself is the spec's
ControllerHandleAlterPartition (handlers/kraft.py), as in Kafka: one record of the
AlterPartition's build."""

from __future__ import annotations

from typing import TYPE_CHECKING

from isr.spec.state import State

from ..candidates import Cand
from ..mapping import Event
from .controller import _coord_matches

if TYPE_CHECKING:
    from .view import PartitionView as PartitionValidator


def _assignment_matches(v: PartitionValidator, co: dict, t: State) -> bool:
    """The written replica set and its adding/removing replicas are the spec's
    (``Kraft.assigned``/``adding``/``removing``); each key only if the event has it."""
    k = t.kraft
    for key, spec in (("replicas", k.assigned), ("adding", k.adding), ("removing", k.removing)):
        if key in co and v.pm.mask(co[key]) != spec:
            return False
    return True


def _operator(name: str, with_target: bool):
    def handler(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
        s, pend, ack = c
        co = (ev.get("state") or {}).get("coord")
        args = (v.pm.mask(ev["args"]["replicas"]),) if with_target else ()
        out: list[Cand] = []
        for _a, t in v.steps(s, name, args):
            if co is None or (_coord_matches(v, co, t) and _assignment_matches(v, co, t)):
                out.append((t, pend, ack))
            else:
                mism.append(
                    f"{name}: coordination {co} differs from the spec's {t.coord}"
                    f" (replicas {t.kraft.assigned:b}, adding {t.kraft.adding:b},"
                    f" removing {t.kraft.removing:b})"
                )
        if not out and not mism:
            mism.append(
                f"{name}{args} is not enabled (the bound --reassignments, no leader recorded,"
                " the same target, or no reassignment to cancel)"
            )
        return out

    return handler


on_reassign = _operator("OperatorReassignPartition", True)
on_cancel = _operator("OperatorCancelReassignment", False)


def on_stop_replica(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
    """BrokerStopReplica(replica): the broker, no longer a replica, deleted its replica; what
    it observes after (no log, no leader) is the spec's stopped replica."""
    s, pend, ack = c
    i = v.pm.rep(ev["args"]["replica"])
    out: list[Cand] = []
    steps = v.steps(s, "BrokerStopReplica", (i,))
    for _a, t in steps:
        if v.check(ev, i, t, mism):
            out.append((t, pend, ack))
            # the fetches of the broker the stop drops (a previous incarnation's too, still
            # queued at a leader): a leader's later error answer to one is a stutter
            v.dropped_fetches.update(set(s.kraft.fetch_requests) - set(t.kraft.fetch_requests))
    r = s.replicas[i]
    outside = s.kraft.assigned and not s.kraft.assigned >> i & 1
    if not steps and r.alive and outside and v.check(ev, i, s, mism):
        # a stutter: a broker outside the replica set that holds nothing of it (restarted
        # with an empty log since it was removed) stops a replica the spec's BrokerStopReplica
        # would leave as it is (the spec lists no step that changes nothing)
        out.append(c)
    if not out and not mism:
        mism.append(f"BrokerStopReplica({ev['args']['replica']}) is not enabled (still a replica)")
    return out


def on_clear_pending(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
    """LeaderClearPendingAlterPartition(leader): the spec's step, which leaves the leader's
    replica as it is (a crashed leader observes only its death)."""
    s, pend, ack = c
    i = v.pm.rep(ev["args"]["leader"])
    out: list[Cand] = []
    for _a, t in v.steps(s, "LeaderClearPendingAlterPartition", (i,)):
        if v.check(ev, i, t, mism):
            out.append((t, pend, ack))
    if not out and not mism:
        mism.append(
            f"LeaderClearPendingAlterPartition({ev['args']['leader']}) is not enabled (no change"
            " left pending by an answer, or no newer metadata applied yet)"
        )
    return out
