"""Spark's barrier engine against the one-core sequential engine, in one run (issue 13, item 5).

    python bench/spark_barrier.py [model options] [--master local[2] | spark://HOST:PORT]
                                  [--levels] [--out bench/results/spark_barrier.json]

Runs, one after the other on the same model: the sequential engine (``check_bfs``, one core),
the local parallel engine with as many workers as Spark gets tasks (the same worker code without
Spark, for the overhead of Spark and TCP), Spark's barrier engine (``isr check --engine spark``),
and with ``--levels`` also the level-per-job Spark engine it replaces. Every Spark figure is end
to end: from creating the SparkContext (JVM start, executors) to the result; the search alone is
reported beside it. Counts must agree across engines (exit 1 if not).

``--master spark://...`` runs on a standalone cluster (``scripts/spark-cluster.sh start``: two
workers of one core), with one core per executor; ``--tasks`` sets the barrier stage's width
(default: the cluster's default parallelism).

The ratio that matters is ``barrier_end_to_end_vs_sequential`` (wall seconds of the sequential
run over those of the Spark run). Wall time needs a quiet machine: the load average before and
after each run is recorded, and so is the CPU of this process (the driver) and of the workers.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from isr.checker.bfs import check_bfs  # noqa: E402
from isr.checker.parallel import check_parallel  # noqa: E402
from isr.checker.spark.barrier import check_spark_barrier  # noqa: E402
from isr.checker.spark.engine import check_spark  # noqa: E402
from isr.checker.spark.session import code_roots, start_context  # noqa: E402
from isr.spec import Config, IsrSpec  # noqa: E402


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def machine() -> dict:
    cpu = ""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    return {
        "cpus": os.cpu_count(),
        "cpu_model": cpu,
        "python": platform.python_version(),
        "compiled": os.environ.get("ISR_PURE_PYTHON") != "1",
    }


def timed(fn) -> tuple[object, dict]:
    before = load()
    t0, c0 = time.perf_counter(), time.process_time()
    res = fn()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return res, {
        "wall_seconds": round(wall, 2),
        "driver_cpu_seconds": round(cpu, 2),
        "load_before": before,
        "load_after": load(),
    }


def summary(res) -> dict:
    return {
        "distinct_states": res.distinct_states,
        "states_generated": res.states_generated,
        "depth": res.depth,
        "search_seconds": round(res.seconds, 2),
        "verdicts": {p.name: p.holds for p in res.properties},
    }


def spark_run(model, args, engine: str) -> tuple[object, dict]:
    extra = {"spark.driver.memory": args.driver_memory}
    if args.master.startswith("spark://"):
        extra |= {"spark.executor.cores": "1", "spark.executor.memory": args.executor_memory}

    def go():
        sc = start_context(args.master, f"isr-bench-{engine}", code_roots(model), extra)
        try:
            if engine == "barrier":
                return check_spark_barrier(model, tasks=args.tasks)
            return check_spark(model, partitions=args.tasks or 2)
        finally:
            sc.stop()

    return timed(go)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--protocol", default="kip-320")
    p.add_argument("--replicas", type=int, default=2)
    p.add_argument("--records", type=int, default=2)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--crashes", type=int, default=2)
    p.add_argument("--master", default="local[2]")
    p.add_argument("--tasks", type=int, default=None, help="barrier tasks (default: parallelism)")
    p.add_argument("--levels", action="store_true", help="also the level-per-job Spark engine")
    p.add_argument("--executor-memory", default="4g")
    p.add_argument("--driver-memory", default="2g")
    p.add_argument("--out", default=str(ROOT / "bench" / "results" / "spark_barrier.json"))
    args = p.parse_args()
    cfg = Config(
        replicas=args.replicas,
        records=args.records,
        epochs=args.epochs,
        crashes=args.crashes,
        protocol=args.protocol,
    )
    model = IsrSpec(cfg)
    out: dict = {"config": cfg.to_json(), "master": args.master, "machine": machine()}
    print(f"machine: {out['machine']}, load {load()}", flush=True)

    res, t = timed(lambda: check_bfs(model))
    ref = summary(res)
    out["sequential"] = {**ref, **t}
    print(f"sequential: {json.dumps(out['sequential'])}", flush=True)

    runs = {}
    res, t = spark_run(model, args, "barrier")
    tasks = res.extra["spark"]["tasks"]
    par = res.extra["parallel"]
    runs["barrier"] = {
        **summary(res),
        **t,
        "tasks": tasks,
        "workers_cpu_seconds": par["cpu_workers"],
        "critical_path_cpu_seconds": par["cpu_critical_path"],
    }
    print(f"spark barrier: {json.dumps(runs['barrier'])}", flush=True)
    res, t = timed(lambda: check_parallel(model, workers=tasks))
    par = res.extra["parallel"]
    runs["parallel"] = {
        **summary(res),
        **t,
        "workers": tasks,
        "workers_cpu_seconds": par["cpu_workers"],
        "critical_path_cpu_seconds": par["cpu_critical_path"],
    }
    print(f"parallel x{tasks}: {json.dumps(runs['parallel'])}", flush=True)
    if args.levels:
        res, t = spark_run(model, args, "levels")
        runs["levels"] = {**summary(res), **t}
        print(f"spark levels: {json.dumps(runs['levels'])}", flush=True)
    out.update(runs)
    bad = [k for k, r in runs.items() if summary_key(r) != summary_key(ref)]
    seq = out["sequential"]["wall_seconds"]
    out["results"] = {
        "barrier_end_to_end_vs_sequential": round(seq / runs["barrier"]["wall_seconds"], 3),
        "barrier_search_vs_sequential": round(seq / runs["barrier"]["search_seconds"], 3),
        "parallel_vs_sequential": round(seq / runs["parallel"]["wall_seconds"], 3),
        "barrier_vs_parallel": round(
            runs["parallel"]["wall_seconds"] / runs["barrier"]["wall_seconds"], 3
        ),
        "spark_startup_and_stop_seconds": round(
            runs["barrier"]["wall_seconds"] - runs["barrier"]["search_seconds"], 2
        ),
    }
    if "levels" in runs:
        out["results"]["levels_end_to_end_vs_sequential"] = round(
            seq / runs["levels"]["wall_seconds"], 3
        )
        out["results"]["barrier_vs_levels"] = round(
            runs["levels"]["wall_seconds"] / runs["barrier"]["wall_seconds"], 3
        )
    print(json.dumps(out["results"], indent=1))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    print(f"written to {args.out}")
    if bad:
        print(f"MISMATCH with the sequential engine: {', '.join(bad)}", file=sys.stderr)
        return 1
    return 0


def summary_key(r: dict) -> tuple:
    return (r["distinct_states"], r["states_generated"], r["depth"], r["verdicts"])


if __name__ == "__main__":
    sys.exit(main())
