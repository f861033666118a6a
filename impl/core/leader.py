"""The leader side: serving fetches, the HW, ISR changes and OffsetsForLeaderEpoch answers
(mirrors spec/actions/leader.py's LeaderShrinkIsr/LeaderExpandIsr and the leader half of
FollowerFetch). (R3, R4, R5, R7, R12)
Mixed into impl.core.replica.Broker, whose state and helpers it uses."""

from __future__ import annotations

from . import messages as m
from .messages import Effects
from .partition import (
    LEADER,
    Partition,
    RemoteReplica,
)


class LeaderRole:
    # ---- leader side: serving fetches (R3, R4, R5, R7, R12) -----------------------------------
    def _on_fetch(
        self, req: m.FetchRequest, now: int, *, first: bool, park: bool = True
    ) -> Effects:
        if self.strat.diverging_epoch_fetch:
            return self._on_fetch_kraft(req, now, first=first, park=park)
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
            return self._park_fetch(out, req)
        return self._answer_fetch(out, req, datas)

    def _park_fetch(self, out: Effects, req: m.FetchRequest) -> Effects:
        """Hold ``req`` until data arrives or replica.fetch.wait.max.ms is over (its timer)."""
        self._parked[(req.replica_id, req.correlation_id)] = req
        key = f"dfetch:{req.replica_id}:{req.correlation_id}"
        out.append(m.SetTimer(key, self.config.replica_fetch_wait_max_ms))
        return out

    def _answer_fetch(self, out: Effects, req: m.FetchRequest, datas: list) -> Effects:
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
        if self.strat.hw_needs_min_isr and len(p.isr) < self.config.min_insync_replicas:
            return False  # KIP-966: the HW needs min.insync.replicas members in the ISR
        leos = [p.log.leo]
        # "About to re-enter the ISR" (R4) is a follower whose expansion write is in flight: the
        # HW must not pass it before the compare-and-set lands (see traces/VALIDATION.md).
        joining = p.pending_isr[1] if p.pending_isr and p.pending_isr[0] == "expand" else ()
        for r, rem in p.remote.items():
            if r in p.isr or r in joining:
                leos.append(rem.leo)
        if p.alter_answered and any(r not in p.remote for r in joining if r != self.id):
            # KIP-455: a pending change kept after a completion counts a member this leader no
            # longer follows (removed: its LEO unknown), which holds the HW until the change is
            # cleared (the spec's maximal ISR with the remote LEO -1)
            return False
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
            or p.alter_in_flight
            or rem.leo < p.log.hw
            or (self.strat.isr_join_needs_epoch_start and rem.leo < p.epoch_start_offset)
        ):
            return
        new = p.isr | {r}
        self._propose_isr(out, p, "expand", new, now, r)

    def _maybe_shrink_isr(self, out: Effects, p: Partition, now: int) -> None:
        if p.pending_isr is not None or p.alter_in_flight:
            return
        lag = self.config.replica_lag_time_max_ms
        out_of_sync = {
            r
            for r in p.isr
            if r != self.id and now - p.remote.get(r, RemoteReplica()).last_caught_up_ms > lag
        }
        if self.strat.diverging_epoch_fetch:
            # kraft: only a member behind the LEO (the spec's LeaderSendAlterPartition); a
            # caught-up follower that stopped fetching is removed by the controller once it is
            # fenced (its heartbeats stop). One member per AlterPartition.
            out_of_sync = {
                r for r in out_of_sync if p.remote.get(r, RemoteReplica()).leo < p.log.leo
            }
        if out_of_sync and self.strat.diverging_epoch_fetch:
            gone = min(out_of_sync)
            self._propose_isr(out, p, "shrink", p.isr - {gone}, now, gone)
        elif out_of_sync:
            self._propose_isr(out, p, "shrink", p.isr - out_of_sync)

    def _propose_isr(
        self,
        out: Effects,
        p: Partition,
        kind: str,
        new: frozenset[int],
        now: int = 0,
        follower: int = -1,
    ) -> None:
        """ISR changes are compare-and-set writes fenced by the zkVersion (R7, R18); the local ISR
        changes only once the write succeeded, so HW is never computed over a set the
        coordination service does not hold (a shrink keeps the larger set meanwhile).

        kraft: the write is an AlterPartition to the controller, fenced by the partition epoch
        (the version), carrying the added follower's broker epoch from the fetch that justified
        it (KIP-903) and the leader's own; meanwhile the HW counts the maximal ISR (``_raise_hw``
        counts a joining follower; a shrink keeps the larger set)."""
        p.pending_isr = (kind, new, p.leader_epoch)
        st = m.PartitionState(self.id, p.leader_epoch, tuple(sorted(new)), self.controller_epoch)
        if not self.strat.diverging_epoch_fetch:
            out.append(m.CasWrite(p.tp, st, p.zk_version, "isr"))
            return
        p.alter_in_flight = True
        added = follower if kind == "expand" else -1
        added_be = p.remote[follower].broker_epoch if added >= 0 else -1
        raised = self._raise_hw(p, now)  # (the maximal ISR holds it: only a mutant raises it)
        self._trace(
            out,
            "LeaderSendAlterPartition",
            {"leader": self.id, "follower": follower, "kind": kind, "isr": sorted(new)},
            now,
            p,
        )
        if raised:
            self._complete_delayed(out, p, now)
        out.append(m.CasWrite(p.tp, st, p.zk_version, "isr", added, added_be, self.broker_epoch))

    def on_cas_results(self, results: list[m.CasResult], now: int) -> Effects:
        out: Effects = []
        for res in results:
            p = self.partitions.get(res.tp)
            if self.strat.diverging_epoch_fetch:
                if p is None or not p.alter_in_flight:
                    continue
                p.alter_in_flight = False
                kind, new, epoch = p.pending_isr or ("", frozenset(), -1)
                p.pending_isr = None
                self._on_alter_partition_answer(out, p, res, kind, new, epoch, now)
                continue
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

    def _on_alter_partition_answer(
        self,
        out: Effects,
        p: Partition,
        res: m.CasResult,
        kind: str,
        new: frozenset[int],
        epoch: int,
        now: int,
    ) -> None:
        """kraft: the controller's answer to our AlterPartition (the spec's
        ControllerHandleAlterPartition, whose answer the leader applies in the same step): adopt
        the ISR and partition epoch if accepted, else roll back to the ISR we had (the maximal
        ISR falls back; a change the controller made meanwhile arrives as metadata)."""
        st = res.state
        completed = res.ok and st is not None and (st.leader != self.id or st.leader_epoch != epoch)
        still = p.role == LEADER and p.leader_epoch == epoch
        if completed and still:
            # KIP-455: the record completed a reassignment (a new leader epoch: NEW_LEADER_ELECTED,
            # or an answer ``handleAlterPartitionUpdate`` ignores as of a newer leader epoch):
            # the change stays pending, its maximal ISR counted, until the metadata overrides it
            p.alter_in_flight, p.alter_answered = True, True
            p.pending_isr = (kind, new, epoch)
        elif res.ok and still:
            p.isr, p.zk_version = new, res.version
            self.metrics["isr_expands" if kind == "expand" else "isr_shrinks"] += 1
        raised = self._raise_hw(p, now)
        args: dict[str, object] = {"leader": self.id, "accepted": res.ok}
        if not res.ok:
            args["error"] = res.error or "INVALID_UPDATE_VERSION"
        self._trace(out, "ControllerHandleAlterPartition", args, now, p)
        if completed and not still:  # (moved on already: nothing stays pending)
            self._trace(out, "LeaderClearPendingAlterPartition", {"leader": self.id}, now, p)
        if raised:
            self._complete_delayed(out, p, now)
            self._wake_parked(out, p.tp, now)

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
                ep, end = self.strat.answer(p.log, q.leader_epoch, p.leader_epoch)
            answers.append(m.EpochEndOffset(q.topic, q.partition, err, ep, end))
        resp = m.OffsetsForLeaderEpochResponse(self.id, req.correlation_id, tuple(answers))
        return [m.Send(req.replica_id, resp)]
