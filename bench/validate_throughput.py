"""Trace validation throughput (issue 6): events/s on a long single trace (>= 100,000 events from
the deterministic simulation), the growth exponent of validation time vs trace length (log-log
least squares, best of 3 runs per length), and batches of 1,000 traces validated sequentially
and with the Spark engine (local[*]), short traces (6 records) and longer ones (60 records).

    python bench/validate_throughput.py [--events 100000] [--batch 1000] [--records 6 60]
                                        [--no-spark] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from isr.impl.sim.scenarios import random_faults, run_random
from isr.impl.sim.world import World, sim_config
from isr.traces.validator.validate import validate_events, validate_text


def long_trace(min_events: int, seed: int = 0) -> tuple[dict, list[dict]]:
    """acks=all records at a steady pace on 3 brokers, a crash and restart every ~2,000 records
    (each broker in turn, so leaders change), until the trace holds ``min_events`` events."""
    w = World(3, 1, 3, sim_config("kip-320"), seed=seed, full_log_in_trace=False)
    w.run_until(100)
    i = 0
    while len(w.trace) < min_events:
        w.produce(("t", 0), f"r{i}")
        w.run_until(w.now + 10)
        if i % 2000 == 1000:  # crash each broker in turn: followers and leaders
            b = (i // 2000) % 3
            w.crash(b)
            w.run_until(w.now + 300)
            w.restart(b)
        i += 1
    head = w.trace_header()
    return head, w.trace


def timed(head: dict, events: list[dict], repeat: int = 3) -> tuple[float, str]:
    """Best of ``repeat`` runs: the least disturbed by other load on the machine."""
    best, verdict = math.inf, ""
    for _ in range(repeat):
        evs = [dict(e) for e in events]
        t0 = time.perf_counter()
        v = validate_events(head, evs)
        best, verdict = min(best, time.perf_counter() - t0), v.verdict
    return best, verdict


def batch(n: int, records: int = 6) -> list[tuple[str, str]]:
    """``n`` simulated runs of ``records`` acks=all records each, 0-2 random faults per run."""
    import json

    items = []
    for s in range(n):
        w = run_random("kip-320", random_faults(s, records), seed=s, records=records)
        text = "\n".join(json.dumps(x) for x in [w.trace_header(), *w.trace]) + "\n"
        items.append((f"sim-{s}", text))
    return items


def exponent(xs: list[float], ys: list[float]) -> float:
    """Least-squares slope of log(time) over log(length)."""
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    num = sum((x - mx) * (y - my) for x, y in zip(lx, ly, strict=True))
    return num / sum((x - mx) ** 2 for x in lx)


def long_run(n: int, repeat: int) -> dict:
    t0 = time.perf_counter()
    head, events = long_trace(n)
    print(f"generated {len(events)} events in {time.perf_counter() - t0:.1f}s")
    rows = []
    for frac in (8, 4, 2, 1):
        part = events[: len(events) // frac]
        dt, verdict = timed(head, part, repeat)
        rows.append({"events": len(part), "seconds": dt, "events_per_s": len(part) / dt})
        print(f"  {len(part):>7} events: {dt:6.2f}s  {len(part) / dt:>8.0f} events/s  {verdict}")
    k = exponent([r["events"] for r in rows], [r["seconds"] for r in rows])
    print(f"growth exponent (time ~ length^k, best of {repeat}): k = {k:.2f}")
    return {"sizes": rows, "exponent": k}


def batch_run(n: int, records: int, spark: bool) -> dict:
    t0 = time.perf_counter()
    items = batch(n, records)
    print(f"generated {len(items)} traces of {records} records in {time.perf_counter() - t0:.1f}s")
    t0 = time.perf_counter()
    seq = [validate_text(t, n) for n, t in items]
    dt = time.perf_counter() - t0
    ev = sum(v.events for v in seq)
    out: dict = {"traces": len(items), "records": records, "events": ev, "sequential_s": dt}
    print(f"sequential: {len(items)} traces, {ev} events in {dt:.1f}s = {ev / dt:.0f} events/s")
    if not spark:
        return out
    from isr.traces.validator.spark_validate import validate_many

    verdicts, summary = validate_many(items)
    same = [v.verdict for v in verdicts] == [v.verdict for v in seq]
    out.update(spark=summary, speedup=dt / summary["seconds"], same_verdicts=same)
    print(
        "spark local[*]: {traces} traces, {events} events in {seconds:.1f}s "
        "({seconds_with_startup:.1f}s with start-up) = {events_per_s:.0f} events/s, "
        "verdicts {verdicts}".format(**summary)
    )
    print(f"spark / sequential: {out['speedup']:.2f}x (start-up excluded); verdicts equal: {same}")
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=100_000, help="long trace length")
    ap.add_argument("--repeat", type=int, default=3, help="runs per length (best is kept)")
    ap.add_argument("--batch", type=int, default=1000, help="traces in the batch")
    ap.add_argument("--records", type=int, nargs="+", default=[6, 60],
                    help="records per batch trace (one batch per value)")  # fmt: skip
    ap.add_argument("--no-spark", action="store_true")
    ap.add_argument("--json", metavar="FILE", help="write the results as JSON")
    a = ap.parse_args()
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cpus, Python "
        f"{platform.python_version()}, load average {os.getloadavg()[0]:.2f}"
    )
    res = {
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "long": long_run(a.events, a.repeat),
    }
    res["batches"] = [batch_run(a.batch, r, not a.no_spark) for r in a.records if a.batch]
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
