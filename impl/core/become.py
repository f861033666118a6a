"""LeaderAndIsr and StopReplica: a replica becomes leader or follower, or stops (mirrors
spec/actions/broker.py's BrokerBecomeLeader/BrokerBecomeFollower). (R9, R10, R11, R18)
Mixed into impl.core.replica.Broker, whose state and helpers it uses."""

from __future__ import annotations

from . import messages as m
from .log import PartitionLog
from .messages import Effects
from .partition import (
    FETCHING,
    FOLLOWER,
    LEADER,
    NONE_ROLE,
    STOPPED,
    TRUNCATING,
    Partition,
    RemoteReplica,
)
from .trace import event

# KIP-455: what a broker observes of a replica it deleted (the spec's stopped replica: no log,
# no leader, no epoch)
STOPPED_STATE = {
    "alive": True, "role": "none", "leader": -1, "leader_epoch": -1, "isr": [], "hw": 0,
    "hw_checkpoint": 0, "leo": 0, "log_start": 0,
}  # fmt: skip


class BecomeRole:
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
            if p is not None and p.stop_pending:
                p.stop_pending = False  # (KIP-455: a replica again before it stopped)
            if p is None and lp.zk_version <= self.removed_at.get(tp, -1):
                continue  # KIP-455: an image older than the one that removed it (superseded)
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
            if (
                self.strat.diverging_epoch_fetch
                and p.role == LEADER
                and lp.leader == self.id
                and lp.leader_epoch == p.leader_epoch
                and lp.zk_version > p.zk_version
            ):
                self._apply_partition_change(out, p, lp, now)
                continue
            if lp.leader_epoch == p.leader_epoch and (p.role != NONE_ROLE or lp.leader < 0):
                if p.role == FOLLOWER and p.fetch_state == STOPPED and lp.leader == p.leader:
                    # stopped (StopReplica) and told again: resume where it stopped (its broker
                    # came back in a new session without restarting)
                    p.fetch_state = p.resume_state
                    if p.fetch_state == TRUNCATING:
                        self._send_epoch_query(out, p)
                    else:
                        self._start_fetching(out, p, now)
                continue  # already applied (the controller re-sends state periodically)
            if lp.leader < 0 and not lp.leaderless:
                # An offline partition (no live ISR member, R9): nobody to follow. As Kafka's
                # makeFollowers, which aborts the transition when the leader is not alive, the
                # broker keeps its state and epoch and waits for an election. (kraft: a
                # controlled shutdown's leader -1 is applied, below: the spec's ``_leaderless``
                # tells the live replicas leader -1, which its BrokerBecomeFollower applies;
                # Kafka's ``ReplicaManager.applyDelta`` makes every replica a follower of no
                # leader, the old leader stops leading.)
                continue
            p.replicas = lp.replicas
            if lp.leader == self.id:
                self._become_leader(out, p, lp, now)
            else:
                self._become_follower(out, p, lp, now)
        return out

    def _apply_partition_change(
        self, out: Effects, p: Partition, lp: m.LeaderAndIsrPartition, now: int
    ) -> None:
        """kraft (KAFKA-15021): an ISR change the controller made in the leader's own epoch (a
        gone follower removed): the leader adopts the ISR and partition epoch and keeps its
        followers' fetch state and its purgatory (the spec's BrokerApplyPartitionChange)."""
        p.isr, p.zk_version = frozenset(lp.isr), lp.zk_version
        if set(lp.replicas) != set(p.replicas):
            # KIP-455: replicas added in the leader's own epoch (only a removal bumps it):
            # ``Partition.makeLeader`` → ``updateAssignmentAndIsr`` adds them to the replicas
            # whose fetches it accepts, their LEOs unknown, and keeps the others' state
            p.replicas = lp.replicas
            p.remote = {r: p.remote.get(r, RemoteReplica()) for r in lp.replicas if r != self.id}
        raised = self._raise_hw(p, now)
        self._trace(out, "BrokerApplyPartitionChange", {"replica": self.id}, now, p)
        if raised:
            self._complete_delayed(out, p, now)
            self._wake_parked(out, p.tp, now)

    def _become_leader(
        self, out: Effects, p: Partition, lp: m.LeaderAndIsrPartition, now: int
    ) -> None:
        """R11: stop fetching, adopt epoch and ISR, accept produce; HW may lag until fetches.
        A new leader knows none of its followers' LEOs (nor, kraft, their broker epochs); a
        re-elected one keeps them (Kafka's ``Replica.resetReplicaState`` with ``isNewLeader``
        false; the spec's BrokerBecomeLeader)."""
        again = p.role == LEADER and p.leader == self.id
        old = p.remote if again else {}
        self.fetchers.remove(p.tp)
        p.role, p.leader, p.leader_epoch = LEADER, self.id, lp.leader_epoch
        p.isr, p.zk_version = frozenset(lp.isr), lp.zk_version
        answered = p.alter_answered  # (KIP-455: cleared after this step, below)
        if not answered:
            p.pending_isr = None
        p.epoch_start_offset = p.log.leo
        # Followers in the ISR get a fresh lag clock so they are not shrunk before fetching.
        p.remote = {
            r: RemoteReplica(
                leo=old[r].leo if r in old else -1,
                last_caught_up_ms=now if r in p.isr else 0,
                broker_epoch=old[r].broker_epoch if r in old else -1,
            )
            for r in p.replicas
            if r != self.id
        }
        raised = self._raise_hw(p, now)  # R4/R11: part of becoming leader, traced with it
        self._trace(
            out, "BrokerBecomeLeader", {"replica": self.id, "epoch": lp.leader_epoch}, now, p
        )
        if answered:
            self._clear_answered(out, p, now)
        if raised:
            self._complete_delayed(out, p, now)
        if self.strat.diverging_epoch_fetch:
            self._wake_parked(out, p.tp, now)

    def _become_follower(
        self, out: Effects, p: Partition, lp: m.LeaderAndIsrPartition, now: int
    ) -> None:
        """R10: refuse produce, stop the fetcher, truncate (per version), fetch from the leader."""
        self._fail_delayed(out, p, m.NOT_LEADER)
        self.fetchers.remove(p.tp)
        # (kraft, a controlled shutdown's leader -1: neither leading nor fetching, the spec's
        # replica with no leader, role "none")
        role = FOLLOWER if lp.leader >= 0 else NONE_ROLE
        p.role, p.leader, p.leader_epoch = role, lp.leader, lp.leader_epoch
        p.isr, p.zk_version = frozenset(lp.isr), lp.zk_version
        p.remote, p.pending_isr = {}, None
        cut = self.strat.truncate_on_become_follower(p.log)
        self._truncate(out, p, cut)
        if not self.strat.asks_leader:  # R10: truncate to HW, then checkpoint
            p.hw_checkpoint = p.log.hw
            out.append(m.CheckpointHw(((p.tp, p.log.hw),)))
        # kraft: no truncation phase, the leader's DivergingEpoch answer truncates (Kafka 2.7+)
        truncating = self.strat.asks_leader and not self.strat.diverging_epoch_fetch
        p.fetch_state = TRUNCATING if truncating else FETCHING
        p.truncation_fetch_offset = p.log.hw  # the fetcher's initial offset (makeFollowers)
        self._trace(
            out,
            "BrokerBecomeFollower",
            {"replica": self.id, "leader": lp.leader, "epoch": lp.leader_epoch},
            now,
            p,
        )
        if p.alter_answered:
            self._clear_answered(out, p, now)
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
        for k, (topic, part) in enumerate(req.partitions):
            p = self.partitions.get((topic, part))
            if req.delete and k < len(req.versions):
                tp = (topic, part)
                self.removed_at[tp] = max(self.removed_at.get(tp, -1), req.versions[k])
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
            if self.strat.diverging_epoch_fetch:
                self._kraft_stop_replica(out, p, now)
                continue
            self._fail_delayed(out, p, m.NOT_LEADER)
            self.fetchers.remove(p.tp)
            p.role = NONE_ROLE
            self._trace(out, "StopReplica", {"replica": self.id, "delete": req.delete}, now, p)
            if req.delete:
                del self.partitions[p.tp]
                out.append(m.DeleteLog(p.tp))
        return out

    # ---- kraft, KIP-455: a replica removed by a reassignment ----------------------------------
    def _kraft_stop_replica(self, out: Effects, p: Partition, now: int) -> None:
        """The broker is no longer a replica of ``p`` (a completed or cancelled reassignment):
        it stops and deletes its replica (``ReplicaManager.applyDelta`` → ``stopPartitions``
        with ``deleteLocalLog``), the spec's BrokerStopReplica. If a fetch carrying it is in
        flight (to its leader, or still to a previous leader, which may hold it parked) the
        stop waits for that fetch's end (``stop_pending``): Kafka's leader still handles the
        request, whose answer the stopped fetcher then drops; the spec drops a request and its
        answer with the stop, so the stop comes after the leader's handling."""
        if self.fetchers.carrying(p.tp):
            p.stop_pending = True  # (a diverging answer's truncation to come, too)
            return
        self._kraft_delete_replica(out, p, now)

    def _kraft_delete_replica(self, out: Effects, p: Partition, now: int) -> None:
        p.stop_pending = False
        self._fail_delayed(out, p, m.NOT_LEADER)  # (not acknowledged: NOT_LEADER_OR_FOLLOWER)
        self.fetchers.remove(p.tp)
        answered = p.alter_answered
        del self.partitions[p.tp]
        out.append(m.DeleteLog(p.tp))
        state = dict(STOPPED_STATE, **({"log": []} if self.full_log else {}))
        out.append(
            m.Trace(
                event(
                    self.clock.tick(), self.id, "BrokerStopReplica", {"replica": self.id},
                    now_ms=now, tp=p.tp, state=dict(state),
                )
            )
        )  # fmt: skip
        if answered:
            out.append(
                m.Trace(
                    event(
                        self.clock.tick(), self.id, "LeaderClearPendingAlterPartition",
                        {"leader": self.id}, now_ms=now, tp=p.tp, state=dict(state),
                    )
                )
            )  # fmt: skip

    def _clear_answered(self, out: Effects, p: Partition, now: int) -> None:
        """KIP-455: newer metadata overrides a change left pending by a completion's answer
        (``Partition.makeLeader``/``makeFollower`` set the committed state): the spec's
        LeaderClearPendingAlterPartition, after the step that applied it."""
        p.alter_answered = p.alter_in_flight = False
        p.pending_isr = None
        self._trace(out, "LeaderClearPendingAlterPartition", {"leader": self.id}, now, p)
