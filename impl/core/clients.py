"""Producer and consumer clients, sans-I/O (R5, R6, R15).

The producer sends each batch to the partition's leader as the runtime last told it
(``metadata``), retries retriable errors and time-outs up to message.send.max.retries times
(R6: a retry after a lost reply can duplicate a record, R15), and records the outcome of every
record: acknowledged (with offset) or failed. The consumer reads from the leader below HW.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import messages as m
from .messages import TP

RETRIABLE = {
    m.OUT_OF_ORDER_SEQUENCE_NUMBER,  # after ProducerBumpEpoch (KIP-360), or a later batch's
    m.NOT_LEADER,
    m.NOT_ENOUGH_REPLICAS,
    m.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
    m.REQUEST_TIMED_OUT,
}


@dataclass
class _Pending:
    tp: TP
    records: tuple[tuple[str, str], ...]
    attempts: int = 1
    base_sequence: int = -1  # idempotent: the batch's sequence, the same on every retry


@dataclass
class ProducerClient:
    client_id: str
    acks: int = -1
    max_retries: int = 3
    request_timeout_ms: int = 6_000
    retry_backoff_ms: int = 100
    metadata: dict[TP, int] = field(default_factory=dict)
    pending: dict[int, _Pending] = field(default_factory=dict)
    acked: dict[str, tuple[TP, int]] = field(default_factory=dict)  # record id -> (tp, offset)
    failed: dict[str, str] = field(default_factory=dict)  # record id -> last error
    # Idempotence (KIP-98; Kafka's default since 3.0): a producer id >= 0 and per-partition
    # sequence numbers; a retry resends the same sequence and a leader that holds the batch
    # answers with its offset instead of appending it again. -1: off (the simulation's
    # default, whose traces and sweeps model retries that may duplicate, R15).
    producer_id: int = -1
    sequences: dict[TP, int] = field(default_factory=dict)
    producer_epoch: int = 0  # KIP-360: bumped after OUT_OF_ORDER_SEQUENCE_NUMBER (``_bump``)
    _corr: int = 0

    def send(self, tp: TP, records: list[tuple[str, str]]) -> list[Any]:
        self._corr += 1
        seq = -1
        if self.producer_id >= 0 and self.acks != 0:
            seq = self.sequences.get(tp, 0)
            self.sequences[tp] = seq + len(records)
        self.pending[self._corr] = _Pending(tp, tuple(records), base_sequence=seq)
        return self._transmit(self._corr)

    def _transmit(self, corr: int) -> list[Any]:
        p = self.pending[corr]
        leader = self.metadata.get(p.tp, -1)
        out: list[Any] = [m.SetTimer(f"timeout:{corr}:{p.attempts}", self.request_timeout_ms)]
        if leader >= 0:
            pid = self.producer_id if p.base_sequence >= 0 else -1
            req = m.ProduceRequest(
                self.client_id, corr, p.tp[0], p.tp[1], self.acks, p.records, pid,
                p.base_sequence, self.producer_epoch,
            )  # fmt: skip
            out.append(m.Send(leader, req))
        if self.acks == 0:  # no answer will come: done as soon as sent
            self.pending.pop(corr)
            return out[1:]
        return out

    def on_response(self, resp: m.ProduceResponse) -> list[Any]:
        p = self.pending.get(resp.correlation_id)
        if p is None:
            return []  # a late answer to a request we already retried or gave up
        if resp.error == m.NONE:
            del self.pending[resp.correlation_id]
            for i, (rid, _v) in enumerate(p.records):
                self.acked[rid] = (p.tp, resp.base_offset + i)
                self.failed.pop(rid, None)
            return []
        return self._retry(resp.correlation_id, resp.error)

    def on_timer(self, key: str) -> list[Any]:
        kind, corr_s, attempt_s = key.split(":")
        corr = int(corr_s)
        p = self.pending.get(corr)
        if p is None:
            return []
        if kind == "timeout" and int(attempt_s) == p.attempts:
            return self._retry(corr, m.REQUEST_TIMED_OUT)
        if kind == "retry" and int(attempt_s) == p.attempts:
            return self._transmit(corr)
        return []

    def _bump(self, corr: int) -> None:
        """ProducerBumpEpoch (KIP-360; Kafka's idempotent ``TransactionManager.
        bumpIdempotentEpochAndResetIdIfNeeded``): the leader answered the batch it expects next
        (the lowest sequence in flight for its partition) OUT_OF_ORDER_SEQUENCE_NUMBER, so the
        batches before it are gone from the log: the producer takes a new epoch and its
        sequences start again at 0, its batches in flight rewritten in order (the spec's
        ProducerBumpEpoch; the epoch is the producer's, so every partition's sequences
        restart). An OUT_OF_ORDER answer to a later batch is retried as it is."""
        p = self.pending[corr]
        mine = sorted(
            (q.base_sequence, c)
            for c, q in self.pending.items()
            if q.tp == p.tp and q.base_sequence >= 0
        )
        if not mine or mine[0][1] != corr:
            return
        self.producer_epoch += 1
        self.sequences = {}
        for c in sorted(self.pending, key=lambda c: self.pending[c].base_sequence):
            q = self.pending[c]
            if q.base_sequence >= 0:
                q.base_sequence = self.sequences.get(q.tp, 0)
                self.sequences[q.tp] = q.base_sequence + len(q.records)

    def _retry(self, corr: int, err: str) -> list[Any]:
        p = self.pending[corr]
        if err == m.OUT_OF_ORDER_SEQUENCE_NUMBER:
            self._bump(corr)
        if err not in RETRIABLE or p.attempts > self.max_retries:
            del self.pending[corr]
            for rid, _v in p.records:
                if rid not in self.acked:
                    self.failed[rid] = err
            return []
        p.attempts += 1
        return [m.SetTimer(f"retry:{corr}:{p.attempts}", self.retry_backoff_ms)]

    @property
    def idle(self) -> bool:
        return not self.pending


@dataclass
class ConsumerClient:
    """Reads every partition from offset 0 upward; ``seen`` keeps (tp, offset) -> record id."""

    client_id: str
    metadata: dict[TP, int] = field(default_factory=dict)
    positions: dict[TP, int] = field(default_factory=dict)
    seen: dict[tuple[TP, int], str] = field(default_factory=dict)
    _corr: int = 0

    def poll(self, tp: TP, replica: int | None = None) -> list[Any]:
        """A fetch at the consumer's position, from the leader its metadata names or, KIP-392
        (kraft), from ``replica`` (a preferred read replica)."""
        leader = self.metadata.get(tp, -1) if replica is None else replica
        if leader < 0:
            return []
        self._corr += 1
        req = m.ConsumeRequest(self.client_id, self._corr, tp[0], tp[1], self.positions.get(tp, 0))
        return [m.Send(leader, req)]

    def on_response(self, resp: m.ConsumeResponse) -> int:
        """Returns how many new records arrived."""
        tp = (resp.topic, resp.partition)
        if (
            resp.error == m.OFFSET_OUT_OF_RANGE
            and resp.base_offset == self.positions.get(tp, 0) < resp.log_start
            and resp.broker_id == self.metadata.get(tp, -1)
        ):
            # R12 (kraft): the leader deleted what it would read (DeleteRecords, retention):
            # auto.offset.reset=latest, Kafka's default: its HW (the spec's ConsumerResetOffset;
            # at a follower it goes back to the leader instead)
            self.positions[tp] = resp.high_watermark
            return 0
        if resp.error != m.NONE or resp.base_offset != self.positions.get(tp, 0):
            return 0
        for i, e in enumerate(resp.entries):
            self.seen[(tp, resp.base_offset + i)] = e[1]
        self.positions[tp] = resp.base_offset + len(resp.entries)
        return len(resp.entries)
