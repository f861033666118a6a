"""The producer's actions (R6, R15): writes to whichever replica presumes to lead (its metadata may
be stale, so zombie leaders take writes too), and retries of writes whose reply it did not get.

Two producers, by Config.idempotence. The plain one (``--retries N``): a retry may append a
record twice. The idempotent one (``--retries N --idempotence``, Kafka's default since 3.0:
enable.idempotence=true, acks=all, max.in.flight.requests.per.connection=5, retries without
end), as Kafka 3.9's client and broker do it (KIP-98; KIP-360 since 2.5): each batch carries the
producer's epoch and a sequence, the leader checks them against its producer state, which it
derives from its log (spec/producer_state.py), and the producer keeps its own state in
``Faults.producer`` (spec.state.Producer): the batches in flight, retried one at a time in
sequence order, completed by their acknowledgement, and rewritten under a new epoch when the
leader answers the batch it expects next OUT_OF_ORDER_SEQUENCE_NUMBER."""

from __future__ import annotations

from ..producer_state import (
    ACKED,
    APPEND,
    DUPLICATE,
    NO_ANSWER,
    OUT_OF_ORDER,
    OUT_OF_ORDER_ANSWER,
    WAITING,
    analyze,
    producer_entry,
)
from ..state import Producer, Replica, State
from .common import Ctx, advance_leader_hw, min_isr, set_replica, sorted_add

_new = tuple.__new__  # NamedTuple construction without its Python-level __new__ (hot path)

ACKS_ALL = -1  # the wire value of acks=all
ACKS_CHOICES = (ACKS_ALL, 1, 0)


def _send(ctx: Ctx, s: State, i: int, record: int, acks: int, h2) -> State:
    """Leader ``i`` takes ``record`` with ``acks``; ``h2`` is the history with the record counted.
    acks=all with fewer than min.insync.replicas in the leader's ISR: refused, NotEnoughReplicas.
    Otherwise appended with the leader's epoch; acks=1 is acknowledged on append, acks=0 never
    answered, acks=all waits in the leader's purgatory until the HW passes it (see
    advance_leader_hw), answered NotEnoughReplicasAfterAppend if the ISR shrank meanwhile."""
    r = s.replicas[i]
    if acks == ACKS_ALL and r.isr.bit_count() < min_isr(ctx, s):
        return s._replace(history=h2._replace(refused=sorted_add(h2.refused, [record])))
    offset = len(r.log)
    log = r.log + ((record, r.epoch),)
    # Replica fields by position: log 0, pending 10
    if acks == ACKS_ALL:
        nr = _new(Replica, (log, *r[1:10], (*r[10], offset)))
    else:
        nr = _new(Replica, (log, *r[1:]))
        if acks == 1:
            h2 = h2._replace(acked1=sorted_add(h2.acked1, [(offset, record)]))
    reps = list(s.replicas)
    reps[i] = nr
    t = _new(State, (tuple(reps), s.coord, s.requests, h2, s.faults, s.kraft))
    return advance_leader_hw(ctx, t, i)


def _with_outstanding(ctx: Ctx, s: State, record: int) -> State:
    """With retries on, the new record is outstanding: its reply may be lost (R15)."""
    if not ctx.config.retries:
        return s
    f = s.faults
    return s._replace(faults=f._replace(lost_replies=(*f.lost_replies, record)))


def producer_send(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """ProducerSend(leader, record): the next record goes to a live replica that believes it
    leads, with the configured acks (see _send). Not modelled: producer timeouts (only fewer
    acks), batching, several producers."""
    h = s.history
    if h.next_record >= ctx.config.records:
        return
    record = h.next_record + 1
    acks = ACKS_ALL if ctx.acks_all else int(ctx.config.acks)
    h2 = h._replace(next_record=record)
    for i, r in enumerate(s.replicas):
        if not r.alive or r.leader != i:
            continue
        t = _send(ctx, s, i, record, acks, h2)
        out.append(((kind, (i, record)), _with_outstanding(ctx, t, record)))


def producer_send_choosing_acks(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """ProducerSendChoosingAcks(leader, record, acks): as ProducerSend, each write choosing its
    acks: -1 (all), 1 or 0 (R6; --acks mixed)."""
    h = s.history
    if h.next_record >= ctx.config.records:
        return
    record = h.next_record + 1
    h2 = h._replace(next_record=record)
    for i, r in enumerate(s.replicas):
        if not r.alive or r.leader != i:
            continue
        for acks in ACKS_CHOICES:
            t = _send(ctx, s, i, record, acks, h2)
            out.append(((kind, (i, record, acks)), _with_outstanding(ctx, t, record)))


def producer_retry(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """ProducerRetry(leader, record): the (plain) producer got no reply for a record it sent (the
    leader crashed before or after appending, or the reply was lost: R15) and sends it again,
    to whichever replica it now believes leads (R6: up to message.send.max.retries, here
    Config.retries per behaviour). The retry may append the record a second time: a duplicate.
    The retry uses acks=all in the mixed mode. A record is retried at most once; a refused
    retry is not retried again. (The idempotent producer's retry: producer_retry_idempotent.)

    Not modelled: the reply that did arrive (a producer that got an answer does not retry; here
    any outstanding record may be retried, which only adds behaviours), acks=0 (never retried in
    Kafka; here retried like the others)."""
    f = s.faults
    if not f.lost_replies or f.retries >= ctx.config.retries:
        return
    acks = ACKS_ALL if ctx.acks_all or ctx.config.acks == "mixed" else int(ctx.config.acks)
    for record in f.lost_replies:
        f2 = f._replace(
            lost_replies=tuple(x for x in f.lost_replies if x != record), retries=f.retries + 1
        )
        s2 = s._replace(faults=f2)
        for i, r in enumerate(s.replicas):
            if not r.alive or r.leader != i:
                continue
            t = _send(ctx, s2, i, record, acks, s2.history)
            out.append(((kind, (i, record)), t))


# --- the idempotent producer (--idempotence) --------------------------------------------------
MAX_IN_FLIGHT = 5  # max.in.flight.requests.per.connection, at most 5 with idempotence


def _producer_entry(ctx: Ctx, s: State, i: int):
    """Replica i's producer state (spec/producer_state.py) under the version's flags."""
    f = s.faults
    p = ctx.protocol
    return producer_entry(
        s.replicas[i].log,
        f.producer_state_start[i] if f.producer_state_start else 0,
        f.log_start[i] if f.log_start else 0,
        p.retain_producer_state,
        5 if p.cache_five_batches else 1,
    )


def _lose_answers(p: Producer, broker: int, kinds: tuple[int, ...], but: int = -1) -> Producer:
    """The answers of ``kinds`` from ``broker`` not yet taken in, but batch ``but``'s, are lost:
    the producer's connection to that broker closed (see _attempt)."""
    batches = p.batches
    if not any(b[3] == broker and b[2] in kinds and k != but for k, b in enumerate(batches)):
        return p
    return p._replace(
        batches=tuple(
            (b[0], b[1], NO_ANSWER, -1, 0, 0)
            if b[3] == broker and b[2] in kinds and k != but
            else b
            for k, b in enumerate(batches)
        )
    )


def _attempt(ctx: Ctx, s: State, i: int, b: int, p: Producer, h2) -> State:
    """Leader ``i`` handles a produce of the batch ``p.batches[b]`` (its record, its sequence,
    the producer's epoch ``p.epoch``); ``h2`` is the history to write (the new record counted
    for a first send). Kafka 3.9's ``Partition.appendRecordsToLeader``: acks=all with fewer than
    min.insync.replicas in the ISR is refused (NotEnoughReplicas, retriable) before the log is
    read; then ``analyze`` (spec/producer_state.py): a duplicate is answered with the original
    offset (at once below the HW, else once the HW passes it: the delayed produce waits for
    that offset); a batch in sequence is appended with its header and waits in the purgatory;
    OUT_OF_ORDER_SEQUENCE_NUMBER appends nothing. The batch's answer is written into the
    producer's state (``Producer.batches``). OUT_OF_ORDER_SEQUENCE_NUMBER is kept only when it
    is the batch the producer expects next (ProducerBumpEpoch then acts on it); any other is
    retried without a bump (``TransactionManager.canRetry``), which here changes nothing.

    Kafka's broker reads one request of a connection at a time (``SocketServer`` mutes the
    channel until the response is sent), so a batch waiting in this broker's purgatory blocks
    this request unless the producer gave up on it: its request timed out, the client closed
    the connection, and its answer is lost. And the producer takes in one broker's answers in
    the order they come (``NetworkClient.poll``): an error taken in at once here (refused, or
    an OUT_OF_ORDER it retries without a bump) comes after every answer of this broker to an
    earlier request, so those it has not taken in by now were lost."""
    r = s.replicas[i]
    record, seq = p.batches[b][:2]
    p = _lose_answers(p, i, (WAITING,), b)
    if r.epoch > p.leader_epoch:
        p = p._replace(leader_epoch=r.epoch)

    def answered(answer: int, epoch: int = 0, offset: int = 0) -> Producer:
        batch = (record, seq, answer, -1 if answer == NO_ANSWER else i, epoch, offset)
        return p._replace(batches=(*p.batches[:b], batch, *p.batches[b + 1 :]))

    f = s.faults
    if r.isr.bit_count() < min_isr(ctx, s):
        h3 = h2._replace(refused=sorted_add(h2.refused, [record]))
        p = _lose_answers(p, i, (ACKED,), b)  # an error taken in at once (see above)
        return s._replace(history=h3, faults=f._replace(producer=answered(NO_ANSWER)))
    answer, offset = analyze(_producer_entry(ctx, s, i), p.epoch, seq)
    if answer == APPEND:
        offset = len(r.log)
        log = r.log + ((record, r.epoch, p.epoch, seq),)
        nr = _new(Replica, (log, *r[1:10], (*r[10], offset)))
        reps = list(s.replicas)
        reps[i] = nr
        f2 = f._replace(producer=answered(WAITING, r.epoch, offset))
        return advance_leader_hw(ctx, _new(State, (tuple(reps), s[1], s[2], h2, f2, s[5])), i)
    if answer == DUPLICATE:
        if offset < r.hw:
            h3 = h2._replace(acked=sorted_add(h2.acked, [(offset, record)]))
            return s._replace(history=h3, faults=f._replace(producer=answered(ACKED)))
        f2 = f._replace(producer=answered(WAITING, r.epoch, offset))
        if offset not in r.pending:
            s = set_replica(s, i, r._replace(pending=tuple(sorted((*r.pending, offset)))))
        return s._replace(history=h2, faults=f2)
    if answer == OUT_OF_ORDER and seq == p.last_acked + 1:
        return s._replace(history=h2, faults=f._replace(producer=answered(OUT_OF_ORDER_ANSWER)))
    p = _lose_answers(p, i, (ACKED,), b)  # an error taken in at once (see above)
    return s._replace(history=h2, faults=f._replace(producer=answered(NO_ANSWER)))


def producer_send_idempotent(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """ProducerSend(leader, record), --idempotence (R6): the next record, one batch, goes to a
    live replica that believes it leads, at a leader epoch no older than the one the producer
    last sent to (``Producer.leader_epoch``), with acks=all, the producer's epoch and the next
    sequence (``RecordAccumulator.drain``: ``setProducerState`` with
    ``TransactionManager.sequenceNumber``, then ``incrementSequenceNumber``), at most
    MAX_IN_FLIGHT batches in flight. The leader's answer: see _attempt."""
    h = s.history
    if h.next_record >= ctx.config.records:
        return
    p = s.faults.producer
    if len(p.batches) >= MAX_IN_FLIGHT:
        return
    record = h.next_record + 1
    h2 = h._replace(next_record=record)
    p2 = p._replace(
        next_seq=p.next_seq + 1, batches=(*p.batches, (record, p.next_seq, NO_ANSWER, -1, 0, 0))
    )
    b = len(p.batches)
    for i, r in enumerate(s.replicas):
        if not r.alive or r.leader != i or r.epoch < p.leader_epoch:
            continue
        out.append(((kind, (i, record)), _attempt(ctx, s, i, b, p2, h2)))


def producer_retry_idempotent(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """ProducerRetry(leader, record), --idempotence (R6, R15): the first batch in flight, whose
    latest attempt failed or timed out (or whose answer was lost), is sent again with the same
    header, to whichever replica the producer now believes leads (at no older leader epoch than
    it sent to before, as ProducerSend). Only the first: Kafka's
    ``RecordAccumulator.shouldStopDrainBatchesForPartition`` drains a batch being retried only
    when its sequence is ``firstInFlightSequence`` ("This effectively reduces our in flight
    request count to 1"), so retries go one at a time, in sequence order. Config.retries bounds
    the retries of a behaviour (Kafka's retries has no end by default). A batch retried though
    it was acknowledged lost that answer with its connection, or its request timed out and the
    client closed the connection: either way that broker's answers the producer has not taken
    in by now are lost too (those that came before were taken in: ProducerCompleteBatch)."""
    f = s.faults
    p = f.producer
    if not p.batches or f.retries >= ctx.config.retries:
        return
    first = p.batches[0]
    if first[2] in (ACKED, WAITING):  # its answer lost, or its request timed out
        p = _lose_answers(p, first[3], (ACKED, WAITING))
    s2 = s._replace(faults=f._replace(retries=f.retries + 1))
    for i, r in enumerate(s.replicas):
        if not r.alive or r.leader != i or r.epoch < p.leader_epoch:
            continue
        out.append(((kind, (i, first[0])), _attempt(ctx, s2, i, 0, p, s.history)))


def producer_complete_batch(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """ProducerCompleteBatch(record), --idempotence (R6): the producer takes in the
    acknowledgement of a batch in flight (``Sender.completeBatch``,
    ``TransactionManager.handleCompletedBatch``): the batch is done, never retried again, and
    its sequence is the last acknowledged one if it is the highest (``maybeUpdateLastAcked
    Sequence``). Batches complete in any order (answers from different leaders). An
    acknowledgement the producer never takes in is a lost answer: the batch is retried."""
    p = s.faults.producer
    for b, batch in enumerate(p.batches):
        if batch[2] == ACKED:
            p2 = p._replace(
                last_acked=max(p.last_acked, batch[1]), batches=p.batches[:b] + p.batches[b + 1 :]
            )
            out.append(((kind, (batch[0],)), s._replace(faults=s.faults._replace(producer=p2))))


def producer_bump_epoch(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """ProducerBumpEpoch(record), --idempotence (R6, R15): the producer takes in the
    OUT_OF_ORDER_SEQUENCE_NUMBER answer to the batch it expects next (its sequence is the last
    acknowledged one + 1) and, being idempotent, not transactional,
    bumps its epoch and rewrites the sequences of every batch in flight from 0 in order, the
    last acknowledged sequence forgotten; the batch will be retried (Kafka 2.5+, KIP-360,
    KAFKA-8805: ``TransactionManager.canRetry`` -> ``requestEpochBumpForPartition``, then
    ``bumpIdempotentEpochAndResetIdIfNeeded`` -> ``bumpIdempotentProducerEpoch`` ->
    ``TxnPartitionEntry.startSequencesAtBeginning``; 3.9 and trunk of 2024-10). The batches'
    earlier attempts may still be answered, but not by that broker: its answers come in order
    on one connection, so those the producer has not taken in before this one were lost. An
    OUT_OF_ORDER answer to an attempt made before the bump is taken in after it, for a
    rewritten batch, and retried without a bump (``sequenceHasBeenReset``, true from the
    rewrite until the batch is sent again: ``RecordAccumulator.drain`` closes it). The rewrite
    gives a batch whose earlier attempt was appended a new identity (KAFKA-14034, open: its
    fix, not merged, would wait for the batches in flight first)."""
    p = s.faults.producer
    for k, batch in enumerate(p.batches):
        if batch[2] != OUT_OF_ORDER_ANSWER or batch[1] != p.last_acked + 1:
            continue
        q = _lose_answers(p, batch[3], (ACKED, WAITING), k)
        batches = tuple(
            (c[0], j, NO_ANSWER, -1, 0, 0) if c[2] == OUT_OF_ORDER_ANSWER else (c[0], j, *c[2:])
            for j, c in enumerate(q.batches)
        )
        p2 = Producer(p.epoch + 1, len(batches), -1, batches, p.leader_epoch)
        out.append(((kind, (batch[0],)), s._replace(faults=s.faults._replace(producer=p2))))
