"""Handlers of the clients' events: produce (records numbered in sending order), the
producer's acknowledgements, and consumer fetches."""

from __future__ import annotations

from typing import TYPE_CHECKING

from isr.spec.actions.common import min_isr
from isr.spec.actions.producer import _producer_entry
from isr.spec.producer_state import APPEND, DUPLICATE, INVALID_EPOCH, OUT_OF_ORDER, analyze
from isr.spec.state import State

from ..candidates import Cand, strip_history
from ..mapping import Event, TraceInputError
from .common import node_rep

if TYPE_CHECKING:
    from .view import PartitionView as PartitionValidator


def prepare_produce(v: PartitionValidator, ev: Event) -> None:
    """Number the records in sending order (one number per send: retries get a new one).
    --idempotence: a batch keeps its number on every attempt (``ev["_retry"]``: the spec's
    ProducerRetry), a new one gets the next (ProducerSend)."""
    nxt = {c[0].history.next_record for c in v.cands}
    if len(nxt) != 1:  # every candidate has seen the same sends
        raise TraceInputError("candidates disagree on records written")
    base = nxt.pop()
    recs = ev["args"].get("records", [])
    if v.spec.config.idempotence:
        rid = str(recs[0])
        ev["_retry"] = rid in v.pm.num_of
        if not ev["_retry"]:
            v.pm.num_of[rid] = base + 1
            del v.pm.rid_of[base + 1 :]
            v.pm.rid_of.append(rid)
        ev["_nums"] = [v.pm.num_of[rid]]
        return
    ev["_nums"] = list(range(base + 1, base + 1 + len(recs)))
    del v.pm.rid_of[base + 1 :]
    v.pm.rid_of.extend(str(r) for r in recs)


def on_produce(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
    if v.spec.config.idempotence:
        return on_produce_idempotent(v, ev, c, mism)
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


# ---- the idempotent producer (--idempotence: R6, R15) -----------------------------------------
_SPEC_ANSWER = {
    APPEND: "appends it",
    DUPLICATE: "answers DUPLICATE",
    OUT_OF_ORDER: ("answers OUT_OF_ORDER_SEQUENCE_NUMBER"),
    INVALID_EPOCH: "answers INVALID_PRODUCER_EPOCH",
}
_TRACE_ANSWER = {
    "OUT_OF_ORDER_SEQUENCE_NUMBER": OUT_OF_ORDER,
    "INVALID_PRODUCER_EPOCH": INVALID_EPOCH,
}
REFUSED = -1  # NOT_ENOUGH_REPLICAS: refused before the producer state is read


def _traced_answer(a: dict) -> tuple[int, int]:
    """What the leader answered the batch, as the trace says: (answer, offset)."""
    if "error" in a:
        return _TRACE_ANSWER.get(a["error"], REFUSED), -1
    if a.get("duplicate"):
        return DUPLICATE, int(a.get("base_offset", -1))
    return APPEND, int(a.get("base_offset", -1))


def spec_answer(v: PartitionValidator, s: State, i: int, epoch: int, seq: int) -> tuple[int, int]:
    """The spec's leader ``i``'s answer to the batch (``epoch``, ``seq``) in state ``s``:
    NotEnoughReplicas first, then its producer state's (``spec.producer_state.analyze``, Kafka
    3.9's ``UnifiedLog.analyzeAndValidateProducerState``), (answer, offset)."""
    if s.replicas[i].isr.bit_count() < min_isr(v.ctx, s):
        return REFUSED, -1
    answer, offset = analyze(_producer_entry(v.ctx, s, i), epoch, seq)
    return answer, len(s.replicas[i].log) if answer == APPEND else offset


def _idempotent_mismatch(
    v: PartitionValidator, ev: Event, s: State, i: int, epoch: int, seq: int
) -> str | None:
    """Why the leader's answer in the trace is not the spec's, naming the rule it breaks."""
    a = ev["args"]
    rid = a["records"][0]
    got = (a.get("producer_epoch", 0), a.get("base_sequence", -1))
    if got != (epoch, seq):
        return (
            f"ProducerSend: {rid} carries producer epoch {got[0]}, sequence {got[1]}, but the "
            f"spec's producer sends it with producer epoch {epoch}, sequence {seq} (R6: its "
            "sequences go up by one per batch from 0 in each epoch, KIP-98, KIP-360)"
        )
    want, off = spec_answer(v, s, i, epoch, seq)
    have, hoff = _traced_answer(a)
    if (want, off if want in (APPEND, DUPLICATE) else -1) == (have, hoff):
        return None
    b = v.pm.broker(i)
    if want == DUPLICATE and have == APPEND:
        return (
            f"ProducerSend: leader {b} appended {rid} (producer epoch {epoch}, sequence {seq}) "
            f"at offset {hoff}, but its producer state holds that batch at offset {off}: the "
            "spec answers DUPLICATE with the original offset; appending it again breaks "
            "NoDuplicates (R6, R15; UnifiedLog.analyzeAndValidateProducerState, "
            "ProducerStateEntry.findDuplicateBatch)"
        )
    if want == REFUSED or have == REFUSED:
        return (
            f"ProducerSend: leader {b} "
            + ("refused" if have == REFUSED else "did not refuse")
            + f" {rid} (NotEnoughReplicas), but the spec "
            + ("does not" if have == REFUSED else "does")
            + " (R6: acks=all with fewer than min.insync.replicas in the ISR)"
        )
    said = {APPEND: f"appended it at {hoff}", DUPLICATE: f"answered DUPLICATE at {hoff}"}.get(
        have, f"answered {a.get('error')}"
    )
    where = f" at offset {off}" if want == DUPLICATE else ""
    return (
        f"ProducerSend: leader {b} {said} for {rid} (producer epoch {epoch}, sequence {seq}), "
        f"but by the producer-state rule the spec {_SPEC_ANSWER[want]}{where} (R6, R15; "
        "ProducerAppendInfo.checkProducerEpoch, checkSequence: a batch among the last five "
        "of its epoch is a duplicate, the next sequence is appended, a new epoch starts at 0)"
    )


def on_produce_idempotent(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
    """An attempt of the idempotent producer's batch at leader ``node``: the spec's
    ProducerSend (the batch's first attempt in the trace) or ProducerRetry (a later one: the
    first batch in flight, sent again with its header), whose answer must be the leader's in
    the trace, appended, DUPLICATE at the original offset, OUT_OF_ORDER_SEQUENCE_NUMBER,
    INVALID_PRODUCER_EPOCH or NotEnoughReplicas (``spec_answer``)."""
    s, pend, ack = c
    i = node_rep(v, ev)
    num = ev["_nums"][0]
    name = "ProducerRetry" if ev["_retry"] else "ProducerSend"
    p = s.faults.producer
    if name == "ProducerSend":
        epoch, seq = p.epoch, p.next_seq
    else:
        if not p.batches or p.batches[0][0] != num:
            first = v.pm.rid_of[p.batches[0][0]] if p.batches else None
            mism.append(
                f"ProducerRetry: {ev['args']['records'][0]} sent again, but the spec's producer "
                + (
                    f"retries only its first batch in flight, {first} (one at a time, in "
                    "sequence order: RecordAccumulator.shouldStopDrainBatchesForPartition)"
                    if first is not None
                    else "has no batch in flight (it completed it)"
                )
            )
            return []
        epoch, seq = p.epoch, p.batches[0][1]
    bad = _idempotent_mismatch(v, ev, s, i, epoch, seq)
    if bad:
        mism.append(bad)
        return []
    out: list[Cand] = []
    for _a, t in v.steps(s, name, (i, num)):
        t, gained = strip_history(t)
        got = v.fit(ev, i, t, gained, mism)
        if got is not None:
            out.append((got[0], pend, ack | got[1]))
    if not out and not mism:
        mism.append(
            f"{name}({v.pm.broker(i)}, {ev['args']['records'][0]}) is not enabled (not a live "
            "presumed leader, one at an older leader epoch than the producer sent to before, "
            "or five batches in flight)"
        )
    return out


def prepare_producer_step(v: PartitionValidator, ev: Event) -> None:
    """The producer's own steps name a batch by its record: its spec number."""
    rid = str(ev["args"]["record"])
    if rid not in v.pm.num_of:
        raise TraceInputError(f"{ev['action']}: record {rid} was never sent")
    ev["_nums"] = [v.pm.num_of[rid]]


def on_complete_batch(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
    """ProducerCompleteBatch: the producer takes in the acknowledgement of a batch in flight:
    the spec's holds one (acknowledged: appended and committed, or a committed duplicate)."""
    s, pend, ack = c
    num = ev["_nums"][0]
    out = [(t, pend, ack) for _a, t in v.steps(s, "ProducerCompleteBatch", (num,))]
    if not out:
        mism.append(
            f"ProducerCompleteBatch: the producer took an acknowledgement of "
            f"{ev['args']['record']}, but the spec's producer holds none (R6: a batch is "
            "acknowledged once committed, or as a duplicate of a committed batch)"
        )
    return out


def on_bump_epoch(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
    """ProducerBumpEpoch: after OUT_OF_ORDER_SEQUENCE_NUMBER to the batch it expects next, the
    producer bumps its epoch (to the event's ``producer_epoch``) and rewrites its batches."""
    s, pend, ack = c
    num = ev["_nums"][0]
    want = ev["args"].get("producer_epoch")
    out = []
    for _a, t in v.steps(s, "ProducerBumpEpoch", (num,)):
        if want is not None and t.faults.producer.epoch != want:
            mism.append(
                f"ProducerBumpEpoch: producer epoch {want}, the spec's {t.faults.producer.epoch}"
            )
            continue
        out.append((t, pend, ack))
    if not out and not mism:
        mism.append(
            f"ProducerBumpEpoch: the producer bumped its epoch after {ev['args']['record']}, "
            "but no leader answered that batch OUT_OF_ORDER_SEQUENCE_NUMBER as the one it "
            "expects next (KIP-360: TransactionManager.canRetry)"
        )
    return out
