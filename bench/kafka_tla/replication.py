"""KafkaReplication: the variables, Init, the shared actions and the ISR properties of the public
spec (with its IdSequence instances and Util's Min/Max), as a model of our checker.

The spec modules (:mod:`.truncate_to_hw`, :mod:`.kip101`, :mod:`.kip279`,
:mod:`.kip320_first_try`, :mod:`.kip320`) subclass :class:`KafkaReplication` and list their
``Next`` as ``NEXT``: names of methods, one per TLA+ action, in the order of the TLA+ disjunction.

State: one flat tuple of ints (offsets in :class:`Layout`), because tuples of ints hash and copy
cheapest and fingerprint identically in every process:

* ``replicaLog[r]``: an interned log id (:mod:`.finite_log`);
* ``replicaState[r]``: ``hw``, ``leaderEpoch`` (Nil = -1), ``leader`` (None = -1) and ``isr``
  (a bitmask over replica indexes), as four runs of n ints;
* ``nextRecordId``, ``nextLeaderEpoch``;
* ``leaderAndIsrRequests``: one slot per leader epoch 0..MaxLeaderEpoch holding that request's
  ``(leader + 1) << n | isr``, or -1 while no request has that epoch. This is exact: the only
  action adding a request (ControllerUpdateIsr) gives it epoch ``nextLeaderEpoch`` and bumps that
  id, so no two requests ever share an epoch and the set is exactly the filled slots;
* ``quorumState``: ``leaderEpoch``, ``leader``, ``isr``.

Enumeration follows TLA+ binding by binding (every witness of every ``\\E``, every disjunct), so
that the number of generated states is comparable with TLC's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, ClassVar

from isr.checker.model import Action, Property

from .finite_log import NIL, FiniteReplicatedLog

NONE = -1  # the spec's None: "no leader" (a replica index otherwise)

Out = list[tuple[Action, tuple]]


class KafkaReplication:
    """The shared part of every public-spec module; not a model by itself (it has no Next)."""

    NEXT: ClassVar[tuple[str, ...]] = ()
    MODULE: ClassVar[str] = "KafkaReplication"
    # Action parameters, for describe_action (request = the request's leader epoch).
    PARAMS: ClassVar[dict[str, tuple[str, ...]]] = {
        "ControllerElectLeader": ("newLeader",),
        "ControllerShrinkIsr": ("replica",),
        "BecomeLeader": ("leaderAndIsrRequest",),
        "LeaderExpandIsr": ("leader", "replica"),
        "LeaderShrinkIsr": ("leader", "replica"),
        "LeaderWrite": ("replica",),
        "LeaderIncHighWatermark": ("leader",),
        "FollowerReplicate": ("follower", "leader"),
    }

    def __init__(
        self, replicas: int = 2, log_size: int = 2, max_records: int = 2, max_leader_epoch: int = 2
    ):
        if replicas < 1 or log_size < 0 or max_records < 0 or max_leader_epoch < 0:
            raise ValueError("replicas >= 1 and non-negative bounds")
        self.n = n = replicas
        self.log_size = log_size
        self.max_records = max_records
        self.max_leader_epoch = max_leader_epoch
        self.log = FiniteReplicatedLog(log_size, max_records, max_leader_epoch)
        self.replicas = range(n)
        self.all_replicas = (1 << n) - 1
        self.bits = [1 << r for r in range(n)]
        # members[mask]: the replicas in an ISR bitmask, in index order.
        self.members = [tuple(r for r in range(n) if mask >> r & 1) for mask in range(1 << n)]
        self.LOG, self.HW, self.EP, self.LDR, self.ISR = 0, n, 2 * n, 3 * n, 4 * n
        self.NRID, self.NLE, self.REQ = 5 * n, 5 * n + 1, 5 * n + 2
        self.QEP = self.REQ + max_leader_epoch + 1
        self.QLDR, self.QISR = self.QEP + 1, self.QEP + 2
        self.width = self.QISR + 1
        self.action_names = list(self.NEXT)
        self._next: list[tuple[int, Callable[[tuple, int, Out], None]]] = [
            (k, getattr(self, name)) for k, name in enumerate(self.NEXT)
        ]
        self.name = f"{self.MODULE}[R={n},LogSize={log_size},MaxRecords={max_records},MaxLeaderEpoch={max_leader_epoch}]"
        self.properties = [
            Property("TypeOk", "always", self.TypeOk, "every variable in its TLA+ type"),
            Property("LeaderInIsr", "always", self.LeaderInIsr, "quorum leader in quorum ISR"),
            Property("WeakIsr", "always", self.WeakIsr, "presumed leader's ISR has its HW prefix"),
            Property(
                "StrongIsr", "always", self.StrongIsr, "quorum ISR has every leader's HW prefix"
            ),
        ]

    # --- encoding helpers ---------------------------------------------------------------------
    def request(self, leader: int, isr: int) -> int:
        return (leader + 1) << self.n | isr

    def request_leader(self, code: int) -> int:
        return (code >> self.n) - 1

    def request_isr(self, code: int) -> int:
        return code & self.all_replicas

    def requests(self, s: tuple) -> Iterator[tuple[int, int, int]]:
        """``leaderAndIsrRequests`` as (leaderEpoch, leader, isr), by epoch."""
        for e in range(s[self.NLE]):
            code = s[self.REQ + e]
            yield e, (code >> self.n) - 1, code & self.all_replicas

    # --- the model protocol -------------------------------------------------------------------
    def init_states(self) -> list[tuple]:
        """Init: empty logs, hw = StartOffset, no leader or epoch anywhere, the quorum ISR is every
        replica, no requests, both id sequences at 0."""
        n, E = self.n, self.max_leader_epoch
        return [
            (0,) * n
            + (0,) * n
            + (NIL,) * n
            + (NONE,) * n
            + (0,) * n
            + (0, 0)
            + (-1,) * (E + 1)
            + (NIL, NONE, self.all_replicas)
        ]

    def successors(self, s: tuple) -> Out:
        out: Out = []
        for k, fn in self._next:
            fn(s, k, out)
        return out

    def within_boundary(self, state: tuple) -> bool:
        return True  # the bounds are the actions' own enabling conditions, as in TLA+

    def canonicalize(self, state: tuple) -> tuple:
        return state  # no symmetry: TLC's counts are without it

    def describe_action(self, action: Action) -> dict[str, Any]:
        kind, args = action
        if kind < 0:
            return {"action": "Init", "args": {}}
        name = self.NEXT[kind]
        params = self.PARAMS[name]
        named = {}
        for p, v in zip(params, args, strict=False):
            if p == "leaderAndIsrRequest":
                named[p] = {"leaderEpoch": v}
            elif p == "disjunct":
                named[p] = v
            else:
                named[p] = self.replica_name(v)
        return {"action": name, "args": named}

    def replica_name(self, r: int) -> str:
        return "NONE" if r == NONE else f"r{r + 1}"

    def isr_json(self, mask: int) -> list[str]:
        return [self.replica_name(r) for r in self.members[mask]]

    def state_to_json(self, s: tuple) -> dict[str, Any]:
        """The TLA+ variables, with replicas named r1..rn as in the TLC config."""
        rn = self.replica_name
        return {
            "replicaLog": {rn(r): self.log.to_json(s[self.LOG + r]) for r in self.replicas},
            "replicaState": {
                rn(r): {
                    "hw": s[self.HW + r],
                    "leaderEpoch": s[self.EP + r],
                    "leader": rn(s[self.LDR + r]),
                    "isr": self.isr_json(s[self.ISR + r]),
                }
                for r in self.replicas
            },
            "nextRecordId": s[self.NRID],
            "nextLeaderEpoch": s[self.NLE],
            "leaderAndIsrRequests": [
                {"leaderEpoch": e, "leader": rn(ldr), "isr": self.isr_json(isr)}
                for e, ldr, isr in self.requests(s)
            ],
            "quorumState": {
                "leaderEpoch": s[self.QEP],
                "leader": rn(s[self.QLDR]),
                "isr": self.isr_json(s[self.QISR]),
            },
        }

    # --- shared operators ---------------------------------------------------------------------
    def ControllerUpdateIsr(self, s: tuple, new_leader: int, new_isr: int) -> tuple | None:
        """LeaderEpochSeq!NextId picks the next epoch (disabled past MaxLeaderEpoch); the new
        quorum state is also added to the request set."""
        e = s[self.NLE]
        if e > self.max_leader_epoch:
            return None
        t = list(s)
        t[self.NLE] = e + 1
        t[self.REQ + e] = (new_leader + 1) << self.n | new_isr
        t[self.QEP] = e
        t[self.QLDR] = new_leader
        t[self.QISR] = new_isr
        return tuple(t)

    def QuorumUpdateLeaderAndIsr(self, s: tuple, leader: int, new_isr: int) -> tuple | None:
        """Only the true leader (quorum leader, presumes leadership, quorum's epoch) may write
        the ISR; it updates the quorum and its own cached ISR, not the epoch."""
        if not (
            s[self.QLDR] == leader
            and s[self.LDR + leader] == leader
            and s[self.EP + leader] == s[self.QEP]
        ):
            return None
        t = list(s)
        t[self.QISR] = new_isr
        t[self.ISR + leader] = new_isr
        return tuple(t)

    def IsFollowerCaughtUp(self, s: tuple, leader: int, follower: int, end_offset: int) -> bool:
        if s[self.LDR + follower] != leader:
            return False
        if end_offset == 0:
            return True
        offset = end_offset - 1
        end = self.log.end
        # \E record \in LogRecords : HasEntry(leader, record, offset): every written record is
        # in LogRecords, so this is just offset < endOffset.
        return end_offset > 0 and offset < end[s[leader]] and offset < end[s[follower]]

    def BecomeFollowerAndTruncateTo(
        self,
        s: tuple,
        leader: int,
        replica: int,
        truncation_offset: int,
        kind: int,
        args: tuple,
        out: Out,
    ) -> None:
        """One successor per request naming ``leader`` with an epoch above the replica's."""
        if leader == replica:
            return
        n = self.n
        ep_r = s[self.EP + replica]
        hw = s[self.HW + replica]
        new_hw = (
            truncation_offset if truncation_offset < hw else hw
        )  # Min({truncationOffset, @.hw})
        if leader == NONE:
            new_log = s[replica]  # UNCHANGED replicaLog
        else:
            new_log = self.log.truncate[s[replica]][truncation_offset]
            if new_log is None:  # TruncateTo needs newEndOffset <= endOffset
                return
        mask = self.all_replicas
        for e in range(ep_r + 1, s[self.NLE]):
            code = s[self.REQ + e]
            if (code >> n) - 1 != leader:
                continue
            t = list(s)
            t[replica] = new_log
            t[self.EP + replica] = e
            t[self.LDR + replica] = leader
            t[self.ISR + replica] = code & mask
            t[self.HW + replica] = new_hw
            out.append(((kind, (*args, e)), tuple(t)))

    # --- shared actions (each appends (action, successor) pairs to out) -----------------------
    def ControllerElectLeader(self, s: tuple, kind: int, out: Out) -> None:
        ql, qisr = s[self.QLDR], s[self.QISR]
        for new_leader in self.members[qisr]:
            if ql != new_leader:
                t = self.ControllerUpdateIsr(s, new_leader, qisr)
                if t is not None:
                    out.append(((kind, (new_leader,)), t))

    def ControllerShrinkIsr(self, s: tuple, kind: int, out: Out) -> None:
        ql, qisr = s[self.QLDR], s[self.QISR]
        for replica in self.replicas:
            bit = 1 << replica
            if ql == replica and qisr == bit:
                t = self.ControllerUpdateIsr(s, NONE, qisr)
            elif ql == replica and qisr != bit:
                t = self.ControllerUpdateIsr(s, NONE, qisr & ~bit)
            elif ql != replica and qisr & bit:
                t = self.ControllerUpdateIsr(s, ql, qisr & ~bit)
            else:
                continue
            if t is not None:
                out.append(((kind, (replica,)), t))

    def BecomeLeader(self, s: tuple, kind: int, out: Out) -> None:
        n, EP = self.n, self.EP
        for e in range(s[self.NLE]):
            code = s[self.REQ + e]
            leader = (code >> n) - 1
            if leader == NONE or not e > s[EP + leader]:
                continue
            t = list(s)
            t[EP + leader] = e
            t[self.LDR + leader] = leader
            t[self.ISR + leader] = code & self.all_replicas
            out.append(((kind, (e,)), tuple(t)))

    def LeaderWrite(self, s: tuple, kind: int, out: Out) -> None:
        rid = s[self.NRID]
        if rid > self.max_records - 1:  # RecordSeq!NextId: id \in 0..MaxRecords-1, id = nextId
            return
        epochs = self.log.epochs
        for replica in self.replicas:
            if s[self.LDR + replica] != replica:
                continue
            record = rid * epochs + s[self.EP + replica]
            new_log = self.log.append[s[replica]][record]
            if new_log is None:  # IsFull
                continue
            t = list(s)
            t[replica] = new_log
            t[self.NRID] = rid + 1
            out.append(((kind, (replica,)), tuple(t)))

    def LeaderShrinkIsr(self, s: tuple, kind: int, out: Out) -> None:
        end = self.log.end
        for leader in self.replicas:
            isr = s[self.ISR + leader]
            end_offset = end[s[leader]]
            for replica in self.members[isr & ~(1 << leader)]:
                if self.IsFollowerCaughtUp(s, leader, replica, end_offset):
                    continue
                t = self.QuorumUpdateLeaderAndIsr(s, leader, isr & ~(1 << replica))
                if t is not None:
                    out.append(((kind, (leader, replica)), t))

    def LeaderExpandIsr(self, s: tuple, kind: int, out: Out) -> None:
        for leader in self.replicas:
            isr = s[self.ISR + leader]
            leader_hw = s[self.HW + leader]
            for replica in self.members[self.all_replicas & ~isr]:
                if not self.IsFollowerCaughtUp(s, leader, replica, leader_hw):
                    continue
                t = self.QuorumUpdateLeaderAndIsr(s, leader, isr | 1 << replica)
                if t is not None:
                    out.append(((kind, (leader, replica)), t))

    def LeaderIncHighWatermark(self, s: tuple, kind: int, out: Out) -> None:
        """Old rule: every ISR member follows the presumed leader and has the offset at the HW
        (\\E offset \\in Offsets: offset = hw, so hw < LogSize); no epoch check."""
        end, LDR = self.log.end, self.LDR
        for leader in self.replicas:
            if s[LDR + leader] != leader:
                continue
            offset = s[self.HW + leader]
            if offset >= self.log_size:
                continue
            if all(
                s[LDR + f] == leader and offset < end[s[f]]
                for f in self.members[s[self.ISR + leader]]
            ):
                t = list(s)
                t[self.HW + leader] = offset + 1
                out.append(((kind, (leader,)), tuple(t)))

    def ReplicateTo(self, s: tuple, leader: int, follower: int) -> int | None:
        """FiniteReplicatedLog!ReplicateTo(leader, follower): the follower's new log, appending
        the leader's record at the follower's end offset (None when disabled)."""
        lg = self.log
        flog = s[follower]
        offset = lg.end[flog]
        if offset >= lg.end[s[leader]]:  # HasEntry(leader, record, offset)
            return None
        return lg.append[flog][lg.at[s[leader]][offset]]  # None when the follower IsFull

    def FollowerReplicate(self, s: tuple, kind: int, out: Out) -> None:
        LDR, HW = self.LDR, self.HW
        end = self.log.end
        for follower in self.replicas:
            leader = s[LDR + follower]
            if leader == NONE or s[LDR + leader] != leader:
                continue
            new_log = self.ReplicateTo(s, leader, follower)
            if new_log is None:
                continue
            new_end = end[s[follower]] + 1
            leader_hw = s[HW + leader]
            t = list(s)
            t[follower] = new_log
            t[HW + follower] = leader_hw if leader_hw < new_end else new_end
            out.append(((kind, (follower, leader)), tuple(t)))

    # --- properties ---------------------------------------------------------------------------
    def TypeOk(self, s: tuple) -> bool:
        """Structural TypeOk: every field in its TLA+ set, and the request slots consistent with
        the epoch sequence (the encoding's own invariant)."""
        n, E = self.n, self.max_leader_epoch
        if len(s) != self.width:
            return False
        if not 0 <= s[self.NLE] <= E + 1 or not 0 <= s[self.NRID] <= self.max_records:
            return False
        logs, lsize, amask = self.log.count, self.log_size, self.all_replicas
        for r in self.replicas:
            if not (
                0 <= s[r] < logs  # an interned log: records in LogRecords, Nil above endOffset
                and 0 <= s[self.HW + r] <= lsize
                and NIL <= s[self.EP + r] <= E
                and NONE <= s[self.LDR + r] < n
                and 0 <= s[self.ISR + r] <= amask
            ):
                return False
        for e in range(E + 1):
            code = s[self.REQ + e]
            if e < s[self.NLE]:
                if code < 0 or not NONE <= (code >> n) - 1 < n:
                    return False
            elif code != -1:
                return False
        return NIL <= s[self.QEP] <= E and NONE <= s[self.QLDR] < n and 0 <= s[self.QISR] <= amask

    def LeaderInIsr(self, s: tuple) -> bool:
        ql = s[self.QLDR]
        return ql != NONE and bool(s[self.QISR] >> ql & 1)

    def _isr_has_prefix(self, s: tuple, isr_of: Callable[[int], int]) -> bool:
        agree = self.log.agree_below
        for r1 in self.replicas:
            if s[self.LDR + r1] != r1:
                continue
            hw = s[self.HW + r1]
            if hw == 0:
                continue
            for r2 in self.members[isr_of(r1)]:
                if hw > agree(s[r1], s[r2]):
                    return False
        return True

    def WeakIsr(self, s: tuple) -> bool:
        """Each presumed leader's own ISR holds its records below its HW."""
        return self._isr_has_prefix(s, lambda r1: s[self.ISR + r1])

    def StrongIsr(self, s: tuple) -> bool:
        """The quorum ISR holds every presumed leader's records below that leader's HW."""
        qisr = s[self.QISR]
        return self._isr_has_prefix(s, lambda r1: qisr)
