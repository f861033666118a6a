"""`isr validate --engine spark`: many traces validated in parallel (one SparkSession, local[*]).

Traces travel as (name, text) pairs; each task parses and validates its traces with the same
sequential validator, and the verdicts (as JSON) are collected and summarised on the driver.
"""

from __future__ import annotations

import time
from typing import Any

from .validate import Verdict


def _validate_pair(pair: tuple[str, str]) -> dict[str, Any]:
    from traces.validate import validate_text

    v = validate_text(pair[1], pair[0])
    d = v.to_json()
    d["exit"] = v.exit
    return d


def validate_many(
    items: list[tuple[str, str]], master: str = "local[*]", partitions: int | None = None
) -> tuple[list[Verdict], dict[str, Any]]:
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
        n = partitions or max(2, sc.defaultParallelism * 2)
        t1 = time.perf_counter()
        rows = sc.parallelize(items, n).map(_validate_pair).collect()
        t2 = time.perf_counter()
    finally:
        spark.stop()
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
