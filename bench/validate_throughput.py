"""Trace validation throughput (issue 6): events/s on a long single trace (>= 100,000 events from
the deterministic simulation), the growth exponent of validation time vs trace length (log-log
least squares), and a batch of 1,000 traces validated with the Spark engine.

    python bench/validate_throughput.py [--events 100000] [--batch 1000] [--no-spark]
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from impl.sim.scenarios import Fault, run_random
from impl.sim.world import World, sim_config
from traces.format import header
from traces.validate import validate_events, validate_text


def long_trace(min_events: int, seed: int = 0) -> tuple[dict, list[dict]]:
    """acks=all records at a steady pace on 3 brokers, a follower crash and restart every
    ~2,000 records, until the trace holds ``min_events`` events."""
    w = World(3, 1, 3, sim_config("kip-320"), seed=seed, full_log_in_trace=False)
    w.run_until(100)
    i = 0
    while len(w.trace) < min_events:
        w.produce(("t", 0), f"r{i}")
        w.run_until(w.now + 10)
        if i % 2000 == 1000:
            w.crash(2)
            w.run_until(w.now + 300)
            w.restart(2)
        i += 1
    head = header("kip-320", "sim", config=w.config.to_dict(),
                  cluster={"brokers": w.ids, "assignments": {"t-0": [0, 1, 2]}})  # fmt: skip
    return head, w.trace


def timed(head: dict, events: list[dict]) -> tuple[float, str]:
    evs = [dict(e) for e in events]
    t0 = time.perf_counter()
    v = validate_events(head, evs)
    return time.perf_counter() - t0, v.verdict


def batch(n: int) -> list[tuple[str, str]]:
    import json

    kinds = ["crash", "restart", "partition", "duplicate", "loss"]
    items = []
    for s in range(n):
        rng = random.Random(s)
        faults = [
            Fault(rng.randint(0, 300), rng.choice(kinds), rng.randint(0, 2), rng.randint(0, 2),
                  rng.randint(10, 100))
            for _ in range(rng.randint(0, 2))
        ]  # fmt: skip
        w = run_random("kip-320", faults, seed=s, records=6)
        head = header("kip-320", "sim", config=w.config.to_dict(),
                      cluster={"brokers": w.ids, "assignments": {"t-0": [0, 1, 2]}})  # fmt: skip
        text = "\n".join(json.dumps(x) for x in [head, *w.trace]) + "\n"
        items.append((f"sim-{s}", text))
    return items


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--no-spark", action="store_true")
    a = ap.parse_args()
    t0 = time.perf_counter()
    head, events = long_trace(a.events)
    print(f"generated {len(events)} events in {time.perf_counter() - t0:.1f}s")
    xs, ys = [], []
    for frac in (8, 4, 2, 1):
        part = events[: len(events) // frac]
        dt, verdict = timed(head, part)
        print(f"  {len(part):>7} events: {dt:6.2f}s  {len(part) / dt:>8.0f} events/s  {verdict}")
        xs.append(math.log(len(part)))
        ys.append(math.log(dt))
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    k = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )
    print(f"growth exponent (time ~ length^k): k = {k:.2f}")
    if a.no_spark:
        return 0
    t0 = time.perf_counter()
    items = batch(a.batch)
    print(f"generated {len(items)} traces in {time.perf_counter() - t0:.1f}s")
    t0 = time.perf_counter()
    seq = [validate_text(t, n) for n, t in items]
    dt = time.perf_counter() - t0
    ev = sum(v.events for v in seq)
    print(f"sequential: {len(items)} traces, {ev} events in {dt:.1f}s = {ev / dt:.0f} events/s")
    from traces.spark_validate import validate_many

    _verdicts, summary = validate_many(items)
    print(
        "spark local[*]: {traces} traces, {events} events in {seconds:.1f}s "
        "({seconds_with_startup:.1f}s with start-up) = {events_per_s:.0f} events/s, "
        "verdicts {verdicts}".format(**summary)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
