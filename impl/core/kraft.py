"""The ``kraft`` version's fetch, both halves (mirrors spec/actions/fetch.py's FollowerSendFetch,
LeaderHandleFetch and FollowerHandleFetchResponse; R2, R3, R4, R10, R12; issue 18 step 4).

Kafka 2.7+: no OffsetsForLeaderEpoch round. The follower fetches at its LEO with the epoch of its
last entry, its current leader epoch (KIP-320) and its broker epoch (KIP-903); the leader answers
a fetch whose last epoch it does not have up to that offset with the diverging epoch and its end
offset, and does not count such a fetch's offset (KAFKA-13141); it refuses a fetch of an older
broker epoch than the one it last counted for that follower (STALE_BROKER_EPOCH, KAFKA-15221);
otherwise it records the follower's LEO and broker epoch, re-evaluates its HW and answers with
the records and the HW it read *before* this fetch moved it (KAFKA-7104). The follower applies a
response only if its fetch offset and leader epoch did not change while the fetch was in flight,
truncates on a diverging answer, in a step of its own after taking it and before its HW moves
(KAFKA-14704), and fetches again.

Tracing (traces/FORMAT.md, "kraft"): one event per partition per step, named as the spec's
action, with the request's fields as arguments, so the validator runs exactly that step. A fetch
that would change nothing on the leader (the follower's LEO and broker epoch already counted, no
record to send) is parked (long poll) and *handled* only when it is answered (new data, an HW
change, the max wait): the spec's request simply waits in flight until then. Error answers are
the spec's LeaderHandleFetch that changes nothing; the follower's receipt of one is no spec step
(the spec delivers error answers at once) and is not traced.

Mixed into impl.core.replica.Broker, whose state and helpers it uses."""

from __future__ import annotations

from typing import Any

from . import messages as m
from .fetcher import Fetcher
from .messages import Effects
from .partition import FETCHING, FOLLOWER, LEADER, Partition, RemoteReplica


class KraftFetchRole:
    # ---- follower: FollowerSendFetch ----------------------------------------------------------
    def _kraft_fetch_partition(self, out: Effects, p: Partition, now: int) -> m.FetchPartition:
        fp = m.FetchPartition(
            p.tp[0],
            p.tp[1],
            p.log.leo,
            p.leader_epoch,
            p.log.latest_epoch(),
            self.broker_epoch,
        )
        self._trace(
            out,
            "FollowerSendFetch",
            {
                "follower": self.id,
                "leader": p.leader,
                "fetch_offset": fp.fetch_offset,
                "last_fetched_epoch": fp.last_fetched_epoch,
                "leader_epoch": fp.current_leader_epoch,
                "broker_epoch": fp.broker_epoch,
            },
            now,
            p,
        )
        return fp

    # ---- leader: LeaderHandleFetch ------------------------------------------------------------
    def _kraft_idle(self, fp: m.FetchPartition, req: m.FetchRequest) -> bool:
        """The fetch would change nothing on the leader and has nothing to carry: parked."""
        p = self.partitions.get((fp.topic, fp.partition))
        if p is None or p.role != LEADER or fp.current_leader_epoch != p.leader_epoch:
            return False
        rem = p.remote.get(req.replica_id)
        if rem is None or rem.leo != fp.fetch_offset or rem.broker_epoch != fp.broker_epoch:
            return False
        if fp.fetch_offset != p.log.leo:
            return False
        return (
            self.strat.diverging(p.log, p.leader_epoch, fp.last_fetched_epoch, fp.fetch_offset)
            is None
        )

    def _on_fetch_kraft(self, req: m.FetchRequest, now: int, *, first: bool, park: bool) -> Effects:
        out: Effects = []
        if first:
            self.metrics["fetch_requests"] += 1
        unknown = any((fp.topic, fp.partition) not in self.partitions for fp in req.partitions)
        if unknown or (park and all(self._kraft_idle(fp, req) for fp in req.partitions)):
            # (a partition this broker has not created yet: the request waits until its first
            # LeaderAndIsr, which the spec's initial state has applied already)
            return self._park_fetch(out, req)  # (leader.py, shared with the atomic fetch)
        datas = [self._kraft_handle(out, req.replica_id, fp, now) for fp in req.partitions]
        return self._answer_fetch(out, req, datas)

    def _kraft_handle(
        self, out: Effects, f: int, fp: m.FetchPartition, now: int
    ) -> m.FetchPartitionData:
        tp = (fp.topic, fp.partition)
        p = self.partitions.get(tp)
        args: dict[str, Any] = {
            "leader": self.id,
            "follower": f,
            "fetch_offset": fp.fetch_offset,
            "leader_epoch": fp.current_leader_epoch,
            "broker_epoch": fp.broker_epoch,
        }
        err = m.NONE
        if p is None or p.role != LEADER:
            err = m.NOT_LEADER
        elif fp.current_leader_epoch < p.leader_epoch:
            err = m.FENCED_LEADER_EPOCH
        elif fp.current_leader_epoch > p.leader_epoch:
            err = m.UNKNOWN_LEADER_EPOCH
        elif f not in p.replicas:
            # KIP-455: a broker outside the replica set this leader applied (an adding replica
            # before the leader learnt of it): ``Partition.followerReplicaOrThrow`` answers
            # UNKNOWN_LEADER_EPOCH, not counted; the follower retries
            err = m.UNKNOWN_LEADER_EPOCH
        elif fp.broker_epoch < p.remote.setdefault(f, RemoteReplica()).broker_epoch:
            err = m.STALE_BROKER_EPOCH  # a previous incarnation's fetch (KAFKA-15221)
        elif self._kraft_out_of_range(p, fp):
            err = m.OFFSET_OUT_OF_RANGE  # R12 (impl/core/logstart.py): not counted
            args["log_start"] = p.log.log_start
        if err != m.NONE:
            args["error"] = err
            self._trace_tp(out, "LeaderHandleFetch", args, now, tp, p)
            if err == m.OFFSET_OUT_OF_RANGE:
                assert p is not None
                return m.FetchPartitionData(
                    fp.topic, fp.partition, err, p.log.hw, p.log.leo, p.log.log_start,
                    fp.fetch_offset, (), (), fp.current_leader_epoch,
                )  # fmt: skip
            return m.FetchPartitionData(
                fp.topic, fp.partition, err, 0, 0, 0, fp.fetch_offset, (), (),
                fp.current_leader_epoch,
            )  # fmt: skip
        assert p is not None
        hw_before = p.log.hw
        div = self.strat.diverging(p.log, p.leader_epoch, fp.last_fetched_epoch, fp.fetch_offset)
        if div is None or self._count_diverging:
            self._kraft_update_follower(out, p, f, fp, now)
        entries: tuple = ()
        if div is None:
            # the whole suffix, as the spec's response (partial batches, fetch.max.bytes, are
            # not modelled there: replica_fetch_max_records does not apply to kraft)
            entries = p.log.read(fp.fetch_offset, max(1, p.log.leo - fp.fetch_offset))
            args["count"] = len(entries)
        else:
            args["diverging"] = list(div)
        hw = p.log.hw if self._fresh_hw_in_response else hw_before
        args["hw"] = hw
        if p.log.log_start:  # R12: the leader's log start the answer carries (when it moved)
            args["log_start"] = p.log.log_start
        self._trace(out, "LeaderHandleFetch", args, now, p)
        # the HW this fetch moved commits produces and wakes parked fetches, after its event
        if p.log.hw != hw_before:
            self._complete_delayed(out, p, now)
            self._wake_parked(out, p.tp, now)
        self._maybe_expand_isr(out, p, f, now)
        return m.FetchPartitionData(
            fp.topic, fp.partition, m.NONE, hw, p.log.leo, p.log.log_start, fp.fetch_offset,
            entries, div or (), fp.current_leader_epoch,
        )  # fmt: skip

    # Mutation points (impl/mutants.py): the bugs the kraft version's guards closed.
    _count_diverging = False  # KAFKA-13141: count a diverging fetch's offset
    _fresh_hw_in_response = False  # before KAFKA-7104: answer with the HW after this fetch

    def _kraft_update_follower(
        self, out: Effects, p: Partition, r: int, fp: m.FetchPartition, now: int
    ) -> None:
        """R3/R7: the follower's LEO and broker epoch, its catch-up time (as ``_update_follower``),
        then R4: the HW over the maximal ISR."""
        rem = p.remote.setdefault(r, RemoteReplica())
        offset = fp.fetch_offset
        if offset >= p.log.leo:
            rem.last_caught_up_ms = now
        elif offset >= rem.leader_leo_at_last_fetch:
            rem.last_caught_up_ms = max(rem.last_caught_up_ms, rem.last_fetch_ms)
        rem.leo = offset
        rem.broker_epoch = fp.broker_epoch
        rem.leader_leo_at_last_fetch = p.log.leo
        rem.last_fetch_ms = now
        self._raise_hw(p, now)

    # ---- follower: FollowerHandleFetchResponse -------------------------------------------------
    def _on_fetch_response_kraft(self, resp: m.FetchResponse, now: int) -> Effects:
        """The fetcher takes an answer (R4, R10, R12). A partition's records are appended and its
        HW moved now; a diverging answer's truncation is the fetcher's next step
        (``_kraft_truncate_pending``), as Kafka's: ``AbstractFetcherThread.processFetchRequest``
        goes through the answer under the partition lock, keeping the diverging epochs aside
        without processing their partition data (no HW update: KAFKA-14704, Kafka 3.5.0), lets
        go of the lock, then truncates (``truncateOnFetchResponse``) before it fetches again.
        Other threads (a consumer's read, KIP-392; a metadata change) may come in between."""
        out: Effects = []
        f = self.fetchers.get(resp.leader_id, resp.fetcher_id)
        if f is None or f.in_flight != resp.correlation_id:
            return out  # no fetcher awaits it: the fetch timed out (its leader crashed)
        f.in_flight = None
        for d in resp.partitions:
            tp = (d.topic, d.partition)
            p = self.partitions.get(tp)
            if p is not None and p.stop_pending:
                # KIP-455: no longer a replica: the answer is dropped, with the stop once no
                # other fetch carrying it is outstanding
                if not self.fetchers.carrying(tp):
                    self._kraft_delete_replica(out, p, now)
                continue
            if d.error == m.OFFSET_OUT_OF_RANGE:  # R12 (impl/core/logstart.py)
                self._kraft_offset_out_of_range(out, resp.leader_id, d, p, now)
                continue
            if d.error != m.NONE:
                # no spec message: the leader's error answer is delivered at once there
                self.fetchers.backoff(tp, now + self.config.replica_fetch_backoff_ms)
                continue
            args = self._kraft_response_args(resp.leader_id, d.base_offset, d.leader_epoch)
            if self._kraft_response_stale(p, resp.leader_id, d.base_offset, d.leader_epoch):
                args["ignored"] = True
                self._trace_tp(out, "FollowerHandleFetchResponse", args, now, tp, p)
                continue
            assert p is not None
            if d.diverging:
                ep, end = d.diverging
                f.pending[tp] = (d.leader_epoch, d.base_offset, (ep, end))
                self._kraft_diverging_taken(p, d)
                continue
            if d.entries:
                self._append(out, p, d.entries)
                self.metrics["fetched_records"] += len(d.entries)
            self._kraft_take_hw(out, p, d)  # and the leader's log start (logstart.py)
            args["count"] = len(d.entries)
            args["hw"] = d.high_watermark
            self._trace(out, "FollowerHandleFetchResponse", args, now, p)
        if f.pending:
            # the truncation: the fetcher thread's next step (a timer of no delay: whatever
            # already waits for this broker, such as a consumer's read, comes first)
            out.append(m.SetTimer(f"trunc:{f.leader}:{f.fid}", 0))
            return out
        self._drop_idle_fetcher(f)
        if f.partitions:
            self._maybe_fetch(out, f, now)
        return out

    def _kraft_diverging_taken(self, p: Partition, d: m.FetchPartitionData) -> None:
        """A diverging answer was taken, its truncation not yet done: nothing changes (R4: the
        HW moves only with the next answer after the truncation, KAFKA-14704). A mutation point
        (impl/mutants.py HwBeforeTruncation: Kafka before 3.5.0 moved the HW here)."""

    def _kraft_truncate_pending(self, out: Effects, leader: int, fid: int, now: int) -> None:
        """The fetcher's step after a diverging answer (``truncateOnFetchResponse``): each
        partition kept aside truncates by KIP-279's rule (``follower_truncation``; R10, R12) and
        its HW follows the log down (R13), unless it left the fetcher, or its leader epoch or
        LEO changed meanwhile (the spec's FollowerHandleFetchResponse then ignores the answer;
        Kafka skips a partition no longer in the fetcher's states). Then the next fetch."""
        f = self.fetchers.get(leader, fid)
        if f is None or not f.pending:
            return
        pending, f.pending = f.pending, {}
        for tp, (epoch, offset, (ep, end)) in sorted(pending.items()):
            p = self.partitions.get(tp)
            args = self._kraft_response_args(leader, offset, epoch)
            if tp not in f.partitions or self._kraft_response_stale(p, leader, offset, epoch):
                args["ignored"] = True
                self._trace_tp(out, "FollowerHandleFetchResponse", args, now, tp, p)
                continue
            assert p is not None
            cut = self.strat.follower_truncation(p.log, ep, end)
            self._truncate(out, p, cut)
            if p.log.hw > p.log.leo:
                p.log.hw = p.log.leo
            args["diverging"] = [ep, end]
            args["offset"] = cut
            self._trace(out, "FollowerHandleFetchResponse", args, now, p)
            if p.stop_pending and not self.fetchers.carrying(tp):  # (KIP-455: stopped once
                self._kraft_delete_replica(out, p, now)  # its truncation is done)
        self._drop_idle_fetcher(f)
        if f.partitions:
            self._maybe_fetch(out, f, now)

    def _kraft_response_args(self, leader: int, offset: int, epoch: int) -> dict[str, Any]:
        return {
            "follower": self.id,
            "leader": leader,
            "fetch_offset": offset,
            "leader_epoch": epoch,
        }

    def _kraft_response_stale(
        self, p: Partition | None, leader: int, offset: int, epoch: int
    ) -> bool:
        """The partition left this fetcher, or its fetch offset or leader epoch changed while
        the fetch was in flight (AbstractFetcherThread; KAFKA-18991): the answer is ignored."""
        return (
            p is None
            or p.role != FOLLOWER
            or p.leader != leader
            or p.fetch_state != FETCHING
            or p.log.leo != offset
            or p.leader_epoch != epoch
        )

    def on_disconnect(self, peer: int, now: int) -> Effects:
        """kraft: the connection to broker ``peer`` closed (it crashed, or refused a connection
        because it is down): the fetches in flight to it are gone (the spec's crash drops them),
        so its fetchers may send again after a backoff of request.timeout.ms. Instead of a
        fetch timeout, which under reordering could resend while the first is still pending
        (the spec has one fetch in flight per follower and no lost fetches)."""
        out: Effects = []
        for f in list(self.fetchers.fetchers.values()):
            if f.leader != peer or f.in_flight is None:
                continue
            f.in_flight = None
            for tp in sorted(f.carried | f.partitions):
                p = self.partitions.get(tp)
                if p is not None and p.stop_pending and not self.fetchers.carrying(tp):
                    self._kraft_delete_replica(out, p, now)  # (KIP-455: its fetch is gone)
                    continue
                if tp in f.partitions:
                    self.fetchers.backoff(tp, now + self.config.request_timeout_ms)
            self._drop_idle_fetcher(f)
            if f.partitions:
                out.append(m.SetTimer(f.key, self.config.request_timeout_ms))
        return out

    def _drop_idle_fetcher(self, f: Fetcher) -> None:
        if not f.partitions and f.in_flight is None and not f.pending:
            self.fetchers.fetchers.pop((f.leader, f.fid), None)

    def _trace_tp(
        self,
        out: Effects,
        action: str,
        args: dict[str, Any],
        now: int,
        tp: m.TP,
        p: Partition | None,
    ) -> None:
        """``_trace`` for a partition this broker may not hold (an error answer from a broker
        that has no replica of it yet): the event still names the partition."""
        if p is not None:
            self._trace(out, action, args, now, p)
            return
        from .trace import event

        out.append(
            m.Trace(
                event(
                    self.clock.tick(), self.id, action, args, now_ms=now, tp=tp,
                    state={"alive": True},
                )
            )
        )  # fmt: skip
