"""Handlers of the clients' events: produce (records numbered in sending order), the
producer's acknowledgements, and consumer fetches."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..candidates import Cand, strip_history
from ..mapping import Event, TraceInputError
from .common import node_rep

if TYPE_CHECKING:
    from .view import PartitionView as PartitionValidator


def prepare_produce(v: PartitionValidator, ev: Event) -> None:
    """Number the records in sending order (one number per send: retries get a new one)."""
    nxt = {c[0].history.next_record for c in v.cands}
    if len(nxt) != 1:  # every candidate has seen the same sends
        raise TraceInputError("candidates disagree on records written")
    base = nxt.pop()
    recs = ev["args"].get("records", [])
    ev["_nums"] = list(range(base + 1, base + 1 + len(recs)))
    del v.pm.rid_of[base + 1 :]
    v.pm.rid_of.extend(str(r) for r in recs)


def on_produce(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
    i = node_rep(v, ev)
    refused = "error" in ev["args"]
    layer = [c]
    for num in ev["_nums"]:
        nl: list[Cand] = []
        for s, pend, ack in layer:
            for _a, t in v.steps(s, "ProducerSend", (i, num)):
                appended = len(t.replicas[i].log) > len(s.replicas[i].log)
                if appended == refused:
                    mism.append(
                        "ProducerSend: the spec "
                        + ("appends" if appended else "refuses (NotEnoughReplicas)")
                        + f" record {num}"
                    )
                    continue
                t, gained = strip_history(t)
                nl.append((t, pend, ack | gained if gained else ack))
        layer = nl
    out = []
    for t, pend, ack in layer:
        got = v.fit(ev, i, t, ack - c[2], mism)
        if got is not None:
            out.append((got[0], pend, c[2] | got[1]))
    if not out and not mism:
        mism.append(f"ProducerSend({v.pm.broker(i)}) is not enabled (not a live presumed leader)")
    return out


def on_consume(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
    """ConsumerFetch changes only the spec's history (what consumers saw); its condition is
    checked here directly: a live replica presuming to lead returns offsets below its HW (R5).
    kraft (KIP-392, ``follower_reads``): an event naming ``replica`` instead of ``leader`` is a
    follower's read, below that follower's own HW (the spec's ConsumerFetch(replica); the
    consumer's position and epoch, which only its next reads depend on, are not replayed)."""
    s = c[0]
    i = node_rep(v, ev)
    r = s.replicas[i]
    a = ev["args"]
    o = int(a.get("offset", 0))
    recs = a.get("records", [])
    proto = v.ctx.protocol
    follower_read = "replica" in a and getattr(proto, "follower_reads", False)
    if not r.alive or (r.leader != i and not follower_read):
        mism.append("ConsumerFetch: the replica does not presume to lead")
        return []
    starts = s.faults.log_start
    if recs and starts and o < starts[i]:
        mism.append(f"ConsumerFetch: offset {o} is below the log start {starts[i]} (deleted, R12)")
        return []
    if o + len(recs) > r.hw:
        mism.append(f"ConsumerFetch: offsets {o}..{o + len(recs) - 1} are not below the HW {r.hw}")
        return []
    for k, rid in enumerate(recs):
        if v.pm.rid_of[r.log[o + k][0]] != str(rid):
            mism.append(f"ConsumerFetch: offset {o + k} is not {rid} in the spec")
            return []
    return [c] if v.check(ev, i, s, mism) else []


def on_acked(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
    """ProduceAcked (implementation history): each acknowledged (offset, record) must be one the
    spec acknowledged (acks=all: committed, R6)."""
    s, pend, ack = c
    a = ev["args"]
    base = int(a.get("base_offset", 0))
    rid_of = v.pm.rid_of
    left = set(ack)
    for k, rid in enumerate(a.get("records", [])):
        hit = next((x for x in left if x[0] == base + k and rid_of[x[1]] == str(rid)), None)
        if hit is None:
            mism.append(
                f"ProduceAcked: {rid} at offset {base + k} acknowledged, but the spec has not "
                "acknowledged it (not committed)"
            )
            return []
        left.discard(hit)
    return [(s, pend, frozenset(left))]
