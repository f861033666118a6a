"""The controller (R9): leader election per partition from the live ISR, ISR shrink of dead
followers, compare-and-set writes of partition state with retry on conflict, and batched
LeaderAndIsr requests.

Which broker is controller, and the controller epoch, are decided by the runtime through the
coordination service (ephemeral /controller, /controller_epoch + 1); this object is the logic a
controller runs once elected. Sans-I/O like the broker: it returns ``CasWrite`` effects and gets
``CasResult``s back, then sends LeaderAndIsr to the brokers concerned, one batch per broker.
Not modelled: partition reassignment and preferred-replica election (the /admin paths exist in
the layout, R18, but nothing acts on them).
"""

from __future__ import annotations

from typing import Any

from ..config import Config
from . import messages as m
from .messages import TP, PartitionState
from .trace import LamportClock, event

Effects = list[Any]


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
        out.append(m.SetTimer("resync", self.config.controller_resync_ms))
        return out

    def on_brokers_changed(self, now: int, live: set[int]) -> Effects:
        """R9: a broker's session expired (or one came back)."""
        came = set(live) - self.live
        self.live = set(live)
        for b in sorted(came):
            # A broker back in a new session is a new incarnation: a partition still recording
            # it as leader (its session ended while no controller could react) needs a new
            # election, never its old epoch (KIP-380, as for a bounce inside the session).
            self.mark_bounced(b)
        out = self._repair(sorted(self.assignments))
        # A returning broker learns the state of every partition it hosts (it becomes follower).
        back = sorted(tp for tp, reps in self.assignments.items() if set(reps) & came)
        out += self._send_state(back, sorted(came), fresh_only=True)
        return out

    def on_broker_bounced(self, now: int, broker: int) -> Effects:
        """A broker restarted before its session expired: partitions it led need a new leader."""
        tps = self.mark_bounced(broker)
        return self._repair(tps)

    def mark_bounced(self, broker: int) -> list[TP]:
        tps = sorted(tp for tp, (st, _v) in self.states.items() if st.leader == broker)
        self.bounced.update(tps)
        return tps

    def on_write_committed(self, now: int, res: m.CasResult) -> Effects:
        """A runtime that sees a write land at once (the simulation) traces the decision then,
        so a controller dying before it reads the answer leaves no untraced write."""
        old = self.states.get(res.tp)
        if res.state is None:
            return []
        self._traced.add((res.tp, res.version))
        return self._trace_decision(
            now, res.tp, old[0] if old else None, res.state, res.version, res.tp in self.bounced
        )

    def on_topics_changed(self, now: int, assignments: dict[TP, tuple[int, ...]]) -> Effects:
        new = sorted(set(assignments) - set(self.assignments))
        self.assignments.update(assignments)
        return self._repair(new)

    def on_resync(self, now: int, states: dict[TP, tuple[PartitionState, int]]) -> Effects:
        """Re-send every partition's state (LeaderAndIsr can be lost, R8); brokers ignore what
        they already applied."""
        for tp, sv in states.items():
            if tp not in self.in_flight:
                self.states[tp] = sv
        out = self._repair(sorted(self.assignments))
        out += self._send_state(sorted(self.assignments), sorted(self.live), fresh_only=True)
        out.append(m.SetTimer("resync", self.config.controller_resync_ms))
        return out

    def on_cas_results(self, now: int, results: list[m.CasResult]) -> Effects:
        out: Effects = []
        done: list[TP] = []
        retry: list[TP] = []
        for res in results:
            self.in_flight.discard(res.tp)
            old = self.states.get(res.tp)
            if res.state is not None:
                self.states[res.tp] = (res.state, res.version)
            if res.ok:
                bounced = res.tp in self.bounced
                self.bounced.discard(res.tp)
                done.append(res.tp)
                if (res.tp, res.version) not in self._traced:
                    out += self._trace_decision(
                        now, res.tp, old[0] if old else None, res.state, res.version, bounced
                    )
                self._traced.discard((res.tp, res.version))
            else:
                retry.append(res.tp)  # conflict: re-decide on the state that won
        out += self._send_state(done, sorted(self.live))
        # conflicts are decided again on the state that won; a write that landed may leave
        # more to do (another dead follower to remove)
        out += self._repair(sorted(set(retry) | set(done)))
        return out

    def delete_topic(self, topic: str) -> Effects:
        """StopReplica with delete to every live replica (R18 /admin/delete_topics)."""
        tps = sorted(tp for tp in self.assignments if tp[0] == topic)
        per: dict[int, list[TP]] = {}
        for tp in tps:
            for r in self.assignments.pop(tp):
                if r in self.live:
                    per.setdefault(r, []).append(tp)
            self.states.pop(tp, None)
        return [
            m.Send(b, m.StopReplica(self.id, self.epoch, tuple(v), delete=True))
            for b, v in sorted(per.items())
        ]

    # ---- decisions ----------------------------------------------------------------------------
    def decide(self, tp: TP) -> PartitionState | None:
        """The state ``tp`` should have given the live brokers, or None if it is fine (R9)."""
        reps = self.assignments[tp]
        cur = self.states.get(tp)
        if cur is None:  # new partition: every live replica is in sync with an empty log
            isr = tuple(r for r in reps if r in self.live)
            return PartitionState(isr[0] if isr else -1, 0, isr, self.epoch)
        st = cur[0]
        live_isr = tuple(r for r in reps if r in st.isr and r in self.live)
        if tp in self.bounced:
            others = [r for r in live_isr if r != st.leader]
            pick = others[0] if others else (st.leader if st.leader in live_isr else -1)
            if pick >= 0:
                return PartitionState(pick, st.leader_epoch + 1, live_isr, self.epoch)
            self.bounced.discard(tp)
        if st.leader in self.live:
            if set(live_isr) != set(st.isr) and st.leader in live_isr:
                # A dead follower leaves the ISR (R9); the leader epoch is bumped. One write
                # per dead follower, as Kafka's removeReplicasFromIsr and the spec's
                # ControllerShrinkIsr: the next one is removed once this write has landed.
                gone = next(r for r in reps if r in st.isr and r not in live_isr)
                isr = tuple(r for r in reps if r in st.isr and r != gone)
                return PartitionState(st.leader, st.leader_epoch + 1, isr, self.epoch)
            return None
        if live_isr:
            return PartitionState(live_isr[0], st.leader_epoch + 1, live_isr, self.epoch)
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
            new = self.decide(tp)
            if new is None:
                continue
            cur = self.states.get(tp)
            purpose = "create" if cur is None else "elect"
            self.in_flight.add(tp)
            out.append(m.CasWrite(tp, new, cur[1] if cur else -1, purpose))
        return out

    def _trace_decision(
        self,
        now: int,
        tp: TP,
        old: PartitionState | None,
        new: PartitionState | None,
        version: int,
        bounced: bool = False,
    ) -> Effects:
        """The decision as the spec's actions: an election when the leader changed, or when a
        bounced leader was re-elected (a new epoch for a new incarnation, even with the same
        leader and ISR: the spec's ControllerElectLeader of a lost leader, R9); else one
        ControllerShrinkIsr per dead follower removed."""
        if new is None:
            return []
        coord = {
            "leader": new.leader,
            "leader_epoch": new.leader_epoch,
            "isr": list(new.isr),
            "version": version,
        }
        if old is not None and old.leader == new.leader and not bounced:
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

    def _send_state(self, tps: list[TP], brokers: list[int], fresh_only: bool = False) -> Effects:
        """One LeaderAndIsr per broker, carrying every partition it hosts among ``tps``;
        ``fresh_only``: not the partitions whose write is in flight (a broker that came back, a
        periodic re-send). A new controller's first send includes them, as Kafka's failover
        does: every broker registered before its writes, and ignores a stale epoch (R9)."""
        per: dict[int, list[m.LeaderAndIsrPartition]] = {}
        for tp in tps:
            sv = self.states.get(tp)
            if sv is None or (fresh_only and tp in self.in_flight):
                # a write in flight replaces this state: it is sent when the write lands (a
                # broker back after it landed must not get the state it replaced)
                continue
            st, version = sv
            lp = m.LeaderAndIsrPartition(
                tp[0], tp[1], st.leader, st.leader_epoch, st.isr, version, self.assignments[tp]
            )
            for r in self.assignments[tp]:
                if tp in self.bounced and r == st.leader:
                    continue  # a bounced leader waits for its re-election
                if r in brokers and r in self.live:
                    per.setdefault(r, []).append(lp)
        return [
            m.Send(b, m.LeaderAndIsr(self.id, self.epoch, tuple(v))) for b, v in sorted(per.items())
        ]
