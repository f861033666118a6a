"""The producer's actions (R6, R15): writes to whichever replica presumes to lead (its metadata may
be stale, so zombie leaders take writes too), and retries of writes whose reply it did not get."""

from __future__ import annotations

from ..state import Replica, State
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
    """ProducerRetry(leader, record): the producer got no reply for a record it sent (the leader
    crashed before or after appending, or the reply was lost: R15) and sends it again, to
    whichever replica it now believes leads (R6: up to message.send.max.retries, here
    Config.retries per behaviour). The retry may append the record a second time: a duplicate.
    With idempotence the leader recognises the record (KIP-98: producer id and sequence number,
    replicated in the log) and answers with its offset instead. The retry uses acks=all in the
    mixed mode. A record is retried at most once; a refused retry is not retried again.

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
            if ctx.config.idempotence:
                held = [o for o, (rec, _) in enumerate(r.log) if rec == record]
                if held:
                    t = _acknowledge_held(ctx, s2, i, held[0], acks)
                    out.append(((kind, (i, record)), t))
                    continue
            t = _send(ctx, s2, i, record, acks, s2.history)
            out.append(((kind, (i, record)), t))


def _acknowledge_held(ctx: Ctx, s: State, i: int, offset: int, acks: int) -> State:
    """An idempotent retry of a record the leader holds at ``offset``: no append; the answer is
    that of the original write (acks=all: once the HW passes it)."""
    r = s.replicas[i]
    h = s.history
    record = r.log[offset][0]
    if acks == 1:
        return s._replace(history=h._replace(acked1=sorted_add(h.acked1, [(offset, record)])))
    if acks == ACKS_ALL:
        if offset < r.hw:
            if r.isr.bit_count() >= min_isr(ctx, s):
                return s._replace(history=h._replace(acked=sorted_add(h.acked, [(offset, record)])))
            return s
        if offset not in r.pending:
            return set_replica(s, i, r._replace(pending=tuple(sorted((*r.pending, offset)))))
    return s
