"""The producer's action (R6): one write to whichever replica presumes to lead (its metadata may
be stale, so zombie leaders take writes too)."""

from __future__ import annotations

from ..state import State
from .common import Ctx, advance_leader_hw, set_replica, sorted_add


def producer_send(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """ProducerSend(leader, record): the next record goes to a live replica that believes it leads.
    acks=all with fewer than min.insync.replicas in the leader's ISR: refused, NotEnoughReplicas.
    Otherwise appended with the leader's epoch; acks=1 is acknowledged on append, acks=all waits
    in the leader's purgatory until the HW passes it (see advance_leader_hw). Not modelled here:
    acks=0, lost replies and retries (duplicates), producer timeouts (only fewer acks)."""
    h = s.history
    if h.next_record >= ctx.config.records:
        return
    record = h.next_record + 1
    for i, r in enumerate(s.replicas):
        if not r.alive or r.leader != i:
            continue
        if ctx.acks_all and r.isr.bit_count() < ctx.config.min_isr:
            h2 = h._replace(next_record=record, refused=sorted_add(h.refused, [record]))
            out.append(((kind, (i, record)), s._replace(history=h2)))
            continue
        offset = len(r.log)
        log = (*r.log, (record, r.epoch))
        if ctx.acks_all:
            nr = r._replace(log=log, pending=(*r.pending, offset))
            h2 = h._replace(next_record=record)
        else:
            nr = r._replace(log=log)
            h2 = h._replace(next_record=record, acked1=sorted_add(h.acked1, [(offset, record)]))
        t = set_replica(s, i, nr)._replace(history=h2)
        out.append(((kind, (i, record)), advance_leader_hw(ctx, t, i)))
