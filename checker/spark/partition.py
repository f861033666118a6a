"""Partitioning by fingerprint, and the visited set kept partitioned beside the states.

Partition ``p`` of every per-level RDD holds exactly one record: the blob of fingerprint
partition ``p`` (``fp % parts == p``). Candidates for the next level are shuffled to the
partition of their fingerprint (the only shuffle per level, and only of new candidates); the
visited set never moves: the candidates' partition ``p`` is zipped with the visited set's
partition ``p`` (``RDD.zip`` of two RDDs with one element per partition, a narrow dependency),
so deduplication is a co-partitioned, shuffle-free step.

The visited set of a partition is an ``array('q')`` of fingerprints: it pickles as raw bytes.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator
from typing import Any


def partition_of(fp: int, parts: int) -> int:
    """The partition owning fingerprint ``fp`` (non-negative for negative fingerprints too)."""
    return fp % parts


def route(key: int) -> int:
    """``partitionFunc`` for keys that already are partition indices."""
    return key


def fingerprints(fps: Iterable[int] = ()) -> array:
    return array("q", fps)


def zip_partitions(left: Any, right: Any) -> Any:
    """Pair partition ``p`` of ``left`` with partition ``p`` of ``right`` (one element each)."""
    return left.glom().zip(right)


def one_blob(it: Iterator[Any]) -> Any:
    """The single element of a partition of a per-level RDD."""
    blobs = list(it)
    if len(blobs) != 1:
        raise RuntimeError(f"expected one blob per partition, got {len(blobs)}")
    return blobs[0]
