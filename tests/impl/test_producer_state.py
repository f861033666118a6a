"""The idempotent producer's state as Kafka keeps it (issue 28 item 4; impl/core/
producer_state.py): the leader derives each producer's epoch and last five batches from its
log's batch headers (producer id, sequence, producer epoch) and answers DUPLICATE (with the
original's offset), OUT_OF_ORDER_SEQUENCE_NUMBER, INVALID_PRODUCER_EPOCH or appends, as the
spec's ``producer_state.analyze`` (compared on random logs); the state follows truncations;
the producer bumps its epoch after OUT_OF_ORDER on the batch it expects next (ProducerBumpEpoch,
KIP-360) and rewrites its batches in flight from sequence 0."""

from __future__ import annotations

import random

from isr.impl.core import messages as m
from isr.impl.core.clients import ProducerClient
from isr.impl.core.log import PartitionLog
from isr.impl.core.producer_state import APPEND, DUPLICATE, INVALID_EPOCH, OUT_OF_ORDER
from isr.spec import producer_state as spec_ps
from test_core_handlers import leader, sends

TP = ("t", 0)


def _req(corr: int, seq: int, rid: str, pepoch: int = 0, pid: int = 7) -> m.ProduceRequest:
    return m.ProduceRequest("c", corr, "t", 0, 1, ((rid, "v"),), pid, seq, pepoch)


def _answer(effs) -> tuple[str, int]:
    (r,) = sends(effs, m.ProduceResponse)
    return r.msg.error, r.msg.base_offset


def test_the_last_five_batches_are_duplicates_older_ones_out_of_order() -> None:
    b = leader()
    for s in range(7):
        assert _answer(b.on_message("c", _req(s + 1, s, f"r{s}"), 0, 0)) == (m.NONE, s)
    log = b.partitions[TP].log
    assert log.entry(6) == (1, "r6", "v", 7, 6, 0)  # the batch header, producer epoch last
    assert _answer(b.on_message("c", _req(20, 3, "r3"), 0, 0)) == (m.NONE, 3)  # duplicate
    assert _answer(b.on_message("c", _req(21, 1, "r1"), 0, 0))[0] == OUT_OF_ORDER  # evicted
    assert _answer(b.on_message("c", _req(22, 8, "r8"), 0, 0))[0] == OUT_OF_ORDER  # a gap
    assert _answer(b.on_message("c", _req(23, 7, "r7", pepoch=1), 0, 0))[0] == OUT_OF_ORDER
    assert _answer(b.on_message("c", _req(24, 0, "x0", pepoch=1), 0, 0)) == (m.NONE, 7)
    assert _answer(b.on_message("c", _req(25, 7, "r7"), 0, 0))[0] == INVALID_EPOCH
    assert log.leo == 8


def test_the_state_follows_truncations_and_deletions() -> None:
    log = PartitionLog([(0, f"r{s}", "v", 7, s, 0) for s in range(4)])
    assert log.producers.analyze(7, 0, 2) == (DUPLICATE, 2)
    log.truncate_to(2)
    assert log.producers.analyze(7, 0, 2) == (APPEND, -1)  # gone with the truncation
    log.delete_before(2)  # (its batches below the log start forgotten: before KAFKA-7190)
    assert log.producers.analyze(7, 0, 5) == (APPEND, -1)


def test_the_leaders_answers_are_the_specs() -> None:
    rng = random.Random(3)
    for _ in range(400):
        n = rng.randint(0, 9)
        epochs = sorted(rng.choices([0, 1, 2], k=n))
        entries, seq, prev = [], 0, None
        for e in epochs:
            seq = 0 if e != prev else seq + rng.choice([1, 1, 1, 2])
            prev = e
            entries.append((e, seq))
        log = PartitionLog([(1, f"r{i}", "v", 7, s, e) for i, (e, s) in enumerate(entries)])
        spec_log = tuple((i + 1, 1, e, s) for i, (e, s) in enumerate(entries))
        entry = spec_ps.producer_entry(spec_log)
        epoch, s = rng.randint(0, 3), rng.randint(0, 10)
        want, off = spec_ps.analyze(entry, epoch, s)
        names = {
            spec_ps.DUPLICATE: DUPLICATE,
            spec_ps.APPEND: APPEND,
            spec_ps.OUT_OF_ORDER: OUT_OF_ORDER,
            spec_ps.INVALID_EPOCH: INVALID_EPOCH,
        }
        assert log.producers.analyze(7, epoch, s) == (names[want], off), (entries, epoch, s)


def test_the_producer_bumps_its_epoch_on_out_of_order_for_the_next_batch() -> None:
    """KIP-360 (``TransactionManager.canRetry``): OUT_OF_ORDER_SEQUENCE_NUMBER to the batch
    after the last acknowledged one bumps the epoch and rewrites the batches in flight from 0;
    to any other (here an answer to an attempt made before a bump) it is retried as it is.
    The client sends one request per broker at a time (``ProducerClient._drain``)."""
    c = ProducerClient("p", acks=-1, producer_id=7, metadata={TP: 0})
    (ra,) = [e.msg for e in c.send(TP, [("a", "v")]) if isinstance(e, m.Send)]
    (rb,) = [e.msg for e in c.on_response(m.ProduceResponse(0, ra.correlation_id, "t", 0, m.NONE, 0)) if isinstance(e, m.Send)] or [None]  # fmt: skip
    assert rb is None  # nothing else to send yet
    (rb,) = [e.msg for e in c.send(TP, [("b", "v")]) if isinstance(e, m.Send)]
    assert rb.base_sequence == 1
    assert not [e for e in c.send(TP, [("c", "v")]) if isinstance(e, m.Send)]  # broker busy
    # the leader lost "a": "b" (the batch it expects next) is OUT_OF_ORDER: a new epoch
    c.on_response(
        m.ProduceResponse(0, rb.correlation_id, "t", 0, m.OUT_OF_ORDER_SEQUENCE_NUMBER, -1)
    )
    assert c.producer_epoch == 1 and c.last_acked == {}
    assert sorted(q.base_sequence for q in c.pending.values()) == [-1, 0]  # "c" not yet drained
    assert [e["action"] for e in c.events][-1] == "ProducerBumpEpoch"
    retry = c.on_timer(f"retry:{rb.correlation_id}:1")
    (req2,) = [e.msg for e in retry if isinstance(e, m.Send)]
    assert (req2.producer_epoch, req2.base_sequence, req2.records) == (1, 0, (("b", "v"),))
    # an OUT_OF_ORDER answer for a sequence the bump rewrote meanwhile: retried, no bump
    c.pending[req2.correlation_id].reset = True
    c.on_response(
        m.ProduceResponse(0, req2.correlation_id, "t", 0, m.OUT_OF_ORDER_SEQUENCE_NUMBER, -1)
    )
    assert c.producer_epoch == 1
