"""Fingerprints: 64-bit, identical in every process and on every machine.

A state is a nest of tuples of ints and bools (see :mod:`checker.model`). CPython's hash of such
a value is a pure function of the value: ints hash to themselves modulo 2**61 - 1 and tuples
combine their items with a fixed xxHash-style mix (CPython >= 3.8). Only str/bytes hashing is
salted by PYTHONHASHSEED, and states never contain them. So ``hash(state)`` *is* the canonical
encoding's digest, at a fraction of the cost of serialising and hashing bytes — the dominant cost
per generated state. ``tests/checker/test_fingerprint.py`` pins the value across processes with
different hash seeds.

Collisions: two distinct states sharing a fingerprint make the second look visited. With n
distinct states the chance of any collision is about n*(n-1)/2**65, reported at the end of a run
as TLC does ("calculated, optimistic": it assumes uniform hashes).
"""

from __future__ import annotations

from .model import State

FP_BITS = 64
ZERO_STANDIN = 0x2545F4914F6CDD1D  # 0 marks an empty slot in checker.fpset; never a fingerprint


def fingerprint(state: State) -> int:
    """The 64-bit fingerprint of a (canonical) state, as a signed int; never 0."""
    return hash(state) or ZERO_STANDIN


def collision_probability(distinct: int) -> float:
    """Optimistic probability that at least one fingerprint collision happened."""
    return distinct * (distinct - 1) / 2.0 ** (FP_BITS + 1)


def check_hashable_value(value: object, path: str = "state") -> None:
    """Raise TypeError if ``value`` contains anything whose hash is process-dependent."""
    if isinstance(value, bool | int) or value is None:
        return
    if isinstance(value, tuple):
        for i, item in enumerate(value):
            check_hashable_value(item, f"{path}[{i}]")
        return
    raise TypeError(
        f"{path} is a {type(value).__name__}; states may hold only ints, bools, None and tuples "
        "so that fingerprints are identical across processes"
    )
