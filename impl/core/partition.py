"""One replica of one partition on a broker, as leader or follower (R2-R7, R10, R11).

Plain state; the rules live in ``replica.py`` (the broker's replica manager) so that this file reads
as the list of what a replica knows. The log start moves by R12's reset and, in the kraft
version, by DeleteRecords and retention (logstart.py). Not modelled: transactions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .log import PartitionLog
from .messages import TP

NONE_ROLE = "none"  # restarted or stopped: neither serving nor fetching
LEADER = "leader"
FOLLOWER = "follower"

# Follower states.
TRUNCATING = "truncating"  # waiting for an OffsetsForLeaderEpoch answer (KIP-101+)
FETCHING = "fetching"
# Told to stop (StopReplica without delete: its broker is shutting down, R9): still a follower
# at its epoch, keeping its log, but neither fetching nor truncating until the next LeaderAndIsr.
STOPPED = "stopped"


@dataclass
class RemoteReplica:
    """The leader's view of one follower (R3, R7)."""

    leo: int = -1  # unknown until the follower fetches (R11: HW may lag until then)
    last_caught_up_ms: int = 0
    last_fetch_ms: int = 0
    leader_leo_at_last_fetch: int = 0
    broker_epoch: int = -1  # kraft: the broker epoch of the last fetch counted (KIP-903)


@dataclass
class DelayedProduce:
    """An acks=all produce waiting for the HW to pass ``required`` (R6)."""

    client: str
    correlation_id: int
    base_offset: int
    required: int
    duplicate: bool = False  # an idempotent retry of a batch the log holds: traced by the original
    rids: tuple[str, ...] = ()  # the record ids, for ProduceAcked (R12: the log may delete them)


@dataclass
class Partition:
    tp: TP
    log: PartitionLog
    replicas: tuple[int, ...] = ()
    role: str = NONE_ROLE
    leader: int = -1
    leader_epoch: int = -1
    isr: frozenset[int] = frozenset()
    zk_version: int = -1
    hw_checkpoint: int = 0
    # leader only
    remote: dict[int, RemoteReplica] = field(default_factory=dict)
    epoch_start_offset: int = 0
    pending_isr: tuple[str, frozenset[int], int] | None = None  # (kind, isr, leader epoch)
    # kraft: an AlterPartition of this replica is in flight (kept across a re-election, unlike
    # ``pending_isr``: one in flight per leader, as the spec's, until the controller answers)
    alter_in_flight: bool = False
    # kraft, KIP-455: the controller's answer completed a reassignment (a new leader epoch, or
    # NEW_LEADER_ELECTED): the change stays pending, not in flight, until newer metadata
    # overrides it (``Partition.handleAlterPartitionError``; the spec's
    # LeaderClearPendingAlterPartition)
    alter_answered: bool = False
    # kraft, KIP-455: told to stop and delete the replica (no longer a replica) while a fetch
    # of it was in flight: the stop waits for that fetch's end (Kafka's leader still handles
    # the request; the answer is dropped with the fetcher)
    stop_pending: bool = False
    delayed: list[DelayedProduce] = field(default_factory=list)
    # follower only
    fetch_state: str = FETCHING
    resume_state: str = FETCHING  # the fetch state a STOPPED follower resumes in
    epoch_query_corr: int = -1
    # the fetch offset while truncating (Kafka's PartitionFetchState): the HW when the fetcher
    # starts (makeFollowers), then where each OffsetsForLeaderEpoch round cut; an UNDEFINED
    # answer truncates to it (AbstractFetcherThread.getOffsetTruncationState)
    truncation_fetch_offset: int = 0
    # trace bookkeeping: log delta since the last traced event of this partition
    trace_mark: int = 0
    trace_cut: int | None = None
    flush_due: bool = False  # an append reached flush_interval_batches: fsync after its event

    def under_replicated(self) -> bool:
        return self.role == LEADER and len(self.isr) < len(self.replicas)
