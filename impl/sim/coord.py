"""In-memory coordination service for the simulation: the R18 layout reduced to what the protocol
reads, with sessions, a versioned partition state per partition and compare-and-set (R9, R18).

Deliberately not modelled: ZooKeeper's own failures and watch delivery delays beyond the
scheduler's; the controller is notified of membership changes by the runtime.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ..core.messages import TP, CasResult, CasWrite, PartitionState


class MemCoord:
    def __init__(self) -> None:
        self.sessions: set[int] = set()  # /brokers/ids/[id] (ephemeral)
        self.assignments: dict[TP, tuple[int, ...]] = {}  # /brokers/topics/[t]
        self.states: dict[TP, tuple[PartitionState, int]] = {}  # .../partitions/[p]/state
        # kraft (KIP-841): brokers in controlled shutdown, until their process stops
        self.shutting_down: set[int] = set()
        # kraft (Kafka 4.x, KIP-966): brokers back from an unclean shutdown (every new
        # incarnation's registration is handled as one: ``register_unclean``), never elected
        # cleanly nor eligible for the ELR until an AlterPartition puts them back in the ISR or
        # an election of the last known leader picks them (the spec's ``Faults.unclean``). The
        # active controller reads this set (World gives it the same object).
        self.unclean: set[int] = set()
        # kraft: brokers whose process is down; this controller learns of a crash at once from
        # its coordination service (the trace header's ``fence_at_crash``): fenced, never
        # elected nor let into an ISR, though their session has not expired yet
        self.down: set[int] = set()
        # kraft: each partition's last leader other than -1 (an offline write records leader
        # -1 and keeps the ISR; Kafka's PartitionRegistration keeps it as lastKnownElr)
        self.last_leader: dict[TP, int] = {}
        # kraft, KIP-455: a reassignment in progress, tp -> (adding, removing) replicas (the
        # registration's addingReplicas/removingReplicas; ``assignments`` holds its replicas,
        # target + current - target); ``moved``: the partitions whose replica set was ever
        # written by a reassignment (the controller tells strays of those only, so a run
        # without reassignments sends exactly what it did before)
        self.reassigning: dict[TP, tuple[tuple[int, ...], tuple[int, ...]]] = {}
        self.moved: set[TP] = set()
        self.controller: int = -1  # /controller
        self.controller_epoch: int = 0  # /controller_epoch
        # A Lamport clock threaded through every interaction (World._coord_sync): what a broker
        # learns here (a session ended, a write) orders its next events after the cause.
        self.clock: int = 0

    def cas(self, w: CasWrite) -> CasResult:
        cur = self.states.get(w.tp)
        if w.expected_version == -1:
            if cur is not None:
                return CasResult(w.tp, False, cur[0], cur[1])
            self.states[w.tp] = (w.state, 0)
            self._landed(w.tp, None, w.state)
            return CasResult(w.tp, True, w.state, 0)
        if cur is None or cur[1] != w.expected_version:
            return CasResult(w.tp, False, cur[0] if cur else None, cur[1] if cur else -1)
        self.states[w.tp] = (w.state, cur[1] + 1)
        if w.replicas:
            self.set_assignment(w.tp, w.replicas, w.adding, w.removing)
        self._landed(w.tp, cur[0], w.state)
        return CasResult(w.tp, True, w.state, cur[1] + 1)

    def set_assignment(
        self, tp: TP, replicas: tuple[int, ...], adding: tuple[int, ...], removing: tuple[int, ...]
    ) -> None:
        """kraft, KIP-455: the replica set written with a partition state (one record, as
        ``PartitionChangeRecord`` carries both)."""
        self.assignments[tp] = tuple(replicas)
        self.moved.add(tp)
        if adding or removing:
            self.reassigning[tp] = (tuple(adding), tuple(removing))
        else:
            self.reassigning.pop(tp, None)

    def _landed(self, tp: TP, old: PartitionState | None, new: PartitionState) -> None:
        """A controller write landed: its leader is the last known one, and a leader elected
        (a new leader epoch) is no longer barred by an unclean shutdown (kip-966: the spec's
        elections clear ``Faults.unclean`` of the replica they pick)."""
        if new.leader < 0:
            return
        self.last_leader[tp] = new.leader
        if old is None or new.leader_epoch != old.leader_epoch:
            self.unclean.discard(new.leader)

    def register_unclean(self, b: int) -> list[TP]:
        """kraft (Kafka 4.x, metadata 4.0-IV1+ with ELR: ``ClusterControlManager.registerBroker``
        → ``ReplicationControlManager.handleBrokerUncleanShutdown``): a new incarnation of broker
        ``b`` registers, in the same batch as its registration record: it is barred
        (``unclean``), leaves every ELR, and leaves every ISR of which it is neither the last
        member nor the recorded leader (one partition change each, the leader epoch kept: the
        leader is told, KAFKA-15021; a replica removed this way does not join the ELR). The
        spec's BrokerRegister with ``unclean_shutdown_on_register`` (spec/actions/broker.py
        ``_register_shutdown``). Returns the partitions whose ISR changed. An ELR change alone
        is no partition change here (the spec keeps the ELR apart from the partition epoch)."""
        self.unclean.add(b)
        changed: list[TP] = []
        for tp, (st, version) in sorted(self.states.items()):
            elr = tuple(r for r in st.elr if r != b)
            leader = st.leader if st.leader >= 0 else self.last_leader.get(tp, -1)
            isr = st.isr
            if b in isr and isr != (b,) and leader != b:
                isr = tuple(r for r in isr if r != b)
            if isr != st.isr:
                new = replace(st, isr=isr, elr=elr)  # (a leader -1 stays as it was written)
                self.states[tp] = (new, version + 1)
                changed.append(tp)
            elif elr != st.elr:
                self.states[tp] = (replace(st, isr=isr, elr=elr), version)
        return changed

    def alter_partition(
        self,
        w: CasWrite,
        error: Callable[[PartitionState, CasWrite], str],
        min_isr: int = 1,
        complete: Callable[..., tuple[PartitionState, tuple[int, ...]] | None] | None = None,
    ) -> CasResult:
        """kraft: a leader's AlterPartition decided (the spec's ControllerHandleAlterPartition):
        refused with INVALID_UPDATE_VERSION unless made on the current partition epoch (the
        version), else with what ``error`` (the controller's checks: ``Controller.
        alter_partition_error``) finds against the recorded state, else written. The follower
        it adds is no longer barred by an unclean shutdown (kip-966). KIP-455: with a
        reassignment in progress the same record may complete it (``complete``: the
        controller's ``PartitionChangeBuilder.build``, ``Controller.complete_reassignment``),
        which writes the target replica set, an ISR without the removed replicas and a leader
        epoch + 1 (a new leader if the old one was removed)."""
        cur = self.states.get(w.tp)
        if cur is None or cur[1] != w.expected_version:
            return CasResult(w.tp, False, cur[0] if cur else None, cur[1] if cur else -1,
                             "INVALID_UPDATE_VERSION")  # fmt: skip
        st, version = cur
        err = error(st, w)
        if err:
            return CasResult(w.tp, False, st, version, err)
        new = w.state
        moving = self.reassigning.get(w.tp)
        done = None
        if moving is not None and complete is not None:
            done = complete(st, new, self.assignments[w.tp], *moving)
        if done is not None:
            new = done[0]
        # KIP-966: members removed while the ISR is below min ISR join the ELR (the spec's
        # elr_after_shrink; after a completion, from the ISR before the record to the one it
        # writes: ``maybePopulateTargetElr`` runs last in the build), unless back from an
        # unclean shutdown; an ISR at or above min ISR clears it
        if len(new.isr) >= min_isr:
            elr: tuple[int, ...] = ()
        else:
            gone = (set(st.elr) | (set(st.isr) - set(new.isr))) - self.unclean - set(new.isr)
            elr = tuple(sorted(gone))
        new = PartitionState(new.leader, new.leader_epoch, new.isr, new.controller_epoch, elr)
        if done is not None:
            self.set_assignment(w.tp, done[1], (), ())
            self._landed(w.tp, st, new)
        self.states[w.tp] = (new, version + 1)
        if w.added >= 0:
            self.unclean.discard(w.added)
        return CasResult(w.tp, True, new, version + 1)

    def elect_controller(self, running: set[int] | None = None) -> bool:
        """If /controller is vacant, the lowest live broker takes it (epoch + 1). True if changed.
        Only a running process can create /controller: a crashed broker whose session has not
        expired yet cannot win (``running``)."""
        if self.controller in self.sessions:
            return False
        cands = self.sessions if running is None else self.sessions & running
        if not cands:
            self.controller = -1
            return False
        self.controller = min(cands)
        self.controller_epoch += 1
        return True

    def leaders(self) -> dict[TP, int]:
        return {tp: st.leader for tp, (st, _v) in self.states.items()}
