"""Settings shared by the core and both runtimes (R6, R7, R9, R10, R12, R14).

Protocol versions are a setting so the buggy ones can be run:
- ``hw-truncation``: the seeds' protocol, a follower truncates to its HW (R10, R13);
- ``kip-101``: truncate by OffsetsForLeaderEpoch, one round;
- ``kip-279``: the leader answers with the largest epoch it knows <= the asked one, so the follower
  truncates at the true divergence point;
- ``kip-320``: kip-279 plus fetches carrying the current leader epoch (fencing);
- ``kraft``: Kafka 2.7+'s fetch (DivergingEpoch, broker epochs) with the KRaft controller's
  asynchronous AlterPartition, partition epoch apart from the leader epoch and broker
  registration (issue 18; the simulation only: see ``SIM_ONLY_PROTOCOLS``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from .truncation import STRATEGIES

PROTOCOLS = tuple(STRATEGIES)  # the versions the implementation runs (a subset of the spec's)
# The spec's DEFAULT_PROTOCOL (impl imports no spec; tests/impl/test_strategies_match_spec.py checks)
DEFAULT_PROTOCOL = "kip-320"
# Versions the real cluster (impl/cluster, a ZooKeeper-era runtime) refuses, with the reason.
SIM_ONLY_PROTOCOLS = {
    "kraft": "--protocol kraft runs in the simulation only: KRaft has no ZooKeeper, and the real"
    " cluster (impl/cluster) is the ZooKeeper-era runtime (its controller writes ZooKeeper)",
}


@dataclass(frozen=True)
class Config:
    protocol: str = DEFAULT_PROTOCOL
    min_insync_replicas: int = 2
    replica_lag_time_max_ms: int = 10_000  # R7
    replica_fetch_backoff_ms: int = 100  # R12
    replica_fetch_wait_max_ms: int = 500  # delayed (long-poll) fetch on the leader
    replica_fetch_max_records: int = 500
    num_replica_fetchers: int = 1  # R10
    hw_checkpoint_interval_ms: int = 5_000  # R13: the checkpoint lags the in-memory HW
    isr_check_interval_ms: int = 1_000  # how often the leader looks for laggards (R7)
    request_timeout_ms: int = 5_000  # acks=all delayed produce
    unclean_leader_election: bool = False  # R9
    flush_interval_batches: int = 0  # 0: never ask for fsync (rely on the OS, R14)
    message_send_max_retries: int = 3  # R6
    controller_resync_ms: int = 2_000  # controller re-sends partition state (lost requests)
    # R12 (kraft): records per log segment, the unit retention deletes (segments based at
    # multiples of it; Kafka's segment.bytes); impl/core/logstart.py
    log_segment_records: int = 2

    def __post_init__(self) -> None:
        if self.protocol not in PROTOCOLS:
            raise ValueError(
                f"unknown protocol {self.protocol!r}; choose from {', '.join(PROTOCOLS)}"
            )
        if self.num_replica_fetchers < 1:
            raise ValueError("num_replica_fetchers must be >= 1")

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, object]) -> Config:
        return cls(**d)  # type: ignore[arg-type]
