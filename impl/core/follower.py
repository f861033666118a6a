"""The follower side: truncation (OffsetsForLeaderEpoch, KIP-101/279/320) and fetching
(mirrors spec/actions/follower.py's FollowerTruncate/FollowerFetch). (R10, R12)
Mixed into impl.core.replica.Broker, whose state and helpers it uses."""

from __future__ import annotations

from . import messages as m
from .fetcher import Fetcher
from .messages import Effects
from .partition import (
    FETCHING,
    FOLLOWER,
    TRUNCATING,
    Partition,
)


class FollowerRole:
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
            offset, done = self.strat.follower_offset(
                p.log, a.leader_epoch, a.end_offset, p.truncation_fetch_offset
            )
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
                p.truncation_fetch_offset = offset  # the next round's fetch offset
                self._send_epoch_query(out, p)
        return out

    def _start_fetching(self, out: Effects, p: Partition, now: int) -> None:
        f = self.fetchers.add(p.tp, p.leader)
        self._maybe_fetch(out, f, now)

    def _maybe_fetch(self, out: Effects, f: Fetcher, now: int) -> None:
        if f.in_flight is not None or f.pending:  # (kraft: a truncation still to do first)
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
        if self.strat.diverging_epoch_fetch:
            parts = tuple(self._kraft_fetch_partition(out, self.partitions[tp], now) for tp in tps)
        else:
            parts = tuple(
                m.FetchPartition(
                    tp[0], tp[1], self.partitions[tp].log.leo, self.partitions[tp].leader_epoch
                )
                for tp in tps
            )
        f.in_flight, f.carried = corr, frozenset(tps)
        out.append(m.Send(f.leader, m.FetchRequest(self.id, f.fid, corr, parts)))
        if self.strat.diverging_epoch_fetch:
            return  # kraft: a fetch ends by its answer or a disconnect (on_disconnect)
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
