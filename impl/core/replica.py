"""The broker's replica manager: every partition it hosts, as leader or follower (R2-R7, R10-R13).

Sans-I/O: ``start``, ``on_message``, ``on_timer`` and ``on_cas_results`` take an event plus the
current time (an input, so the core has no clock) and return a list of effects. The runtime
persists ``Append``/``Truncate``/``CheckpointHw``, delivers ``Send``, arms ``SetTimer`` (a later
timer with the same key replaces the earlier one) and performs ``CasWrite`` on the coordination
service, feeding the results back. ``Trace`` effects are the trace (traces/FORMAT.md).
"""

from __future__ import annotations

from typing import Any

from . import messages as m
from .become import BecomeRole
from .config import Config
from .consume import ConsumeRole
from .fetcher import FetcherPool
from .follower import FollowerRole
from .kraft import KraftFetchRole
from .leader import LeaderRole
from .log import PartitionLog, trace_entry
from .logstart import LogStartRole
from .messages import TP, Effects, Entry
from .partition import (
    FOLLOWER,
    LEADER,
    TRUNCATING,
    Partition,
)
from .produce import ProduceRole
from .trace import LamportClock, event
from .truncation import strategy


class Broker(
    BecomeRole, FollowerRole, LeaderRole, KraftFetchRole, LogStartRole, ProduceRole, ConsumeRole
):
    """One broker's replicas. Its roles live in their own modules, as the spec's actors do:
    become.py, follower.py, leader.py, produce.py, consume.py; this class holds the state, the
    helpers they share, the lifecycle, the dispatch of messages and timers, the HW checkpoint."""

    def __init__(
        self,
        broker_id: int,
        config: Config,
        restored: dict[TP, tuple[list[Entry], int, int]] | None = None,
        *,
        clock_start: int = 0,
        full_log_in_trace: bool = False,
        corr_start: int = 0,
    ) -> None:
        """``restored``: tp -> (entries, log start, HW checkpoint) read back from disk (R13).
        ``corr_start``: where this incarnation's correlation ids begin. An answer to a request
        of a previous incarnation travels on a connection that closed with that process, so it
        must never match a request of this one; a runtime whose messages are not carried on
        real connections (impl/sim) gives each incarnation its own range instead."""
        self.id = broker_id
        self.config = config
        self.strat = strategy(config.protocol)
        self.clock = LamportClock(clock_start)
        self.full_log = full_log_in_trace
        self.controller_epoch = -1
        self.partitions: dict[TP, Partition] = {}
        self.fetchers = FetcherPool(
            config.num_replica_fetchers, keep_in_flight=self.strat.diverging_epoch_fetch
        )
        # kraft: this incarnation's broker epoch, given by the controller at registration
        # (KIP-380/903; the simulation sets it: 1, then + 1 per restart)
        self.broker_epoch = 1
        self._corr = corr_start
        self._parked: dict[tuple[int, int], m.FetchRequest] = {}  # (replica, corr) -> request
        # kraft, KIP-455: per partition this incarnation was removed from, the version of the
        # state that removed it (older partition state still in flight is not applied)
        self.removed_at: dict[TP, int] = {}
        self._flush_count: dict[TP, int] = {}
        self.metrics: dict[str, int] = {
            "isr_shrinks": 0,
            "isr_expands": 0,
            "produce_requests": 0,
            "produce_records": 0,
            "produce_duplicates": 0,  # idempotent retries dropped (the batch was in the log)
            "fetch_requests": 0,
            "fetched_records": 0,
            "consumer_fetches": 0,
        }
        for tp, (entries, log_start, ckpt) in (restored or {}).items():
            log = PartitionLog(entries, log_start, hw=ckpt)
            self.partitions[tp] = Partition(tp, log, hw_checkpoint=ckpt)

    # ---- helpers ------------------------------------------------------------------------------
    def _next_corr(self) -> int:
        self._corr += 1
        return self._corr

    def _trace(
        self, out: Effects, action: str, args: dict[str, Any], now: int, p: Partition | None
    ) -> None:
        state = self._state(p) if p is not None else {"alive": True}
        out.append(
            m.Trace(
                event(
                    self.clock.tick(),
                    self.id,
                    action,
                    args,
                    now_ms=now,
                    tp=p.tp if p else None,
                    state=state,
                )
            )
        )
        if p is not None and p.flush_due:
            p.flush_due = False
            self._flush(out, p, now)

    def _flush(self, out: Effects, p: Partition, now: int) -> None:
        """Make ``p``'s log durable to its end (R14) and trace it as the spec's BrokerFlush, after
        the event of the step that appended (its state already has the appended entries)."""
        out.append(m.Flush(p.tp))
        st = self._state(p)
        st["flushed"] = p.log.leo
        out.append(
            m.Trace(
                event(
                    self.clock.tick(),
                    self.id,
                    "BrokerFlush",
                    {"replica": self.id},
                    now_ms=now,
                    tp=p.tp,
                    state=st,
                )
            )
        )

    def _state(self, p: Partition) -> dict[str, Any]:
        """The local state the broker sees for ``p`` (FORMAT.md "state")."""
        cut = p.trace_cut
        start = p.trace_mark if cut is None else min(cut, p.trace_mark)
        start = max(start, p.log.log_start)
        st: dict[str, Any] = {
            "alive": True,
            "role": p.role,
            "leader": p.leader,
            "leader_epoch": p.leader_epoch,
            "isr": sorted(p.isr),
            "hw": p.log.hw,
            "hw_checkpoint": p.hw_checkpoint,
            "leo": p.log.leo,
            "log_start": p.log.log_start,
        }
        if cut is not None:
            st["log_truncate"] = start
        # Only the tail since the last event: building the whole log here would make every
        # event O(LEO) (it was the cluster's bottleneck, see bench/impl_cluster_throughput.py).
        tail = p.log.entries[start - p.log.log_start :] if start < p.log.leo else []
        appended = [trace_entry(e) for e in tail]
        if appended:
            st["log_append"] = appended
        if self.full_log:
            st["log"] = p.log.view()
        if p.role == LEADER:
            st["remote_leo"] = {str(r): rem.leo for r, rem in sorted(p.remote.items())}
        p.trace_mark = p.log.leo
        p.trace_cut = None
        return st

    def _truncate(self, out: Effects, p: Partition, offset: int) -> None:
        if offset < p.log.leo:
            p.log.truncate_to(offset)
            p.trace_cut = offset if p.trace_cut is None else min(p.trace_cut, offset)
            out.append(m.Truncate(p.tp, p.log.leo))
            if p.hw_checkpoint > p.log.leo:
                # The checkpoint follows the log down (as the spec's truncations do): one above
                # the log would be trusted by a restart over whatever the log holds by then.
                p.hw_checkpoint = p.log.leo
                out.append(m.CheckpointHw(((p.tp, p.log.leo),)))

    def _append(self, out: Effects, p: Partition, entries: tuple[Entry, ...]) -> int:
        base = p.log.append(entries)
        out.append(m.Append(p.tp, base, entries))
        n = self.config.flush_interval_batches
        if n:
            c = self._flush_count.get(p.tp, 0) + 1
            self._flush_count[p.tp] = c
            if c % n == 0:
                p.flush_due = True  # flushed (and traced) after the step's own event
        return base

    # ---- lifecycle ----------------------------------------------------------------------------
    def start(self, now: int) -> Effects:
        """R13: after (re)start, truncate each log per protocol version (to the HW checkpoint in
        the seeds' protocol) and wait for LeaderAndIsr as neither leader nor follower."""
        out: Effects = []
        for p in self.partitions.values():
            if p.hw_checkpoint > p.log.leo:
                # A power failure kept less of the log than the checkpoint covers (R14): the
                # checkpoint is cut to the log and rewritten, or a later restart would trust it
                # again over a log refilled with other records.
                p.hw_checkpoint = p.log.leo
                out.append(m.CheckpointHw(((p.tp, p.log.leo),)))
            cut = self.strat.truncate_on_restart(p.log, p.hw_checkpoint)
            p.trace_mark = p.log.leo
            self._truncate(out, p, cut)
            # (at least the log start: Kafka's HW never below it, R12)
            p.log.hw = max(p.log.log_start, min(p.hw_checkpoint, p.log.leo))
            # The recovered log is made durable: what survived a process crash in the OS page
            # cache must not be lost by a later power failure (the spec keeps a crash's log).
            p.flush_due = p.log.leo > p.log.log_start
            self._trace(out, "BrokerRestart", {"replica": self.id}, now, p)
        out.append(m.SetTimer("hwckpt", self.config.hw_checkpoint_interval_ms))
        out.append(m.SetTimer("isrcheck", self.config.isr_check_interval_ms))
        return out

    # ---- dispatch -----------------------------------------------------------------------------
    def on_message(self, src: int | str, msg: Any, clock: int, now: int) -> Effects:
        self.clock.merge(clock)
        if isinstance(msg, m.FetchRequest):
            return self._on_fetch(msg, now, first=True)
        if isinstance(msg, m.FetchResponse):
            if self.strat.diverging_epoch_fetch:
                return self._on_fetch_response_kraft(msg, now)
            return self._on_fetch_response(msg, now)
        if isinstance(msg, m.ProduceRequest):
            return self._on_produce(src, msg, now)
        if isinstance(msg, m.ConsumeRequest):
            return self._on_consume(src, msg, now)
        if isinstance(msg, m.LeaderAndIsr):
            return self._on_leader_and_isr(msg, now)
        if isinstance(msg, m.StopReplica):
            return self._on_stop_replica(msg, now)
        if isinstance(msg, m.OffsetsForLeaderEpochRequest):
            return self._on_epoch_query(msg)
        if isinstance(msg, m.OffsetsForLeaderEpochResponse):
            return self._on_epoch_answer(msg, now)
        raise TypeError(f"broker {self.id}: unexpected message {type(msg).__name__}")

    def on_timer(self, key: str, now: int) -> Effects:
        out: Effects = []
        kind, _, rest = key.partition(":")
        if kind == "hwckpt":
            self._checkpoint_hw(out, now)
            out.append(m.SetTimer("hwckpt", self.config.hw_checkpoint_interval_ms))
        elif kind == "isrcheck":
            for p in list(self.partitions.values()):
                if p.role == LEADER:
                    self._maybe_shrink_isr(out, p, now)
            out.append(m.SetTimer("isrcheck", self.config.isr_check_interval_ms))
        elif kind == "fetch":  # backoff over
            leader, fid = (int(x) for x in rest.split(":"))
            f = self.fetchers.get(leader, fid)
            if f is not None:
                self._maybe_fetch(out, f, now)
        elif kind == "fetchto":  # fetch response lost or very late
            leader, fid, corr = (int(x) for x in rest.split(":"))
            f = self.fetchers.get(leader, fid)
            if f is not None and f.in_flight == corr:
                f.in_flight = None
                if self.strat.diverging_epoch_fetch:
                    self._drop_idle_fetcher(f)
                self._maybe_fetch(out, f, now)
        elif kind == "trunc":  # kraft: a diverging answer's truncation (KAFKA-14704)
            leader, fid = (int(x) for x in rest.split(":"))
            self._kraft_truncate_pending(out, leader, fid, now)
        elif kind == "dfetch":  # a parked fetch's max wait is over
            replica, corr = (int(x) for x in rest.split(":"))
            req = self._parked.pop((replica, corr), None)
            if req is not None:
                out += self._on_fetch(req, now, first=False, park=False)
        elif kind == "produce":
            topic, part, client, corr = rest.rsplit(":", 3)
            p = self.partitions.get((topic, int(part)))
            if p is not None:
                for d in list(p.delayed):
                    if d.client == client and d.correlation_id == int(corr):
                        p.delayed.remove(d)
                        out.append(self._produce_reply(p, d, m.REQUEST_TIMED_OUT))
        elif kind == "epochq":
            topic, part = rest.rsplit(":", 1)
            p = self.partitions.get((topic, int(part)))
            if p is not None and p.role == FOLLOWER and p.fetch_state == TRUNCATING:
                self._send_epoch_query(out, p)
        return out

    # ---- HW checkpoint (R13) ------------------------------------------------------------------
    def _checkpoint_hw(self, out: Effects, now: int) -> None:
        changed = [p for p in self.partitions.values() if p.hw_checkpoint != p.log.hw]
        if not changed:
            return
        for p in changed:
            p.hw_checkpoint = p.log.hw
        out.append(m.CheckpointHw(tuple((p.tp, p.log.hw) for p in self.partitions.values())))
        for p in changed:
            self._trace(out, "BrokerCheckpointHw", {"replica": self.id}, now, p)

    # ---- views --------------------------------------------------------------------------------
    def describe(self) -> list[dict[str, Any]]:
        """Per-partition status (the `isr status` view)."""
        rows = []
        for tp, p in sorted(self.partitions.items()):
            rows.append(
                {
                    "topic": tp[0],
                    "partition": tp[1],
                    "broker": self.id,
                    "role": p.role,
                    "leader": p.leader,
                    "leader_epoch": p.leader_epoch,
                    "isr": sorted(p.isr),
                    "replicas": list(p.replicas),
                    "hw": p.log.hw,
                    "leo": p.log.leo,
                    "under_replicated": p.under_replicated(),
                }
            )
        return rows

    def metrics_view(self) -> dict[str, Any]:
        out: dict[str, Any] = dict(self.metrics)
        out["under_replicated_partitions"] = sum(
            1 for p in self.partitions.values() if p.under_replicated()
        )
        out["leader_partitions"] = sum(1 for p in self.partitions.values() if p.role == LEADER)
        return out
