"""Wire messages and effects of the core, as frozen dataclasses (R2, R6, R9, R10, R12).

Messages are what travels between nodes; effects are what a handler asks its runtime to do.
Both serialise to plain JSON-able dicts (``to_wire``/``from_wire``) so the real runtime can frame
them and the simulation can copy them. A partition is named by ``TP = (topic, partition)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

TP = tuple[str, int]
# A log entry as the core keeps it: (leader_epoch, record_id, value).
# (leader epoch, record id, value), or for an idempotent producer's record
# (leader epoch, record id, value, producer id, sequence, producer epoch): the batch header
# Kafka keeps in the log, so every replica (a new leader, a restarted broker) derives which
# batches it holds (impl/core/producer_state.py; a 5-field entry: producer epoch 0).
Entry = tuple[int, str, str] | tuple[int, str, str, int, int] | tuple[int, str, str, int, int, int]

# Error codes (names follow Kafka's).
NONE = "NONE"
NOT_LEADER = "NOT_LEADER_FOR_PARTITION"
NOT_ENOUGH_REPLICAS = "NOT_ENOUGH_REPLICAS"
NOT_ENOUGH_REPLICAS_AFTER_APPEND = "NOT_ENOUGH_REPLICAS_AFTER_APPEND"
OFFSET_OUT_OF_RANGE = "OFFSET_OUT_OF_RANGE"
# KIP-98 idempotence (impl/core/producer_state.py): not appended
OUT_OF_ORDER_SEQUENCE_NUMBER = "OUT_OF_ORDER_SEQUENCE_NUMBER"
INVALID_PRODUCER_EPOCH = "INVALID_PRODUCER_EPOCH"
FENCED_LEADER_EPOCH = "FENCED_LEADER_EPOCH"
UNKNOWN_LEADER_EPOCH = "UNKNOWN_LEADER_EPOCH"
REQUEST_TIMED_OUT = "REQUEST_TIMED_OUT"
STALE_CONTROLLER_EPOCH = "STALE_CONTROLLER_EPOCH"
NOT_CONTROLLER = "NOT_CONTROLLER"
STALE_BROKER_EPOCH = (
    "STALE_BROKER_EPOCH"  # kraft: a fetch from a previous incarnation (KAFKA-15221)
)


@dataclass(frozen=True)
class PartitionState:
    """The coordination record of a partition (R18 .../partitions/[p]/state)."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    controller_epoch: int
    # kraft (KIP-966): eligible leader replicas, members removed while the ISR was below
    # min.insync.replicas; () in every other version
    elr: tuple[int, ...] = ()
    # kraft: the leader whose controlled shutdown wrote leader -1, no other ISR member able to
    # replace it (Kafka's ``handleBrokerInControlledShutdown`` → ``PartitionChangeBuilder.
    # build`` with no acceptable leader), else -1. The brokers apply such a state (they stop
    # leading and fetching, the spec's BrokerBecomeFollower with leader -1); an offline write's
    # leader -1 (a fence, a crash) is not applied (the validator maps it as an offline epoch)
    shut_leader: int = -1


# ---- controller -> broker ---------------------------------------------------------------------
@dataclass(frozen=True)
class LeaderAndIsrPartition:
    topic: str
    partition: int
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int
    replicas: tuple[int, ...]
    leaderless: bool = False  # a controlled shutdown's leader -1, applied (``shut_leader``)


@dataclass(frozen=True)
class LeaderAndIsr:
    """Batched LeaderAndIsrRequest (R9)."""

    controller_id: int
    controller_epoch: int
    partitions: tuple[LeaderAndIsrPartition, ...]


@dataclass(frozen=True)
class StopReplica:
    """Batched StopReplicaRequest (R9): stop serving/fetching; ``delete`` drops the log."""

    controller_id: int
    controller_epoch: int
    partitions: tuple[tuple[str, int], ...]
    delete: bool = False
    # kraft, KIP-455: per partition, the partition epoch (version) of the state that removed
    # the broker: a LeaderAndIsr not newer than it, still in flight, is an older metadata image
    # the broker must not apply after it deleted the replica; () where not given
    versions: tuple[int, ...] = ()


# ---- replication -------------------------------------------------------------------------------
@dataclass(frozen=True)
class FetchPartition:
    topic: str
    partition: int
    fetch_offset: int
    current_leader_epoch: int  # only checked under kip-320
    # kraft (Kafka 2.7+ fetch): the epoch of the follower's last entry (-1: empty log), checked
    # by the leader for divergence, and the follower's broker epoch (KIP-903, KAFKA-15221)
    last_fetched_epoch: int = -1
    broker_epoch: int = -1


@dataclass(frozen=True)
class FetchRequest:
    """A follower fetcher's batched fetch (R2, R10); ``fetcher_id`` names its thread."""

    replica_id: int
    fetcher_id: int
    correlation_id: int
    partitions: tuple[FetchPartition, ...]


@dataclass(frozen=True)
class FetchPartitionData:
    topic: str
    partition: int
    error: str
    high_watermark: int
    leader_leo: int
    log_start_offset: int
    base_offset: int
    entries: tuple[Entry, ...]
    # kraft: (epoch, end offset) when the follower's log diverges from the leader's, else ()
    diverging: tuple[int, ...] = ()
    leader_epoch: int = -1  # kraft: the fetch's leader epoch, echoed (the response guard)


@dataclass(frozen=True)
class FetchResponse:
    leader_id: int
    fetcher_id: int
    correlation_id: int
    partitions: tuple[FetchPartitionData, ...]


@dataclass(frozen=True)
class EpochQuery:
    topic: str
    partition: int
    leader_epoch: int  # the follower's latest epoch
    current_leader_epoch: int


@dataclass(frozen=True)
class OffsetsForLeaderEpochRequest:
    """KIP-101/279 truncation query."""

    replica_id: int
    correlation_id: int
    partitions: tuple[EpochQuery, ...]


@dataclass(frozen=True)
class EpochEndOffset:
    topic: str
    partition: int
    error: str
    leader_epoch: int  # kip-279: the largest epoch the leader knows <= the asked one
    end_offset: int


@dataclass(frozen=True)
class OffsetsForLeaderEpochResponse:
    leader_id: int
    correlation_id: int
    partitions: tuple[EpochEndOffset, ...]


# ---- clients -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class ProduceRequest:
    """R6. ``records`` are (record_id, value); acks is 0, 1 or -1 (all)."""

    client_id: str
    correlation_id: int
    topic: str
    partition: int
    acks: int
    records: tuple[tuple[str, str], ...]
    # Idempotent producer (Kafka 3.x default, KIP-98): a producer id and the sequence number of
    # the batch's first record in this partition; a retry resends the same pair, and a leader
    # holding that batch already drops it and answers with its offset. -1: not idempotent.
    producer_id: int = -1
    base_sequence: int = -1
    producer_epoch: int = 0  # KIP-360: bumped by the producer after OUT_OF_ORDER_SEQUENCE_NUMBER


@dataclass(frozen=True)
class ProduceResponse:
    broker_id: int
    correlation_id: int
    topic: str
    partition: int
    error: str
    base_offset: int


@dataclass(frozen=True)
class ConsumeRequest:
    """R5: a consumer reads from ``offset``; only offsets below HW are returned."""

    client_id: str
    correlation_id: int
    topic: str
    partition: int
    offset: int
    max_records: int = 500


@dataclass(frozen=True)
class ConsumeResponse:
    broker_id: int
    correlation_id: int
    topic: str
    partition: int
    error: str
    high_watermark: int
    base_offset: int
    entries: tuple[Entry, ...]
    log_start: int = 0  # R12 (kraft): the replica's log start (OFFSET_OUT_OF_RANGE below it)


# ---- effects -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Send:
    dst: int | str  # broker id or client id
    msg: Any


@dataclass(frozen=True)
class SetTimer:
    key: str
    delay_ms: int


@dataclass(frozen=True)
class Append:
    """Persist ``entries`` at ``base_offset`` (== current durable LEO)."""

    tp: TP
    base_offset: int
    entries: tuple[Entry, ...]


@dataclass(frozen=True)
class Truncate:
    tp: TP
    offset: int


@dataclass(frozen=True)
class Flush:
    tp: TP


@dataclass(frozen=True)
class CheckpointHw:
    """Write the HW checkpoint of these partitions (atomic file replace in storage)."""

    hws: tuple[tuple[TP, int], ...]


@dataclass(frozen=True)
class DeleteLog:
    tp: TP


@dataclass(frozen=True)
class DeleteBefore:
    """R12: the log start offset moved up to ``offset``: the durable log drops what is below it
    (DeleteRecords, retention, a follower taking up its leader's log start; kraft)."""

    tp: TP
    offset: int


@dataclass(frozen=True)
class CasWrite:
    """Compare-and-set of a partition state in the coordination service (R9, R18).

    ``expected_version`` -1 means "create". The runtime answers with ``on_cas_results``.
    """

    tp: TP
    state: PartitionState
    expected_version: int
    purpose: str  # "isr" (leader) or "elect"/"shrink"/"create" (controller)
    # kraft AlterPartition (KIP-903): the follower an expansion adds and the broker epoch of the
    # fetch that justified it; the sending leader's broker epoch. -1 otherwise.
    added: int = -1
    added_broker_epoch: int = -1
    leader_broker_epoch: int = -1
    # kraft, KIP-455 (purpose "reassign"/"cancel"): the partition's replica set written with the
    # state (target + current - target during a reassignment), and its adding and removing
    # replicas (Kafka's PartitionRegistration.replicas/addingReplicas/removingReplicas); ()
    # for a write that leaves the assignment as it is
    replicas: tuple[int, ...] = ()
    adding: tuple[int, ...] = ()
    removing: tuple[int, ...] = ()


@dataclass(frozen=True)
class CasResult:
    tp: TP
    ok: bool
    state: PartitionState | None  # the state now stored (ours if ok, the winner's if not)
    version: int
    error: str = ""  # kraft: why the controller refused an AlterPartition


@dataclass(frozen=True)
class Trace:
    """One protocol step for the trace (traces/FORMAT.md)."""

    event: dict[str, Any] = field(default_factory=dict)


# ---- broker -> controller ----------------------------------------------------------------------
@dataclass(frozen=True)
class ControlledShutdownRequest:
    """A broker about to stop asks the controller to move leadership off it and take it out of
    the ISRs (R9, Kafka's ControlledShutdownRequest). Handled by the runtime hosting the
    controller (``Controller.controlled_shutdown``), answered when the writes have landed."""

    broker_id: int
    correlation_id: int


@dataclass(frozen=True)
class ControlledShutdownResponse:
    controller_id: int
    correlation_id: int
    error: str
    remaining: tuple[tuple[str, int], ...]  # partitions it still leads (no one to take over)


# ---- serialisation -----------------------------------------------------------------------------
_WIRE: dict[str, type] = {
    c.__name__: c
    for c in (
        PartitionState,
        LeaderAndIsrPartition,
        LeaderAndIsr,
        StopReplica,
        FetchPartition,
        FetchRequest,
        FetchPartitionData,
        FetchResponse,
        EpochQuery,
        OffsetsForLeaderEpochRequest,
        EpochEndOffset,
        OffsetsForLeaderEpochResponse,
        ProduceRequest,
        ProduceResponse,
        ConsumeRequest,
        ConsumeResponse,
        ControlledShutdownRequest,
        ControlledShutdownResponse,
    )
}


def to_wire(obj: Any) -> Any:
    """Dataclass -> JSON-able value, tagged with its type name."""
    if hasattr(obj, "__dataclass_fields__"):
        d: dict[str, Any] = {"@": type(obj).__name__}
        for f in fields(obj):
            d[f.name] = to_wire(getattr(obj, f.name))
        return d
    if isinstance(obj, tuple | list):
        return [to_wire(x) for x in obj]
    return obj


def from_wire(v: Any) -> Any:
    """Inverse of :func:`to_wire`; lists come back as tuples (messages are frozen)."""
    if isinstance(v, dict) and "@" in v:
        cls = _WIRE[v["@"]]
        return cls(**{k: from_wire(x) for k, x in v.items() if k != "@"})
    if isinstance(v, list):
        return tuple(from_wire(x) for x in v)
    return v


# What every sans-I/O handler of impl/core returns: Send, SetTimer, Append, Truncate, CheckpointHw,
# CasWrite, Trace, ... for the runtime to perform in order.
Effects = list[Any]
