"""kafka_replication_kip_966: the Kafka 3.5 spec with KIP-966's eligible leader replicas (ELR), as a
model of our checker.

Our own transcription of https://github.com/Vanlightly/kafka-tlaplus, directory
kafka_data_replication/kraft/kip-966, at commit 823615e8a0962d0160c11d9affb2576c56b7c054 (modules
kafka_replication_kip_966, kip_966_types, kip_966_functions, kip_966_properties, network). It
subclasses :class:`~bench.kraft_tla.v3_5.V35` and changes only what the TLA+ changes (the
"PROPOSAL CHANGE" blocks):

* the controller's partition metadata and its records carry ``elr`` and ``last_known_elr``
  (two more fields of the tuple, C_ELR and C_LKELR);
* fencing removes a broker from the ISR even when that empties it; the ELR keeps the replicas
  that left the ISR while it is below MinISR (UpdateElr), and a leader is elected from the ELR
  (the elected replica moves to the ISR) when the ISR is empty;
* a broker keeps its broker epoch on disk across a shutdown without data loss and sends it in its
  registration; an epoch of 0 marks an unclean broker, which the controller removes from the ISR
  and the ELR (ProcessUncleanBroker);
* the leader advances the high watermark only while its ISR (not the maximal ISR) has at least
  MinISR members;
* UncleanShutdown / CleanShutdown become DataLossShutdown / NoDataLossShutdown; the latter
  chooses whether the shutdown was clean (``\\E is_clean_shutdown \\in BOOLEAN``: the epoch is
  written to disk or not);
* the properties: ReplicationQuorumSuperset and LeaderCandidateCompleteness cover the ELR, and
  MinIsrRecoveryQuorum (with an empty ISR and ELR, the last known ELR has MinISR members).

Constants: as :class:`V35`, with ``clean`` / ``unclean`` read as NoDataLossShutdownLimit /
DataLossShutdownLimit and no ``avoid_lrs``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .v3_5 import (
    AUX_CTRS,
    B_STATE,
    C_ADDING,
    C_ISR,
    C_LE,
    C_LEADER,
    C_PE,
    C_REMOVING,
    C_REPLICAS,
    CLEAN,
    CON_LOG,
    CON_PM,
    CON_UNFENCED,
    CONTROLLER,
    INV_THWM,
    NO_LEADER,
    OFFLINE_CLEAN,
    OFFLINE_DIRTY,
    P_MD,
    R_ISR,
    R_MAXIMAL,
    REG_REQ,
    RUNNING,
    UNCLEAN,
    V35,
    _popcount,
)

C_ELR, C_LKELR = 7, 8


class Kip966(V35):
    MODULE = "kafka_replication_kip_966"
    NEXT = tuple(
        {"UncleanShutdown": "DataLossShutdown", "CleanShutdown": "NoDataLossShutdown"}.get(n, n)
        for n in V35.NEXT
    )
    PROPERTY_NAMES = (*V35.PROPERTY_NAMES, "MinIsrRecoveryQuorum")

    def __init__(self, *args: Any, **kwargs: Any):
        if kwargs.get("avoid_lrs"):
            raise ValueError("kip-966 has no AvoidLastReplicaStanding")
        super().__init__(*args, **kwargs)

    # --- metadata with ELR

    def _init_record(self, replicas: int, isr: int, pe: int) -> tuple:
        return (replicas, isr, 1, 1, pe, -1, -1, 0, 0)

    def _init_con_pm(self, replicas: int, isr: int, pe: int) -> tuple:
        return (replicas, isr, 1, 1, pe, 0, 0, 0, 0)

    def _apply_change(
        self, state: tuple, replicas, leader, isr, le, pe, adding, removing, elr=0
    ) -> tuple:
        md = state[CON_PM]
        lkelr = 0 if _popcount(isr) >= self.min_isr else md[C_LKELR] | replicas & (md[C_ELR] & ~elr)
        pm = (replicas, isr, leader, le, pe, adding, removing, elr, lkelr)
        return pm, state[CON_LOG] + (pm,)

    def _update_elr(self, md: tuple, proposed_isr: int, replicas: int) -> int:
        """UpdateElrOnIsrOrReplicaChange, on the controller's partition metadata ``md``."""
        if _popcount(proposed_isr) >= self.min_isr:
            return 0
        removed = (md[C_ISR] & replicas) & ~proposed_isr
        return (md[C_ELR] & replicas) | removed

    def _on_broker_change_elr(
        self, state: tuple, new_isr: int, new_elr: int, new_unfenced: int
    ) -> list:
        """MaybeUpdatePartitionOnBrokerChange with the ELR."""
        md = state[CON_PM]
        ldr = md[C_LEADER]
        no_leader_change = (ldr == NO_LEADER and new_isr == 0 and not (new_elr & new_unfenced)) or (
            ldr != NO_LEADER and new_isr >> ldr & 1 == 1
        )

        def change(leader: int, isr: int, elr: int, le: int) -> tuple:
            return self._apply_change(
                state,
                md[C_REPLICAS],
                leader,
                isr,
                le,
                md[C_PE] + 1,
                md[C_ADDING],
                md[C_REMOVING],
                elr,
            )

        if no_leader_change:
            if new_isr == md[C_ISR] and new_elr == md[C_ELR]:
                return [None]
            return [change(ldr, new_isr, new_elr, md[C_LE])]
        if new_isr:
            return [change(c, new_isr, new_elr, md[C_LE] + 1) for c in self.members[new_isr]]
        if new_elr & new_unfenced:
            return [
                change(c, new_isr | 1 << c, new_elr & ~(1 << c), md[C_LE] + 1)
                for c in self.members[new_elr & new_unfenced]
            ]
        return [change(NO_LEADER, new_isr, new_elr, md[C_LE] + 1)]

    def _handle_fenced(self, state: tuple, b: int) -> list[tuple[int, Any]]:
        md = state[CON_PM]
        new_unfenced = state[CON_UNFENCED] & ~(1 << b)
        new_isr = md[C_ISR] & ~(1 << b)
        new_elr = self._update_elr(md, new_isr, md[C_REPLICAS])
        return [
            (new_unfenced, ch)
            for ch in self._on_broker_change_elr(state, new_isr, new_elr, new_unfenced)
        ]

    def _handle_unfenced(self, state: tuple, b: int) -> list[tuple[int, Any]]:
        md = state[CON_PM]
        new_unfenced = state[CON_UNFENCED] | (1 << b)
        if md[C_LEADER] == NO_LEADER:
            changes = self._on_broker_change_elr(state, md[C_ISR], md[C_ELR], new_unfenced)
        else:
            changes = [None]
        return [(new_unfenced, ch) for ch in changes]

    def _process_unclean_broker(self, state: tuple, b: int) -> list[tuple[int, Any]]:
        md = state[CON_PM]
        new_unfenced = state[CON_UNFENCED] | (1 << b)
        new_isr = md[C_ISR] & ~(1 << b)
        new_elr = md[C_ELR] & ~(1 << b)
        return [
            (new_unfenced, ch)
            for ch in self._on_broker_change_elr(state, new_isr, new_elr, new_unfenced)
        ]

    # --- registration with the broker epoch kept on disk

    def _start_epoch(self, state: tuple, b: int) -> int:
        return state[B_STATE][b - 1][1]

    def _reg_request(self, state: tuple, b: int, inc: int) -> tuple:
        return (REG_REQ, b, inc, state[B_STATE][b - 1][1], CONTROLLER, b)

    def _on_registration(self, state: tuple, b: int, m: tuple) -> list[tuple[int, Any]]:
        if m[3] == 0:
            return self._process_unclean_broker(state, b)
        return self._handle_unfenced(state, b)

    # --- AlterPartition and reassignment update the ELR

    def _ap_new_md(self, state: tuple, m: tuple) -> tuple:
        out = super()._ap_new_md(state, m)
        return (*out[:6], self._update_elr(state[CON_PM], out[1], out[0]))

    def _reassign_new_md(self, md: tuple, adding: int, removing: int) -> tuple:
        out = super()._reassign_new_md(md, adding, removing)
        if out[4] == 0 and out[5] == 0:  # complete: the ELR follows the final ISR and replicas
            return (*out[:6], self._update_elr(md, out[1], out[0]))
        return (*out[:6], md[C_ELR])

    # --- the high watermark advances only with ISR >= MinISR

    def _can_advance(self, state: tuple, b: int, isr: int, old: int, new: int) -> bool:
        return new > old and _popcount(isr) >= self.min_isr

    # --- shutdowns

    def _DataLossShutdown(self, state: tuple) -> Iterator[tuple[tuple, tuple]]:
        if state[AUX_CTRS][UNCLEAN] >= self.unclean:
            return
        for b in self.brokers:
            if state[B_STATE][b - 1][0] in (OFFLINE_CLEAN, OFFLINE_DIRTY):
                continue
            yield from self._shutdown(state, b, True)

    def _NoDataLossShutdown(self, state: tuple) -> Iterator[tuple[tuple, tuple]]:
        if state[AUX_CTRS][CLEAN] >= self.clean:
            return
        for b in self.brokers:
            if state[B_STATE][b - 1][0] in (OFFLINE_CLEAN, OFFLINE_DIRTY):
                continue
            # \E is_clean_shutdown \in BOOLEAN (FALSE first, as TLC enumerates BOOLEAN)
            yield from self._shutdown(state, b, False, 0)
            yield from self._shutdown(state, b, False, state[B_STATE][b - 1][1])

    # --- properties

    def ReplicationQuorumSupersetProperty(self, state: tuple) -> bool:
        md = state[CON_PM]
        for b in self.brokers:
            if not self._is_non_stale_leader(state, b):
                continue
            pmd = state[P_MD][b - 1]
            if not self._pending_ap(state, b) and pmd[R_MAXIMAL] != pmd[R_ISR]:
                return False
            if _popcount(pmd[R_ISR]) >= self.min_isr and (md[C_ISR] | md[C_ELR]) & ~pmd[R_MAXIMAL]:
                return False
        return True

    def LeaderCandidateCompletenessProperty(self, state: tuple) -> bool:
        thwm = state[INV_THWM]
        if thwm <= 1:
            return True
        md = state[CON_PM]
        return not any(
            self._leo(state, b) < thwm and state[B_STATE][b - 1][0] == RUNNING
            for b in self.members[md[C_ISR] | md[C_ELR]]
        )

    def MinIsrRecoveryQuorum(self, state: tuple) -> bool:
        md = state[CON_PM]
        if md[C_ISR] == 0 and md[C_ELR] == 0:
            return _popcount(md[C_LKELR]) == self.min_isr
        return True
