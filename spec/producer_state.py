"""A partition replica's producer state (KIP-98's idempotence, R6, R15), derived from its log.

Kafka's broker keeps, per producer id, the producer epoch of its last batch and the metadata
(sequence, offset) of its last five batches of that epoch (``ProducerStateEntry``,
``NUM_BATCHES_TO_RETAIN``; 3.9: storage/src/main/java/org/apache/kafka/storage/internals/log/).
Every append updates it, a follower's too (``UnifiedLog.appendAsFollower``, origin REPLICATION:
no check, the leader's batches taken as they are); a truncation rebuilds it from the log
(``UnifiedLog.truncateTo`` -> ``rebuildProducerState`` -> ``ProducerStateManager.
truncateAndReload``), and so does a restart (``loadProducerState``). A snapshot file at each
segment roll spares the replay from the start; in the spec a segment is one record, so a
snapshot exists at every offset above the log start and the state is the replay of the log:
this module computes it from the log each time it is read, which is what Kafka's rebuild
gives. Only where the log start moved does a snapshot hold more than the log: since
KAFKA-7190 (Kafka 2.5, KIP-360) the state of batches below the log start is kept (in memory
and in the snapshots), before it a producer whose last batch fell below the log start was
forgotten (``truncateHead``, ``retain_producer_state``); and a follower reset to its leader's
log start (``truncateFullyAndStartAt``) drops every snapshot and starts empty there
(``Faults.producer_state_start``).

One producer writes (one producer id): the entries of an idempotent log carry its batch
header, (record, leader epoch, producer epoch, sequence), one record per batch.
"""

from __future__ import annotations

from .state import Log, Producer

NUM_BATCHES_TO_RETAIN = 5  # ProducerStateEntry.NUM_BATCHES_TO_RETAIN (KAFKA-5494, Kafka 1.0)

# What the leader answers a produce request of the idempotent producer (its batch header)
DUPLICATE = 0  # a batch it holds: success with the original offset (3.9 returns no error; the
# client also takes DUPLICATE_SEQUENCE_NUMBER, an older broker's answer, as success)
APPEND = 1  # in sequence: appended
OUT_OF_ORDER = 2  # OUT_OF_ORDER_SEQUENCE_NUMBER: not appended
INVALID_EPOCH = 3  # INVALID_PRODUCER_EPOCH, an epoch older than the one it holds: not appended

ProducerEntry = tuple[int, tuple[tuple[int, int], ...]]  # (producer epoch, ((seq, offset), ...))


def producer_entry(
    log: Log, start: int = 0, log_start: int = 0, retain: bool = True, cached: int = 5
) -> ProducerEntry | None:
    """The replica's entry for the producer: its producer epoch and the (sequence, offset) of
    its last ``cached`` batches of that epoch, oldest first, from replaying ``log`` from offset
    ``start`` (``ProducerStateEntry.addBatch``: a batch of another epoch clears the batches,
    ``maybeUpdateProducerEpoch``); None when the replica has none (NO_PRODUCER_EPOCH). Without
    ``retain`` (before KAFKA-7190) an entry whose last batch is below ``log_start`` is gone."""
    epoch = -1
    batches: list[tuple[int, int]] = []
    for o in range(start, len(log)):
        e = log[o]
        if e[2] != epoch:
            epoch = e[2]
            batches = []
        batches.append((e[3], o))
        if len(batches) > cached:
            del batches[0]
    if epoch < 0 or (not retain and batches[-1][1] < log_start):
        return None
    return epoch, tuple(batches)


def analyze(entry: ProducerEntry | None, epoch: int, seq: int) -> tuple[int, int]:
    """(answer, offset) of the leader to a produce of the batch (``epoch``, ``seq``), given its
    entry for the producer: Kafka 3.9's client-origin append, ``UnifiedLog.
    analyzeAndValidateProducerState`` (a batch among the cached ones of the same epoch is a
    duplicate: ``ProducerStateEntry.findDuplicateBatch``, answered with its offset), then
    ``ProducerAppendInfo.checkProducerEpoch`` and ``checkSequence``: an older epoch is fenced;
    a new epoch must start at sequence 0 unless the replica holds nothing of the producer
    (KAFKA-8710, Kafka 2.5: "accept writes with any sequence number", where 2.4 answered
    UNKNOWN_PRODUCER_ID); the same epoch must continue at the last sequence + 1. ``offset``
    is the original's for DUPLICATE, else -1."""
    if entry is None:
        return APPEND, -1
    held, batches = entry
    if epoch == held:
        for s, o in batches:
            if s == seq:
                return DUPLICATE, o
    if epoch < held:
        return INVALID_EPOCH, -1
    if epoch != held:
        return (APPEND if seq == 0 else OUT_OF_ORDER), -1
    return (APPEND if seq == batches[-1][0] + 1 else OUT_OF_ORDER), -1


# --- the producer's side: the answers its batches in flight hold (spec.state.Producer) -------
NO_ANSWER = 0  # none yet, lost, or an error the producer retries (NOT_ENOUGH_REPLICAS, ...)
ACKED = 1  # acknowledged (appended and committed, or a duplicate of a committed batch)
OUT_OF_ORDER_ANSWER = 2  # OUT_OF_ORDER_SEQUENCE_NUMBER, to the batch the producer expects next
WAITING = 3  # in the purgatory of the leader of (leader epoch, offset): acks=all


def answer_waiting(p: Producer, broker: int, offsets: list[int], acked: bool) -> Producer:
    """The batches waiting in the purgatory of leader ``broker`` at one of ``offsets`` get
    their answer: acknowledged, or (``acked`` False) NotEnoughReplicasAfterAppend, an error the
    producer retries. A broker and an offset name one purgatory entry: a purgatory lives as
    long as its broker leads, across a re-election of the same broker in a newer leader epoch
    (``Partition.makeLeader`` keeps the delayed produce; BrokerBecomeLeader's ``again``), and
    a leader does not truncate below its own records meanwhile. (Keyed by the batch's leader
    epoch before, the answer after such a re-election never reached the producer: found by the
    kit's idempotent random schedules, docs/conformance.md; spec.actions.common.
    advance_leader_hw completes them.)"""
    batches = p.batches
    if not any(b[2] == WAITING and b[3] == broker and b[5] in offsets for b in batches):
        return p
    return p._replace(
        batches=tuple(
            ((b[0], b[1], ACKED, b[3], 0, 0) if acked else (b[0], b[1], NO_ANSWER, -1, 0, 0))
            if b[2] == WAITING and b[3] == broker and b[5] in offsets
            else b
            for b in batches
        )
    )
