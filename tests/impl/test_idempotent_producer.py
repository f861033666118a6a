"""Idempotent producer (issue 17, item 3; KIP-98, Kafka 3.x's default): a retry resends the
same producer id and sequence, and a leader that already holds the batch drops it and answers
with the original offset; the batch header survives replication and restarts, so a new leader
drops it too (R15)."""

from __future__ import annotations

from pathlib import Path

from isr.impl.core import messages as m
from isr.impl.core.clients import ProducerClient
from isr.impl.core.config import Config
from isr.impl.core.replica import Broker
from isr.impl.storage.log import DurableLog
from test_core_handlers import actions, fetch, lai, leader, sends

TP = ("t", 0)


def _req(corr: int, seq: int, rids=("a",), acks: int = -1, pid: int = 7) -> m.ProduceRequest:
    return m.ProduceRequest("c", corr, "t", 0, acks, tuple((r, "v") for r in rids), pid, seq)


def test_retry_of_a_held_batch_is_dropped_and_answered_with_its_offset() -> None:
    b = leader()
    b.on_message("c", _req(1, 0, ("a", "b")), 0, 0)  # appended at 0..1, answer lost
    effs = b.on_message("c", _req(2, 0, ("a", "b")), 0, 1)  # the retry: same id and sequence
    assert b.partitions[TP].log.leo == 2 and actions(effs) == ["ProducerSend"]
    dup = next(e.event for e in effs if isinstance(e, m.Trace))
    assert dup["args"]["duplicate"] is True and dup["args"]["base_offset"] == 0  # (traced)
    fetch(b, 1, 2, now=10)
    effs = fetch(b, 2, 2, now=11)  # the HW passes both: the original and the retry answered
    answers = sorted(
        (r.msg.correlation_id, r.msg.base_offset) for r in sends(effs, m.ProduceResponse)
    )
    assert answers == [(1, 0), (2, 0)]
    assert actions(effs).count("ProduceAcked") == 1  # the acknowledgement is the original's
    assert b.metrics["produce_duplicates"] == 1


def test_another_sequence_or_producer_is_appended() -> None:
    b = leader()
    b.on_message("c", _req(1, 0, acks=1), 0, 0)
    b.on_message("c", _req(2, 1, acks=1), 0, 0)  # the next batch
    b.on_message("c", _req(3, 0, acks=1, pid=8), 0, 0)  # another producer
    b.on_message("c", _req(4, -1, acks=1, pid=-1), 0, 0)  # not idempotent: always appended
    b.on_message("c", _req(5, -1, acks=1, pid=-1), 0, 0)
    assert b.partitions[TP].log.leo == 5


def test_a_new_leader_knows_the_batches_it_replicated(tmp_path: Path) -> None:
    """The (producer id, sequence) header is in the log, replicated and stored: a follower
    that becomes leader (after a restart, from its durable log) drops the retry too."""
    store = DurableLog(tmp_path)
    entries = ((1, "a", "v", 7, 0), (1, "b", "v", 7, 1))
    store.apply(m.Append(TP, 0, entries))
    store.close()
    restored = DurableLog(tmp_path).recover()
    assert tuple(restored[TP][0]) == entries
    b = Broker(1, Config(min_insync_replicas=1), restored)
    b.start(0)
    b.on_message(9, lai(1, 2), 0, 0)
    (resp,) = sends(b.on_message("c", _req(1, 0, ("a", "b"), acks=1), 0, 1), m.ProduceResponse)
    assert resp.msg.base_offset == 0 and b.partitions[TP].log.leo == 2


def test_producer_client_retries_with_the_same_sequence() -> None:
    pc = ProducerClient("c", producer_id=7, metadata={TP: 0})
    first = next(e.msg for e in pc.send(TP, [("a", "v")]) if isinstance(e, m.Send))
    pc.on_timer(f"timeout:{first.correlation_id}:1")
    # a new batch waits until every batch before it reached a leader (the spec's producer has
    # no gap in its sequences), and the retry goes alone (``ProducerClient._drain``)
    assert not [e for e in pc.send(TP, [("b", "v")]) if isinstance(e, m.Send)]
    retry = [e.msg for e in pc.on_timer(f"retry:{first.correlation_id}:1") if isinstance(e, m.Send)]
    assert retry and (retry[0].producer_id, retry[0].base_sequence) == (7, 0)
    assert retry[0].correlation_id != first.correlation_id  # a late answer to the first: ignored
    assert pc.on_response(m.ProduceResponse(0, first.correlation_id, "t", 0, m.NONE, 0)) == []
    resp = m.ProduceResponse(0, retry[0].correlation_id, "t", 0, m.NONE, 0)
    nxt = next(e.msg for e in pc.on_response(resp) if isinstance(e, m.Send))
    assert nxt.records == (("b", "v"),) and nxt.base_sequence == 1
    assert [e["action"] for e in pc.events] == ["ProducerCompleteBatch"]
