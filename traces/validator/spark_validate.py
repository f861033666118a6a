"""`isr validate --engine spark`: many traces validated in parallel on Spark (local[*] by default).

Runs travel as (name, text) pairs, the text being one file or the list of a run's per-process
files (merged by Lamport clock on the executor). The driver cuts them into slices of similar
size (bytes stand in for events), longest first into the lightest slice, as many as there are
task slots unless that makes a task carry more than SLICE_BYTES; each task validates its slice
with the sequential validator (which pauses the cyclic GC), and only the verdicts (as JSON) come
back to be summarised.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from functools import partial
from typing import Any

from isr.spec.protocols import ProtocolVersion

from .validate import Verdict, validate_text

Run = tuple[str, str | list[str]]  # (name, text of its file or of its per-process files)


def _validate_bucket(
    version: ProtocolVersion | None, bucket: Iterable[Run]
) -> list[dict[str, Any]]:
    """Validate one slice on an executor. ``version``: a user's protocol version
    (``--protocol-file``), carried by value in the task closure (it pickles as its file's
    content: cli.protocol_file), validated against instead of the header's."""
    out = []
    for name, text in bucket:
        v = validate_text(text, name, protocol=version)
        d = v.to_json()
        d["exit"] = v.exit
        d["order"] = name
        out.append(d)
    return out


def _size(run: Run) -> int:
    t = run[1]
    return len(t) if isinstance(t, str) else sum(len(x) for x in t)


SLICE_BYTES = 16 << 20  # trace text per task at most (tasks carry their data: keep them small)


def slices(items: list[Run], slots: int) -> tuple[list[Run], int]:
    """``items`` reordered, and a slice count, such that Spark's even slicing by count (slice k
    is ``items[k*L//n:(k+1)*L//n]``) gives slices of similar size: a multiple of ``slots``
    slices of at most SLICE_BYTES each where possible, filled longest first into the lightest
    slice with room left."""
    import heapq

    total = sum(_size(r) for r in items)
    n = max(1, min(len(items), slots * max(1, -(-total // (SLICE_BYTES * slots)))))
    size = len(items)
    room = [(k + 1) * size // n - k * size // n for k in range(n)]
    heap = [(0, k) for k in range(n)]
    groups: list[list[Run]] = [[] for _ in range(n)]
    for run in sorted(items, key=_size, reverse=True):
        load, k = heapq.heappop(heap)
        groups[k].append(run)
        if len(groups[k]) < room[k]:
            heapq.heappush(heap, (load + _size(run), k))
    return [r for g in groups for r in g], n


def validate_many(
    items: list[Run],
    master: str | None = None,
    partitions: int | None = None,
    protocol: ProtocolVersion | None = None,
) -> tuple[list[Verdict], dict[str, Any]]:
    """Verdicts in the order of ``items`` (names must be unique), and a summary; ``protocol``
    validates every run against that version instead of the one its header names. Runs on the
    project's one Spark session helper (checker.spark.session.spark_context: the running
    SparkContext if there is one, else a new one on ``master``, default local[*], stopped at
    the end); its failures come out as SparkError."""
    from isr.checker.spark.session import spark_context

    t0 = time.perf_counter()
    with spark_context(master, "isr validate") as sc:
        ordered, n = slices(items, partitions or sc.defaultParallelism)
        t1 = time.perf_counter()
        rows = (
            sc.parallelize(ordered, n).mapPartitions(partial(_validate_bucket, protocol)).collect()
        )
        t2 = time.perf_counter()
    pos = {name: k for k, (name, _t) in enumerate(items)}
    rows.sort(key=lambda d: pos[d.pop("order")])
    verdicts = []
    for d in rows:
        v = Verdict(d["trace"], d["verdict"], events=d["events"], partitions=d["partitions"])
        v.seconds = d["seconds"]
        v.max_candidates = d["max_candidates"]
        for k in ("reason", "index", "event", "candidates", "enabled", "mismatches"):
            if k in d:
                setattr(v, k, d[k])
        verdicts.append(v)
    events = sum(v.events for v in verdicts)
    counts: dict[str, int] = {}
    for v in verdicts:
        counts[v.verdict] = counts.get(v.verdict, 0) + 1
    summary = {
        "traces": len(verdicts),
        "events": events,
        "seconds": t2 - t1,
        "seconds_with_startup": t2 - t0,
        "events_per_s": events / max(t2 - t1, 1e-9),
        "verdicts": counts,
    }
    return verdicts, summary
