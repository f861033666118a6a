"""Liveness properties of docs/PROTOCOL.md and the fairness of each action (weak or strong), for the
state-graph engine (:mod:`checker.liveness`). BFS reports `eventually` properties as not checked.

"While a live leader stays" (R6, R11). The leader *stays* in a state when the coordination's
leader ``l`` is alive and still believes it leads (its last LeaderAndIsr, or its own ISR write,
names itself): ``coord.leader == l and alive(l) and leader_view(l) == l``. Its epoch may lag the
coordination's (a LeaderAndIsr to it may be lost): it is still the recorded, serving leader. The
guarantee is void once it crashes, is deposed (another leader recorded), or resigns (applies a
LeaderAndIsr naming another leader: its purgatory is answered NotLeaderForPartition, R10).

* **AcksAllAnswered** (R6): ``\\A (rec, l): Pending(rec, l) ~> Answered(rec) \\/ ~Stays(l)``.
  ``Pending`` = record ``rec`` waits in the purgatory of ``l`` while ``l`` stays; ``Answered`` =
  acknowledged or refused (NotEnoughReplicas / ...AfterAppend) in the history.
* **CaughtUpFollowerRejoinsIsr** (R7, R13): ``\\A (j, l): CaughtUp(j, l) ~> InIsr(j, l) \\/
  ~Stays(l) \\/ ~alive(j)``. ``CaughtUp`` = ``l`` stays, ``j`` is alive, not in the ISR (the
  recorded one or ``l``'s view), follows ``l`` at ``l``'s epoch with its truncation done, and its
  LEO has reached ``l``'s HW (R7: "expands it when a follower's LEO reaches the leader's HW").
  ``InIsr`` = ``j`` is in both the recorded ISR and ``l``'s view.

Fairness (per argument tuple: each broker, fetcher and request is a process of its own). Weak
fairness on what a live broker or the controller does by itself once it can: the controller's
election and ISR shrink (R9), applying or dropping a delivered LeaderAndIsr (R9-R11), fetching
and truncating (R2, R10), the leader's ISR changes (R7: replica.lag.time.max.ms passes), the
HW checkpoint (R13). No fairness for the environment: producers, consumers, crashes, restarts
(a crashed broker may stay down), message loss (R8) and sessions (a zombie may stay one).
"""

from __future__ import annotations

from collections.abc import Iterator

from isr.checker.model import Fairness, Property

from .actions.common import Ctx
from .state import State

FAIR_ACTIONS = (
    "ControllerElectLeader",
    "ControllerShrinkIsr",
    "BrokerBecomeLeader",
    "BrokerBecomeFollower",
    "BrokerIgnoreStaleRequest",
    "BrokerApplyPartitionChange",  # kraft: a partition change in the leader's own epoch
    "BrokerRegister",  # kraft: a restarted broker registers (KIP-841 registration)
    "FollowerFetch",
    "FollowerTruncate",
    "FollowerSendFetch",  # kraft: the split fetch, each of its three steps
    "LeaderHandleFetch",
    "FollowerHandleFetchResponse",
    "FollowerHandleOffsetOutOfRange",  # kraft: R12, an OFFSET_OUT_OF_RANGE answer taken in
    "LeaderShrinkIsr",
    "LeaderExpandIsr",
    "LeaderSendAlterPartition",  # kraft: the asynchronous ISR change
    "ControllerHandleAlterPartition",
    "LeaderClearPendingAlterPartition",  # kraft: newer metadata overrides a pending change
    "BrokerCheckpointHw",
    "BrokerCheckpointEpochCache",  # kraft: the epoch cache's file catches up
)
UNFAIR_ACTIONS = (
    "ProducerSend",
    "ConsumerFetch",
    "ConsumerResetOffset",  # kraft: KIP-392's consumer position reset
    "NetworkLoseLeaderAndIsr",
    "BrokerCrash",
    "BrokerRestart",
    "ControllerFenceBroker",  # kraft: heartbeats lost (a fault, counted as a crash)
    "NetworkLoseAlterPartitionResponse",  # kraft: an answer lost (--controller-failovers)
    "DeposedControllerHandleAlterPartition",  # kraft: the leader reaches the deposed controller
    "CoordinationExpireSession",
    "BrokerRenewSession",
    "BrokerDeleteOldSegment",  # R12: retention, whenever it likes
    "LeaderDeleteRecords",  # kraft: the operator's DeleteRecords (--delete-records)
)


def leader_stays(s: State, l: int) -> bool:
    """The coordination's leader ``l`` is alive and still believes it leads."""
    r = s.replicas[l]
    return s.coord.leader == l and r.alive and r.leader == l


def pending_writes(s: State) -> Iterator[tuple[int, int]]:
    """Trigger of AcksAllAnswered: (record, leader) for each acks=all write waiting in the
    purgatory of a leader that stays (R6)."""
    l = s.coord.leader
    if not leader_stays(s, l):
        return
    r = s.replicas[l]
    for o in r.pending:
        yield (r.log[o][0], l)


def write_answered(s: State, token: tuple[int, int]) -> bool:
    """Goal of AcksAllAnswered: acknowledged, refused, or the leader did not stay."""
    rec, l = token
    h = s.history
    if not leader_stays(s, l):
        return True
    return rec in h.refused or any(r == rec for _, r in h.acked)


def _in_isr(s: State, j: int, l: int) -> bool:
    return bool(s.coord.isr >> j & 1 and s.replicas[l].isr >> j & 1)


def caught_up_followers(s: State) -> Iterator[tuple[int, int]]:
    """Trigger of CaughtUpFollowerRejoinsIsr: (follower, leader) pairs as in the module doc."""
    l = s.coord.leader
    if not leader_stays(s, l):
        return
    lr = s.replicas[l]
    for j, r in enumerate(s.replicas):
        if j == l or not r.alive or _in_isr(s, j, l):
            continue
        if r.leader == l and r.epoch == lr.epoch and not r.truncating and len(r.log) >= lr.hw:
            yield (j, l)


def follower_rejoined(s: State, token: tuple[int, int]) -> bool:
    """Goal of CaughtUpFollowerRejoinsIsr: in the ISR, or the leader did not stay, or the
    follower crashed."""
    j, l = token
    return not leader_stays(s, l) or not s.replicas[j].alive or _in_isr(s, j, l)


def make_liveness(ctx: Ctx, kind_of: dict[str, int]) -> tuple[list[Property], list[Fairness]]:
    """(eventually-properties, fairness per action name) for the actions this protocol has."""
    props = [
        Property(
            "AcksAllAnswered",
            "eventually",
            write_answered,
            "every acks=all write is acknowledged or refused while its live leader stays",
            requirement="R6",
            trigger=pending_writes,
        ),
        Property(
            "CaughtUpFollowerRejoinsIsr",
            "eventually",
            follower_rejoined,
            "a caught-up follower of a staying leader eventually rejoins the ISR",
            requirement="R7",
            trigger=caught_up_followers,
        ),
    ]
    if not ctx.acks_all:
        props = props[1:]  # acks=1 writes are answered on append: nothing to wait for
    fairness = [Fairness(name, "weak", instances=True) for name in FAIR_ACTIONS if name in kind_of]
    return props, fairness
