"""The controller (R9): leader election per partition from the live ISR, ISR shrink of dead
followers, leadership moved away from a live leader (preferred-replica or operator election,
controlled shutdown), compare-and-set writes of partition state with retry on conflict, and
batched LeaderAndIsr requests.

Which broker is controller, and the controller epoch, are decided by the runtime through the
coordination service (ephemeral /controller, /controller_epoch + 1); this object is the logic a
controller runs once elected. Sans-I/O like the broker: it returns ``CasWrite`` effects and gets
``CasResult``s back, then sends LeaderAndIsr to the brokers concerned, one batch per broker.

Leadership moves without a crash (R9, the spec's ControllerMoveLeader and
ControllerShutdownBroker): ``elect_leader`` moves a partition's leadership from a live leader to
its preferred replica (R1: the first of the assignment) or to a named live ISR member;
``controlled_shutdown`` moves leadership off a broker about to stop (the new leader from the live
ISR minus it, which leaves the ISR) and removes it from the ISR of the partitions it follows, the
leader epoch bumped in both cases (the ZooKeeper era). Both are requests kept per partition and
carried out by the same compare-and-set write and LeaderAndIsr batch as an election, after any
repair the partition needs (a lost leader is re-elected first), and retried on a conflict. The
deposed leader is told by LeaderAndIsr like every live replica; until it applies it, it acts on
its stale view (its ISR writes fail on the zkVersion). Not modelled: partition reassignment (the
/admin paths exist in the layout, R18, but nothing acts on them), Kafka's periodic automatic
rebalance (auto.leader.rebalance.enable: a runtime may call ``elect_leader`` on a timer), and
Kafka's exclusion of a shutting-down broker from later elections and its StopReplica to it (it
stays a follower here and may rejoin the ISR, which the spec allows).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from . import messages as m
from .config import Config
from .messages import TP, Effects, PartitionState
from .trace import LamportClock, event


class Controller:
    def __init__(self, broker_id: int, config: Config, controller_epoch: int, clock: LamportClock):
        self.id = broker_id
        self.config = config
        self.epoch = controller_epoch
        self.clock = clock  # shared with the broker it runs in: one Lamport clock per node
        self.live: set[int] = set()
        self.assignments: dict[TP, tuple[int, ...]] = {}
        self.states: dict[TP, tuple[PartitionState, int]] = {}
        self.in_flight: set[TP] = set()
        # Partitions whose recorded leader restarted within its session (a bounced broker, as
        # Kafka's KIP-380 broker epoch detects it): the leader is lost and must be re-elected
        # with a new epoch, never resumed at the old one (see traces/VALIDATION.md).
        self.bounced: set[TP] = set()
        self._traced: set[tuple[TP, int]] = set()  # writes already traced when they landed
        # Leadership moves asked for and not yet written (R9): tp -> ("move", new leader) or
        # ("shutdown", broker). ``_purpose``: the request the write in flight carries out.
        self.requests: dict[TP, tuple[str, int]] = {}
        self._purpose: dict[TP, tuple[str, int]] = {}
        self._why: dict[TP, tuple[str, Any]] = {}  # set by decide(): the request decided
        # Brokers in a controlled shutdown, until their session ends or they register again.
        # As Kafka's shuttingDownBrokerIds: they get no LeaderAndIsr (unless elected: see
        # ``_pick``), so a deposed leader stays a zombie until it stops and a follower taken
        # out of the ISR does not fetch its way back in (it gets StopReplica, delete=False).
        self.shutting_down: set[int] = set()
        # What each broker's current incarnation has been sent (R8, R9): the periodic re-send
        # repeats only that, as Kafka's RequestSendThread retries a request on its connection;
        # it never tells a restarted broker what the controller has not sent it since it came
        # back (before KIP-380, Kafka 2.2, a follower whose bounce the controller missed gets
        # nothing until the partition's next controller write: KAFKA-1120).
        self.told: dict[int, set[TP]] = {}
        # Brokers whose bounce is being handled as a failure, then a startup (``held``): they
        # count as dead until the writes that handling started have landed, then get their state.
        self.held: set[int] = set()
        self._pending: dict[TP, PartitionState] = {}  # the state each write in flight writes
        # kraft: partition changes a registration wrote after a write of this controller that
        # had landed, before its answer came (``on_partitions_changed``): the newer state wins
        self._newer: dict[TP, tuple[PartitionState, int]] = {}
        self._rebounce: set[TP] = set()  # writes in flight whose new leader bounced since
        # kraft (KIP-966, Kafka 4.x): brokers back from an unclean shutdown, neither elected
        # cleanly nor put in an ELR until back in the ISR (the coordination service's set, which
        # the runtime hands over: ``MemCoord.unclean``); the last known leader of a partition
        # whose ISR is that one barred member and whose ELR is empty is still elected
        # (``PartitionChangeBuilder.canElectLastKnownLeader``).
        self.barred: set[int] = set()
        # kraft: brokers known to be down (the runtime's; fenced at once, ``fence_at_crash``):
        # never elected, though their session may not have expired yet
        self.down: set[int] = set()
        # kraft, KIP-455: the reassignment in progress per partition, tp -> (adding, removing)
        # (``assignments`` holds its replicas: target + current - target); the partitions a
        # reassignment ever wrote (``moved``: their strays are told to stop); the operator's
        # requests not yet written, tp -> target replicas, or None for a cancel; and the
        # assignment each write in flight carries
        self.reassigning: dict[TP, tuple[tuple[int, ...], tuple[int, ...]]] = {}
        self.moved: set[TP] = set()
        self.reassign_requests: dict[TP, tuple[int, ...] | None] = {}
        self._assign_next: dict[TP, tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]] = {}
        self._pending_assign: dict[
            TP, tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]
        ] = {}

    # ---- events -------------------------------------------------------------------------------
    def activate(
        self,
        now: int,
        live: set[int],
        assignments: dict[TP, tuple[int, ...]],
        states: dict[TP, tuple[PartitionState, int]],
        bounced: frozenset[int] = frozenset(),
    ) -> Effects:
        """Just elected: adopt the coordination view, repair every partition, sync every broker."""
        self.live = set(live)
        self.assignments = dict(assignments)
        self.states = dict(states)
        for b in bounced:
            self.mark_bounced(b)
        out: Effects = [
            m.Trace(
                event(
                    self.clock.tick(),
                    self.id,
                    "ControllerActivate",
                    {"controller_epoch": self.epoch, "live": sorted(live)},
                    now_ms=now,
                )
            )
        ]
        out += self._repair(sorted(self.assignments))
        out += self._send_state(sorted(self.assignments), sorted(self.live))
        out += self.stop_strays(sorted(self.live))  # (KIP-455)
        out.append(m.SetTimer("resync", self.config.controller_resync_ms))
        return out

    def on_brokers_changed(self, now: int, live: set[int]) -> Effects:
        """R9: a broker's session expired (or one came back)."""
        self.held &= set(live)
        live = set(live) - self.held
        came = live - self.live
        for b in came | (self.live - live):
            self.told.pop(b, None)  # a new incarnation, or none
        self.live = set(live)
        # a broker gone, or back in a new session, is no longer shutting down
        self.shutting_down &= self.live - came
        for b in sorted(came):
            # A broker back in a new session is a new incarnation: a partition still recording
            # it as leader (its session ended while no controller could react) needs a new
            # election, never its old epoch (KIP-380, as for a bounce inside the session).
            self.mark_bounced(b)
        out = self._repair(sorted(self.assignments))
        # A returning broker learns the state of every partition it hosts (it becomes follower).
        back = sorted(tp for tp, reps in self.assignments.items() if set(reps) & came)
        out += self._send_state(back, sorted(came), fresh_only=True)
        out += self.stop_strays(sorted(came))  # (KIP-455)
        return out

    def on_broker_bounced(self, now: int, broker: int, as_failure: bool = False) -> Effects:
        """A broker registered again with the controller not having seen it leave (a bounce).

        By default the bounce is missed, as by a ZooKeeper-era controller before KIP-380
        (Kafka 2.1 ``BrokerChange``: a broker in neither the old nor the new live set of two
        reads, KAFKA-1120): partitions it led need a new leader (the spec's lost leader, R9), and
        the broker is sent nothing else until a partition's next write. ``as_failure``: the
        bounce is handled as a failure, then a startup (KIP-380's ``onBrokerFailure`` then
        ``onBrokerStartup``; for a runtime whose restarted broker starts at its first request,
        the same run as a registration the controller saw after the failure): it counts as dead
        (out of the ISR, leadership moved) until those writes have landed, then gets its state."""
        self.shutting_down.discard(broker)  # a new incarnation
        self.told.pop(broker, None)
        if not as_failure:
            tps = self.mark_bounced(broker)
            out = self._repair(tps)
            if self._kraft:  # KRaft: the new incarnation reads the metadata log (the spec's
                # BrokerRegister sends it the state, unless it is the recorded leader)
                mine = sorted(tp for tp, reps in self.assignments.items() if broker in reps)
                out += self._send_state(mine, [broker], fresh_only=True)
                out += self.stop_strays([broker])  # (KIP-455)
            return out
        self.live.discard(broker)
        self.held.add(broker)
        return self._repair(sorted(self.assignments)) + self._release_held()

    def on_broker_fenced(self, now: int, broker: int) -> Effects:
        """kraft: ``broker`` (crashed, its session not yet over) is about to register a new
        incarnation: it counts as not live from now on, so it leaves every ISR and a partition
        it led is re-elected from the rest (leader -1 with none), as in Kafka's registration
        batch (``handleBrokerUncleanShutdown`` -> ``generateLeaderAndIsrUpdates`` removes it
        from every ISR whatever its leadership). Its registration then comes as a broker back
        (``on_brokers_changed``). The runtime's ``_fence_before_register``."""
        if broker not in self.live:
            return []
        self.live.discard(broker)
        self.told.pop(broker, None)
        return self._repair(sorted(self.assignments))

    def _release_held(self) -> Effects:
        """Held brokers none of whose partitions has a write in flight come back (R9): the
        controller's startup handling, as on_brokers_changed for a broker that came back."""
        out: Effects = []
        for b in sorted(self.held):
            tps = sorted(tp for tp, reps in self.assignments.items() if b in reps)
            if any(tp in self.in_flight for tp in tps):
                continue
            self.held.discard(b)
            self.live.add(b)
            out += self._repair(tps)
            out += self._send_state(tps, [b], fresh_only=True)
        return out

    def on_partitions_changed(
        self, now: int, tps: list[TP], states: dict[TP, tuple[PartitionState, int]]
    ) -> Effects:
        """kraft: partition changes written with a broker's registration (its unclean
        shutdown's ISR removals, ``MemCoord.register_unclean``), already traced as part of the
        BrokerRegister step: adopt them and tell the live replicas (the leader applies the ISR
        in its own epoch: BrokerApplyPartitionChange). A partition with a write of this
        controller in flight learns it when that write fails on the partition epoch."""
        self.adopt(states)  # (the ELRs it left too: no partition epoch of their own)
        for tp in tps:
            if tp in self.in_flight and tp in states:
                # the write in flight may have landed already (the answer is on its way): it
                # then succeeds, and this later change must not be lost behind it
                self._newer[tp] = states[tp]
        done = [tp for tp in tps if tp not in self.in_flight and tp in states]
        return self._send_state(done, sorted(self.live))

    def adopt(self, states: dict[TP, tuple[PartitionState, int]]) -> None:
        """Take the coordination service's partition states as this controller's view, except
        where a write of its own is in flight (that write's outcome decides)."""
        for tp, sv in states.items():
            if tp not in self.in_flight:
                self.states[tp] = sv

    def mark_bounced(self, broker: int) -> list[TP]:
        tps = sorted(tp for tp, (st, _v) in self.states.items() if st.leader == broker)
        self.bounced.update(tps)
        if self._kraft:
            # a write in flight that makes it leader was decided for its previous incarnation:
            # once it lands the partition is still to be re-elected (``on_cas_results``)
            self._rebounce.update(
                tp
                for tp, st in self._pending.items()
                if tp in self.in_flight and st.leader == broker
            )
        return tps

    def on_write_committed(self, now: int, res: m.CasResult) -> Effects:
        """A runtime that sees a write land at once (the simulation) traces the decision then,
        so a controller dying before it reads the answer leaves no untraced write."""
        old = self.states.get(res.tp)
        if res.state is None:
            return []
        self._traced.add((res.tp, res.version))
        return self._trace_decision(
            now,
            res.tp,
            old[0] if old else None,
            res.state,
            res.version,
            res.tp in self.bounced,
            self._purpose.get(res.tp),
        )

    def on_topics_changed(self, now: int, assignments: dict[TP, tuple[int, ...]]) -> Effects:
        new = sorted(set(assignments) - set(self.assignments))
        self.assignments.update(assignments)
        return self._repair(new)

    def on_resync(self, now: int, states: dict[TP, tuple[PartitionState, int]]) -> Effects:
        """Re-send every partition's state to the brokers already sent it in their current
        incarnation (a LeaderAndIsr can be lost with its connection, R8: Kafka's
        RequestSendThread retries it); brokers ignore what they already applied."""
        self.adopt(states)
        out = self._repair(sorted(self.assignments))
        out += self._send_state(
            sorted(self.assignments), sorted(self.live), fresh_only=True, resend=True
        )
        out.append(m.SetTimer("resync", self.config.controller_resync_ms))
        return out

    def on_cas_results(self, now: int, results: list[m.CasResult]) -> Effects:
        out: Effects = []
        done: list[TP] = []
        retry: list[TP] = []
        stop: dict[int, list[TP]] = {}
        stop_delete: dict[int, list[TP]] = {}
        for res in results:
            self.in_flight.discard(res.tp)
            self._pending.pop(res.tp, None)
            assign = self._pending_assign.pop(res.tp, None)
            rebounce = res.tp in self._rebounce
            self._rebounce.discard(res.tp)
            purpose = self._purpose.pop(res.tp, None)
            old = self.states.get(res.tp)
            if res.state is not None:
                self.states[res.tp] = (res.state, res.version)
            newer = self._newer.pop(res.tp, None)
            if newer is not None and newer[1] > self.states.get(res.tp, (None, -1))[1]:
                self.states[res.tp] = newer  # (a registration's partition change came after it)
            if res.ok:
                bounced = res.tp in self.bounced
                self.bounced.discard(res.tp)
                if rebounce and res.state is not None and res.state.leader >= 0:
                    self.bounced.add(res.tp)  # its leader bounced while the write was in flight
                if purpose is not None and self.requests.get(res.tp) == purpose:
                    del self.requests[res.tp]  # done; a conflict leaves it to be decided again
                if (
                    purpose is not None
                    and purpose[0] in ("reassign", "cancel")
                    and self.reassign_requests.get(res.tp, ()) == _target_of(purpose)
                ):
                    del self.reassign_requests[res.tp]
                if assign is not None:  # KIP-455: the replica set written with the state
                    before = self.assignments[res.tp]
                    self.adopt_assignment(res.tp, *assign[:3])
                    for b in sorted(set(before) - set(assign[0])):
                        if b in self.live:  # no longer a replica: stops, deletes its log
                            stop_delete.setdefault(b, []).append(res.tp)
                if purpose is not None and purpose[0] == "shutdown" and old is not None:
                    b = purpose[1]  # (the write replaced ``old``: its version matched)
                    if (
                        b != old[0].leader
                        and b in self.live
                        and b in self.shutting_down
                        and not self._kraft  # kraft: it fetches on (KIP-841), refused the ISR
                    ):
                        stop.setdefault(b, []).append(res.tp)
                done.append(res.tp)
                if (res.tp, res.version) not in self._traced:
                    out += self._trace_decision(
                        now,
                        res.tp,
                        old[0] if old else None,
                        res.state,
                        res.version,
                        bounced,
                        purpose,
                    )
                self._traced.discard((res.tp, res.version))
            else:
                retry.append(res.tp)  # conflict: re-decide on the state that won
        out += self._send_state(done, sorted(self.live))
        # A follower out of the ISR by its controlled shutdown stops fetching (Kafka's
        # StopReplica, delete=False), or its leader would take it back before it stops.
        out += [
            m.Send(b, m.StopReplica(self.id, self.epoch, tuple(v), delete=False))
            for b, v in sorted(stop.items())
        ]
        out += self._stop_replicas(stop_delete)
        # conflicts are decided again on the state that won; a write that landed may leave
        # more to do (another dead follower to remove)
        out += self._repair(sorted(set(retry) | set(done)))
        return out + self._release_held()

    # ---- kraft: AlterPartition (the spec's ControllerHandleAlterPartition) ----------------------
    @classmethod
    def alter_partition_error(
        cls,
        st: PartitionState,
        w: m.CasWrite,
        broker_epochs: dict[int, int],
        sessions: set[int],
        shutting_down: set[int],
        down: frozenset[int] = frozenset(),
    ) -> str:
        """kraft: the KRaft controller's checks of a leader's AlterPartition made on the current
        partition epoch (``ReplicationControlManager.alterPartition``): by the recorded leader
        in its leader epoch (FENCED_LEADER_EPOCH) and current incarnation (STALE_BROKER_EPOCH),
        no member fenced (KIP-841: a broker with no session; ``down``: crashed, fenced at once
        by this controller, which learns of a crash from its coordination service: the
        header's ``fence_at_crash``) nor in controlled shutdown, and the follower it adds
        justified by a fetch of its registered incarnation (KIP-903, ``added_epoch_current``):
        INELIGIBLE_REPLICA (``ineligibleReplicasForIsr``). "" when it is accepted. A class method: the World's
        coordination service decides an AlterPartition whether or not the controller's broker
        runs (a mutant overrides it as any Controller method)."""
        if st.leader != w.state.leader or st.leader_epoch != w.state.leader_epoch:
            return "FENCED_LEADER_EPOCH"
        if broker_epochs.get(st.leader) != w.leader_broker_epoch:
            return "STALE_BROKER_EPOCH"
        if any(b not in sessions or b in shutting_down or b in down for b in w.state.isr):
            return "INELIGIBLE_REPLICA"
        if w.added >= 0 and not cls.added_epoch_current(w, broker_epochs):
            return "INELIGIBLE_REPLICA"  # KIP-903: a previous incarnation's fetch
        return ""

    @classmethod
    def added_epoch_current(cls, w: m.CasWrite, broker_epochs: dict[int, int]) -> bool:
        """KIP-903 (KAFKA-14139, Kafka 3.5.0): the broker epoch of the fetch that justified the
        expansion (AlterPartition's ``newIsrWithEpochs``) is the added follower's registered
        one (``ReplicationControlManager.validateAlterPartitionData`` →
        ``ineligibleReplicasForIsr``: "broker epoch mismatch"). A fetch of a previous
        incarnation, which may have lost what it had fetched in an unclean shutdown, justifies
        nothing. The mutation point of ``no-broker-epoch-check`` (impl/mutants.py)."""
        return broker_epochs.get(w.added) == w.added_broker_epoch

    # ---- partition reassignment (kraft, KIP-455) ----------------------------------------------
    def reassign(self, now: int, tp: TP, target: tuple[int, ...] | None) -> Effects:
        """The operator's AlterPartitionReassignments for ``tp`` (kraft; KIP-455, R1, R9):
        ``target`` the new replica set, or None to cancel the reassignment in progress. Kept
        as a request, decided after any repair the partition needs and any pending leadership
        move, by ``_reassign_state`` (``ReplicationControlManager.changePartitionReassignment``
        / ``cancelPartitionReassignment``), written with the state as one record and traced
        as the spec's OperatorReassignPartition(target) / OperatorCancelReassignment() when it
        lands. A target equal to the one in progress (or to the replica set, with none in
        progress) changes nothing: Kafka records only a new replica order, which the spec does
        not model, so it is not written."""
        if tp not in self.assignments:
            return []
        self.reassign_requests[tp] = None if target is None else tuple(target)
        return self._repair([tp])

    def _eligible_leader(self, r: int) -> bool:
        """kraft: ``r`` may lead (``PartitionChangeBuilder.isAcceptableLeader``): live (a
        registered, unfenced broker), not in controlled shutdown, not back from an unclean
        shutdown (KIP-966), not known to be down."""
        return r in self.live and r not in self.shutting_down | self.barred | self.down

    def _reassign_state(self, tp: TP) -> PartitionState | None:
        """The record of ``tp``'s pending reassignment request, or None (the request dropped:
        nothing to change, no reassignment to cancel, no leader recorded, or, for a cancel that
        empties the ISR without unclean election, refused: InvalidReplicaAssignmentException).
        Sets ``_assign_next`` and ``_why``."""
        target = self.reassign_requests[tp]
        st = self.states[tp][0]
        cur = self.assignments[tp]
        adding, removing = self.reassigning.get(tp, ((), ()))
        built = None
        if st.leader >= 0:  # (the spec's ``_in_office``: leader -1 recorded, nothing is built)
            if target is None:
                built = self._cancel(st, cur, adding, bool(adding or removing))
            elif set(target) != set(cur) - set(removing):
                reps = (*target, *(r for r in cur if r not in target))
                add = tuple(r for r in target if r not in cur)
                rem = tuple(r for r in cur if r not in target)
                built = self.build_reassignment(
                    st, st.isr, cur, reps, add, rem, self._eligible_leader, self.epoch
                )
        if built is None:
            del self.reassign_requests[tp]
            return None
        new, reps, add, rem = built
        self._assign_next[tp] = (reps, add, rem)
        self._why[tp] = ("cancel", -1) if target is None else ("reassign", target)
        return new

    def _cancel(
        self, st: PartitionState, cur: tuple[int, ...], adding: tuple[int, ...], moving: bool
    ) -> tuple[PartitionState, tuple[int, ...], tuple[int, ...], tuple[int, ...]] | None:
        """``cancelPartitionReassignment`` (``PartitionReassignmentRevert``): the replicas
        without the adding ones, the ISR without them; an ISR that would be empty takes the
        first live original replica alone with unclean election enabled, else the cancel is
        refused. None with no reassignment in progress (NoReassignmentInProgressException)."""
        if not moving:
            return None
        original = tuple(r for r in cur if r not in adding)
        isr = tuple(r for r in st.isr if r not in adding)
        if not isr:
            live = [r for r in original if self._eligible_leader(r)]
            if not self.config.unclean_leader_election or not live:
                return None
            isr = (live[0],)
        return self.build_reassignment(
            st, isr, cur, original, (), (), self._eligible_leader, self.epoch
        )

    @classmethod
    def reassignment_done(
        cls,
        isr: tuple[int, ...],
        replicas: tuple[int, ...],
        adding: tuple[int, ...],
        removing: tuple[int, ...],
    ) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
        """KIP-455, ``PartitionReassignmentReplicas.maybeCompleteReassignment`` (Kafka 3.8.0+,
        KAFKA-15665's fix): (target replicas, ISR) once the reassignment in progress can
        complete with ISR ``isr``: the ISR less the removing replicas, not empty, holds every
        target replica. Before 3.8 it was enough that it held the adding ones, which can leave
        the ISR below min.insync.replicas (the mutant ``reassign-below-min-isr``). The mutation
        point of the completion rule (impl/mutants.py)."""
        if not adding and not removing:
            return None
        new_isr = tuple(r for r in isr if r not in removing)
        target = tuple(r for r in replicas if r not in removing)
        if not new_isr or not target or not set(target) <= set(new_isr):
            return None
        return target, new_isr

    @classmethod
    def build_reassignment(
        cls,
        st: PartitionState,
        isr: tuple[int, ...],
        before: tuple[int, ...],
        replicas: tuple[int, ...],
        adding: tuple[int, ...],
        removing: tuple[int, ...],
        eligible: Callable[[int], bool],
        controller_epoch: int,
    ) -> tuple[PartitionState, tuple[int, ...], tuple[int, ...], tuple[int, ...]] | None:
        """``PartitionChangeBuilder.build`` for a change of the ISR to ``isr`` and of the
        replica set (``before``) to ``replicas`` with ``adding``/``removing`` (the spec's
        ``reassignment.build_change``): complete the reassignment if it can
        (``completeReassignmentIfNeeded``, ``reassignment_done``), keep the leader if it is
        still in the ISR, a replica and acceptable, else elect the first acceptable ISR member
        in replica order (``tryElection``), and bump the leader epoch if the leader changes or
        the replica set loses a broker (``triggerLeaderEpochBumpForReplicaReassignmentIfNeeded``).
        (state, replicas, adding, removing), or None when no leader can be found (Kafka would
        write leader -1; the spec does not take the step). The ELR is the caller's."""
        done = cls.reassignment_done(isr, replicas, adding, removing)
        if done is not None:
            replicas, isr = done
            adding = removing = ()
        isr = tuple(r for r in replicas if r in isr)
        leader = st.leader
        if leader not in isr or leader not in replicas or not eligible(leader):
            leader = next((r for r in isr if eligible(r)), -1)
            if leader < 0:
                return None
        bump = leader != st.leader or bool(set(before) - set(replicas))
        new = PartitionState(leader, st.leader_epoch + int(bump), isr, controller_epoch, st.elr)
        return new, tuple(replicas), tuple(adding), tuple(removing)

    @classmethod
    def complete_reassignment(
        cls,
        st: PartitionState,
        new: PartitionState,
        replicas: tuple[int, ...],
        adding: tuple[int, ...],
        removing: tuple[int, ...],
        eligible: Callable[[int], bool],
    ) -> tuple[PartitionState, tuple[int, ...]] | None:
        """KIP-455: the completion an accepted AlterPartition's record makes (``new``: the ISR
        the leader asked for), or None when it does not complete the reassignment in progress
        (the spec's ControllerHandleAlterPartition → ``_completing``). Kafka's build runs
        ``completeReassignmentIfNeeded`` on the requested ISR; a completion shrinks the replica
        set, so the leader epoch is bumped, and a removed leader is replaced."""
        if cls.reassignment_done(new.isr, replicas, adding, removing) is None:
            return None
        built = cls.build_reassignment(
            st, new.isr, replicas, replicas, adding, removing, eligible, new.controller_epoch
        )
        if built is None:
            return None
        return built[0], built[1]

    def adopt_assignment(
        self,
        tp: TP,
        replicas: tuple[int, ...],
        adding: tuple[int, ...] = (),
        removing: tuple[int, ...] = (),
    ) -> None:
        """KIP-455: the replica set recorded for ``tp`` (a write of this controller's, or one
        the coordination service holds: an AlterPartition's completion)."""
        self.assignments[tp] = tuple(replicas)
        self.moved.add(tp)
        if adding or removing:
            self.reassigning[tp] = (tuple(adding), tuple(removing))
        else:
            self.reassigning.pop(tp, None)

    def on_reassignment_completed(
        self,
        now: int,
        tp: TP,
        state: tuple[PartitionState, int],
        replicas: tuple[int, ...],
    ) -> Effects:
        """KIP-455: an accepted AlterPartition completed ``tp``'s reassignment (the record the
        coordination service decided, ``MemCoord.alter_partition``): adopt it, send the new
        state to the live replicas of the new set (a new leader epoch: they become leader or
        follower) and tell the removed brokers to stop and delete their replica
        (``ReplicaManager.applyDelta`` → ``stopPartitions(delete = true)``)."""
        before = self.assignments.get(tp, ())
        self.adopt({tp: state})
        self.adopt_assignment(tp, replicas)
        if tp in self.in_flight:
            return []  # (a write of its own in flight fails on the partition epoch and re-decides)
        out = self._send_state([tp], sorted(self.live))
        gone = {b: [tp] for b in sorted(set(before) - set(replicas)) if b in self.live}
        return out + self._stop_replicas(gone)

    def _stop_replicas(self, per: dict[int, list[TP]]) -> Effects:
        """StopReplica with delete, carrying each partition's version (the metadata image
        that removed the broker: it ignores older partition state still in flight)."""
        out: Effects = []
        for b, v in sorted(per.items()):
            versions = tuple(self.states[tp][1] if tp in self.states else -1 for tp in v)
            out.append(m.Send(b, m.StopReplica(self.id, self.epoch, tuple(v), True, versions)))
        return out

    def stop_strays(self, brokers: list[int]) -> Effects:
        """KIP-455: a broker that (re)registers learns from the metadata which partitions it no
        longer hosts: those a reassignment moved away from it are stopped and deleted (Kafka:
        ``ReplicaManager.applyDelta`` deletes, or at startup ``LogManager``'s stray logs). A
        broker without that partition ignores it. Only partitions a reassignment ever moved
        (``moved``), so a run without reassignments sends what it sent before."""
        per: dict[int, list[TP]] = {}
        for tp in sorted(self.moved):
            reps = self.assignments.get(tp, ())
            for b in brokers:
                if b not in reps and b in self.live:
                    per.setdefault(b, []).append(tp)
        return self._stop_replicas(per)

    def _elr_next(self, old: PartitionState, new: PartitionState) -> tuple[int, ...]:
        """kip-966, the spec's ``elr_next``: empty if the new ISR has min.insync.replicas, else
        the old ELR and ISR less the new ISR and the brokers back from an unclean shutdown."""
        if len(new.isr) >= self.config.min_insync_replicas:
            return ()
        gone = (set(old.elr) | set(old.isr)) - set(new.isr) - self.barred
        return tuple(sorted(gone))

    # ---- leadership moves (R9: ControllerMoveLeader, ControllerShutdownBroker) ------------------
    def elect_leader(
        self, now: int, target: int | None = None, tps: list[TP] | None = None
    ) -> Effects:
        """R9, preferred-replica or operator election (Kafka's kafka-leader-election, or the
        ZooKeeper era's /admin/preferred_replica_election): move the leadership of ``tps``
        (default: every partition) to ``target``, or to each partition's preferred replica (R1:
        the first of its assignment) when ``target`` is None. Only a partition whose leader is
        live and whose new leader is another live ISR member moves: the spec's
        ControllerMoveLeader, the ISR kept, leader epoch + 1. Others are left as they are.
        Returns the writes (their LeaderAndIsr go out when they land)."""
        asked: list[TP] = []
        for tp in sorted(self.assignments) if tps is None else tps:
            reps = self.assignments.get(tp)
            if not reps:
                continue
            want = reps[0] if target is None else target
            if want in reps and self._movable(tp, want):
                self.requests[tp] = ("move", want)
                asked.append(tp)
        return self._repair(asked)

    def controlled_shutdown(self, now: int, broker: int) -> Effects:
        """R9, controlled shutdown (Kafka's ControlledShutdownRequest, sent by a broker about to
        stop): every partition ``broker`` leads gets a new leader from the live ISR minus it (the
        ISR without it, leader epoch + 1); every partition it follows in the ISR loses it from
        the ISR (leader epoch + 1). The spec's ControllerShutdownBroker(broker, the leader
        after). A partition with no other live ISR member keeps its leader (``unmovable``,
        Kafka's "partitions remaining" answer); kraft records leader -1 instead
        (``_request_state``). The broker keeps running until its runtime stops it."""
        if broker not in self.live:
            return []
        self.shutting_down.add(broker)
        asked: list[TP] = []
        out: Effects = []
        for tp in sorted(self.assignments):
            sv = self.states.get(tp)
            if sv is None or broker not in self.assignments[tp]:
                continue
            st = sv[0]
            if broker == st.leader or broker in st.isr:
                self.requests[tp] = ("shutdown", broker)
                asked.append(tp)
            elif self._kraft and st.leader in self.live and tp not in self.in_flight:
                # kraft (KIP-841): a follower outside the ISR is only marked shutting down (no
                # write): the spec's ControllerShutdownBroker(broker, leader) with no change
                out += self._trace_decision(now, tp, st, st, sv[1], purpose=("shutdown", broker))
        return out + self._repair(asked)

    def unmovable(self, broker: int) -> list[TP]:
        """The partitions ``broker`` leads that no other live ISR member could take over
        (kraft: none, such a partition gets leader -1; Kafka's KRaft broker shuts down once it
        leads nothing, ``BrokerHeartbeatManager``'s controlled shutdown offset)."""
        out: list[TP] = []
        if self._kraft:
            return out
        for tp, (st, _v) in sorted(self.states.items()):
            others = [r for r in st.isr if r != broker and r in self.live]
            if st.leader == broker and tp in self.assignments and not others:
                out.append(tp)
        return out

    def _movable(self, tp: TP, want: int) -> bool:
        sv = self.states.get(tp)
        if sv is None:
            return False
        st = sv[0]
        return (
            st.leader in self.live
            and want != st.leader
            and want in st.isr
            and want in self.live
            and want not in self.shutting_down
            and want not in self.barred
            and want not in self.down
            and st.leader not in self.barred
            and tp not in self.bounced
        )

    @property
    def _kraft(self) -> bool:
        return self.config.protocol == "kraft"

    def _eligible(self, cands: tuple[int, ...] | list[int]) -> tuple[int, ...]:
        """kraft (KIP-841): a broker in controlled shutdown is never elected, nor (KIP-966) one
        back from an unclean shutdown; other versions prefer another but may elect it
        (``_pick``)."""
        if self._kraft:  # (nor, KIP-966, one back from an unclean shutdown, nor one down)
            out = self.shutting_down | self.barred | self.down
            return tuple(r for r in cands if r not in out)
        return tuple(cands)

    def _pick(self, cands: tuple[int, ...] | list[int]) -> int:
        """The first candidate (assignment order) not shutting down; one shutting down only if
        there is no other (the spec elects any live ISR member rather than go offline)."""
        return next((r for r in cands if r not in self.shutting_down), cands[0])

    def _request_state(self, tp: TP) -> PartitionState | None:
        """The write carrying out ``tp``'s pending move, or None (the request is dropped: done
        meanwhile, or no longer possible)."""
        kind, b = self.requests[tp]
        st = self.states[tp][0]
        reps = self.assignments[tp]
        isr = tuple(r for r in reps if r in st.isr)
        rest = tuple(r for r in isr if r != b)
        new: PartitionState | None = None
        # (A repair is decided first, so the ISR holds no broker this controller knows to be
        # dead: the ISR kept is the live ISR as far as it knows.)
        if st.leader in self.live and tp not in self.bounced:
            if kind == "move" and self._movable(tp, b):
                # Kafka's preferred-replica strategy: the ISR as it is, leader epoch + 1
                new = PartitionState(b, st.leader_epoch + 1, isr, self.epoch)
            elif kind == "shutdown" and b in self.live and b == st.leader:
                # Kafka's ControlledShutdownLeaderElectionStrategy: the first live ISR member
                # other than it (assignment order), the ISR without it, leader epoch + 1.
                others = self._eligible(tuple(r for r in rest if r in self.live))
                if others:
                    new = PartitionState(self._pick(others), st.leader_epoch + 1, rest, self.epoch)
                elif self._kraft:
                    # kraft: no acceptable leader (``handleBrokerInControlledShutdown`` →
                    # ``generateLeaderAndIsrUpdates`` → ``PartitionChangeBuilder.build``, whose
                    # ``electLeader`` finds none): leader -1 with a new leader epoch, the ISR
                    # kept (it would be empty without the broker); the spec's
                    # ControllerShutdownBroker(b, -1), ``_leaderless``. It is elected again
                    # when it registers anew (``handleBrokerUnfenced`` over
                    # ``partitionsWithNoLeader``; ``_repair_state``, once not shutting down).
                    new = PartitionState(-1, st.leader_epoch + 1, isr, self.epoch, shut_leader=b)
            elif kind == "shutdown" and b in self.live and b in st.isr:
                # a follower leaves the ISR (Kafka's OfflineReplica transition), epoch + 1;
                # kraft: a partition change in the leader's epoch (KAFKA-15021)
                bump = 0 if self._kraft else 1
                new = PartitionState(st.leader, st.leader_epoch + bump, rest, self.epoch)
        if new is None:
            del self.requests[tp]
        else:
            self._why[tp] = (kind, b)
        return new

    # ---- decisions ----------------------------------------------------------------------------
    def decide(self, tp: TP) -> PartitionState | None:
        """The state ``tp`` should have given the live brokers, or None if it is fine (R9): a
        repair first (a lost leader, a dead follower in the ISR), then a pending move."""
        self._elr_pick = False
        self._assign_next.pop(tp, None)
        new = self._repair_state(tp)
        if new is None and tp in self.requests and tp in self.states:
            new = self._request_state(tp)
        if new is None and tp in self.reassign_requests and tp in self.states:
            new = self._reassign_state(tp)
        if new is not None and self.config.protocol == "kraft":
            cur = self.states.get(tp)
            self._why_now = self._why.get(tp)
            if tp in self._assign_next and cur is not None:
                # KIP-455: a reassignment's record is built as any change
                # (``maybePopulateTargetElr``, the spec's elr_next)
                new = replace(new, elr=self._elr_next(cur[0], new))
            else:
                new = replace(new, elr=self._elr_after(cur[0] if cur else None, new))
        return new

    _elr_pick = False  # the decision is an election from the ELR (kraft)
    _why_now: tuple[str, int] | None = None  # the request the decision carries out (kraft)

    def _elr_after(self, old: PartitionState | None, new: PartitionState) -> tuple[int, ...]:
        """kraft (KIP-966, the spec's ``elr_after_shrink`` and ``elections``): an ISR change
        that keeps the leader adds the removed members to the ELR while the ISR is below
        min.insync.replicas and clears it at or above; an election from the ELR takes the
        leader out of it; an unclean election clears it; other elections keep it."""
        if old is None:
            return ()
        if self._elr_pick:
            return tuple(r for r in old.elr if r != new.leader)
        shutdown = self._why_now is not None and self._why_now[0] == "shutdown"
        if shutdown or (new.leader == old.leader and new.leader_epoch == old.leader_epoch):
            if len(new.isr) >= self.config.min_insync_replicas:
                return ()
            gone = (set(old.elr) | (set(old.isr) - set(new.isr))) - self.barred - set(new.isr)
            return tuple(sorted(gone))
        if new.leader >= 0 and new.isr == (new.leader,) and new.leader not in old.isr:
            return ()  # unclean election
        return old.elr

    def _repair_state(self, tp: TP) -> PartitionState | None:
        """What a lost leader, a dead ISR member or a new partition needs (R9), or None."""
        reps = self.assignments[tp]
        cur = self.states.get(tp)
        if cur is None:  # new partition: every live replica is in sync with an empty log
            isr = tuple(r for r in reps if r in self.live)
            return PartitionState(isr[0] if isr else -1, 0, isr, self.epoch)
        st = cur[0]
        live_isr = tuple(r for r in reps if r in st.isr and r in self.live)
        if tp in self.bounced:
            others = self._eligible([r for r in live_isr if r != st.leader])
            back = st.leader in self._eligible(live_isr)
            pick = self._pick(others) if others else (st.leader if back else -1)
            if pick >= 0:
                return PartitionState(pick, st.leader_epoch + 1, live_isr, self.epoch)
            if not (self._kraft and st.leader in self.barred):
                self.bounced.discard(tp)
            # (kraft: a leader back from an unclean shutdown stays bounced, told nothing, until
            # the write below replaces it: from the ELR, as the last known leader, or offline)
        # kraft (KIP-966): a leader back from an unclean shutdown is replaced, not kept
        if st.leader in self.live and not (self._kraft and st.leader in self.barred):
            if set(live_isr) != set(st.isr) and st.leader in live_isr:
                # A dead follower leaves the ISR (R9); the leader epoch is bumped. One write
                # per dead follower, as Kafka's removeReplicasFromIsr and the spec's
                # ControllerShrinkIsr: the next one is removed once this write has landed.
                gone = next(r for r in reps if r in st.isr and r not in live_isr)
                isr = tuple(r for r in reps if r in st.isr and r != gone)
                # kraft (KAFKA-15021): an ISR change bumps the partition epoch (the version)
                # only; the leader keeps its epoch and applies the change in place
                bump = 0 if self.config.protocol == "kraft" else 1
                return PartitionState(st.leader, st.leader_epoch + bump, isr, self.epoch)
            return None
        if self._eligible(live_isr):
            pick = self._pick(self._eligible(live_isr))
            return PartitionState(pick, st.leader_epoch + 1, live_isr, self.epoch)
        live_elr = self._eligible(tuple(r for r in reps if r in st.elr and r in self.live))
        if live_elr:
            # kraft (KIP-966): no live ISR member: a live eligible leader replica leads, ISR =
            # {it} (it has everything below the HW, which could not advance without min ISR)
            self._elr_pick = True
            pick = self._pick(live_elr)
            return PartitionState(pick, st.leader_epoch + 1, (pick,), self.epoch)
        if self._kraft and not st.elr and len(st.isr) == 1:
            # kraft (Kafka 4.x's balanced recovery, ``PartitionChangeBuilder.
            # canElectLastKnownLeader``): ISR and ELR empty but for the last known leader, kept
            # as the ISR's last member (barred if back from an unclean shutdown): it is elected
            # once live, unclean shutdown or not
            last = st.isr[0]
            if last in self.live and last not in self.shutting_down and last not in self.down:
                return PartitionState(last, st.leader_epoch + 1, (last,), self.epoch)
        live_reps = tuple(r for r in reps if r in self.live)
        if self.config.unclean_leader_election and live_reps:
            # Unclean election: any live replica, ISR = {it}; committed data may be lost.
            return PartitionState(live_reps[0], st.leader_epoch + 1, (live_reps[0],), self.epoch)
        if st.leader != -1:  # offline; the ISR is kept so its last member can lead again
            return PartitionState(-1, st.leader_epoch + 1, st.isr, self.epoch)
        return None

    def _repair(self, tps: list[TP]) -> Effects:
        out: Effects = []
        for tp in tps:
            if tp in self.in_flight or tp not in self.assignments:
                continue
            self._why.pop(tp, None)
            new = self.decide(tp)
            why = self._why.pop(tp, None)
            if new is None:
                continue
            cur = self.states.get(tp)
            purpose = "create" if cur is None else (why[0] if why else "elect")
            if why is not None:
                self._purpose[tp] = why
            else:
                self._purpose.pop(tp, None)
            self.in_flight.add(tp)
            self._pending[tp] = new
            assign = self._assign_next.pop(tp, None)
            if assign is None:
                out.append(m.CasWrite(tp, new, cur[1] if cur else -1, purpose))
                continue
            self._pending_assign[tp] = assign
            out.append(
                m.CasWrite(tp, new, cur[1] if cur else -1, purpose, replicas=assign[0],
                           adding=assign[1], removing=assign[2])
            )  # fmt: skip
        return out

    def _trace_decision(
        self,
        now: int,
        tp: TP,
        old: PartitionState | None,
        new: PartitionState | None,
        version: int,
        bounced: bool = False,
        purpose: tuple[str, int] | None = None,
    ) -> Effects:
        """The decision as the spec's actions: a requested move as ControllerMoveLeader(new
        leader) or ControllerShutdownBroker(the broker shutting down); an election when the
        leader changed, or when a bounced leader was re-elected (a new epoch for a new
        incarnation, even with the same leader and ISR: the spec's ControllerElectLeader of a
        lost leader, R9); else one ControllerShrinkIsr per dead follower removed."""
        if new is None:
            return []
        coord = {
            "leader": new.leader,
            "leader_epoch": new.leader_epoch,
            "isr": list(new.isr),
            "version": version,
        }
        if purpose is not None and purpose[0] in ("reassign", "cancel"):
            # KIP-455: the operator's request and its record (the spec's
            # OperatorReassignPartition(target) / OperatorCancelReassignment()): the state and
            # the replica set it wrote
            reps, adding, removing = self.assignments[tp], *self.reassigning.get(tp, ((), ()))
            if tp in self._pending_assign:
                reps, adding, removing = self._pending_assign[tp]
            coord.update(replicas=list(reps), adding=list(adding), removing=list(removing))
            if purpose[0] == "reassign":
                acts = [("OperatorReassignPartition", {"replicas": list(_target_of(purpose))})]
            else:
                acts = [("OperatorCancelReassignment", {})]
        elif purpose is not None and purpose[0] == "move":
            acts = [("ControllerMoveLeader", {"leader": new.leader})]
        elif purpose is not None and purpose[0] == "shutdown":
            # the spec's arguments: the broker shutting down, the leader after the write
            acts = [("ControllerShutdownBroker", {"replica": purpose[1], "leader": new.leader})]
        elif (
            old is not None
            and old.leader == new.leader
            and not bounced
            and not (self._kraft and new.leader_epoch != old.leader_epoch)  # (re-elected)
        ):
            acts = [
                ("ControllerShrinkIsr", {"replica": r}) for r in sorted(set(old.isr) - set(new.isr))
            ]
        else:
            acts = [("ControllerElectLeader", {"leader": new.leader})]
        return [
            m.Trace(
                event(
                    self.clock.tick(), self.id, a, args, now_ms=now, tp=tp, state={"coord": coord}
                )
            )
            for a, args in acts
        ]

    def _send_state(
        self, tps: list[TP], brokers: list[int], fresh_only: bool = False, resend: bool = False
    ) -> Effects:
        """One LeaderAndIsr per broker, carrying every partition it hosts among ``tps``;
        ``fresh_only``: not the partitions whose write is in flight (a broker that came back, a
        periodic re-send). A new controller's first send includes them, as Kafka's failover
        does: every broker registered before its writes, and ignores a stale epoch (R9).
        ``resend``: only partitions the broker's current incarnation was sent before."""
        per: dict[int, list[m.LeaderAndIsrPartition]] = {}
        for tp in tps:
            sv = self.states.get(tp)
            if sv is None or (fresh_only and tp in self.in_flight):
                # a write in flight replaces this state: it is sent when the write lands (a
                # broker back after it landed must not get the state it replaced)
                continue
            st, version = sv
            lp = m.LeaderAndIsrPartition(
                tp[0], tp[1], st.leader, st.leader_epoch, st.isr, version, self.assignments[tp],
                leaderless=st.shut_leader >= 0,
            )  # fmt: skip
            for r in self.assignments[tp]:
                if tp in self.bounced and r == st.leader:
                    continue  # a bounced leader waits for its re-election
                if r == st.shut_leader and r not in self.shutting_down:
                    # kraft: the leader whose controlled shutdown wrote leader -1, registered
                    # anew, waits for its re-election (the spec's recorded leader, lost: its
                    # registration is sent nothing, spec/actions/broker.py ``_registered``)
                    continue
                if r in self.shutting_down and r != st.leader and not self._kraft:
                    continue  # Kafka: a broker shutting down is not a live replica any more
                if r in brokers and r in self.live:
                    told = self.told.setdefault(r, set())
                    if resend and tp not in told:
                        continue
                    told.add(tp)
                    per.setdefault(r, []).append(lp)
        return [
            m.Send(b, m.LeaderAndIsr(self.id, self.epoch, tuple(v))) for b, v in sorted(per.items())
        ]


def _target_of(purpose: tuple[str, object]) -> tuple[int, ...] | None:
    """The operator request a reassignment write carries out: its target, None for a cancel."""
    return None if purpose[0] == "cancel" else tuple(purpose[1])  # type: ignore[arg-type]
