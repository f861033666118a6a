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
from .trace import LamportClock, event

RETRIABLE = {
    m.OUT_OF_ORDER_SEQUENCE_NUMBER,  # after ProducerBumpEpoch (KIP-360), or a later batch's
    m.NOT_LEADER,
    m.NOT_ENOUGH_REPLICAS,
    m.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
    m.REQUEST_TIMED_OUT,
    # (idempotent only: an attempt made before a bump, answered after it; the spec's
    # ProducerRetry retries it, Kafka's canRetry too for a batch whose sequence was reset)
    m.INVALID_PRODUCER_EPOCH,
}
MAX_IN_FLIGHT = 5  # idempotent: max.in.flight.requests.per.connection (at most 5, KIP-98)


@dataclass
class _Pending:
    tp: TP
    records: tuple[tuple[str, str], ...]
    attempts: int = 1
    base_sequence: int = -1  # idempotent: the batch's sequence, the same on every retry
    # idempotent (``ProducerClient._drain``): the broker its outstanding attempt went to (-1:
    # none), whether a leader took an attempt (an answer other than NOT_LEADER), whether it
    # waits to be sent again, and whether its sequence was rewritten by a bump since its
    # outstanding attempt (Kafka's ``sequenceHasBeenReset``)
    broker: int = -1
    delivered: bool = False
    retrying: bool = False
    ready: bool = False
    reset: bool = False


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
    # idempotent: per partition, the highest sequence acknowledged in this epoch (Kafka's
    # ``lastAckedSequence``; -1 none): OUT_OF_ORDER_SEQUENCE_NUMBER to the batch after it is
    # the one that bumps the epoch (``TransactionManager.isNextSequence``)
    last_acked: dict[TP, int] = field(default_factory=dict)
    # idempotent: the producer's own events (traces/FORMAT.md: ProducerCompleteBatch,
    # ProducerBumpEpoch) on its Lamport clock, which the runtime merges with every answer's
    clock: LamportClock = field(default_factory=LamportClock)
    events: list[dict[str, Any]] = field(default_factory=list)  # taken by the runtime
    now_ms: int = 0  # the runtime's time, for the events' time_ms
    _corr: int = 0

    @property
    def idempotent(self) -> bool:
        return self.producer_id >= 0 and self.acks != 0

    def send(self, tp: TP, records: list[tuple[str, str]]) -> list[Any]:
        if self.idempotent:
            self._corr += 1
            self.pending[self._corr] = _Pending(tp, tuple(records), attempts=0, ready=True)
            return self._drain()
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
        if self.idempotent:
            return self._on_response_idempotent(resp, p)
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
        if self.idempotent:
            out: list[Any] = []
            if p is not None and int(attempt_s) == p.attempts:
                if kind == "timeout" and p.broker >= 0:
                    # the request timed out: the client closes the connection, its answer is
                    # lost (the spec's ProducerRetry of a batch whose answer it never took in)
                    p.broker = -1
                    out = self._retry(corr, m.REQUEST_TIMED_OUT)
                elif kind == "retry" and p.retrying:
                    p.ready = True
            return out + self._drain()
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
        if not self.idempotent and (not mine or mine[0][1] != corr):
            return
        if self.idempotent and (p.reset or p.base_sequence != self.last_acked.get(p.tp, -1) + 1):
            return  # not the batch it expects next, or answered for a rewritten sequence
        self.producer_epoch += 1
        self.sequences = {}
        self.last_acked = {}
        for c in sorted(self.pending, key=lambda c: self.pending[c].base_sequence):
            q = self.pending[c]
            if q.base_sequence >= 0:
                q.base_sequence = self.sequences.get(q.tp, 0)
                self.sequences[q.tp] = q.base_sequence + len(q.records)
                q.reset = q.broker >= 0  # an attempt still out: its answer is for the old one
        if self.idempotent:
            self._event("ProducerBumpEpoch", p)

    def _retry(self, corr: int, err: str) -> list[Any]:
        p = self.pending[corr]
        if err == m.OUT_OF_ORDER_SEQUENCE_NUMBER:
            self._bump(corr)
        if self.idempotent and err in RETRIABLE and p.attempts <= self.max_retries:
            p.retrying, p.ready, p.reset = True, False, False
            return [m.SetTimer(f"retry:{corr}:{p.attempts}", self.retry_backoff_ms)]
        if err not in RETRIABLE or p.attempts > self.max_retries:
            del self.pending[corr]
            for rid, _v in p.records:
                if rid not in self.acked:
                    self.failed[rid] = err
            return []
        p.attempts += 1
        return [m.SetTimer(f"retry:{corr}:{p.attempts}", self.retry_backoff_ms)]

    # ---- the idempotent producer (R6, R15; the spec's --idempotence) -----------------------
    def _on_response_idempotent(self, resp: m.ProduceResponse, p: _Pending) -> list[Any]:
        corr = resp.correlation_id
        p.broker = -1
        if resp.error != m.NOT_LEADER:
            p.delivered = True  # a leader took it (the spec's ProducerSend happened)
        if resp.error == m.NONE:
            # ProducerCompleteBatch: the batch is done (``Sender.completeBatch``), its sequence
            # the last acknowledged if it is the highest (``maybeUpdateLastAckedSequence``)
            del self.pending[corr]
            self.last_acked[p.tp] = max(self.last_acked.get(p.tp, -1), p.base_sequence)
            for i, (rid, _v) in enumerate(p.records):
                self.acked[rid] = (p.tp, resp.base_offset + i)
                self.failed.pop(rid, None)
            self._event("ProducerCompleteBatch", p)
            return self._drain()
        return self._retry(corr, resp.error) + self._drain()

    def _drain(self) -> list[Any]:
        """Send what may go now, as Kafka 3.9's ``RecordAccumulator.drain`` and the spec's
        idempotent producer (spec/actions/producer.py) allow, per partition:

        * one request at a time per broker: Kafka's broker reads one request of a connection
          at a time (``SocketServer`` mutes it until the answer is sent), so a later request
          waits behind an acks=all one in the purgatory; here the client waits instead, which
          makes the spec's rules on a connection's answers (they come in order; an error or a
          bump means those not taken in were lost) hold trivially;
        * a batch being retried goes alone, and only the first in flight (the lowest
          sequence: ``shouldStopDrainBatchesForPartition``, the spec's ProducerRetry);
        * a new batch gets its sequence when it is sent (``setProducerState`` at drain), at
          most MAX_IN_FLIGHT in flight, and only once every batch before it reached a leader
          (answered other than NOT_LEADER): a first attempt lost on the way (a crashed
          broker, a lost message) would leave a gap in the sequences that the spec's
          producer, whose every send reaches a replica that presumes to lead, never has."""
        out: list[Any] = []
        busy = {q.broker for q in self.pending.values() if q.broker >= 0}
        for tp in sorted({q.tp for q in self.pending.values()}):
            leader = self.metadata.get(tp, -1)
            mine = [(c, q) for c, q in self.pending.items() if q.tp == tp]
            sent = sorted((q.base_sequence, c) for c, q in mine if q.base_sequence >= 0)
            if leader < 0 or leader in busy:
                waiting = [c for c, q in mine if q.ready]
                if waiting:  # try again later (the metadata may change meanwhile)
                    q = self.pending[waiting[0]]
                    out.append(
                        m.SetTimer(f"retry:{waiting[0]}:{q.attempts}", self.retry_backoff_ms)
                    )
                continue
            pick = None
            if sent:
                first = self.pending[sent[0][1]]
                if first.ready:
                    pick = sent[0][1]
                elif any(self.pending[c].retrying for _s, c in sent):
                    continue  # a retry waits for the first batch (sent one at a time)
            if pick is None:
                if len(sent) >= MAX_IN_FLIGHT or not all(
                    self.pending[c].delivered for _s, c in sent
                ):
                    continue
                new = [c for c, q in mine if q.base_sequence < 0]
                if not new:
                    continue
                pick = new[0]
                q = self.pending[pick]
                q.base_sequence = self.sequences.get(tp, 0)
                self.sequences[tp] = q.base_sequence + len(q.records)
            out += self._send_attempt(pick, leader)
            busy.add(leader)
        return out

    def _send_attempt(self, corr: int, leader: int) -> list[Any]:
        """An attempt of batch ``corr`` to ``leader``, under a new correlation id (Kafka's
        every request has its own): a late answer to an earlier attempt, whose connection was
        closed, is never taken for this one."""
        p = self.pending.pop(corr)
        self._corr += 1
        corr = self._corr
        self.pending[corr] = p
        p.attempts += 1
        p.broker, p.ready, p.retrying, p.reset = leader, False, False, False
        req = m.ProduceRequest(
            self.client_id, corr, p.tp[0], p.tp[1], self.acks, p.records, self.producer_id,
            p.base_sequence, self.producer_epoch,
        )  # fmt: skip
        return [
            m.SetTimer(f"timeout:{corr}:{p.attempts}", self.request_timeout_ms),
            m.Send(leader, req),
        ]

    def _event(self, action: str, p: _Pending) -> None:
        """One of the producer's own events (node ``producer``), kept in ``events`` for the
        runtime to record."""
        self.events.append(
            event(
                self.clock.tick(),
                "producer",
                action,
                {
                    "record": p.records[0][0],
                    "producer_epoch": self.producer_epoch,
                    "base_sequence": p.base_sequence,
                },
                now_ms=self.now_ms,
                tp=p.tp,
            )
        )

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
