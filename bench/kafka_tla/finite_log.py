"""FiniteReplicatedLog: the per-replica logs of the public spec, as interned log ids.

In the TLA+ module a log is ``[endOffset : 0..LogSize, records : [Offsets -> LogRecords \\cup
{Nil}]]`` whose records at and above ``endOffset`` are always ``Nil`` (``Init``, ``Append`` and
``TruncateTo`` keep it so; its ``TypeOk`` says so). A log is therefore exactly its written prefix,
a sequence of at most ``LogSize`` records. There are few such sequences (43 for the benchmark
bounds), so each one gets a small int id here and every operator the specs apply to logs becomes a
table lookup: the model's states stay flat tuples of ints and its hot path does no list work.

Records are ``[id : 0..MaxRecords-1, epoch : 0..MaxLeaderEpoch]``; a record is the int
``id * (MaxLeaderEpoch + 1) + epoch``.
"""

from __future__ import annotations

NIL = -1  # the spec's Nil: the value of an unwritten offset (and of an unset leader epoch)


class FiniteReplicatedLog:
    """Every log of at most ``log_size`` records drawn from LogRecords, with lookup tables.

    Single-log operators are precomputed for every log; operators of two logs (matching offsets)
    are computed on first use and cached, since most pairs of logs never meet in a reachable
    state.
    """

    def __init__(self, log_size: int, max_records: int, max_leader_epoch: int):
        self.log_size = log_size  # LogSize: Offsets == 0 .. LogSize - 1
        self.epochs = max_leader_epoch + 1
        self.n_records = max_records * self.epochs
        self.record_id = [r // self.epochs for r in range(self.n_records)]
        self.record_epoch = [r % self.epochs for r in range(self.n_records)]
        # All logs, shortest first: id 0 is EmptyLog (Init).
        self.records: list[tuple[int, ...]] = [()]
        level: list[tuple[int, ...]] = [()]
        for _ in range(log_size):
            level = [log + (r,) for log in level for r in range(self.n_records)]
            self.records.extend(level)
        self.index = {log: i for i, log in enumerate(self.records)}
        self.count = len(self.records)
        self.end = [len(log) for log in self.records]  # GetEndOffset
        # GetRecordAtOffset over all of Offsets: Nil at and above endOffset.
        self.at = [log + (NIL,) * (log_size - len(log)) for log in self.records]
        # Append(replica, record, endOffset): None when IsFull.
        self.append: list[list[int | None]] = [
            [self.index[log + (r,)] if len(log) < log_size else None for r in range(self.n_records)]
            for log in self.records
        ]
        # TruncateTo(replica, k) for k in 0..LogSize: None unless k <= endOffset.
        self.truncate: list[list[int | None]] = [
            [self.index[log[:k]] if k <= len(log) else None for k in range(log_size + 1)]
            for log in self.records
        ]
        # Epoch of the latest record (GetLatestRecord(replica).epoch), NIL when IsEmpty.
        self.latest_epoch = [self.record_epoch[log[-1]] if log else NIL for log in self.records]
        self._first_non_matching: dict[int, int] = {}
        self._agree: dict[int, int] = {}

    def first_non_matching_from_tail(self, leader: int, follower: int) -> int:
        """Kip279's FirstNonMatchingOffsetFromTail(leader, follower): 0 if the leader's log is
        empty or no offset of the follower's log holds the same record on the leader, else one
        past the largest offset that does (MatchingOffsets is a set: gaps do not matter)."""
        key = leader * self.count + follower
        v = self._first_non_matching.get(key)
        if v is None:
            lead, foll = self.records[leader], self.records[follower]
            if not lead:
                v = 0
            else:
                matching = [o for o, rec in enumerate(foll) if o < len(lead) and lead[o] == rec]
                v = max(matching) + 1 if matching else 0
            self._first_non_matching[key] = v
        return v

    def agree_below(self, a: int, b: int) -> int:
        """The first offset at which ``\\E record : HasEntry(a, record, o) /\\ HasEntry(b, record,
        o)`` fails. WeakIsr/StrongIsr ask that it hold for every o in 0..hw-1, i.e. that hw is at
        most this."""
        key = a * self.count + b
        v = self._agree.get(key)
        if v is None:
            la, lb = self.records[a], self.records[b]
            v = 0
            while v < len(la) and v < len(lb) and la[v] == lb[v]:
                v += 1
            self._agree[key] = v
        return v

    def lookup_offset_for_epoch(self, leader: int, epoch: int) -> int | None:
        """Kip101's LookupOffsetForEpoch(leader, follower, epoch); None stands for the branches
        that answer the follower's own high watermark (empty leader log, or no larger epoch)."""
        lead = self.records[leader]
        if not lead:
            return None
        if self.record_epoch[lead[-1]] == epoch:
            return len(lead)
        larger = [o for o, rec in enumerate(lead) if self.record_epoch[rec] > epoch]
        return min(larger) if larger else None

    def to_json(self, log: int) -> dict:
        """The TLA+ value: endOffset and the records function, Nil (-1) above endOffset."""
        return {
            "endOffset": self.end[log],
            "records": [
                NIL if r == NIL else {"id": self.record_id[r], "epoch": self.record_epoch[r]}
                for r in self.at[log]
            ],
        }
