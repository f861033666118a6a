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
from .core.producer_state import APPEND, DUPLICATE, OUT_OF_ORDER, ProducerState
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


# ---- issue 14: bugs on rare paths (fencing each way, deep truncation, HW capping, failed
# compare-and-set, HW after a shrink). Each trace still says what a correct broker would.
class _OneWayFencing(Broker):
    """KIP-320 fencing in one direction only: requests of the other are served as if their
    epoch were the leader's (the serve still traces the request's real epoch)."""

    serve_older = False  # a follower at an older epoch (it missed a LeaderAndIsr)
    serve_newer = False  # a follower at a newer epoch: this leader is a zombie

    def _on_fetch(self, req: m.FetchRequest, now: int, *, first: bool, park: bool = True) -> Any:
        from dataclasses import replace

        real: dict[tuple[str, int], int] = {}
        parts = []
        for fp in req.partitions:
            p = self.partitions.get((fp.topic, fp.partition))
            if p is not None and p.role == LEADER and fp.current_leader_epoch != p.leader_epoch:
                older = fp.current_leader_epoch < p.leader_epoch
                if (older and self.serve_older) or (not older and self.serve_newer):
                    real[(fp.topic, fp.partition)] = fp.current_leader_epoch
                    fp = replace(fp, current_leader_epoch=p.leader_epoch)
            parts.append(fp)
        out = super()._on_fetch(replace(req, partitions=tuple(parts)), now, first=first, park=park)
        for e in out:
            ev = e.event if isinstance(e, m.Trace) else None
            if ev and ev["action"] == "FollowerFetch" and ev["args"].get("phase") == "serve":
                key = (ev.get("topic"), ev.get("partition"))
                if key in real and ev["args"].get("follower") == req.replica_id:
                    ev["args"]["epoch"] = real[key]
        return out

    def _on_epoch_query(self, req: m.OffsetsForLeaderEpochRequest) -> Any:
        # the same one-way check guards OffsetsForLeaderEpoch (KIP-320 fences both requests)
        from dataclasses import replace

        qs = []
        for q in req.partitions:
            p = self.partitions.get((q.topic, q.partition))
            if p is not None and p.role == LEADER and q.current_leader_epoch != p.leader_epoch:
                older = q.current_leader_epoch < p.leader_epoch
                if (older and self.serve_older) or (not older and self.serve_newer):
                    q = replace(q, current_leader_epoch=p.leader_epoch)
            qs.append(q)
        return super()._on_epoch_query(replace(req, partitions=tuple(qs)))


class ServeStaleFollower(_OneWayFencing):
    """A leader serves a follower fetching with an older leader epoch (FENCED_LEADER_EPOCH not
    returned): the follower appends the new epoch's records over its stale view."""

    serve_older = True


class ZombieLeaderServes(_OneWayFencing):
    """A deposed leader serves a follower that already knows a newer epoch
    (UNKNOWN_LEADER_EPOCH not returned)."""

    serve_newer = True


class NoEpochWalkBack(Broker):
    """KIP-279 without its walk back: when the leader answers with an epoch the follower never
    had, the follower truncates to the leader's end offset at once (KIP-101's rule), keeping
    entries of epochs the leader never had."""

    def __init__(self, *a: Any, **kw: Any) -> None:
        super().__init__(*a, **kw)
        inner = self.strat

        def follower_offset(
            log: Any, answer_epoch: int, answer_offset: int, fetch_offset: int
        ) -> tuple[int, bool]:
            own_epoch, _end = (
                log.end_offset_for_epoch(answer_epoch) if answer_epoch >= 0 else (0, 0)
            )
            if answer_epoch >= 0 and own_epoch != answer_epoch:
                return min(answer_offset, log.leo), True
            return inner.follower_offset(log, answer_epoch, answer_offset, fetch_offset)

        self.strat = _Strategy(inner, follower_offset=follower_offset)


class Kip279UncappedTruncation(Broker):
    """KIP-101's divergence bug under a KIP-279 label (issue 27): when the leader names an epoch
    the follower also has (the common epoch), the follower truncates to the leader's end offset
    of that epoch capped by its own LEO only, not by its own end of that epoch
    (impl/core/truncation.py ``Kip279.follower_offset``; the spec's kip-279
    ``truncation_offset`` takes ``min(t, end, own_end)``). A follower whose entries of a later
    epoch follow a shorter run of the common epoch keeps them where the leader has other
    entries of the common epoch: the logs diverge below the HW."""

    def __init__(self, *a: Any, **kw: Any) -> None:
        super().__init__(*a, **kw)
        inner = self.strat

        def follower_offset(
            log: Any, answer_epoch: int, answer_offset: int, fetch_offset: int
        ) -> tuple[int, bool]:
            if answer_epoch >= 0:
                own_epoch, _own_end = log.end_offset_for_epoch(answer_epoch)
                if own_epoch == answer_epoch:  # the common epoch: the cap by own_end is gone
                    return min(answer_offset, log.leo), True
            return inner.follower_offset(log, answer_epoch, answer_offset, fetch_offset)

        self.strat = _Strategy(inner, follower_offset=follower_offset)


class FollowerHwNotCapped(Broker):
    """A follower takes the leader's HW without capping it by its own LEO (R4: HW = min(own
    LEO, leader HW)): a follower far behind claims offsets it does not hold as committed."""

    def _apply_fetched(
        self, out: list[Any], p: Partition, d: m.FetchPartitionData, now: int
    ) -> None:
        super()._apply_fetched(out, p, d, now)
        if p.log.hw < d.high_watermark and (d.entries or d.base_offset == p.log.leo):
            p.log.hw = d.high_watermark
            for e in reversed(out):
                if isinstance(e, m.Trace) and e.event["action"] == "FollowerFetch":
                    e.event.setdefault("state", {})["hw"] = p.log.hw
                    break


class FailedCasApplied(Broker):
    """A failed compare-and-set of the leader's ISR write is taken as a success (the leader
    changes its ISR although the controller's write won; R7, R18)."""

    def on_cas_results(self, results: list[m.CasResult], now: int) -> list[Any]:
        from dataclasses import replace

        return super().on_cas_results([r if r.ok else replace(r, ok=True) for r in results], now)


class RemovedFollowerCountsForHw(Broker):
    """A follower removed from the ISR is still counted for the HW: the leader's HW stays at
    the removed (lagging or dead) follower's LEO after the shrink (R4: the HW is the minimum
    over the ISR)."""

    def on_cas_results(self, results: list[m.CasResult], now: int) -> list[Any]:
        for res in results:
            p = self.partitions.get(res.tp)
            if p is not None and p.pending_isr is not None and p.pending_isr[0] == "shrink":
                removed = getattr(p, "_removed", set())
                p._removed = removed | (set(p.isr) - set(p.pending_isr[1]))  # type: ignore[attr-defined]
        return super().on_cas_results(results, now)

    def _raise_hw(self, p: Partition, now: int) -> bool:
        if p.role != LEADER:
            return False
        removed = getattr(p, "_removed", set())
        leos = [p.log.leo]
        joining = p.pending_isr[1] if p.pending_isr and p.pending_isr[0] == "expand" else ()
        for r, rem in p.remote.items():
            if r in p.isr or r in joining or r in removed:
                leos.append(rem.leo)
        new_hw = min(leos)
        if new_hw <= p.log.hw:
            return False
        p.log.hw = new_hw
        return True

    def _become_leader(self, out: list[Any], p: Partition, lp: Any, now: int) -> None:
        p._removed = set()  # type: ignore[attr-defined]  # a new epoch starts from its ISR
        super()._become_leader(out, p, lp, now)


@dataclass(frozen=True)
class Mutant:
    name: str
    bug: str
    broker_cls: type[Broker] = Broker
    controller_cls: type[Controller] = Controller
    # kraft: the flag-removed spec variant whose bug this mutant implements (its name, as
    # examples/protocols/kraft_*.py declare it): the kit's separating scenarios of that variant
    # (traces/conformance/separating.py) must reject it; "" when the bug is no variant's
    variant: str = ""


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
        Mutant(
            "serve-stale-follower",
            "fetch fencing one way: a follower at an older epoch is served",
            ServeStaleFollower,
        ),
        Mutant(
            "zombie-leader-serves",
            "fetch fencing one way: a deposed leader serves a follower at a newer epoch",
            ZombieLeaderServes,
        ),
        Mutant("no-epoch-walk-back", "KIP-279 truncation without the walk back", NoEpochWalkBack),
        Mutant(
            "kip279-uncapped-truncation",
            "KIP-279 truncation to the leader's end of the common epoch, not capped by the "
            "follower's own end of it",
            Kip279UncappedTruncation,
        ),
        Mutant(
            "follower-hw-not-capped",
            "a follower's HW not capped by its own LEO",
            FollowerHwNotCapped,
        ),
        Mutant(
            "failed-cas-applied",
            "a failed ISR compare-and-set taken as a success",
            FailedCasApplied,
        ),
        Mutant(
            "removed-follower-counts-for-hw",
            "a follower removed from the ISR still counted for the HW",
            RemovedFollowerCountsForHw,
        ),
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


# ---- kraft (issue 18): the guards the kraft version's fetch has, each removed --------------
class FreshHwInResponse(Broker):
    """kraft before KAFKA-7104: the fetch response carries the HW after the leader counted this
    fetch, not the one it read with the records (the follower learns the HW a round early)."""

    _fresh_hw_in_response = True


class CountDivergingFetch(Broker):
    """KAFKA-13141 brought back: the leader counts a diverging fetch's offset as the follower's
    LEO, so its HW may pass entries the follower does not have."""

    _count_diverging = True


# Separate from MUTANTS: they change only the kraft version's code (the conformance kit's
# mutant list runs the default version, where they would be the correct implementation).
KRAFT_MUTANTS: dict[str, Mutant] = {
    mu.name: mu
    for mu in (
        Mutant(
            "fresh-hw-in-response",
            "the fetch response carries the HW after this fetch (KAFKA-7104 undone)",
            FreshHwInResponse,
        ),
        Mutant(
            "count-diverging-fetch",
            "the leader counts a diverging fetch's offset (KAFKA-13141)",
            CountDivergingFetch,
            variant="kraft-count-diverging-fetch",
        ),
    )
}


class NoStaleFetchFence(Broker):
    """KAFKA-15221 brought back: the leader counts a fetch of a follower's previous incarnation
    (an older broker epoch than the one it last counted) instead of refusing it."""

    def _kraft_handle(self, out: list[Any], f: int, fp: m.FetchPartition, now: int) -> Any:
        p = self.partitions.get((fp.topic, fp.partition))
        rem = p.remote.get(f) if p is not None else None
        if rem is not None and fp.broker_epoch < rem.broker_epoch:
            rem.broker_epoch = -1  # forget the newer epoch: the stale fetch passes the fence
        return super()._kraft_handle(out, f, fp, now)


KRAFT_MUTANTS["no-stale-fetch-fence"] = Mutant(
    "no-stale-fetch-fence",
    "a fetch of a follower's previous incarnation is counted (KAFKA-15221)",
    NoStaleFetchFence,
)


class HwOverProposedIsr(Broker):
    """kraft without the maximal ISR: while an AlterPartition is in flight the HW counts only
    the proposed ISR, so a shrink lets it pass records the member being removed lacks before
    the controller agreed (the spec's ``maximal_isr=False``)."""

    def _raise_hw(self, p: Partition, now: int) -> bool:
        pend = p.pending_isr
        if p.role != LEADER or pend is None or pend[0] != "shrink":
            return super()._raise_hw(p, now)
        if len(p.isr) < self.config.min_insync_replicas:
            return False
        leos = [p.log.leo] + [rem.leo for r, rem in p.remote.items() if r in pend[1]]
        new_hw = min(leos)
        if new_hw <= p.log.hw:
            return False
        p.log.hw = new_hw
        return True


KRAFT_MUTANTS["hw-over-proposed-isr"] = Mutant(
    "hw-over-proposed-isr",
    "the HW counts the proposed ISR, not the maximal one, while a shrink is in flight",
    HwOverProposedIsr,
    variant="kraft-no-maximal-isr",
)


class HwIgnoresMinIsr(Broker):
    """KAFKA-15583 undone: the leader advances its HW while its ISR has fewer than
    min.insync.replicas members (the spec's ``hw_needs_min_isr=False``): a record only the
    leader has is committed once the controller shrank the ISR to the leader alone, although
    the replica removed stays eligible (KIP-966's ELR)."""

    def __init__(self, *a: Any, **kw: Any) -> None:
        super().__init__(*a, **kw)
        self.strat = _Strategy(self.strat, hw_needs_min_isr=False)


KRAFT_MUTANTS["hw-ignores-min-isr"] = Mutant(
    "hw-ignores-min-isr",
    "the HW advances while the ISR is below min.insync.replicas (KAFKA-15583 undone)",
    HwIgnoresMinIsr,
    variant="kraft-hw-without-min-isr",
)


class FollowerReadsToLeo(Broker):
    """KIP-392 without its bound: a follower serves the consumer up to its LEO instead of its
    HW (the spec's ``follower_reads_below_hw=False``), showing records that are not committed
    and that a truncation may take away."""

    def _follower_read_limit(self, p: Partition) -> int:
        return p.log.leo


KRAFT_MUTANTS["follower-reads-to-leo"] = Mutant(
    "follower-reads-to-leo",
    "a follower serves consumers up to its LEO instead of its HW (KIP-392's bound undone)",
    FollowerReadsToLeo,
    variant="kraft-follower-reads-to-leo",
)


class HwBeforeTruncation(Broker):
    """KAFKA-14704 brought back (Kafka before 3.5.0): the follower processes a diverging
    answer's partition data, which moves its HW to min(its LEO, the leader's HW), before the
    fetcher's truncation step (the spec's ``truncate_before_hw=False``): a consumer reading
    from it in between (KIP-392) is shown records below that HW that the truncation then takes
    away, never committed (R4, R5)."""

    def _kraft_diverging_taken(self, p: Partition, d: m.FetchPartitionData) -> None:
        p.log.hw = min(p.log.leo, d.high_watermark)


KRAFT_MUTANTS["hw-before-truncation"] = Mutant(
    "hw-before-truncation",
    "a follower's HW moved by a diverging answer before its truncation (KAFKA-14704 undone)",
    HwBeforeTruncation,
    variant="kraft-hw-before-truncation",
)


class NoBrokerEpochCheck(Controller):
    """KIP-903 undone (KAFKA-14139, Kafka before 3.5.0): the controller accepts an ISR
    expansion whatever the broker epoch of the fetch that justified it (the spec's
    ``broker_epoch_check=False``): a fetch of a follower's previous incarnation, made before it
    lost unflushed records in a power failure, puts its new, emptier incarnation back in the
    ISR, from where it may be elected and the committed records are gone."""

    @classmethod
    def added_epoch_current(cls, w: m.CasWrite, broker_epochs: dict[int, int]) -> bool:
        return True


KRAFT_MUTANTS["no-broker-epoch-check"] = Mutant(
    "no-broker-epoch-check",
    "the controller adds a follower on a fetch of its previous incarnation (KIP-903 undone)",
    controller_cls=NoBrokerEpochCheck,
    variant="kraft-no-kip-903",
)


# ---- the log start offset (kraft, R12; issue 28 item 3) -------------------------------------
class RetentionBeyondHw(Broker):
    """KAFKA-5634 undone (Kafka 0.11.0.0): retention deletes any segment but an empty active
    one, up to the log end, not only those wholly below the HW (the spec's
    ``retention_below_hw=False``, examples/protocols/kraft_retention_beyond_hw.py): the log
    start passes the HW and records are deleted before they are committed (LogStartAtMostHw,
    DeletedOnlyCommitted)."""

    def _segment_deletable(self, p: Partition, upper: int) -> bool:
        return True


KRAFT_MUTANTS["retention-beyond-hw"] = Mutant(
    "retention-beyond-hw",
    "retention deletes segments beyond the HW (KAFKA-5634 undone)",
    RetentionBeyondHw,
)


class HwBelowLogStartOnReset(Broker):
    """KAFKA-9491 undone (Kafka before 2.4.1): a follower reset to its leader's log start
    (``truncateFullyAndStartAt``) keeps its HW below the new log start (the spec's
    ``hw_at_log_start_on_reset=False``, examples/protocols/
    kraft_hw_below_log_start_after_reset.py: LogStartAtMostHw)."""

    def _hw_at_log_start_on_reset(self) -> bool:
        return False


KRAFT_MUTANTS["hw-below-log-start-on-reset"] = Mutant(
    "hw-below-log-start-on-reset",
    "a follower reset to its leader's log start keeps its HW below it (KAFKA-9491 undone)",
    HwBelowLogStartOnReset,
)


# ---- the idempotent producer's state (issue 28 item 4; R6, R15; the spec's --idempotence) -----
# Each shows only in a run of the idempotent producer (the kit's idempotent:* scenarios, whose
# start has "idempotence": true), in every version: the spec's producer state is the same in
# all (spec/producer_state.py).
class AppendRetryAgain(Broker):
    """A leader that appends a retried batch again: its duplicate check never finds the batch
    (Kafka before KIP-98; the spec's leader answers DUPLICATE with the original offset,
    ``UnifiedLog.analyzeAndValidateProducerState``): the record is in the log twice
    (NoDuplicates)."""

    def _analyze(self, p: Partition, req: m.ProduceRequest) -> tuple[str, int]:
        verdict, base = super()._analyze(p, req)
        return (APPEND, -1) if verdict == DUPLICATE else (verdict, base)


class ProducerStateNotRebuilt(Broker):
    """The producer state is not rebuilt from the log when the broker becomes leader or
    restarts (KAFKA-7298-like; Kafka rebuilds it on every truncation and load,
    ``UnifiedLog.rebuildProducerState``, and a follower's appends update it,
    ``appendAsFollower``): a leader knows only the batches it appended itself in its current
    leadership, so the retry of a batch it replicated as a follower, or held before a
    restart, is appended again."""

    def __init__(self, *a: Any, **kw: Any) -> None:
        super().__init__(*a, **kw)
        self._own: dict[Any, tuple[int, ProducerState]] = {}

    def _analyze(self, p: Partition, req: m.ProduceRequest) -> tuple[str, int]:
        held = self._own.get(p.tp)
        if held is None or held[0] != p.leader_epoch:
            held = self._own[p.tp] = (p.leader_epoch, ProducerState())
        st = held[1]
        verdict, base = st.analyze(req.producer_id, req.producer_epoch, req.base_sequence)
        if verdict == APPEND:  # (one record per batch: appended next, at the LEO)
            st.add(req.producer_id, req.producer_epoch, req.base_sequence, p.log.leo)
        return verdict, base


class DuplicateWindowOffByOne(Broker):
    """The sequence check off by one: the duplicate search skips the newest of the producer's
    cached batches (``ProducerStateEntry.findDuplicateBatch`` searches all five), so the retry
    of the last batch, whose answer was lost, is not a duplicate; its sequence is not the last
    + 1 either: OUT_OF_ORDER_SEQUENCE_NUMBER, the producer bumps its epoch (KIP-360) and the
    batch is appended again under the new one."""

    def _analyze(self, p: Partition, req: m.ProduceRequest) -> tuple[str, int]:
        e = p.log.producers.producers.get(req.producer_id)
        if e is not None and req.producer_epoch == e.epoch and e.batches:
            newest = e.batches[-1]
            if newest[0] == req.base_sequence and len(req.records) == 1:
                return OUT_OF_ORDER, -1  # (not found among the older four: out of order)
        return super()._analyze(p, req)


IDEMPOTENT_MUTANTS: dict[str, Mutant] = {
    mu.name: mu
    for mu in (
        Mutant(
            "idem-append-retry-again",
            "a leader appends a retried batch of the idempotent producer again",
            AppendRetryAgain,
        ),
        Mutant(
            "idem-state-not-rebuilt",
            "the producer state is not rebuilt from the log on becoming leader or restart "
            "(KAFKA-7298-like)",
            ProducerStateNotRebuilt,
        ),
        Mutant(
            "idem-duplicate-window-off-by-one",
            "the sequence check off by one: the newest cached batch is not a duplicate",
            DuplicateWindowOffByOne,
        ),
    )
}
MUTANTS.update(IDEMPOTENT_MUTANTS)
KRAFT_MUTANTS.update(IDEMPOTENT_MUTANTS)


# ---- partition reassignment (kraft, KIP-455; issue 28 item 1) ---------------------------------
class ReassignBelowMinIsr(Controller):
    """KAFKA-15665 undone (Kafka 3.3 to 3.7; fixed in 3.8.0, apache/kafka#15359): the
    controller completes a reassignment once the ISR less the removing replicas holds every
    *adding* replica, though target replicas it keeps are out of the ISR, so the completion can
    leave the ISR below min.insync.replicas (the spec's ``reassignment_needs_full_isr=False``,
    examples/protocols/kraft_reassignment_below_min_isr.py: ReassignmentKeepsMinIsr)."""

    @classmethod
    def reassignment_done(cls, isr, replicas, adding, removing):  # type: ignore[override]
        if not adding and not removing:
            return None
        new_isr = tuple(r for r in isr if r not in removing)
        target = tuple(r for r in replicas if r not in removing)
        if not new_isr or not target or not set(adding) <= set(new_isr):
            return None
        return target, new_isr


KRAFT_MUTANTS["reassign-below-min-isr"] = Mutant(
    "reassign-below-min-isr",
    "a reassignment completes once the adding replicas are in the ISR (KAFKA-15665 undone)",
    controller_cls=ReassignBelowMinIsr,
)


class ReassignBeforeIsr(Controller):
    """A reassignment completed before the new replicas are in the ISR: the controller makes
    the target the replica set as soon as the ISR less the removing replicas is not empty (a
    ``maybeCompleteReassignment`` without its ``containsAll`` check), so the new replica leads
    or counts in the replica set before it has a record (LeaderIsReplica holds, but the ISR
    loses the removed members while the new ones are not in it: the committed records may
    live on the removed brokers only)."""

    @classmethod
    def reassignment_done(cls, isr, replicas, adding, removing):  # type: ignore[override]
        if not adding and not removing:
            return None
        new_isr = tuple(r for r in isr if r not in removing)
        target = tuple(r for r in replicas if r not in removing)
        if not new_isr or not target:
            return None
        return target, new_isr


KRAFT_MUTANTS["reassign-before-isr"] = Mutant(
    "reassign-before-isr",
    "a reassignment completes before the new replicas are in the ISR",
    controller_cls=ReassignBeforeIsr,
)
