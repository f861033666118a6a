"""A partition replica's producer state (KIP-98's idempotence, R6, R15; issue 28 item 4),
derived from its log: the implementation's ``spec/producer_state.py``.

Kafka's broker keeps, per producer id, the producer epoch of its last batch and the metadata
of its last five batches of that epoch (``ProducerStateEntry``, ``NUM_BATCHES_TO_RETAIN``,
KAFKA-5494; storage/.../log/ProducerStateManager.java, ProducerAppendInfo.java in 3.9/4.x).
Every append updates it, a follower's too (``UnifiedLog.appendAsFollower``: the leader's
batches taken as they are, no check); a truncation rebuilds it from the log
(``UnifiedLog.truncateTo`` → ``rebuildProducerState``), and so does a restart. Here a record is
a batch of its own (the log's entries carry their batch header per record: (leader epoch,
record id, value, producer id, sequence, producer epoch), impl/core/messages.py ``Entry``), so
the five batches are the producer's last five records of its epoch, as in the spec.

What the leader answers a client's batch (``analyze``; ``UnifiedLog.
analyzeAndValidateProducerState``, ``ProducerStateEntry.findDuplicateBatch``,
``ProducerAppendInfo.checkProducerEpoch`` and ``checkSequence``): a batch among the five of
the same epoch is a DUPLICATE (answered with its offset, not appended); an older epoch is
INVALID_PRODUCER_EPOCH; a newer epoch must start at sequence 0 unless the replica holds nothing
of the producer (KAFKA-8710, Kafka 2.5: any sequence then); the same epoch must continue at the
last sequence + 1; otherwise OUT_OF_ORDER_SEQUENCE_NUMBER (not appended: the producer bumps its
epoch, ProducerBumpEpoch, impl/core/clients.py).

Not modelled: the state of batches below the log start (Kafka 2.5+ keeps it in its snapshots,
KAFKA-7190: here a producer's batches deleted by DeleteRecords or retention are forgotten, as
before KAFKA-7190, ``retain_producer_state=False``), transactions.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

NUM_BATCHES_TO_RETAIN = 5

DUPLICATE = "DUPLICATE"  # held: success with the original offset (DUPLICATE_SEQUENCE_NUMBER)
APPEND = "APPEND"
OUT_OF_ORDER = "OUT_OF_ORDER_SEQUENCE_NUMBER"
INVALID_EPOCH = "INVALID_PRODUCER_EPOCH"


@dataclass
class ProducerEntry:
    """One producer's state: its epoch and its last batches of that epoch, (sequence, offset),
    oldest first."""

    epoch: int
    batches: deque[tuple[int, int]] = field(
        default_factory=lambda: deque(maxlen=NUM_BATCHES_TO_RETAIN)
    )


class ProducerState:
    """Every producer's entry on one replica (``ProducerStateManager``)."""

    def __init__(self) -> None:
        self.producers: dict[int, ProducerEntry] = {}

    def add(self, producer_id: int, epoch: int, sequence: int, offset: int) -> None:
        """``ProducerStateEntry.addBatch``: a batch of another epoch clears the batches
        (``maybeUpdateProducerEpoch``)."""
        e = self.producers.get(producer_id)
        if e is None or e.epoch != epoch:
            e = self.producers[producer_id] = ProducerEntry(epoch)
        e.batches.append((sequence, offset))

    def rebuild(self, entries: list, log_start: int) -> None:
        """The state replayed from the log (a truncation, a restart, a deletion)."""
        self.producers.clear()
        for i, e in enumerate(entries):
            if len(e) >= 5:
                self.add(e[3], e[5] if len(e) >= 6 else 0, e[4], log_start + i)

    def analyze(self, producer_id: int, epoch: int, sequence: int) -> tuple[str, int]:
        """(answer, offset) to a client's batch (``epoch``, ``sequence``): see the module's
        docstring; ``offset`` is the original's for DUPLICATE, else -1."""
        e = self.producers.get(producer_id)
        if e is None:
            return APPEND, -1
        if epoch == e.epoch:
            for s, o in e.batches:
                if s == sequence:
                    return DUPLICATE, o
        if epoch < e.epoch:
            return INVALID_EPOCH, -1
        if epoch != e.epoch:
            return (APPEND if sequence == 0 else OUT_OF_ORDER), -1
        last = e.batches[-1][0] if e.batches else -1
        return (APPEND if sequence == last + 1 else OUT_OF_ORDER), -1
