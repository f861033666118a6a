"""Reordered controller requests in a counterexample (issue 25 item 4; R8).

Kafka's ZooKeeper-era controller keeps one FIFO queue per broker and sends one request at a time
on one connection (ControllerChannelManager), so a broker never receives a request of a
controller after a later one of the same controller, across its own restarts included; a
finding that needs that is an artefact of the model, not a Kafka story. This module reads a
counterexample, whole states and the actions between them, and reports every delivery of a
LeaderAndIsr request that overtook an earlier one from the same controller to the same broker
still in flight. Requests of two controllers (a failover) may interleave: they are not compared.

A request is known by its content (destination, leader, epoch, ISR, controller epoch); the send
order is the step at which it first appears in flight. A controller write marks the requests in
flight stale (``version_current`` false): that is the same request, not a new one. A request
leaves the flight either by a delivery step of its destination (BrokerBecomeLeader,
BrokerBecomeFollower, BrokerIgnoreStaleRequest, BrokerApplyPartitionChange) or by any other
step (lost or dropped).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

DELIVERIES = frozenset(
    {
        "BrokerBecomeLeader",
        "BrokerBecomeFollower",
        "BrokerIgnoreStaleRequest",
        "BrokerApplyPartitionChange",
    }
)
# the deliveries that act on a request (not BrokerIgnoreStaleRequest)
APPLIES = DELIVERIES - {"BrokerIgnoreStaleRequest"}
IN_FLIGHT = "leader_and_isr_in_flight"


@dataclass(frozen=True)
class Reorder:
    """At ``step`` (1-based), broker ``dest`` received ``delivered`` (sent at step
    ``delivered_sent``) while ``overtaken``, sent earlier (step ``overtaken_sent``) by the same
    controller to the same broker, was still in flight. ``restarts`` counts the broker's
    restarts between that earlier send and the delivery (an overtaking across incarnations)."""

    step: int
    action: str
    dest: int
    delivered: dict[str, Any]
    delivered_sent: int
    overtaken: dict[str, Any]
    overtaken_sent: int
    restarts: int

    def __str__(self) -> str:
        def req(q: dict[str, Any], sent: int) -> str:
            return (
                f"(leader {q['leader']}, epoch {q['epoch']}, controller epoch "
                f"{q.get('controller_epoch', 1)}, sent at step {sent})"
            )

        across = f", across {self.restarts} restart(s)" if self.restarts else ""
        return (
            f"step {self.step} {self.action}: broker {self.dest} applied "
            f"{req(self.delivered, self.delivered_sent)} before "
            f"{req(self.overtaken, self.overtaken_sent)}{across}"
        )


def _key(q: dict[str, Any]) -> tuple:
    return (q["to"], q["leader"], q["epoch"], tuple(q["isr"]), q.get("controller_epoch", 1))


def find_reorders(
    states: list[dict[str, Any]], actions: list[str], coalescing: bool = False
) -> list[Reorder]:
    """Every overtaking delivery along a path: ``states`` are the whole states in the form of
    spec.codec.state_to_json (the first one before any step), ``actions`` the action name of each
    step (``len(states) == len(actions) + 1``). Empty when every broker received each
    controller's requests in the order sent.

    ``coalescing`` (KRaft): a broker reads the metadata log in order but publishes what it has
    read as one image (MetadataLoader -> ReplicaManager.applyDelta sees each partition's latest
    registration only), so a lagging broker may skip straight to a later partition state. An
    overtaking delivery is then a reorder only if the overtaken request is applied afterwards
    (an older state acted on after a newer one); one that is ignored as stale or dropped was
    skipped, which Kafka does."""
    if len(states) != len(actions) + 1:
        raise ValueError(f"{len(states)} states for {len(actions)} steps")
    # in flight: [key, version_current, sent step]; a list, as equal requests may repeat
    flight: list[list] = [[_key(q), q["version_current"], 0] for q in states[0].get(IN_FLIGHT, ())]
    restarts_at: dict[int, list[int]] = {}
    out: list[Reorder] = []
    suspects: list[tuple[tuple, int, Reorder]] = []  # coalescing: (overtaken key, sent, finding)
    for step, (action, before, after) in enumerate(
        zip(actions, states[:-1], states[1:], strict=True), start=1
    ):
        for name, was in before["alive"].items():
            if not was and after["alive"][name]:
                restarts_at.setdefault(int(name[1:]), []).append(step)
        left = list(flight)
        kept: list[list] = []
        new: list[list] = []
        now = [(_key(q), q["version_current"]) for q in after.get(IN_FLIGHT, ())]
        pending = []
        for key, fresh in now:  # the same request, unchanged
            hit = next((e for e in left if e[0] == key and e[1] == fresh), None)
            if hit is None:
                pending.append((key, fresh))
            else:
                left.remove(hit)
                kept.append(hit)
        for key, fresh in pending:  # the same request, made stale by a write; else a new one
            hit = next((e for e in left if e[0] == key and e[1] and not fresh), None)
            if hit is None:
                new.append([key, fresh, step])
            else:
                left.remove(hit)
                kept.append([key, fresh, hit[2]])
        if coalescing and action in APPLIES:
            for gone in left:
                for key, sent, found in suspects:
                    if key == gone[0] and sent == gone[2] and found not in out:
                        out.append(found)
        if action in DELIVERIES:
            for gone in left:
                dest, ctrl = gone[0][0], gone[0][4]
                for other in flight:
                    if other is gone or other[0][0] != dest or other[0][4] != ctrl:
                        continue
                    if other[2] < gone[2]:
                        between = [r for r in restarts_at.get(dest, ()) if other[2] < r <= step]
                        found = Reorder(
                            step,
                            action,
                            dest,
                            _as_dict(gone[0]),
                            gone[2],
                            _as_dict(other[0]),
                            other[2],
                            len(between),
                        )
                        if coalescing:
                            suspects.append((other[0], other[2], found))
                        else:
                            out.append(found)
        flight = kept + new
    return out


def _as_dict(key: tuple) -> dict[str, Any]:
    return {
        "to": key[0],
        "leader": key[1],
        "epoch": key[2],
        "isr": list(key[3]),
        "controller_epoch": key[4],
    }


def counterexample_reorders(cx, coalescing: bool = False) -> list[Reorder]:
    """:func:`find_reorders` on a checker.result.Counterexample (its whole states)."""
    return find_reorders(cx.whole_states(), [s.action for s in cx.steps], coalescing)


def trace_reorders(trace, coalescing: bool = False) -> list[Reorder]:
    """:func:`find_reorders` on a counterexample file read by traces.counterexample.read."""
    states = [trace.initial] + [s["state"] for s in trace.steps]
    return find_reorders(states, [s["action"] for s in trace.steps], coalescing)
