"""Scaling study of the Spark engine: sequential BFS vs Spark with 1 and 2 executors, a fitted
cost model, and its projection for a 10^8-state configuration on 16 and 128 executors.

    python bench/spark_scaling.py [model options] [--mode local|cluster] [--master URL]
                                  [--out bench/results/spark_scaling.json]

--mode local    (default) Spark local[1] vs local[2]: one executor JVM with 1 or 2 task slots.
--mode cluster  a standalone cluster (scripts/spark-cluster.sh start): spark.cores.max=1 vs 2
                with 1 core per executor, i.e. 1 vs 2 executors.

Throughput is distinct states per second of the search itself (Spark start-up is measured and
reported apart: a long run pays it once). The cost model, fitted by least squares over the
per-level timings of both Spark runs:

    T_level = a + b * generated_states / executors

``a`` is the fixed cost of a level (scheduling two stages, the shuffle, the driver's summary),
``b`` the cost of one generated state on one executor (expand, canonicalise, fingerprint,
shuffle, dedup). A run costs T = a * levels + b * g * distinct / executors, with g the measured
generated/distinct ratio. The projection assumes the fixed cost per level does not grow with
the cluster (on large clusters it does, slowly: more tasks per stage) and that the shuffle keeps
its per-state cost (a network instead of loopback adds to b): it is a lower bound to size from.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from isr.checker.bfs import check_bfs  # noqa: E402
from isr.checker.spark.engine import check_spark  # noqa: E402
from isr.checker.spark.session import code_roots, start_context  # noqa: E402
from isr.spec import Config, IsrSpec  # noqa: E402

PROJECT_STATES = 10**8
PROJECT_EXECUTORS = (16, 128)


def machine() -> dict:
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    with contextlib.suppress(OSError):
        mem = Path("/proc/meminfo").read_text().splitlines()[0].split(":", 1)[1].strip()
    import pyspark

    return {
        "cpus": os.cpu_count(),
        "cpu_model": cpu,
        "memory": mem,
        "python": platform.python_version(),
        "pyspark": pyspark.__version__,
        "platform": platform.platform(),
    }


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def fit(points: list[tuple[float, float]]) -> tuple[float, float, float]:
    """Least squares y = a + b x; returns (a, b, r^2)."""
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    sxy = sum((x - mx) * (y - my) for x, y in points)
    b = sxy / sxx if sxx else 0.0
    a = my - b * mx
    ss = sum((y - my) ** 2 for _, y in points)
    res = sum((y - a - b * x) ** 2 for x, y in points)
    return a, b, 1 - res / ss if ss else 1.0


def run_spark(model, executors: int, args) -> dict:
    if args.mode == "local":
        master, extra = f"local[{executors}]", {}
    else:
        master = args.master
        extra = {"spark.cores.max": str(executors), "spark.executor.cores": "1"}
    extra["spark.executor.memory"] = args.executor_memory
    extra["spark.driver.memory"] = args.driver_memory
    before = load()
    t0 = time.perf_counter()
    sc = start_context(master, f"isr-bench-{executors}", code_roots(model), extra)
    sc.parallelize(range(executors * 4), executors * 4).map(lambda x: x).count()  # warm up
    startup = time.perf_counter() - t0
    try:
        res = check_spark(model, partitions=args.partitions, config=model.config.to_json())
    finally:
        sc.stop()
    levels = res.extra["spark"]["levels"]
    return {
        "executors": executors,
        "master": master,
        "partitions": res.extra["spark"]["partitions"],
        "startup_seconds": round(startup, 2),
        "seconds": round(res.seconds, 2),
        "distinct_states": res.distinct_states,
        "states_generated": res.states_generated,
        "depth": res.depth,
        "distinct_per_second": round(res.distinct_states / res.seconds, 1),
        "verdicts": {p.name: p.holds for p in res.properties},
        "levels": levels,
        "load_before": before,
        "load_after": load(),
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--protocol", default="kip-320")
    p.add_argument("--replicas", type=int, default=2)
    p.add_argument("--records", type=int, default=3)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--crashes", type=int, default=2)
    p.add_argument("--mode", choices=["local", "cluster"], default="local")
    p.add_argument("--master", default=None, help="spark:// URL for --mode cluster")
    p.add_argument("--partitions", type=int, default=2, help="fingerprint partitions (both runs)")
    p.add_argument("--executor-memory", default="1g")
    p.add_argument("--driver-memory", default="2g")
    p.add_argument("--skip-seq", action="store_true", help="reuse the sequential numbers given")
    p.add_argument("--seq-seconds", type=float, default=None)
    p.add_argument("--project-levels", type=int, default=None, help="levels at 10^8 states")
    p.add_argument("--out", default=str(ROOT / "bench" / "results" / "spark_scaling.json"))
    args = p.parse_args()
    if args.mode == "cluster" and not (args.master or "").startswith("spark://"):
        p.error("--mode cluster needs --master spark://HOST:PORT")
    cfg = Config(
        replicas=args.replicas,
        records=args.records,
        epochs=args.epochs,
        crashes=args.crashes,
        protocol=args.protocol,
    )
    model = IsrSpec(cfg)
    out: dict = {"config": cfg.to_json(), "machine": machine(), "mode": args.mode}
    print(f"machine: {out['machine']['cpus']} cpus, {out['machine']['cpu_model']}, load {load()}")

    before = load()
    seq = check_bfs(model, config=cfg.to_json())
    out["sequential"] = {
        "seconds": round(seq.seconds, 2),
        "distinct_states": seq.distinct_states,
        "states_generated": seq.states_generated,
        "depth": seq.depth,
        "distinct_per_second": round(seq.states_per_second, 1),
        "load_before": before,
        "load_after": load(),
    }
    print(f"sequential: {json.dumps(out['sequential'])}", flush=True)

    runs = []
    for executors in (1, 2):
        r = run_spark(model, executors, args)
        runs.append(r)
        brief = {k: v for k, v in r.items() if k not in ("levels", "verdicts")}
        print(f"spark x{executors}: {json.dumps(brief)}", flush=True)
        if r["distinct_states"] != seq.distinct_states or r["depth"] != seq.depth:
            print("MISMATCH with the sequential engine", file=sys.stderr)
            return 1
    out["spark"] = runs

    one, two = runs
    ratio = two["distinct_per_second"] / one["distinct_per_second"]
    vs_seq = two["distinct_per_second"] / out["sequential"]["distinct_per_second"]
    points = [
        (lv["level_generated"] / r["executors"], lv["level_seconds"])
        for r in runs
        for lv in r["levels"]
    ]
    a, b, r2 = fit(points)
    per_run = {}
    for r in runs:
        ar, br, r2r = fit([(lv["level_generated"], lv["level_seconds"]) for lv in r["levels"]])
        per_run[str(r["executors"])] = {"a": ar, "b": br, "r2": r2r}
    g = seq.states_generated / seq.distinct_states
    levels = args.project_levels or 2 * (seq.depth + 1)
    projection = {}
    for e in PROJECT_EXECUTORS:
        t = a * levels + b * g * PROJECT_STATES / e
        projection[str(e)] = {"seconds": round(t), "hours": round(t / 3600, 2)}
    seq_proj = PROJECT_STATES / out["sequential"]["distinct_per_second"]
    out["results"] = {
        "throughput_ratio_2_vs_1_executor": round(ratio, 3),
        "throughput_ratio_2_executors_vs_sequential": round(vs_seq, 3),
        "fixed_cost_per_level_seconds": round(a, 4),
        "cost_per_generated_state_seconds": b,
        "generated_per_distinct": round(g, 3),
        "cost_per_distinct_state_one_executor_seconds": b * g,
        "fit_r2": round(r2, 4),
        "fit_per_run": per_run,
        "model": "T = a*levels + b*g*distinct/executors",
        "projection_states": PROJECT_STATES,
        "projection_levels_assumed": levels,
        "projection": projection,
        "projection_sequential_hours": round(seq_proj / 3600, 1),
    }
    print(json.dumps(out["results"], indent=1))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
