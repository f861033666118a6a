"""The small per-level summaries executors send to the driver, and how they merge.

A summary is a plain dict (cheap to pickle, JSON-able):

* ``generated``  successors generated while expanding the level's frontier
* ``new``        new distinct states found (the next frontier)
* ``deadlocks``  frontier states (inside the boundary) with no enabled action
* ``deadlock``   the smallest fingerprint among them, or None
* ``fired``      bitmask of action kinds that fired
* ``inv``        invariant name -> smallest fingerprint of a new state violating it
* ``act``        action-property name -> smallest fingerprint of a source state violating it
* ``wit``        `sometimes` name -> smallest fingerprint witnessing it

Smallest fingerprints make the reported example deterministic; any one of the level would be
as short, since the level is the BFS depth.
"""

from __future__ import annotations

from typing import Any

Summary = dict[str, Any]


def empty() -> Summary:
    return {
        "generated": 0,
        "new": 0,
        "deadlocks": 0,
        "deadlock": None,
        "fired": 0,
        "inv": {},
        "act": {},
        "wit": {},
    }


def _min(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b)


def note(table: dict[str, int], name: str, fp: int) -> None:
    """Record ``fp`` for ``name`` keeping the smallest."""
    old = table.get(name)
    if old is None or fp < old:
        table[name] = fp


def merge(a: Summary, b: Summary) -> Summary:
    out = empty()
    for key in ("generated", "new", "deadlocks"):
        out[key] = a[key] + b[key]
    out["deadlock"] = _min(a["deadlock"], b["deadlock"])
    out["fired"] = a["fired"] | b["fired"]
    for key in ("inv", "act", "wit"):
        table = dict(a[key])
        for name, fp in b[key].items():
            note(table, name, fp)
        out[key] = table
    return out


def merge_all(parts: list[Summary]) -> Summary:
    out = empty()
    for s in parts:
        out = merge(out, s)
    return out
