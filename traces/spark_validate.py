"""`isr validate --engine spark`: many traces validated in parallel (one SparkSession, local[*]).

Runs travel as (name, text) pairs, the text being one file or the list of a run's per-process
files (merged by Lamport clock on the executor). The driver packs them into one bucket per task
slot, longest first into the lightest bucket (sizes in bytes stand in for events), so slots
finish together; each task validates its bucket with the sequential validator and the cyclic GC
paused, and only the verdicts (as JSON) come back to be summarised.
"""

from __future__ import annotations

import time
from typing import Any

from .validate import Verdict

Run = tuple[str, str | list[str]]  # (name, text of its file or of its per-process files)


def _validate_bucket(bucket: list[Run]) -> list[dict[str, Any]]:
    from checker.nogc import gc_paused
    from traces.validate import validate_text

    @gc_paused
    def go() -> list[dict[str, Any]]:
        out = []
        for name, text in bucket:
            v = validate_text(text, name)
            d = v.to_json()
            d["exit"] = v.exit
            d["order"] = name
            out.append(d)
        return out

    return go()


def _size(run: Run) -> int:
    t = run[1]
    return len(t) if isinstance(t, str) else sum(len(x) for x in t)


def buckets(items: list[Run], n: int) -> list[list[Run]]:
    """Longest-processing-time-first packing of ``items`` into ``n`` buckets."""
    import heapq

    heap = [(0, k) for k in range(n)]
    out: list[list[Run]] = [[] for _ in range(n)]
    for run in sorted(items, key=_size, reverse=True):
        load, k = heapq.heappop(heap)
        out[k].append(run)
        heapq.heappush(heap, (load + _size(run), k))
    return [b for b in out if b]


def validate_many(
    items: list[Run], master: str = "local[*]", partitions: int | None = None
) -> tuple[list[Verdict], dict[str, Any]]:
    """Verdicts in the order of ``items`` (names must be unique), and a summary."""
    import os
    import sys

    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    t0 = time.perf_counter()
    spark = (
        SparkSession.builder.master(master)
        .appName("isr-validate")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", "1g")
        .getOrCreate()
    )
    try:
        sc = spark.sparkContext
        sc.setLogLevel("ERROR")
        parts = buckets(items, partitions or sc.defaultParallelism)
        t1 = time.perf_counter()
        rows = sc.parallelize(parts, len(parts)).flatMap(_validate_bucket).collect()
        t2 = time.perf_counter()
    finally:
        spark.stop()
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
