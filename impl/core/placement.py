"""R1 replica placement: replica j of partition i goes to broker (i + j) mod n (sorted brokers)."""

from __future__ import annotations


def assign(brokers: list[int], partitions: int, replication: int) -> dict[int, tuple[int, ...]]:
    """Partition -> replicas, the first being the preferred leader. One replica per broker."""
    ids = sorted(brokers)
    n = len(ids)
    if replication > n:
        raise ValueError(f"replication factor {replication} exceeds the {n} available brokers")
    if replication < 1 or partitions < 1:
        raise ValueError("partitions and replication must be >= 1")
    return {i: tuple(ids[(i + j) % n] for j in range(replication)) for i in range(partitions)}
