"""kafka_replication_v3_5: Kafka 3.5's replication protocol with the KRaft controller, as a model
of our checker.

Our own transcription (own words and code) of Jack Vanlightly's public TLA+ specification,
https://github.com/Vanlightly/kafka-tlaplus, directory kafka_data_replication/kraft/v3.5, at
commit 823615e8a0962d0160c11d9affb2576c56b7c054 (modules kafka_replication_v3_5, v3_5_types,
v3_5_functions, v3_5_properties, network). The .tla files are not part of this project.

What it models (the spec's own scope): brokers that register with the controller and get a
broker epoch, the controller fencing and unfencing them (standing in for heartbeats), a metadata
log of partition-change records that brokers pull, the fetch as a request and a response in
flight (FetchRequest / FetchResponse messages, at most one outstanding per fetcher), DivergingEpoch
truncation on the fetch response, asynchronous AlterPartition with the maximal ISR, the KIP-903
broker epochs in AlterPartition, clean and unclean (disk-losing) shutdowns, reassignment, and the
invariants LeaderCompleteness, LeaderCandidateCompleteness, ReplicationQuorumSuperset,
LogMatching, MetadataLogMatching, ConsistentRead and NoCommittedRecordLostGlobally.

Enumeration follows TLA+ binding by binding (every witness of every ``\\E``, every ``CASE`` arm as
TLC picks the first true one), so that the number of generated states equals TLC's.

Encoding (a state is one tuple of the fields below, every value an int or a tuple):

* broker ids are 1..B as in the spec; per-broker tuples are indexed ``b - 1``; sets of brokers are
  bitmasks over bit ``b``; the spec's Nil is -1 for an int and ``()`` or ``None`` for a record;
  NoLeader and Controller are 0;
* a broker's copy of the metadata log is always a prefix of the controller's (it is only ever set
  to ``SubSeq(con_metadata_log, 1, k)`` or extended by the next records), so it is stored as its
  length ``k``: that is the same set of states, and MetadataLogMatching holds by construction;
* ``messages`` and ``messages_discard`` are sets, stored as sorted tuples of message tuples.

Constants as in the TLC config: ``brokers`` (BrokerCount), ``rf`` (InitReplicationFactor),
``values`` (|Values|), ``min_isr``, ``init_isr``, ``clean`` / ``unclean`` (CleanShutdownLimit /
UncleanShutdownLimit), ``fence`` (FenceBrokerLimit), ``shrink`` (LeaderShrinkIsrLimit),
``reassign`` (ReassignmentLimit), ``avoid_lrs`` (AvoidLastReplicaStanding).

Limits of the transcription, all of them limits of the public spec under TLC too: with more than
one value a leader write that commits at once reads past its old log (TLC stops with an error
there), and the initial replica set and ISR are brokers 1..rf and 1..init_isr (the spec CHOOSEs
some set containing broker 1; tests use rf = BrokerCount and init_isr = rf, where the choice is
unique). No VIEW: the spec's config declares ``VIEW view`` (dropping messages_discard and the
auxiliary counters), which makes TLC's count depend on which state of a view class it meets
first; we compare with TLC run without it.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import combinations
from typing import Any

from isr.checker.model import Action, Property

NIL = -1
NO_LEADER = 0
CONTROLLER = 0
INT_MAX = 10000

# controller-side broker status
FENCED, UNFENCED = 0, 1
# broker-side status
OFFLINE_CLEAN, OFFLINE_DIRTY, STARTING, RUNNING = 0, 1, 2, 3
# replica role (partition_status); NIL (-1) is "no role"
LEADER, FOLLOWER = 1, 2
# message types
REG_REQ, REG_RESP, AP_REQ, AP_RESP, FETCH_REQ, FETCH_RESP = range(6)
# errors (Nil is NIL)
INELIGIBLE_REPLICA, FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH, NOT_LEADER_OR_FOLLOWER = range(4)

STATUS_NAMES = {
    OFFLINE_CLEAN: "OFFLINE_CLEAN",
    OFFLINE_DIRTY: "OFFLINE_DIRTY",
    STARTING: "STARTING",
    RUNNING: "RUNNING",
}
ROLE_NAMES = {LEADER: "Leader", FOLLOWER: "Follower", NIL: "Nil"}
ERROR_NAMES = {
    NIL: "Nil",
    INELIGIBLE_REPLICA: "IneligibleReplica",
    FENCED_LEADER_EPOCH: "FencedLeaderEpoch",
    UNKNOWN_LEADER_EPOCH: "UnknownLeaderEpoch",
    NOT_LEADER_OR_FOLLOWER: "NotLeaderOrFollower",
}

# Guards the spec marks "CHECK" (remove one and the model checker should find data loss), which
# ``drop`` removes, one name each; the default model keeps them all, as the spec does.
DROPPABLE = {
    "incarnation": "ReceiveBrokerRegResponse: the response's incarnation id must be the broker's",
    "fetcher-epoch-bump": "AddPartitionToFetcher: re-add the partition on a leader-epoch bump",
    "reset-out-of-sync": "BecomeLeaderInNewEpoch: forget the state of out-of-sync followers",
    "isr-hwm": "FollowerIsCaughtUp: a follower joins the ISR only at or above the leader's HW",
    "isr-leso": "FollowerIsCaughtUp: ... and at or above the leader-epoch start offset",
    "fetch-response": "ReceiveFetchResponse: the fetch offset and leader epoch must still match",
    "broker-epoch": "IsEligibleBroker (KIP-903): an added replica's broker epoch must be current",
    "partition-epoch": "ValidateAlterPartitionRequest: the partition epoch must be current",
}

# state fields
(
    CON_UNFENCED,
    CON_REG,
    CON_PM,
    CON_LOG,
    B_STATE,
    B_FETCH,
    B_MDLEN,
    P_STATUS,
    P_MD,
    P_DATA,
    P_LESO,
    P_RS,
    P_PAP,
    AUX_BE,
    AUX_CTRS,
    AUX_FLO,
    INV_SENT,
    INV_POS,
    INV_NEG,
    INV_THWM,
    INV_CONSUMED,
    MSGS,
    DISCARD,
) = range(23)
FIELD_NAMES = [
    "con_unfenced",
    "con_broker_reg",
    "con_partition_metadata",
    "con_metadata_log",
    "broker_state",
    "broker_fetchers",
    "broker_metadata_log_len",
    "partition_status",
    "partition_metadata",
    "partition_data",
    "partition_leso",
    "partition_replica_state",
    "partition_pending_ap",
    "aux_broker_epoch",
    "aux_ctrs",
    "aux_flo",
    "inv_sent",
    "inv_pos_acked",
    "inv_neg_acked",
    "inv_true_hwm",
    "inv_consumed",
    "messages",
    "messages_discard",
]

# aux_ctrs fields
INCARN, CLEAN, UNCLEAN, FENCE, SHRINK, REASSIGN = range(6)
# partition_metadata fields (replica side) and con_partition_metadata fields
R_REPLICAS, R_ISR, R_MAXIMAL, R_LEADER, R_LE, R_PE = range(6)
C_REPLICAS, C_ISR, C_LEADER, C_LE, C_PE, C_ADDING, C_REMOVING = range(7)
BLANK_MD = (0, 0, 0, NO_LEADER, 0, 0)
BLANK_RS = (NIL, 0)  # (leo, broker_epoch)
BLANK_FETCH = (None, False)  # (partition, pending_response)
EMPTY_DATA = ((), 1, 1)  # (log, hwm, leo)
NO_PAP = (0, ())  # (epoch, request)


def _set(t: tuple, i: int, v: Any) -> tuple:
    return t[:i] + (v,) + t[i + 1 :]


def _setb(t: tuple, b: int, v: Any) -> tuple:
    return t[: b - 1] + (v,) + t[b:]


def _popcount(mask: int) -> int:
    return bin(mask).count("1")


class V35:
    """The model (see the module docstring). ``NEXT`` lists the actions in the order of the TLA+
    Next disjunction."""

    MODULE = "kafka_replication_v3_5"
    NEXT = (
        "BrokerStart",
        "ReceiveBrokerRegResponse",
        "ReceiveMetadataUpdate",
        "SendAlterPartitionRequest",
        "ReceiveAlterPartitionResponse",
        "SendFetchRequest",
        "ReceiveFetchRequest",
        "ReceiveFetchResponse",
        "WriteRecordToLeader",
        "UncleanShutdown",
        "CleanShutdown",
        "ReceiveBrokerRegRequest",
        "ReceiveAlterPartitionRequest",
        "FenceBroker",
        "UnfenceBroker",
        "PerformPartitionReassignment",
    )

    def __init__(
        self,
        brokers: int = 2,
        rf: int | None = None,
        values: int = 1,
        min_isr: int = 1,
        init_isr: int | None = None,
        clean: int = 0,
        unclean: int = 0,
        fence: int = 0,
        shrink: int = 0,
        reassign: int = 0,
        avoid_lrs: bool = False,
        drop: frozenset[str] | set[str] = frozenset(),
    ):
        unknown = set(drop) - set(DROPPABLE)
        if unknown:
            raise ValueError(
                f"unknown guards to drop: {sorted(unknown)} (known: {sorted(DROPPABLE)})"
            )
        self.drop = frozenset(drop)
        rf = brokers if rf is None else rf
        init_isr = rf if init_isr is None else init_isr
        if not (1 <= rf <= brokers and min_isr <= init_isr <= rf and values >= 1):
            raise ValueError("need 1 <= rf <= brokers, min_isr <= init_isr <= rf, values >= 1")
        self.B = brokers
        self.rf, self.V, self.min_isr, self.init_isr = rf, values, min_isr, init_isr
        self.limits = dict(
            clean=clean, unclean=unclean, fence=fence, shrink=shrink, reassign=reassign
        )
        self.clean, self.unclean, self.fence, self.shrink, self.reassign = (
            clean,
            unclean,
            fence,
            shrink,
            reassign,
        )
        self.avoid_lrs = avoid_lrs
        self.brokers = range(1, brokers + 1)
        self.all_mask = sum(1 << b for b in self.brokers)
        self.members = {
            m: tuple(b for b in self.brokers if m >> b & 1) for m in range(0, 1 << (brokers + 1), 2)
        }
        self.action_names = list(self.NEXT)
        self._actions = [(k, getattr(self, "_" + name)) for k, name in enumerate(self.NEXT)]
        self.name = (
            f"{self.MODULE}[B={brokers},RF={rf},V={values},MinISR={min_isr},InitIsr={init_isr},"
            f"clean={clean},unclean={unclean},fence={fence},shrink={shrink},reassign={reassign}"
            + (",avoidLRS" if avoid_lrs and hasattr(self, "_UncleanShutdown") else "")
            + "]"
        )
        self.properties = self._properties()

    # ------------------------------------------------------------------ model protocol

    def init_states(self) -> list[tuple]:
        B = self.B
        replicas = sum(1 << b for b in range(1, self.rf + 1))
        isr = sum(1 << b for b in range(1, self.init_isr + 1))
        pe = 1 if self.init_isr == self.rf else 2
        unfenced = self.all_mask & ~(replicas & ~isr)
        first = self._init_record(replicas, isr, pe)
        state: list[Any] = [None] * 23
        state[CON_UNFENCED] = unfenced
        state[CON_REG] = tuple(
            (UNFENCED if unfenced >> b & 1 else FENCED, b, b) for b in self.brokers
        )
        state[CON_PM] = self._init_con_pm(replicas, isr, pe)
        state[CON_LOG] = (first,)
        state[B_STATE] = tuple((RUNNING, b, b, True) for b in self.brokers)
        state[B_FETCH] = tuple(
            tuple(
                ((1, 0, False), False) if (b != 1 and b1 == 1) else BLANK_FETCH
                for b1 in self.brokers
            )
            for b in self.brokers
        )
        state[B_MDLEN] = tuple(1 if unfenced >> b & 1 else 0 for b in self.brokers)
        state[P_STATUS] = tuple(
            LEADER if b == 1 else (FOLLOWER if replicas >> b & 1 else NIL) for b in self.brokers
        )
        state[P_MD] = tuple(
            BLANK_MD
            if not replicas >> b & 1
            else (replicas, isr, isr, 1, 1, pe)
            if isr >> b & 1
            else (replicas, replicas, replicas, 1, 1, 1)
            for b in self.brokers
        )
        state[P_DATA] = (EMPTY_DATA,) * B
        state[P_LESO] = tuple(1 if b == 1 else NIL for b in self.brokers)
        state[P_RS] = ((BLANK_RS,) * B,) * B
        state[P_PAP] = (NO_PAP,) * B
        state[AUX_BE] = B
        state[AUX_CTRS] = (B + 1, 0, 0, 0, 0, 0)
        state[AUX_FLO] = (INT_MAX,) * B
        state[INV_SENT] = state[INV_POS] = state[INV_NEG] = 0
        state[INV_THWM] = 1
        state[INV_CONSUMED] = ()
        state[MSGS] = state[DISCARD] = ()
        return [tuple(state)]

    def _init_record(self, replicas: int, isr: int, pe: int) -> tuple:
        # The initial record has no adding/removing fields in TLA+: -1 marks their absence.
        return (replicas, isr, 1, 1, pe, -1, -1)

    def _init_con_pm(self, replicas: int, isr: int, pe: int) -> tuple:
        return (replicas, isr, 1, 1, pe, 0, 0)

    def successors(self, state: tuple) -> Iterator[tuple[Action, tuple]]:
        for k, fn in self._actions:
            for args, t in fn(state):
                yield (k, args), t

    def within_boundary(self, state: tuple) -> bool:
        return True

    def canonicalize(self, state: tuple) -> tuple:
        return state  # no symmetry, as TLC runs these specs

    def describe_action(self, action: Action) -> dict[str, Any]:
        kind, args = action
        name = self.action_names[kind]
        return {"action": name, "args": list(args)}

    def state_to_json(self, state: tuple) -> dict[str, Any]:
        def conv(v: Any) -> Any:
            if isinstance(v, tuple):
                return [conv(x) for x in v]
            return v

        return {name: conv(state[i]) for i, name in enumerate(FIELD_NAMES)}

    # ------------------------------------------------------------------ helpers

    def _msgs_add(self, msgs: tuple, m: tuple) -> tuple:
        return msgs if m in msgs else tuple(sorted(msgs + (m,)))

    def _msgs_remove(self, msgs: tuple, m: tuple) -> tuple:
        return tuple(x for x in msgs if x != m)

    def _reply(self, s: list, d: tuple, m: tuple) -> None:
        s[MSGS] = self._msgs_add(self._msgs_remove(s[MSGS], d), m)
        s[DISCARD] = self._msgs_add(s[DISCARD], d)

    def _discard(self, s: list, d: tuple) -> None:
        s[MSGS] = self._msgs_remove(s[MSGS], d)
        s[DISCARD] = self._msgs_add(s[DISCARD], d)

    @staticmethod
    def _leo(state: tuple, b: int) -> int:
        return state[P_DATA][b - 1][2]

    @staticmethod
    def _hwm(state: tuple, b: int) -> int:
        return state[P_DATA][b - 1][1]

    @staticmethod
    def _log(state: tuple, b: int) -> tuple:
        return state[P_DATA][b - 1][0]

    def _commit_offset(self, state: tuple, b: int, maximal: int, leo: int, rs: tuple) -> int:
        """GetCommitOffset: the highest offset below ``leo`` every maximal-ISR member has (the
        leader counts itself); 0 when the leader's current log is empty."""
        if self._leo(state, b) == 1:
            return 0
        for offset in range(leo - 1, 0, -1):
            if all(
                b1 == b or (rs[b1 - 1][0] != NIL and rs[b1 - 1][0] > offset)
                for b1 in self.members[maximal]
            ):
                return offset
        return 0

    def _acks_for(self, state: tuple, b: int, lower: int, higher: int) -> int:
        """SendAcksFor's value set, as a bitmask."""
        log = self._log(state, b)
        flo = state[AUX_FLO][b - 1]
        acked = state[INV_POS] | state[INV_NEG]
        out = 0
        for offset in range(lower, higher + 1):
            v = log[offset - 1][2]  # IndexError where TLC would stop on a bad index
            if state[INV_SENT] >> v & 1 and not acked >> v & 1 and offset >= flo:
                out |= 1 << v
        return out

    def _send_acks(
        self, state: tuple, s: list, b: int, lower: int, higher: int, positive: bool
    ) -> None:
        values = self._acks_for(state, b, lower, higher)
        if positive:
            s[INV_POS] = state[INV_POS] | values
        else:
            s[INV_NEG] = state[INV_NEG] | values

    def _update_hwm_inv(
        self, state: tuple, s: list, b: int, old: int, new: int, positive: bool
    ) -> None:
        if positive:
            self._send_acks(state, s, b, old, new - 1, True)
        else:
            self._send_acks(state, s, b, old, self._leo(state, b) - 1, False)
        thwm = state[INV_THWM]
        if new > thwm:
            s[INV_THWM] = new
            log = self._log(state, b)
            if new - 1 > len(log):
                raise IndexError("SubSeq past the log (TLC stops here too)")
            s[INV_CONSUMED] = state[INV_CONSUMED] + log[thwm - 1 : new - 1]

    def _can_advance(self, state: tuple, b: int, isr: int, old: int, new: int) -> bool:
        return new > old

    def _maybe_advance_hwm(
        self, state: tuple, s: list, b: int, isr: int, old: int, new: int, positive: bool
    ) -> None:
        if self._can_advance(state, b, isr, old, new):
            data = s[P_DATA][b - 1]
            s[P_DATA] = _setb(s[P_DATA], b, (data[0], new, data[2]))
            self._update_hwm_inv(state, s, b, old, new, positive)

    def _hwm_on_partition_change(self, state: tuple, s: list, b: int, md: tuple) -> None:
        """MaybeUpdateHwmAndAckOnPartitionChange."""
        new = (
            self._commit_offset(state, b, md[R_MAXIMAL], self._leo(state, b), state[P_RS][b - 1])
            + 1
        )
        positive = _popcount(md[R_MAXIMAL]) >= self.min_isr
        self._maybe_advance_hwm(state, s, b, md[R_ISR], self._hwm(state, b), new, positive)

    def _fail_pending_writes(self, state: tuple, s: list, b: int) -> None:
        self._send_acks(state, s, b, self._hwm(state, b), self._leo(state, b) - 1, False)

    def _maybe_fail_pending_writes(self, state: tuple, s: list, b: int, md: tuple) -> None:
        if self._hwm(state, b) < self._leo(state, b) and (
            _popcount(md[R_ISR]) < self.min_isr or b != md[R_LEADER]
        ):
            self._fail_pending_writes(state, s, b)

    def _pending_ap(self, state: tuple, b: int) -> bool:
        return state[P_PAP][b - 1][0] > state[P_MD][b - 1][R_PE]

    # --- controller partition changes (list of (con_pm', con_log') choices; None = no change)

    def _apply_change(
        self, state: tuple, replicas, leader, isr, le, pe, adding, removing, elr=0
    ) -> tuple:
        """ApplyPartitionChange: the new controller metadata and the log with its record (``elr``
        is KIP-966's; this version has none)."""
        pm = (replicas, isr, leader, le, pe, adding, removing)
        return pm, state[CON_LOG] + (pm,)

    def _no_leader_change(self, state: tuple, new_isr: int, new_unfenced: int) -> bool:
        ldr = state[CON_PM][C_LEADER]
        return (ldr == NO_LEADER and not (new_isr & new_unfenced)) or (
            new_isr >> ldr & 1 == 1 and new_unfenced >> ldr & 1 == 1 and ldr != NO_LEADER
        )

    def _on_broker_change(self, state: tuple, new_isr: int, new_unfenced: int) -> list:
        md = state[CON_PM]
        if self._no_leader_change(state, new_isr, new_unfenced):
            if new_isr == md[C_ISR]:
                return [None]
            return [
                self._apply_change(
                    state,
                    md[C_REPLICAS],
                    md[C_LEADER],
                    new_isr,
                    md[C_LE],
                    md[C_PE] + 1,
                    md[C_ADDING],
                    md[C_REMOVING],
                )
            ]
        if new_isr & new_unfenced:
            return [
                self._apply_change(
                    state,
                    md[C_REPLICAS],
                    c,
                    new_isr,
                    md[C_LE] + 1,
                    md[C_PE] + 1,
                    md[C_ADDING],
                    md[C_REMOVING],
                )
                for c in self.members[new_isr & new_unfenced]
            ]
        return [
            self._apply_change(
                state,
                md[C_REPLICAS],
                NO_LEADER,
                new_isr,
                md[C_LE] + 1,
                md[C_PE] + 1,
                md[C_ADDING],
                md[C_REMOVING],
            )
        ]

    def _fenced_isr(self, isr: int, b: int) -> int:
        return isr if _popcount(isr) == 1 else isr & ~(1 << b)

    def _handle_fenced(self, state: tuple, b: int) -> list[tuple[int, Any]]:
        """HandleBrokerFenced: (con_unfenced', change) choices."""
        new_unfenced = state[CON_UNFENCED] & ~(1 << b)
        new_isr = self._fenced_isr(state[CON_PM][C_ISR], b)
        return [(new_unfenced, ch) for ch in self._on_broker_change(state, new_isr, new_unfenced)]

    def _handle_unfenced(self, state: tuple, b: int) -> list[tuple[int, Any]]:
        new_unfenced = state[CON_UNFENCED] | (1 << b)
        if state[CON_PM][C_LEADER] == NO_LEADER:
            changes = self._on_broker_change(state, state[CON_PM][C_ISR], new_unfenced)
        else:
            changes = [None]
        return [(new_unfenced, ch) for ch in changes]

    @staticmethod
    def _put_change(s: list, change: Any) -> None:
        if change is not None:
            s[CON_PM], s[CON_LOG] = change

    # --- LastOffsetForEpoch

    def _last_offset_for_epoch(
        self, state: tuple, b: int, req_epoch: int, is_leader: bool
    ) -> tuple[int, int]:
        log = self._log(state, b)
        le = state[P_MD][b - 1][R_LE]
        if not log or log[-1][0] == req_epoch or (is_leader and le == req_epoch):
            return (req_epoch, self._leo(state, b))
        higher = None
        for offset, rec in enumerate(log, 1):
            if rec[0] > req_epoch:
                higher = offset
                break
        if higher is None:
            higher = self._leo(state, b) if (is_leader and le > req_epoch) else None
        floor = [rec[0] for rec in log if rec[0] <= req_epoch]
        epoch = max(floor) if floor else req_epoch
        return (epoch, higher)  # type: ignore[return-value]

    # --- fetch sessions

    def _drop_fetch_sessions(self, state: tuple, s: list, b: int) -> None:
        drop = tuple(
            m for m in state[MSGS] if m[0] in (FETCH_REQ, FETCH_RESP) and (m[-2] == b or m[-1] == b)
        )
        if drop:
            s[MSGS] = tuple(m for m in state[MSGS] if m not in drop)
            disc = state[DISCARD]
            for m in drop:
                disc = self._msgs_add(disc, m)
            s[DISCARD] = disc
        rows = []
        for b1 in self.brokers:
            row = state[B_FETCH][b1 - 1]
            if b1 == b:
                row = (BLANK_FETCH,) * self.B
            else:
                part, pending = row[b - 1]
                if pending and part is not None:
                    row = _setb(row, b, ((part[0], part[1], True), False))
                elif pending:
                    row = _setb(row, b, (None, False))
            rows.append(row)
        s[B_FETCH] = tuple(rows)

    # --- AlterPartition validation

    def _is_eligible(self, state: tuple, b: int, broker_epoch: int) -> bool:
        reg = state[CON_REG][b - 1]
        if "broker-epoch" in self.drop:
            return reg[0] == UNFENCED
        return reg[0] == UNFENCED and (broker_epoch == 0 or reg[1] == broker_epoch)

    def _validate_ap(self, state: tuple, b: int, m: tuple) -> int:
        md = state[CON_PM]
        pe_ok = m[5] == md[C_PE] or "partition-epoch" in self.drop
        if b == md[C_LEADER] and m[6] == state[CON_REG][b - 1][1] and pe_ok:
            if all(self._is_eligible(state, b1, e) for b1, e in m[2]):
                return NIL
            return INELIGIBLE_REPLICA
        return FENCED_LEADER_EPOCH

    # ------------------------------------------------------------------ actions

    def _start_epoch(self, state: tuple, b: int) -> int:
        return 0  # the broker epoch is not kept across restarts (KIP-966 reads it from file)

    def _reg_request(self, state: tuple, b: int, inc: int) -> tuple:
        return (REG_REQ, b, inc, CONTROLLER, b)

    def _on_registration(self, state: tuple, b: int, m: tuple) -> list[tuple[int, Any]]:
        return self._handle_unfenced(state, b)

    def _BrokerStart(self, state: tuple) -> Iterator[tuple[tuple, tuple]]:
        for b in self.brokers:
            if state[B_STATE][b - 1][0] not in (OFFLINE_CLEAN, OFFLINE_DIRTY):
                continue
            s = list(state)
            inc = state[AUX_CTRS][INCARN]
            s[B_STATE] = _setb(
                state[B_STATE], b, (STARTING, self._start_epoch(state, b), inc, False)
            )
            s[P_STATUS] = _setb(state[P_STATUS], b, NIL)
            s[MSGS] = self._msgs_add(state[MSGS], self._reg_request(state, b, inc))
            s[AUX_CTRS] = _set(state[AUX_CTRS], INCARN, inc + 1)
            yield (b,), tuple(s)

    def _ReceiveBrokerRegRequest(self, state: tuple) -> Iterator[tuple[tuple, tuple]]:
        for b in self.brokers:
            for m in state[MSGS]:
                if m[0] != REG_REQ or m[-1] != b:
                    continue
                reg = state[CON_REG][b - 1]
                if not (reg[0] == FENCED or reg[2] == m[2]):
                    continue
                be = state[AUX_BE] + 1
                for new_unfenced, change in self._on_registration(state, b, m):
                    s = list(state)
                    s[CON_REG] = _setb(state[CON_REG], b, (UNFENCED, be, m[2]))
                    s[CON_UNFENCED] = new_unfenced
                    self._put_change(s, change)
                    self._reply(s, m, (REG_RESP, be, m[2], len(state[CON_LOG]), b, CONTROLLER))
                    s[AUX_BE] = be
                    yield (b,), tuple(s)

    def _ReceiveBrokerRegResponse(self, state: tuple) -> Iterator[tuple[tuple, tuple]]:
        for b in self.brokers:
            bs = state[B_STATE][b - 1]
            if bs[0] != STARTING or bs[3]:
                continue
            for m in state[MSGS]:
                if m[0] != REG_RESP or m[4] != b:
                    continue
                if bs[2] != m[2] and "incarnation" not in self.drop:
                    continue
                s = list(state)
                s[B_STATE] = _setb(state[B_STATE], b, (RUNNING, m[1], bs[2], True))
                s[B_MDLEN] = _setb(state[B_MDLEN], b, 0 if m[3] <= 1 else m[3] - 1)
                s[P_MD] = _setb(state[P_MD], b, BLANK_MD)
                self._discard(s, m)
                yield (b,), tuple(s)

    def _UnfenceBroker(self, state: tuple) -> Iterator[tuple[tuple, tuple]]:
        for b in self.brokers:
            reg = state[CON_REG][b - 1]
            if reg[0] != FENCED or state[B_STATE][b - 1][0] != RUNNING:
                continue
            for new_unfenced, change in self._handle_unfenced(state, b):
                s = list(state)
                s[CON_UNFENCED] = new_unfenced
                self._put_change(s, change)
                s[CON_REG] = _setb(state[CON_REG], b, (UNFENCED, reg[1], reg[2]))
                yield (b,), tuple(s)

    def _FenceBroker(self, state: tuple) -> Iterator[tuple[tuple, tuple]]:
        if state[AUX_CTRS][FENCE] >= self.fence:
            return
        for b in self.brokers:
            reg = state[CON_REG][b - 1]
            if reg[0] != UNFENCED:
                continue
            for new_unfenced, change in self._handle_fenced(state, b):
                s = list(state)
                s[CON_UNFENCED] = new_unfenced
                self._put_change(s, change)
                s[CON_REG] = _setb(state[CON_REG], b, (FENCED, reg[1], reg[2]))
                s[AUX_CTRS] = _set(state[AUX_CTRS], FENCE, state[AUX_CTRS][FENCE] + 1)
                yield (b,), tuple(s)

    # --- ReceiveMetadataUpdate and its sub-actions

    def _needs_action(self, state: tuple, b: int, rec: tuple) -> int:
        """PartitionNeedsAction, as the number of its disjuncts that hold: TLC splits a
        disjunction that is a conjunct of an action into branches, so a successor is generated
        once per true disjunct (the distinct states are the same; the generated count is TLC's)."""
        md = state[P_MD][b - 1]
        in_replicas = md[R_REPLICAS] >> b & 1 == 1
        return (
            (state[P_STATUS][b - 1] == LEADER)
            + (in_replicas and rec[C_LE] > md[R_LE])
            + (not in_replicas and rec[C_REPLICAS] >> b & 1 == 1)
        )

    def _reset_all_follower_state(self, s: list, b: int) -> None:
        s[P_RS] = _setb(s[P_RS], b, (BLANK_RS,) * self.B)

    def _remove_from_fetchers(self, state: tuple, s: list, b: int) -> None:
        s[B_FETCH] = _setb(state[B_FETCH], b, tuple((None, f[1]) for f in state[B_FETCH][b - 1]))

    def _renounce_leadership(self, state: tuple, s: list, b: int, md: tuple) -> None:
        """EnsureLeadershipRenounced."""
        self._maybe_fail_pending_writes(state, s, b, md)
        self._reset_all_follower_state(s, b)
        s[P_PAP] = _setb(state[P_PAP], b, NO_PAP)
        s[AUX_FLO] = _setb(state[AUX_FLO], b, INT_MAX)

    def _remain_leader(self, state: tuple, s: list, b: int, md: tuple) -> None:
        self._hwm_on_partition_change(state, s, b, md)
        if md[R_PE] >= state[P_PAP][b - 1][0]:
            s[P_PAP] = _setb(state[P_PAP], b, NO_PAP)

    def _become_leader(self, state: tuple, s: list, b: int, md: tuple, is_new_leader: bool) -> None:
        s[P_STATUS] = _setb(state[P_STATUS], b, LEADER)
        self._hwm_on_partition_change(state, s, b, md)
        s[P_LESO] = _setb(state[P_LESO], b, self._leo(state, b))
        if is_new_leader:
            self._reset_all_follower_state(s, b)
        else:
            row = state[P_RS][b - 1]
            s[P_RS] = _setb(
                state[P_RS],
                b,
                tuple(
                    row[b1 - 1]
                    if md[R_ISR] >> b1 & 1 or "reset-out-of-sync" in self.drop
                    else BLANK_RS
                    for b1 in self.brokers
                ),
            )
        s[P_PAP] = _setb(state[P_PAP], b, NO_PAP)
        self._remove_from_fetchers(state, s, b)

    def _become_follower(self, state: tuple, s: list, b: int, md: tuple) -> None:
        s[P_STATUS] = _setb(state[P_STATUS], b, FOLLOWER)
        leader, le = md[R_LEADER], md[R_LE]
        row = state[B_FETCH][b - 1]
        bump = le > state[P_MD][b - 1][R_LE] and "fetcher-epoch-bump" not in self.drop
        if bump or row[leader - 1][0] is None:
            log = self._log(state, b)
            add = (self._leo(state, b), log[-1][0] if log else 0, False)
            s[B_FETCH] = _setb(
                state[B_FETCH],
                b,
                tuple(((add if p == leader else None), row[p - 1][1]) for p in self.brokers),
            )
        s[P_LESO] = _setb(state[P_LESO], b, NIL)
        self._renounce_leadership(state, s, b, md)

    def _wait_for_leader(self, state: tuple, s: list, b: int, md: tuple) -> None:
        s[P_STATUS] = _setb(state[P_STATUS], b, NIL)
        self._remove_from_fetchers(state, s, b)
        s[P_LESO] = _setb(state[P_LESO], b, NIL)
        self._renounce_leadership(state, s, b, md)

    def _delete_partition(self, state: tuple, s: list, b: int, md: tuple) -> None:
        s[P_STATUS] = _setb(state[P_STATUS], b, NIL)
        self._remove_from_fetchers(state, s, b)
        s[P_LESO] = _setb(state[P_LESO], b, NIL)
        s[P_DATA] = _setb(state[P_DATA], b, EMPTY_DATA)
        self._renounce_leadership(state, s, b, md)

    def _new_part_md(self, rec: tuple) -> tuple:
        return (rec[C_REPLICAS], rec[C_ISR], rec[C_ISR], rec[C_LEADER], rec[C_LE], rec[C_PE])

    def _ReceiveMetadataUpdate(self, state: tuple) -> Iterator[tuple[tuple, tuple]]:
        con_log = state[CON_LOG]
        for b in self.brokers:
            bs = state[B_STATE][b - 1]
            if bs[0] in (OFFLINE_CLEAN, OFFLINE_DIRTY) or not bs[3]:
                continue
            cur = state[P_MD][b - 1]
            for md_offset in range(state[B_MDLEN][b - 1] + 1, len(con_log) + 1):
                rec = con_log[md_offset - 1]
                times = self._needs_action(state, b, rec)
                if not times:
                    continue
                new = self._new_part_md(rec)
                s = list(state)
                s[B_MDLEN] = _setb(state[B_MDLEN], b, md_offset)
                if new[R_PE] > cur[R_PE]:
                    in_new = new[R_REPLICAS] >> b & 1 == 1
                    s[P_MD] = _setb(state[P_MD], b, new if in_new else BLANK_MD)
                    is_new_leader = state[P_STATUS][b - 1] != LEADER and rec[C_LEADER] == b
                    if cur[R_REPLICAS] >> b & 1 and not in_new:
                        self._delete_partition(state, s, b, new)
                    elif cur[R_LEADER] == b and rec[C_LEADER] == b:
                        if cur[R_LE] == new[R_LE]:
                            self._remain_leader(state, s, b, new)
                        else:
                            self._become_leader(state, s, b, new, is_new_leader)
                    elif cur[R_LEADER] != b and rec[C_LEADER] == b:
                        self._become_leader(state, s, b, new, is_new_leader)
                    elif in_new and rec[C_LEADER] != NO_LEADER:
                        if new[R_LE] == cur[R_LE] and cur[R_LEADER] != b and new[R_LEADER] != b:
                            pass  # RemainFollower
                        else:
                            self._become_follower(state, s, b, new)
                    elif in_new:
                        self._wait_for_leader(state, s, b, new)
                    else:
                        continue  # the OTHER arm's guard is false: no successor
                t = tuple(s)
                for _ in range(times):
                    yield (b, md_offset), t

    # --- AlterPartition

    def _follower_caught_up(
        self, state: tuple, b: int, f: int, leo: int, curr: int, timed_out: int
    ) -> bool:
        if curr >> f & 1:
            return not timed_out >> f & 1
        return (
            leo != NIL
            and (leo >= self._hwm(state, b) or "isr-hwm" in self.drop)
            and (leo >= state[P_LESO][b - 1] or "isr-leso" in self.drop)
        )

    def _do_send_ap(self, state: tuple, b: int, timed_out: int) -> tuple[tuple, int] | None:
        if timed_out >> b & 1:
            return None
        md = state[P_MD][b - 1]
        curr = md[R_ISR]
        rs = state[P_RS][b - 1]
        proposed = 0
        for b1 in self.members[md[R_REPLICAS]]:
            if b1 == b or self._follower_caught_up(state, b, b1, rs[b1 - 1][0], curr, timed_out):
                proposed |= 1 << b1
        if proposed == curr:
            return None
        isr_and_epochs = tuple(
            (b1, state[B_STATE][b - 1][1] if b1 == b else 0 if curr >> b1 & 1 else rs[b1 - 1][1])
            for b1 in self.members[proposed]
        )
        req = (
            AP_REQ,
            proposed,
            isr_and_epochs,
            b,
            md[R_LE],
            md[R_PE],
            state[B_STATE][b - 1][1],
            CONTROLLER,
            b,
        )
        # __AvoidCycle: never sent, or sent and the controller would now accept it. Its second
        # disjunct has PreviouslySent (itself a disjunction) as a conjunct, which TLC splits:
        # one branch per set (messages, messages_discard) that holds the request.
        times = (req in state[MSGS]) + (req in state[DISCARD])
        if times and self._validate_ap(state, b, req) != NIL:
            return None
        times = max(times, 1)
        s = list(state)
        s[MSGS] = self._msgs_add(state[MSGS], req)
        s[P_MD] = _setb(state[P_MD], b, _set(md, R_MAXIMAL, proposed | curr))
        s[P_PAP] = _setb(state[P_PAP], b, (md[R_PE] + 1, req))
        if curr & ~proposed:
            s[AUX_CTRS] = _set(state[AUX_CTRS], SHRINK, state[AUX_CTRS][SHRINK] + 1)
        return tuple(s), times

    def _SendAlterPartitionRequest(self, state: tuple) -> Iterator[tuple[tuple, tuple]]:
        for b in self.brokers:
            if (
                state[B_STATE][b - 1][0] != RUNNING
                or self._pending_ap(state, b)
                or state[P_STATUS][b - 1] != LEADER
            ):
                continue
            if state[AUX_CTRS][SHRINK] < self.shrink:
                isr = self.members[state[P_MD][b - 1][R_ISR]]
                for k in range(len(isr) + 1):
                    for combo in combinations(isr, k):
                        timed_out = sum(1 << x for x in combo)
                        if timed_out >> b & 1:
                            continue
                        out = self._do_send_ap(state, b, timed_out)
                        if out is not None:
                            for _ in range(out[1]):
                                yield (b, timed_out), out[0]
            else:
                out = self._do_send_ap(state, b, 0)
                if out is not None:
                    for _ in range(out[1]):
                        yield (b, 0), out[0]

    def _reassignment_in_progress(self, md: tuple) -> bool:
        return md[C_ADDING] != 0 or md[C_REMOVING] != 0

    def _ap_new_md(self, state: tuple, m: tuple) -> tuple:
        md = state[CON_PM]
        final_replicas = md[C_REPLICAS] & ~md[C_REMOVING]
        final_isr = m[1] & ~md[C_REMOVING]
        complete = (
            self._reassignment_in_progress(md)
            and md[C_ADDING] & ~final_isr == 0
            and _popcount(final_isr) >= self.min_isr
        )
        if complete:
            return (final_replicas, final_isr, md[C_LE] + 1, md[C_PE] + 1, 0, 0, 0)
        return (md[C_REPLICAS], m[1], md[C_LE], md[C_PE] + 1, md[C_ADDING], md[C_REMOVING], 0)

    def _ReceiveAlterPartitionRequest(self, state: tuple) -> Iterator[tuple[tuple, tuple]]:
        md = state[CON_PM]
        for b in self.brokers:
            for m in state[MSGS]:
                if m[0] != AP_REQ or m[8] != b:
                    continue
                error = self._validate_ap(state, b, m)
                if error == NIL:
                    replicas, isr, le, pe, adding, removing, elr = self._ap_new_md(state, m)
                    for new_leader in self.members[isr]:
                        if (
                            isr >> md[C_LEADER] & 1
                            and md[C_LEADER] != NO_LEADER
                            and new_leader != md[C_LEADER]
                        ):
                            continue
                        s = list(state)
                        s[CON_PM], s[CON_LOG] = self._apply_change(
                            state, replicas, new_leader, isr, le, pe, adding, removing, elr
                        )
                        self._reply(
                            s,
                            m,
                            (AP_RESP, NIL, m, replicas, isr, new_leader, le, pe, b, CONTROLLER),
                        )
                        yield (b,), tuple(s)
                else:
                    s = list(state)
                    self._reply(s, m, (AP_RESP, error, m, b, CONTROLLER))
                    yield (b,), tuple(s)

    def _commit_partition_change(self, state: tuple, s: list, b: int, md: tuple) -> None:
        s[P_MD] = _setb(state[P_MD], b, md)
        self._hwm_on_partition_change(state, s, b, md)

    def _ReceiveAlterPartitionResponse(self, state: tuple) -> Iterator[tuple[tuple, tuple]]:
        for b in self.brokers:
            if (
                state[B_STATE][b - 1][0] != RUNNING
                or state[P_STATUS][b - 1] != LEADER
                or not self._pending_ap(state, b)
            ):
                continue
            md = state[P_MD][b - 1]
            for m in state[MSGS]:
                if m[0] != AP_RESP or m[-2] != b or state[P_PAP][b - 1][1] != m[2]:
                    continue
                if m[1] == NIL and not (m[7] > md[R_PE] and m[6] == md[R_LE]):
                    continue
                s = list(state)
                if m[1] == NIL:
                    self._commit_partition_change(state, s, b, (m[3], m[4], m[4], m[5], m[6], m[7]))
                else:
                    self._commit_partition_change(state, s, b, _set(md, R_MAXIMAL, md[R_ISR]))
                s[P_PAP] = _setb(state[P_PAP], b, NO_PAP)
                self._discard(s, m)
                yield (b,), tuple(s)

    def _reassign_new_md(self, md: tuple, adding: int, removing: int) -> tuple:
        grow = md[C_REPLICAS] | adding
        final_replicas = grow & ~removing
        final_isr = md[C_ISR] & ~removing
        complete = (
            adding & ~final_isr == 0
            and _popcount(final_isr) >= self.min_isr
            and final_replicas != 0
        )
        if complete:
            return (final_replicas, final_isr, md[C_LE] + 1, md[C_PE] + 1, 0, 0, 0)
        return (grow, md[C_ISR], md[C_LE], md[C_PE] + 1, adding, removing, 0)

    def _PerformPartitionReassignment(self, state: tuple) -> Iterator[tuple[tuple, tuple]]:
        md = state[CON_PM]
        if state[AUX_CTRS][REASSIGN] >= self.reassign or self._reassignment_in_progress(md):
            return
        masks = range(0, self.all_mask + 1, 2)  # every subset of the brokers (bits 1..B)
        for adding in masks:
            for removing in masks:
                if adding == 0 and removing == 0:
                    continue
                if (
                    _popcount(md[C_REPLICAS]) + _popcount(adding) - _popcount(removing)
                    < self.min_isr
                ):
                    continue
                if adding & md[C_REPLICAS] or removing & ~md[C_REPLICAS]:
                    continue
                replicas, isr, le, pe, add, rem, elr = self._reassign_new_md(md, adding, removing)
                # ValidReassignment's first conjunct is a disjunction TLC splits: twice when both
                # sets are non-empty.
                times = (adding != 0) + (removing != 0)
                for new_leader in self.members[isr]:
                    if (
                        isr >> md[C_LEADER] & 1
                        and md[C_LEADER] != NO_LEADER
                        and new_leader != md[C_LEADER]
                    ):
                        continue
                    s = list(state)
                    s[CON_PM], s[CON_LOG] = self._apply_change(
                        state, replicas, new_leader, isr, le, pe, add, rem, elr
                    )
                    s[AUX_CTRS] = _set(state[AUX_CTRS], REASSIGN, state[AUX_CTRS][REASSIGN] + 1)
                    t = tuple(s)
                    for _ in range(times):
                        yield (adding, removing), t

    # --- fetch

    def _converged(self, state: tuple, leader: int, follower: int) -> bool:
        dl, df = state[P_DATA][leader - 1], state[P_DATA][follower - 1]
        rs = state[P_RS][leader - 1][follower - 1]
        return (
            dl[2] == df[2]
            and dl[1] == df[1]
            and rs[0] == df[2]
            and rs[1] == state[B_STATE][follower - 1][1]
        )

    def _SendFetchRequest(self, state: tuple) -> Iterator[tuple[tuple, tuple]]:
        for frm in self.brokers:
            if state[B_STATE][frm - 1][0] != RUNNING:
                continue
            md = state[P_MD][frm - 1]
            for to in self.brokers:
                if frm == to:
                    continue
                part, pending = state[B_FETCH][frm - 1][to - 1]
                if part is None or pending or md[R_LEADER] != to or self._converged(state, to, frm):
                    continue
                s = list(state)
                req = (FETCH_REQ, state[B_STATE][frm - 1][1], md[R_LE], part[0], part[1], to, frm)
                s[MSGS] = self._msgs_add(state[MSGS], req)
                row = _setb(state[B_FETCH][frm - 1], to, ((part[0], part[1], False), True))
                s[B_FETCH] = _setb(state[B_FETCH], frm, row)
                yield (frm, to), tuple(s)

    def _ReceiveFetchRequest(self, state: tuple) -> Iterator[tuple[tuple, tuple]]:
        for b in self.brokers:
            if state[B_STATE][b - 1][0] != RUNNING:
                continue
            md = state[P_MD][b - 1]
            for m in state[MSGS]:
                if m[0] != FETCH_REQ or m[5] != b:
                    continue
                _, m_be, m_le, m_fo, m_lfe, _, src = m
                s = list(state)
                if state[P_STATUS][b - 1] != LEADER or md[R_LE] != m_le:
                    err = (
                        UNKNOWN_LEADER_EPOCH
                        if md[R_LE] < m_le
                        else FENCED_LEADER_EPOCH
                        if md[R_LE] > m_le
                        else NOT_LEADER_OR_FOLLOWER
                    )
                    resp = (FETCH_RESP, err, md[R_LE], m_fo, self._hwm(state, b), (), (), src, b)
                    self._reply(s, m, resp)
                    yield (b,), tuple(s)
                    continue
                last = self._last_offset_for_epoch(state, b, m_lfe, True)
                if last[1] is None and not last[0] < m_lfe:
                    raise ValueError("LastOffsetForEpoch gave Nil (TLC stops here too)")
                if last[0] < m_lfe or last[1] < m_fo:
                    resp = (FETCH_RESP, NIL, md[R_LE], m_fo, self._hwm(state, b), last, (), src, b)
                    self._reply(s, m, resp)
                    yield (b,), tuple(s)
                    continue
                rs_b = _setb(state[P_RS][b - 1], src, (m_fo, m_be))
                old = self._hwm(state, b)
                new = self._commit_offset(state, b, md[R_MAXIMAL], self._leo(state, b), rs_b) + 1
                self._maybe_advance_hwm(state, s, b, md[R_ISR], old, new, True)
                s[P_RS] = _setb(state[P_RS], b, rs_b)
                log = self._log(state, b)
                records = (log[m_fo - 1],) if m_fo < self._leo(state, b) else ()
                resp = (FETCH_RESP, NIL, md[R_LE], m_fo, s[P_DATA][b - 1][1], (), records, src, b)
                self._reply(s, m, resp)
                yield (b,), tuple(s)

    def _truncate_point(self, state: tuple, b: int, div: tuple) -> int:
        local = self._last_offset_for_epoch(state, b, div[0], False)
        if local[0] != div[0] or (local[1] is not None and local[1] < div[1]):
            t = local[1]
        else:
            if local[1] is None:
                raise ValueError("LastOffsetForEpoch gave Nil (TLC stops here too)")
            t = div[1]
        if t is None:
            raise ValueError("truncation point Nil (TLC stops here too)")
        return t

    def _ReceiveFetchResponse(self, state: tuple) -> Iterator[tuple[tuple, tuple]]:
        for b in self.brokers:
            if state[B_STATE][b - 1][0] != RUNNING:
                continue
            for m in state[MSGS]:
                if m[0] != FETCH_RESP or m[7] != b:
                    continue
                src = m[8]
                part, pending = state[B_FETCH][b - 1][src - 1]
                if not pending:
                    continue
                _, err, m_le, m_fo, m_hwm, div, records, _, _ = m
                s = list(state)
                row = state[B_FETCH][b - 1]
                stale = part is not None and (part[0] != m_fo or state[P_MD][b - 1][R_LE] != m_le)
                if part is None or (stale and "fetch-response" not in self.drop):
                    row = _setb(row, src, (part, False))
                elif err != NIL:
                    row = _setb(row, src, ((part[0], part[1], True), False))
                elif div:
                    t = self._truncate_point(state, b, div)
                    log = self._log(state, b)
                    hwm = self._hwm(state, b)
                    after = (log[: t - 1], hwm, t) if t > 1 else ((), hwm, 1)
                    s[P_DATA] = _setb(state[P_DATA], b, after)
                    row = _setb(
                        row, src, ((after[2], after[0][-1][0] if after[0] else 0, False), False)
                    )
                else:
                    log = self._log(state, b)
                    new_leo = len(log) + len(records) + 1
                    lfe = records[-1][0] if records else part[1]
                    hwm = m_hwm if m_hwm <= new_leo else self._hwm(state, b)
                    s[P_DATA] = _setb(state[P_DATA], b, (log + records, hwm, new_leo))
                    row = _setb(row, src, ((new_leo, lfe, False), False))
                s[B_FETCH] = _setb(state[B_FETCH], b, row)
                self._discard(s, m)
                yield (b,), tuple(s)

    # --- writes and shutdowns

    def _WriteRecordToLeader(self, state: tuple) -> Iterator[tuple[tuple, tuple]]:
        for b in self.brokers:
            if state[B_STATE][b - 1][0] != RUNNING or state[P_STATUS][b - 1] != LEADER:
                continue
            md = state[P_MD][b - 1]
            if _popcount(md[R_MAXIMAL]) < self.min_isr:
                continue
            for v in range(self.V):
                if state[INV_SENT] >> v & 1:
                    continue
                leo = self._leo(state, b)
                new_leo = leo + 1
                log = self._log(state, b) + ((md[R_LE], leo, v),)
                old = self._hwm(state, b)
                new = self._commit_offset(state, b, md[R_MAXIMAL], new_leo, state[P_RS][b - 1]) + 1
                if not self._can_advance(state, b, md[R_ISR], old, new):
                    new = old
                s = list(state)
                s[P_DATA] = _setb(state[P_DATA], b, (log, max(new, old), new_leo))
                if new > old:
                    self._update_hwm_inv(state, s, b, old, new, True)
                s[INV_SENT] = state[INV_SENT] | 1 << v
                if state[AUX_FLO][b - 1] == INT_MAX:
                    s[AUX_FLO] = _setb(state[AUX_FLO], b, leo)
                yield (b, v), tuple(s)

    def _unclean_allowed(self, state: tuple, b: int) -> bool:
        isr = state[CON_PM][C_ISR]
        return not (self.avoid_lrs and isr >> b & 1 and _popcount(isr) == 1)

    def _shutdown(
        self, state: tuple, b: int, dirty: bool, kept_epoch: int = 0
    ) -> Iterator[tuple[tuple, tuple]]:
        for new_unfenced, change in self._handle_fenced(state, b):
            s = list(state)
            s[B_STATE] = _setb(
                state[B_STATE],
                b,
                (OFFLINE_DIRTY if dirty else OFFLINE_CLEAN, kept_epoch, 0, False),
            )
            self._drop_fetch_sessions(state, s, b)
            s[P_STATUS] = _setb(state[P_STATUS], b, NIL)
            if dirty:
                s[P_DATA] = _setb(state[P_DATA], b, EMPTY_DATA)
                s[P_LESO] = _setb(state[P_LESO], b, NIL)
            self._reset_all_follower_state(s, b)
            s[P_PAP] = _setb(state[P_PAP], b, NO_PAP)
            ctr = UNCLEAN if dirty else CLEAN
            s[AUX_CTRS] = _set(state[AUX_CTRS], ctr, state[AUX_CTRS][ctr] + 1)
            if state[P_STATUS][b - 1] == LEADER and self._hwm(state, b) < self._leo(state, b):
                self._fail_pending_writes(state, s, b)
            s[CON_UNFENCED] = new_unfenced
            self._put_change(s, change)
            reg = state[CON_REG][b - 1]
            s[CON_REG] = _setb(state[CON_REG], b, (FENCED, reg[1], reg[2]))
            s[AUX_FLO] = _setb(state[AUX_FLO], b, INT_MAX)
            yield (b,), tuple(s)

    def _UncleanShutdown(self, state: tuple) -> Iterator[tuple[tuple, tuple]]:
        if state[AUX_CTRS][UNCLEAN] >= self.unclean:
            return
        for b in self.brokers:
            if state[B_STATE][b - 1][0] in (
                OFFLINE_CLEAN,
                OFFLINE_DIRTY,
            ) or not self._unclean_allowed(state, b):
                continue
            yield from self._shutdown(state, b, True)

    def _CleanShutdown(self, state: tuple) -> Iterator[tuple[tuple, tuple]]:
        if state[AUX_CTRS][CLEAN] >= self.clean:
            return
        for b in self.brokers:
            if state[B_STATE][b - 1][0] in (OFFLINE_CLEAN, OFFLINE_DIRTY):
                continue
            yield from self._shutdown(state, b, False)

    # ------------------------------------------------------------------ properties

    def _is_non_stale_leader(self, state: tuple, b: int) -> bool:
        return state[P_STATUS][b - 1] == LEADER and state[P_MD][b - 1][R_LE] == state[CON_PM][C_LE]

    def ReplicationQuorumSupersetProperty(self, state: tuple) -> bool:
        con_isr = state[CON_PM][C_ISR]
        for b in self.brokers:
            if not self._is_non_stale_leader(state, b):
                continue
            md = state[P_MD][b - 1]
            if not self._pending_ap(state, b) and md[R_MAXIMAL] != md[R_ISR]:
                return False
            if con_isr & ~md[R_MAXIMAL]:
                return False
        return True

    def LeaderCandidateCompletenessProperty(self, state: tuple) -> bool:
        thwm = state[INV_THWM]
        if thwm <= 1:
            return True
        return not any(
            self._leo(state, b) < thwm and state[B_STATE][b - 1][0] == RUNNING
            for b in self.members[state[CON_PM][C_ISR]]
        )

    def LeaderCompletenessProperty(self, state: tuple) -> bool:
        thwm = state[INV_THWM]
        if thwm <= 1:
            return True
        ldr = state[CON_PM][C_LEADER]
        if ldr == NO_LEADER or state[B_STATE][ldr - 1][0] != RUNNING:
            return True
        if self._leo(state, ldr) < thwm:
            return False
        have = 0
        for rec in self._log(state, ldr):
            have |= 1 << rec[2]
        return state[INV_POS] & ~have == 0

    def LogMatchingProperty(self, state: tuple) -> bool:
        for offset in range(1, self.V + 1):
            vals = {
                state[P_DATA][b - 1][0][offset - 1][2]
                for b in self.brokers
                if state[P_DATA][b - 1][2] > offset and state[P_DATA][b - 1][1] > offset
            }
            if len(vals) > 1:
                return False
        return True

    def MetadataLogMatchingProperty(self, state: tuple) -> bool:
        # Brokers' metadata logs are stored as prefix lengths of the controller's: this holds by
        # construction, and it checks that the prefix is no longer than the controller's log.
        return all(k <= len(state[CON_LOG]) for k in state[B_MDLEN])

    def NoCommittedRecordLostGlobally(self, state: tuple) -> bool:
        have = 0
        for b in self.brokers:
            for rec in self._log(state, b):
                have |= 1 << rec[2]
        return state[INV_POS] & ~have == 0

    def ConsistentReadProperty(self, state: tuple) -> bool:
        consumed = state[INV_CONSUMED]
        for b in self.brokers:
            if self._is_non_stale_leader(state, b):
                log = self._log(state, b)
                if len(log) < len(consumed) or log[: len(consumed)] != consumed:
                    return False
        return True

    PROPERTY_NAMES = (
        "LeaderCompletenessProperty",
        "LeaderCandidateCompletenessProperty",
        "ReplicationQuorumSupersetProperty",
        "LogMatchingProperty",
        "MetadataLogMatchingProperty",
        "ConsistentReadProperty",
        "NoCommittedRecordLostGlobally",
    )

    def _properties(self) -> list[Property]:
        return [Property(name, "always", getattr(self, name)) for name in self.PROPERTY_NAMES]
