"""Deliberately broken versions of the reference implementation (issue 6, item 4).

Each mutant is one known class of replication bug, made by overriding one method of the broker or
the controller; ``World(broker_cls=..., controller_cls=...)`` runs it. The conformance kit
(`isr conform --mutants`) must reject every one of them from its traces alone. The trace a mutant
writes still says what the correct implementation would claim (e.g. acks=all): the bug has to be
found from what happened, not from a label.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .core import messages as m
from .core.controller import Controller
from .core.messages import PartitionState
from .core.partition import LEADER, Partition
from .core.replica import Broker


class _Strategy:
    """A truncation strategy with one rule replaced."""

    def __init__(self, inner: Any, **override: Any) -> None:
        self._inner = inner
        self._over = override

    def __getattr__(self, name: str) -> Any:
        if name in self._over:
            return self._over[name]
        return getattr(self._inner, name)


class TruncateToHwOnFollow(Broker):
    """KIP-101's bug brought back: a new follower truncates to its HW (under any version)."""

    def __init__(self, *a: Any, **kw: Any) -> None:
        super().__init__(*a, **kw)
        self.strat = _Strategy(self.strat, truncate_on_become_follower=lambda log: log.hw)


class NoFetchFencing(Broker):
    """KIP-320 without its fencing: fetches with another leader epoch are served."""

    def __init__(self, *a: Any, **kw: Any) -> None:
        super().__init__(*a, **kw)
        self.strat = _Strategy(self.strat, fences_fetch=False)


class HwBeforeIsr(Broker):
    """The leader's HW follows the fastest follower instead of the slowest ISR member."""

    def _raise_hw(self, p: Partition, now: int) -> bool:
        if p.role != LEADER:
            return False
        fast = [rem.leo for r, rem in p.remote.items() if r in p.isr]
        new_hw = min(p.log.leo, max(fast)) if fast else p.log.leo
        if new_hw <= p.log.hw:
            return False
        p.log.hw = new_hw
        return True


class AckBeforeCommit(Broker):
    """acks=all answered as soon as the leader appended (acks=1 behaviour, acks=all label)."""

    def _on_produce(self, src: int | str, req: m.ProduceRequest, now: int) -> list[Any]:
        if req.acks != -1:
            return super()._on_produce(src, req, now)
        out = super()._on_produce(src, _with_acks(req, 1), now)
        for e in out:
            if isinstance(e, m.Trace) and e.event["args"].get("acks") == "1":
                e.event["args"]["acks"] = "all"
        return out


def _with_acks(req: m.ProduceRequest, acks: int) -> m.ProduceRequest:
    from dataclasses import replace

    return replace(req, acks=acks)


class EarlyIsrExpand(Broker):
    """A follower rejoins the ISR on any fetch, before it caught up to the HW."""

    def _maybe_expand_isr(self, out: list[Any], p: Partition, r: int, now: int) -> None:
        if r in p.isr or p.pending_isr is not None:
            return
        self._propose_isr(out, p, "expand", p.isr | {r})


class OutOfSyncElection(Controller):
    """With unclean election off, the first live replica is elected even if it is out of sync."""

    def decide(self, tp: Any) -> PartitionState | None:
        cur = self.states.get(tp)
        if cur is not None and cur[0].leader not in self.live:
            st = cur[0]
            reps = self.assignments[tp]
            live = [r for r in reps if r in self.live]
            if live:
                isr = tuple(r for r in reps if (r in st.isr or r == live[0]) and r in self.live)
                return PartitionState(live[0], st.leader_epoch + 1, isr, self.epoch)
        return super().decide(tp)


class ConsumerPastHw(Broker):
    """Consumers are served up to the LEO instead of the HW."""

    def _on_consume(self, src: int | str, req: m.ConsumeRequest, now: int) -> list[Any]:
        p = self.partitions.get((req.topic, req.partition))
        if p is None or p.role != LEADER:
            return super()._on_consume(src, req, now)
        hw = p.log.hw
        p.log.hw = p.log.leo
        try:
            return super()._on_consume(src, req, now)
        finally:
            p.log.hw = hw


class StaleRequestObeyed(Broker):
    """LeaderAndIsr from a stale controller, or with an older leader epoch, is applied."""

    def _on_leader_and_isr(self, req: m.LeaderAndIsr, now: int) -> list[Any]:
        self.controller_epoch = min(self.controller_epoch, req.controller_epoch)
        for lp in req.partitions:
            p = self.partitions.get((lp.topic, lp.partition))
            if p is not None and lp.leader_epoch < p.leader_epoch:
                p.leader_epoch = lp.leader_epoch - 1
        return super()._on_leader_and_isr(req, now)


@dataclass(frozen=True)
class Mutant:
    name: str
    bug: str
    broker_cls: type[Broker] = Broker
    controller_cls: type[Controller] = Controller


MUTANTS: dict[str, Mutant] = {
    mu.name: mu
    for mu in (
        Mutant(
            "truncate-to-hw-on-follow",
            "truncate to HW on becoming follower",
            broker_cls=TruncateToHwOnFollow,
        ),
        Mutant("no-fetch-fencing", "no leader-epoch fencing of fetches", NoFetchFencing),
        Mutant("hw-before-isr", "HW advanced before every ISR member has the record", HwBeforeIsr),
        Mutant("ack-before-commit", "acks=all acknowledged before commit", AckBeforeCommit),
        Mutant("early-isr-expand", "ISR expanded before the follower caught up", EarlyIsrExpand),
        Mutant(
            "out-of-sync-election",
            "an out-of-sync replica elected with unclean election off",
            controller_cls=OutOfSyncElection,
        ),
        Mutant("consumer-past-hw", "consumers served past the HW", ConsumerPastHw),
        Mutant("stale-request-obeyed", "a stale controller's request obeyed", StaleRequestObeyed),
    )
}


# ---- appended: leadership moved away from a live leader (issue 12, item 4) --------------------
class DeposedLeaderAcks(Broker):
    """A deposed leader acknowledges its waiting acks=all writes when it learns it no longer
    leads, instead of answering NotLeaderForPartition (R6, R10): records its followers never
    had are acknowledged, and are lost once it truncates to the new leader's log. Only a
    leader deposed while alive (a leadership move, or a zombie after its session expired)
    with a write in its purgatory shows it."""

    def _become_follower(
        self, out: list[Any], p: Partition, lp: m.LeaderAndIsrPartition, now: int
    ) -> None:
        waiting = list(p.delayed) if p.role == LEADER else []
        p.delayed = []
        super()._become_follower(out, p, lp, now)
        for d in waiting:
            if d.required <= p.log.leo:  # (hw-truncation may have cut the records already)
                out.append(self._produce_reply(p, d, m.NONE, now=now, out=out))


MUTANTS["deposed-leader-acks"] = Mutant(
    "deposed-leader-acks",
    "a deposed leader acknowledges acks=all writes after it learned it no longer leads",
    DeposedLeaderAcks,
)
