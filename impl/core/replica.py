"""The broker's replica manager: every partition it hosts, as leader or follower (R2-R7, R10-R13).

Sans-I/O: ``start``, ``on_message``, ``on_timer`` and ``on_cas_results`` take an event plus the
current time (an input, so the core has no clock) and return a list of effects. The runtime
persists ``Append``/``Truncate``/``CheckpointHw``, delivers ``Send``, arms ``SetTimer`` (a later
timer with the same key replaces the earlier one) and performs ``CasWrite`` on the coordination
service, feeding the results back. ``Trace`` effects are the trace (traces/FORMAT.md).
"""

from __future__ import annotations

from typing import Any

from ..config import Config
from . import messages as m
from .fetcher import Fetcher, FetcherPool
from .log import PartitionLog
from .messages import TP, Entry
from .partition import (
    FETCHING,
    FOLLOWER,
    LEADER,
    NONE_ROLE,
    STOPPED,
    TRUNCATING,
    DelayedProduce,
    Partition,
    RemoteReplica,
)
from .trace import LamportClock, event
from .truncation import strategy

Effects = list[Any]


class Broker:
    def __init__(
        self,
        broker_id: int,
        config: Config,
        restored: dict[TP, tuple[list[Entry], int, int]] | None = None,
        *,
        clock_start: int = 0,
        full_log_in_trace: bool = False,
    ) -> None:
        """``restored``: tp -> (entries, log start, HW checkpoint) read back from disk (R13)."""
        self.id = broker_id
        self.config = config
        self.strat = strategy(config.protocol)
        self.clock = LamportClock(clock_start)
        self.full_log = full_log_in_trace
        self.controller_epoch = -1
        self.partitions: dict[TP, Partition] = {}
        self.fetchers = FetcherPool(config.num_replica_fetchers)
        self._corr = 0
        self._parked: dict[tuple[int, int], m.FetchRequest] = {}  # (replica, corr) -> request
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
        appended = [[e[1], e[0]] for e in tail]
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
            p.log.hw = min(p.hw_checkpoint, p.log.leo)
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
                self._maybe_fetch(out, f, now)
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

    # ---- LeaderAndIsr / StopReplica (R9, R10, R11) --------------------------------------------
    def _on_leader_and_isr(self, req: m.LeaderAndIsr, now: int) -> Effects:
        out: Effects = []
        if req.controller_epoch < self.controller_epoch:  # R9: a stale controller
            for lp in req.partitions:
                p = self.partitions.get((lp.topic, lp.partition))
                self._trace(
                    out,
                    "BrokerIgnoreStaleRequest",
                    {"replica": self.id, "epoch": lp.leader_epoch, "reason": "controller_epoch"},
                    now,
                    p,
                )
            return out
        self.controller_epoch = req.controller_epoch
        for lp in req.partitions:
            if self.id not in lp.replicas:
                continue
            tp = (lp.topic, lp.partition)
            p = self.partitions.get(tp)
            if p is None:
                p = self.partitions[tp] = Partition(tp, PartitionLog())
                # the log exists on disk from now on: a restart finds it (and traces it, R13)
                out.append(m.Append(tp, 0, ()))
            if lp.leader_epoch < p.leader_epoch:
                self._trace(
                    out,
                    "BrokerIgnoreStaleRequest",
                    {"replica": self.id, "epoch": lp.leader_epoch, "reason": "leader_epoch"},
                    now,
                    p,
                )
                continue
            if lp.leader_epoch == p.leader_epoch and p.role != NONE_ROLE:
                if p.role == FOLLOWER and p.fetch_state == STOPPED and lp.leader == p.leader:
                    # stopped (StopReplica) and told again: resume where it stopped (its broker
                    # came back in a new session without restarting)
                    p.fetch_state = p.resume_state
                    if p.fetch_state == TRUNCATING:
                        self._send_epoch_query(out, p)
                    else:
                        self._start_fetching(out, p, now)
                continue  # already applied (the controller re-sends state periodically)
            if lp.leader < 0:
                # An offline partition (no live ISR member, R9): nobody to follow. As Kafka's
                # makeFollowers, which aborts the transition when the leader is not alive, the
                # broker keeps its state and epoch and waits for an election.
                continue
            p.replicas = lp.replicas
            if lp.leader == self.id:
                self._become_leader(out, p, lp, now)
            else:
                self._become_follower(out, p, lp, now)
        return out

    def _become_leader(
        self, out: Effects, p: Partition, lp: m.LeaderAndIsrPartition, now: int
    ) -> None:
        """R11: stop fetching, adopt epoch and ISR, accept produce; HW may lag until fetches."""
        self.fetchers.remove(p.tp)
        p.role, p.leader, p.leader_epoch = LEADER, self.id, lp.leader_epoch
        p.isr, p.zk_version = frozenset(lp.isr), lp.zk_version
        p.pending_isr = None
        p.epoch_start_offset = p.log.leo
        # Followers in the ISR get a fresh lag clock so they are not shrunk before fetching.
        p.remote = {
            r: RemoteReplica(leo=-1, last_caught_up_ms=now if r in p.isr else 0)
            for r in p.replicas
            if r != self.id
        }
        raised = self._raise_hw(p, now)  # R4/R11: part of becoming leader, traced with it
        self._trace(
            out, "BrokerBecomeLeader", {"replica": self.id, "epoch": lp.leader_epoch}, now, p
        )
        if raised:
            self._complete_delayed(out, p, now)

    def _become_follower(
        self, out: Effects, p: Partition, lp: m.LeaderAndIsrPartition, now: int
    ) -> None:
        """R10: refuse produce, stop the fetcher, truncate (per version), fetch from the leader."""
        self._fail_delayed(out, p, m.NOT_LEADER)
        self.fetchers.remove(p.tp)
        p.role, p.leader, p.leader_epoch = FOLLOWER, lp.leader, lp.leader_epoch
        p.isr, p.zk_version = frozenset(lp.isr), lp.zk_version
        p.remote, p.pending_isr = {}, None
        cut = self.strat.truncate_on_become_follower(p.log)
        self._truncate(out, p, cut)
        if not self.strat.asks_leader:  # R10: truncate to HW, then checkpoint
            p.hw_checkpoint = p.log.hw
            out.append(m.CheckpointHw(((p.tp, p.log.hw),)))
        p.fetch_state = TRUNCATING if self.strat.asks_leader else FETCHING
        self._trace(
            out,
            "BrokerBecomeFollower",
            {"replica": self.id, "leader": lp.leader, "epoch": lp.leader_epoch},
            now,
            p,
        )
        if lp.leader < 0:  # offline partition: nobody to fetch from
            return
        if p.fetch_state == TRUNCATING:
            self._send_epoch_query(out, p)
        else:
            self._start_fetching(out, p, now)

    def _on_stop_replica(self, req: m.StopReplica, now: int) -> Effects:
        out: Effects = []
        if req.controller_epoch < self.controller_epoch:
            return out
        self.controller_epoch = req.controller_epoch
        for topic, part in req.partitions:
            p = self.partitions.get((topic, part))
            if p is None:
                continue
            if not req.delete:
                # Kafka's StopReplica(deletePartition=false) to a broker shutting down (R9): its
                # fetcher stops, the replica keeps its log, role and epoch (a follower that takes
                # no steps, which the spec allows), until the next LeaderAndIsr.
                self.fetchers.remove(p.tp)
                if p.role == FOLLOWER and p.fetch_state != STOPPED:
                    p.resume_state, p.fetch_state = p.fetch_state, STOPPED
                self._trace(out, "StopReplica", {"replica": self.id, "delete": False}, now, p)
                continue
            self._fail_delayed(out, p, m.NOT_LEADER)
            self.fetchers.remove(p.tp)
            p.role = NONE_ROLE
            self._trace(out, "StopReplica", {"replica": self.id, "delete": req.delete}, now, p)
            if req.delete:
                del self.partitions[p.tp]
                out.append(m.DeleteLog(p.tp))
        return out

    # ---- follower side: truncation and fetching (R10, R12) ------------------------------------
    def _send_epoch_query(self, out: Effects, p: Partition) -> None:
        if p.leader < 0:
            return
        corr = self._next_corr()
        p.epoch_query_corr = corr
        q = m.EpochQuery(p.tp[0], p.tp[1], p.log.latest_epoch(), p.leader_epoch)
        out.append(m.Send(p.leader, m.OffsetsForLeaderEpochRequest(self.id, corr, (q,))))
        out.append(m.SetTimer(f"epochq:{p.tp[0]}:{p.tp[1]}", self.config.request_timeout_ms))

    def _on_epoch_answer(self, resp: m.OffsetsForLeaderEpochResponse, now: int) -> Effects:
        out: Effects = []
        for a in resp.partitions:
            p = self.partitions.get((a.topic, a.partition))
            if (
                p is None
                or p.role != FOLLOWER
                or p.fetch_state != TRUNCATING
                or p.epoch_query_corr != resp.correlation_id
                or p.leader != resp.leader_id
            ):
                continue  # stale answer
            if a.error != m.NONE:
                out.append(
                    m.SetTimer(
                        f"epochq:{a.topic}:{a.partition}", self.config.replica_fetch_backoff_ms
                    )
                )
                continue
            offset, done = self.strat.follower_offset(p.log, a.leader_epoch, a.end_offset)
            self._truncate(out, p, offset)
            self._trace(
                out,
                "FollowerTruncate",
                {
                    "follower": self.id,
                    "leader": p.leader,
                    "offset": offset,
                    "leader_answer": [a.leader_epoch, a.end_offset],
                },
                now,
                p,
            )
            if done:
                p.fetch_state = FETCHING
                self._start_fetching(out, p, now)
            else:
                self._send_epoch_query(out, p)
        return out

    def _start_fetching(self, out: Effects, p: Partition, now: int) -> None:
        f = self.fetchers.add(p.tp, p.leader)
        self._maybe_fetch(out, f, now)

    def _maybe_fetch(self, out: Effects, f: Fetcher, now: int) -> None:
        if f.in_flight is not None:
            return
        tps = [
            tp
            for tp in self.fetchers.ready(f, now)
            if self.partitions[tp].role == FOLLOWER and self.partitions[tp].fetch_state == FETCHING
        ]
        if not tps:
            waits = [t for t in f.backoff_until.values() if t > now]
            if waits:
                out.append(m.SetTimer(f.key, min(waits) - now))
            return
        corr = self._next_corr()
        parts = tuple(
            m.FetchPartition(
                tp[0], tp[1], self.partitions[tp].log.leo, self.partitions[tp].leader_epoch
            )
            for tp in tps
        )
        f.in_flight = corr
        out.append(m.Send(f.leader, m.FetchRequest(self.id, f.fid, corr, parts)))
        timeout = self.config.replica_fetch_wait_max_ms + self.config.request_timeout_ms
        out.append(m.SetTimer(f"fetchto:{f.leader}:{f.fid}:{corr}", timeout))

    def _on_fetch_response(self, resp: m.FetchResponse, now: int) -> Effects:
        out: Effects = []
        f = self.fetchers.get(resp.leader_id, resp.fetcher_id)
        if f is None or f.in_flight != resp.correlation_id:
            return out  # stale (fetcher moved on) or duplicated
        f.in_flight = None
        for d in resp.partitions:
            tp = (d.topic, d.partition)
            p = self.partitions.get(tp)
            if (
                p is None
                or p.role != FOLLOWER
                or p.leader != resp.leader_id
                or p.fetch_state != FETCHING
                or tp not in f.partitions
            ):
                continue
            if d.error == m.NONE:
                self._apply_fetched(out, p, d, now)
            elif d.error == m.OFFSET_OUT_OF_RANGE:
                # R12: a longer, divergent log: truncate to the leader's LEO and fetch again;
                # a log the leader no longer has: drop it and start at the leader's log start.
                if p.log.leo > d.leader_leo:
                    self._truncate(out, p, d.leader_leo)
                    self._trace(
                        out,
                        "FollowerTruncate",
                        {"follower": self.id, "leader": p.leader, "offset": d.leader_leo},
                        now,
                        p,
                    )
                elif p.log.leo < d.log_start_offset:
                    p.log.reset_to(d.log_start_offset)
                    p.trace_cut = 0
                    out.append(m.Truncate(p.tp, 0))
                    self._trace(
                        out,
                        "FollowerTruncate",
                        {"follower": self.id, "leader": p.leader, "offset": d.log_start_offset},
                        now,
                        p,
                    )
            else:  # NOT_LEADER, FENCED/UNKNOWN_LEADER_EPOCH: back off (R12)
                self.fetchers.backoff(tp, now + self.config.replica_fetch_backoff_ms)
        self._maybe_fetch(out, f, now)
        return out

    def _apply_fetched(self, out: Effects, p: Partition, d: m.FetchPartitionData, now: int) -> None:
        """R3/R4: append what the leader sent; HW = min(own LEO, leader HW)."""
        if d.base_offset != p.log.leo and d.entries:
            return  # we truncated meanwhile; the next fetch asks from the new LEO
        if d.entries:
            self._append(out, p, d.entries)
            self.metrics["fetched_records"] += len(d.entries)
        new_hw = min(p.log.leo, d.high_watermark)
        if d.entries or new_hw != p.log.hw:
            p.log.hw = new_hw
            self._trace(
                out,
                "FollowerFetch",
                {
                    "follower": self.id,
                    "leader": p.leader,
                    "phase": "apply",
                    "count": len(d.entries),
                },
                now,
                p,
            )

    # ---- leader side: serving fetches (R3, R4, R5, R7, R12) -----------------------------------
    def _on_fetch(
        self, req: m.FetchRequest, now: int, *, first: bool, park: bool = True
    ) -> Effects:
        out: Effects = []
        if first:
            self.metrics["fetch_requests"] += 1
        datas: list[m.FetchPartitionData] = []
        has_data = False
        has_error = False
        for fp in req.partitions:
            tp = (fp.topic, fp.partition)
            p = self.partitions.get(tp)
            err = m.NONE
            if p is None or p.role != LEADER:
                err = m.NOT_LEADER
            elif self.strat.fences_fetch and fp.current_leader_epoch < p.leader_epoch:
                err = m.FENCED_LEADER_EPOCH
            elif self.strat.fences_fetch and fp.current_leader_epoch > p.leader_epoch:
                err = m.UNKNOWN_LEADER_EPOCH
            elif fp.fetch_offset > p.log.leo or fp.fetch_offset < p.log.log_start:
                err = m.OFFSET_OUT_OF_RANGE
            if p is None or err != m.NONE:
                has_error = True
                datas.append(
                    m.FetchPartitionData(
                        fp.topic,
                        fp.partition,
                        err,
                        p.log.hw if p else 0,
                        p.log.leo if p else 0,
                        p.log.log_start if p else 0,
                        fp.fetch_offset,
                        (),
                    )
                )
                continue
            if first:
                self._update_follower(
                    out, p, req.replica_id, fp.fetch_offset, now, fp.current_leader_epoch
                )
            entries = p.log.read(fp.fetch_offset, self.config.replica_fetch_max_records)
            has_data = has_data or bool(entries)
            datas.append(
                m.FetchPartitionData(
                    fp.topic,
                    fp.partition,
                    m.NONE,
                    p.log.hw,
                    p.log.leo,
                    p.log.log_start,
                    fp.fetch_offset,
                    entries,
                )
            )
        if park and not has_data and not has_error:
            # Delayed fetch (long poll): answer when data arrives or the max wait is over.
            self._parked[(req.replica_id, req.correlation_id)] = req
            key = f"dfetch:{req.replica_id}:{req.correlation_id}"
            out.append(m.SetTimer(key, self.config.replica_fetch_wait_max_ms))
            return out
        out.append(
            m.Send(
                req.replica_id,
                m.FetchResponse(self.id, req.fetcher_id, req.correlation_id, tuple(datas)),
            )
        )
        return out

    def _update_follower(
        self, out: Effects, p: Partition, r: int, offset: int, now: int, epoch: int = -1
    ) -> None:
        """R2/R3/R7: a fetch at ``offset`` acknowledges everything below it; track catch-up time
        the way Kafka does, so a produce burst between two fetches does not make a follower lag."""
        rem = p.remote.setdefault(r, RemoteReplica())
        before = (rem.leo, p.log.hw)
        if offset >= p.log.leo:
            rem.last_caught_up_ms = now
        elif offset >= rem.leader_leo_at_last_fetch:
            rem.last_caught_up_ms = max(rem.last_caught_up_ms, rem.last_fetch_ms)
        rem.leo = offset
        rem.leader_leo_at_last_fetch = p.log.leo
        rem.last_fetch_ms = now
        changed_hw = self._raise_hw(p, now)
        if before != (rem.leo, p.log.hw) or changed_hw:
            self._trace(
                out,
                "FollowerFetch",
                {
                    "follower": r,
                    "leader": self.id,
                    "phase": "serve",
                    "offset": offset,
                    "epoch": epoch,
                },
                now,
                p,
            )
        if changed_hw:
            self._complete_delayed(out, p, now)
        self._maybe_expand_isr(out, p, r, now)

    def _maybe_increment_hw(self, out: Effects, p: Partition, now: int) -> bool:
        """R4 and then R6: raise the HW, then answer the acks=all produces it commits."""
        changed = self._raise_hw(p, now)
        if changed:
            self._complete_delayed(out, p, now)
        return changed

    def _raise_hw(self, p: Partition, now: int) -> bool:
        """R4: HW = min LEO over the ISR and over followers whose ISR expansion is in flight;
        it never decreases."""
        if p.role != LEADER:
            return False
        leos = [p.log.leo]
        # "About to re-enter the ISR" (R4) is a follower whose expansion write is in flight: the
        # HW must not pass it before the compare-and-set lands (see traces/VALIDATION.md).
        joining = p.pending_isr[1] if p.pending_isr and p.pending_isr[0] == "expand" else ()
        for r, rem in p.remote.items():
            if r in p.isr or r in joining:
                leos.append(rem.leo)
        new_hw = min(leos)
        if new_hw <= p.log.hw:
            return False
        p.log.hw = new_hw
        return True

    # ---- ISR changes (R7) ---------------------------------------------------------------------
    def _maybe_expand_isr(self, out: Effects, p: Partition, r: int, now: int) -> None:
        rem = p.remote[r]
        if (
            r in p.isr
            or p.pending_isr is not None
            or rem.leo < p.log.hw
            or (self.strat.isr_join_needs_epoch_start and rem.leo < p.epoch_start_offset)
        ):
            return
        new = p.isr | {r}
        self._propose_isr(out, p, "expand", new)

    def _maybe_shrink_isr(self, out: Effects, p: Partition, now: int) -> None:
        if p.pending_isr is not None:
            return
        lag = self.config.replica_lag_time_max_ms
        out_of_sync = {
            r
            for r in p.isr
            if r != self.id and now - p.remote.get(r, RemoteReplica()).last_caught_up_ms > lag
        }
        if out_of_sync:
            self._propose_isr(out, p, "shrink", p.isr - out_of_sync)

    def _propose_isr(self, out: Effects, p: Partition, kind: str, new: frozenset[int]) -> None:
        """ISR changes are compare-and-set writes fenced by the zkVersion (R7, R18); the local ISR
        changes only once the write succeeded, so HW is never computed over a set the
        coordination service does not hold (a shrink keeps the larger set meanwhile)."""
        p.pending_isr = (kind, new, p.leader_epoch)
        st = m.PartitionState(self.id, p.leader_epoch, tuple(sorted(new)), self.controller_epoch)
        out.append(m.CasWrite(p.tp, st, p.zk_version, "isr"))

    def on_cas_results(self, results: list[m.CasResult], now: int) -> Effects:
        out: Effects = []
        for res in results:
            p = self.partitions.get(res.tp)
            if p is None or p.pending_isr is None:
                continue
            kind, new, epoch = p.pending_isr
            p.pending_isr = None
            if p.role != LEADER or p.leader_epoch != epoch:
                continue  # leadership changed while the write was in flight
            if not res.ok:
                # Conflict: someone else (the controller) wrote. If it is still our epoch, adopt
                # the version and retry at the next check; else wait for LeaderAndIsr.
                st = res.state
                if st is not None and st.leader == self.id and st.leader_epoch == p.leader_epoch:
                    p.zk_version = res.version
                    p.isr = frozenset(st.isr)
                self._trace(out, "IsrUpdateConflict", {"leader": self.id, "kind": kind}, now, p)
                continue
            old = p.isr
            p.isr, p.zk_version = new, res.version
            self._raise_hw(p, now)  # R4: part of the ISR change, so traced with it
            if kind == "expand":
                for r in sorted(new - old):
                    self.metrics["isr_expands"] += 1
                    self._trace(out, "LeaderExpandIsr", {"leader": self.id, "follower": r}, now, p)
            else:
                for r in sorted(old - new):
                    self.metrics["isr_shrinks"] += 1
                    self._trace(out, "LeaderShrinkIsr", {"leader": self.id, "follower": r}, now, p)
            self._maybe_increment_hw(out, p, now)
            self._complete_delayed(out, p, now)
        return out

    # ---- produce (R6) -------------------------------------------------------------------------
    def _on_produce(self, src: int | str, req: m.ProduceRequest, now: int) -> Effects:
        out: Effects = []
        self.metrics["produce_requests"] += 1
        p = self.partitions.get((req.topic, req.partition))
        client = str(src)

        def reply(err: str, base: int = -1) -> None:
            if req.acks != 0:
                out.append(
                    m.Send(
                        src,
                        m.ProduceResponse(
                            self.id, req.correlation_id, req.topic, req.partition, err, base
                        ),
                    )
                )

        if p is None or p.role != LEADER:
            reply(m.NOT_LEADER)
            return out
        rids = [rid for rid, _v in req.records]
        if req.acks == -1 and len(p.isr) < self.config.min_insync_replicas:
            self._trace(
                out,
                "ProducerSend",
                {"leader": self.id, "records": rids, "acks": "all", "error": m.NOT_ENOUGH_REPLICAS},
                now,
                p,
            )
            reply(m.NOT_ENOUGH_REPLICAS)
            return out
        if req.producer_id >= 0:
            dup = self._duplicate(p, req)
            if dup is not None:
                return out + self._answer_duplicate(p, req, client, dup, now)
            entries: tuple[m.Entry, ...] = tuple(
                (p.leader_epoch, rid, v, req.producer_id, req.base_sequence + k)
                for k, (rid, v) in enumerate(req.records)
            )
        else:
            entries = tuple((p.leader_epoch, rid, v) for rid, v in req.records)
        base = self._append(out, p, entries)
        self.metrics["produce_records"] += len(entries)
        raised = self._raise_hw(p, now)
        acks = {0: "0", 1: "1", -1: "all"}.get(req.acks, str(req.acks))
        self._trace(
            out,
            "ProducerSend",
            {"leader": self.id, "records": rids, "acks": acks, "base_offset": base},
            now,
            p,
        )
        if raised:
            self._complete_delayed(out, p, now)
        if req.acks == 1:
            self._acked(out, p, rids, base, "1", m.NONE, now)
            reply(m.NONE, base)
        elif req.acks == -1:
            d = DelayedProduce(client, req.correlation_id, base, base + len(entries))
            if p.log.hw >= d.required:
                out.append(self._produce_reply(p, d, self._after_append_error(p), now=now, out=out))
            else:
                p.delayed.append(d)
                key = f"produce:{req.topic}:{req.partition}:{client}:{req.correlation_id}"
                out.append(m.SetTimer(key, self.config.request_timeout_ms))
        self._wake_parked(out, p.tp, now)
        return out

    def _duplicate(self, p: Partition, req: m.ProduceRequest) -> int | None:
        """The base offset of this batch if the log already holds all of it, at consecutive
        offsets (a retry of a batch whose answer was lost: Kafka's DUPLICATE_SEQUENCE_NUMBER,
        answered as a success with the original offset)."""
        base = p.log.offset_of(req.producer_id, req.base_sequence)
        if base is None:
            return None
        for k in range(1, len(req.records)):
            if p.log.offset_of(req.producer_id, req.base_sequence + k) != base + k:
                return None
        return base

    def _answer_duplicate(
        self, p: Partition, req: m.ProduceRequest, client: str, base: int, now: int
    ) -> Effects:
        """A dropped duplicate appends nothing and traces nothing (the spec's
        ``Config.idempotence``: the leader drops a retry of a record it already holds; its
        acknowledgement is the original's, which the spec made when the HW passed it). It is
        answered like the original: at once if committed, else when the HW passes it (acks=all)
        or the request times out."""
        self.metrics["produce_duplicates"] += 1
        end = base + len(req.records)
        if req.acks != -1 or p.log.hw >= end:
            if req.acks == 0:
                return []
            resp = m.ProduceResponse(self.id, req.correlation_id, p.tp[0], p.tp[1], m.NONE, base)
            return [m.Send(client, resp)]
        p.delayed.append(DelayedProduce(client, req.correlation_id, base, end, duplicate=True))
        key = f"produce:{req.topic}:{req.partition}:{client}:{req.correlation_id}"
        return [m.SetTimer(key, self.config.request_timeout_ms)]

    def _after_append_error(self, p: Partition) -> str:
        if len(p.isr) < self.config.min_insync_replicas:
            return m.NOT_ENOUGH_REPLICAS_AFTER_APPEND
        return m.NONE

    def _complete_delayed(self, out: Effects, p: Partition, now: int) -> None:
        done = [d for d in p.delayed if p.log.hw >= d.required]
        for d in done:
            p.delayed.remove(d)
            out.append(self._produce_reply(p, d, self._after_append_error(p), now=now, out=out))

    def _fail_delayed(self, out: Effects, p: Partition, err: str) -> None:
        for d in p.delayed:
            out.append(self._produce_reply(p, d, err))
        p.delayed = []

    def _produce_reply(
        self,
        p: Partition,
        d: DelayedProduce,
        err: str,
        *,
        now: int = -1,
        out: Effects | None = None,
    ) -> m.Send:
        if err == m.NONE and out is not None and not d.duplicate:
            rids = [p.log.entry(o)[1] for o in range(d.base_offset, d.required)]
            self._acked(out, p, rids, d.base_offset, "all", err, now)
        resp = m.ProduceResponse(self.id, d.correlation_id, p.tp[0], p.tp[1], err, d.base_offset)
        return m.Send(d.client, resp)

    def _acked(
        self, out: Effects, p: Partition, rids: list[str], base: int, acks: str, err: str, now: int
    ) -> None:
        """History for the trace: which records were acknowledged, at which offsets."""
        self._trace(
            out,
            "ProduceAcked",
            {"leader": self.id, "records": rids, "base_offset": base, "acks": acks},
            now,
            p,
        )

    def _wake_parked(self, out: Effects, tp: TP, now: int) -> None:
        for key, req in list(self._parked.items()):
            if any((fp.topic, fp.partition) == tp for fp in req.partitions):
                del self._parked[key]
                out += self._on_fetch(req, now, first=False, park=False)

    # ---- consumers (R5) -----------------------------------------------------------------------
    def _on_consume(self, src: int | str, req: m.ConsumeRequest, now: int) -> Effects:
        out: Effects = []
        self.metrics["consumer_fetches"] += 1
        p = self.partitions.get((req.topic, req.partition))
        if p is None or p.role != LEADER:
            resp = m.ConsumeResponse(
                self.id,
                req.correlation_id,
                req.topic,
                req.partition,
                m.NOT_LEADER,
                0,
                req.offset,
                (),
            )
            out.append(m.Send(src, resp))
            return out
        entries = p.log.read(req.offset, req.max_records, limit=p.log.hw)
        if entries:
            self._trace(
                out,
                "ConsumerFetch",
                {"leader": self.id, "offset": req.offset, "records": [e[1] for e in entries]},
                now,
                p,
            )
        err = m.OFFSET_OUT_OF_RANGE if req.offset > p.log.hw else m.NONE
        resp = m.ConsumeResponse(
            self.id,
            req.correlation_id,
            req.topic,
            req.partition,
            err,
            p.log.hw,
            req.offset,
            entries,
        )
        out.append(m.Send(src, resp))
        return out

    # ---- OffsetsForLeaderEpoch, leader side (KIP-101/279/320) ---------------------------------
    def _on_epoch_query(self, req: m.OffsetsForLeaderEpochRequest) -> Effects:
        answers = []
        for q in req.partitions:
            p = self.partitions.get((q.topic, q.partition))
            err, ep, end = m.NONE, -1, -1
            if p is None or p.role != LEADER:
                err = m.NOT_LEADER
            elif self.strat.fences_fetch and q.current_leader_epoch < p.leader_epoch:
                err = m.FENCED_LEADER_EPOCH
            elif self.strat.fences_fetch and q.current_leader_epoch > p.leader_epoch:
                err = m.UNKNOWN_LEADER_EPOCH
            else:
                ep, end = self.strat.answer(p.log, q.leader_epoch)
            answers.append(m.EpochEndOffset(q.topic, q.partition, err, ep, end))
        resp = m.OffsetsForLeaderEpochResponse(self.id, req.correlation_id, tuple(answers))
        return [m.Send(req.replica_id, resp)]

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
