"""In-memory coordination service for the simulation: the R18 layout reduced to what the protocol
reads, with sessions, a versioned partition state per partition and compare-and-set (R9, R18).

Deliberately not modelled: ZooKeeper's own failures and watch delivery delays beyond the
scheduler's; the controller is notified of membership changes by the runtime.
"""

from __future__ import annotations

from ..core.messages import TP, CasResult, CasWrite, PartitionState


class MemCoord:
    def __init__(self) -> None:
        self.sessions: set[int] = set()  # /brokers/ids/[id] (ephemeral)
        self.assignments: dict[TP, tuple[int, ...]] = {}  # /brokers/topics/[t]
        self.states: dict[TP, tuple[PartitionState, int]] = {}  # .../partitions/[p]/state
        # kraft (KIP-841): brokers in controlled shutdown, until their process stops
        self.shutting_down: set[int] = set()
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
            return CasResult(w.tp, True, w.state, 0)
        if cur is None or cur[1] != w.expected_version:
            return CasResult(w.tp, False, cur[0] if cur else None, cur[1] if cur else -1)
        self.states[w.tp] = (w.state, cur[1] + 1)
        return CasResult(w.tp, True, w.state, cur[1] + 1)

    def alter_partition(
        self,
        w: CasWrite,
        broker_epochs: dict[int, int],
        min_isr: int = 1,
        down: frozenset[int] = frozenset(),
    ) -> CasResult:
        """kraft: the controller's checks of a leader's AlterPartition (the spec's
        ControllerHandleAlterPartition): made with the current partition epoch (the version;
        INVALID_UPDATE_VERSION), by the recorded leader's current incarnation
        (STALE_BROKER_EPOCH), no member fenced (KIP-841: a broker with no session is fenced;
        INELIGIBLE_REPLICA; nor in controlled shutdown), and the added follower's broker epoch its
        registered one (KIP-903). ``down``: brokers that crashed, fenced at once by this
        controller (it learns of a crash from the coordination service: the header's
        ``fence_at_crash``), so ineligible too, whatever their session."""
        cur = self.states.get(w.tp)
        if cur is None or cur[1] != w.expected_version:
            return CasResult(w.tp, False, cur[0] if cur else None, cur[1] if cur else -1,
                             "INVALID_UPDATE_VERSION")  # fmt: skip
        st, version = cur
        err = ""
        if st.leader != w.state.leader or st.leader_epoch != w.state.leader_epoch:
            err = "FENCED_LEADER_EPOCH"
        elif broker_epochs.get(st.leader) != w.leader_broker_epoch:
            err = "STALE_BROKER_EPOCH"
        elif any(
            b not in self.sessions or b in self.shutting_down or b in down for b in w.state.isr
        ):
            err = "INELIGIBLE_REPLICA"
        elif w.added >= 0 and broker_epochs.get(w.added) != w.added_broker_epoch:
            err = "STALE_BROKER_EPOCH"  # KIP-903: a previous incarnation's fetch
        if err:
            return CasResult(w.tp, False, st, version, err)
        # KIP-966: members removed while the ISR is below min ISR join the ELR (the spec's
        # elr_after_shrink); an ISR at or above min ISR clears it
        new = w.state
        if len(new.isr) >= min_isr:
            elr: tuple[int, ...] = ()
        else:
            elr = tuple(sorted(set(st.elr) | (set(st.isr) - set(new.isr))))
        new = PartitionState(new.leader, new.leader_epoch, new.isr, new.controller_epoch, elr)
        self.states[w.tp] = (new, version + 1)
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
