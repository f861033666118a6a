"""Handlers of the controller's events: elections (offline included), the controller's ISR
shrink, leadership moved away from a live leader (preferred/operator election, controlled
shutdown: the spec's ControllerMoveLeader and ControllerShutdownBroker, R9), and LeaderAndIsr
requests dropped (stale at the broker, or lost in the network)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from isr.spec.actions.controller import leader_lost
from isr.spec.state import Request, State

from ..candidates import Cand
from ..mapping import Event

if TYPE_CHECKING:
    from .view import PartitionView as PartitionValidator


def _coord_matches(v: PartitionValidator, co: dict, s: State) -> bool:
    """The written state is the spec's. Leader -1 (kraft: a controlled shutdown of a leader no
    other ISR member can replace, Kafka's ``handleBrokerInControlledShutdown``) is the spec's
    recorded leader marked lost (``Faults.lead_renewed``, spec/actions/controller.py
    ``_leaderless``), as traces/validator/greybox.py shows it."""
    c = s.coord
    leader = v.pm.rep_or_none(co["leader"])
    return (
        (leader == c.leader or (leader < 0 and s.faults.lead_renewed))
        and v.pm.epoch(co["leader_epoch"]) == c.epoch
        and v.pm.mask(co["isr"]) == c.isr
    )


_WHY = {
    "ControllerElectLeader": "leader not lost, or epoch bound",
    "ControllerShrinkIsr": "no dead follower in the ISR of a kept leader, or epoch bound",
    "ControllerMoveLeader": "leader lost or not live, the new leader not another live ISR "
    "member, or epoch bound",
    "ControllerShutdownBroker": "the broker not in the ISR, no other live ISR member to lead, "
    "the leader lost, or epoch bound",
}


def controller_handler(name: str, *arg_keys: str) -> Callable:
    """A controller decision: the spec action ``name`` with the event's arguments ``arg_keys``
    (brokers; a missing ``leader`` is the written state's leader), whose written state (the
    event's ``coord``) must be the spec's (leader, epoch, ISR)."""

    def _args(v: PartitionValidator, ev: Event, co: dict | None) -> tuple:
        a = ev["args"]
        out = []
        for k in arg_keys:
            if k not in a and k == "leader" and co is not None:
                out.append(v.pm.rep_or_none(co["leader"]))
            elif k == "leader":  # (-1: ControllerShutdownBroker of a leader with no successor)
                out.append(v.pm.rep_or_none(a[k]))
            else:
                out.append(v.pm.rep(a[k]))
        return tuple(out)

    def handler(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
        s, pend, ack = c
        out: list[Cand] = []
        co = (ev.get("state") or {}).get("coord")
        args = _args(v, ev, co)
        for _a, t in v.steps(s, name, args):
            if co is None or _coord_matches(v, co, t):
                out.append((t, pend, ack))
            else:
                mism.append(f"{name}: coordination {co} differs from the spec's {t.coord}")
        if co is not None and _coord_matches(v, co, s) and name == "ControllerElectLeader":
            out.append(c)  # the first election: the spec's initial state
        if not out and not mism:
            mism.append(f"{name}{args} is not enabled ({_WHY.get(name, 'epoch bound')})")
        return out

    return handler


def prepare_offline(v: PartitionValidator, ev: Event) -> None:
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
    if not leader_lost(s):
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


def on_elect(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
    if int(ev["args"]["leader"]) < 0:
        return _offline(v, ev, c, mism)
    return _elect_leader(v, ev, c, mism)


def stale_or_lost(name: str) -> Callable:
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


_elect_leader = controller_handler("ControllerElectLeader", "leader")


def prepare_activate(v: PartitionValidator, ev: Event) -> None:
    """Counts the controller activations seen (the first is the spec's Init)."""
    v.activations += 1


def on_activate(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
    """ControllerActivate after the first: a controller failover (R9). The new controller sends
    the partition state it read to every live replica, as Kafka's ``onControllerFailover``
    does (``replicaStateMachine.startup``: a LeaderAndIsr per partition to each live replica)
    and the spec's ControllerFailover, whose bound the validator does not apply: the requests
    join those in flight (the controller epoch kept: the validator does not order the two
    controllers' connections, see PartitionValidator). A restarted follower whose bounce the
    previous controller missed learns its state here. Not for kraft (its controller is a
    quorum; a failover sends nothing)."""
    if v.activations <= 1 or v.ctx.split_fetch:
        return [c]
    s, pend, ack = c
    co = s.coord
    f = s.faults
    new = {
        Request(d, co.leader, co.epoch, co.isr, True, f.ctrl_epoch)
        for d, r in enumerate(s.replicas)
        if r.alive
    }
    if new <= set(s.requests):
        return [c]
    reqs = tuple(sorted(set(s.requests) | new))
    return [(s._replace(requests=reqs), pend, ack)]
