"""Scaling of the parallel local engine: check_bfs, then check_parallel with 1 and 2 workers, on
the default model (kip-320, 3 replicas, 2 records, 2 epochs, 1 crash), in one run.

    python bench/parallel_scaling.py [--repeat N] [--workers 1,2] [model options as JSON]
                                     [--out bench/results/parallel_scaling.json]

Each run is its own subprocess, so its memory is its own. Reported per run: wall seconds,
distinct states per second, CPU seconds of every process of the run (coordinator and workers),
the load average before and after (the machine may be shared: a load above the number of cores
means the run did not have them to itself), and memory:

* ``peak_rss_sum_mib``: the largest sum over the run's processes of their resident set, sampled
  after every level (a worker's RSS counts the pages it shares with the coordinator since the
  fork, so this double-counts them);
* ``peak_pss_sum_mib``: the same with proportional set sizes (shared pages split between the
  processes sharing them: the honest total);
* ``bytes_per_state``: (peak PSS sum - PSS sum after the first level) / distinct states, the
  memory the search itself takes per state, across all processes (for check_bfs: peak RSS - RSS
  after building the model, as bench/checker_throughput.py measures it).

Speed-up is the ratio of wall times of runs made one after the other in this one invocation
(``--repeat`` alternates them to spread load drift). On a shared machine the wall-clock ratio
measures the share of the machine a run got, so two load-independent figures are given too:

* ``cpu_bound_speedup``: total CPU of 1 worker / (total CPU of N workers / N), i.e. perfect
  balance assumed, the CPU overhead of running in parallel alone;
* ``available_parallelism`` (before and after the runs): how much faster N spinning processes
  get through N units of work than one through one. N on idle cores; when other jobs keep the
  cores busy it can be near 1, and no engine's wall-clock speed-up can exceed it;
* ``critical_path_speedup``: 1 worker's CPU / the CPU of the busiest worker summed over levels
  (each level waits for its slowest worker): what N dedicated cores give, but for the time
  spent passing messages at the barriers.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, os, resource, sys, time
sys.path.insert(0, sys.argv[3])
from isr.spec import Config, IsrSpec
from isr.checker.bfs import check_bfs
from isr.checker.parallel import check_parallel
import multiprocessing

def status(pid, key):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0

def pss(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0

def cpu():
    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime

engine = sys.argv[1]
model = IsrSpec(Config(**json.loads(sys.argv[2])))
base_rss = status(os.getpid(), "VmRSS:")
samples = []

def sample(info):
    pids = [os.getpid()] + [p.pid for p in multiprocessing.active_children()]
    samples.append((sum(status(p, "VmRSS:") for p in pids), sum(pss(p) for p in pids), len(pids)))
sample.interval = 0.0

load_before = os.getloadavg()
c0, w0 = cpu(), time.perf_counter()
if engine == "bfs":
    res = check_bfs(model, config=model.config.to_json())
else:
    res = check_parallel(model, workers=int(engine), progress=sample, config=model.config.to_json())
wall = time.perf_counter() - w0
cpu_s = cpu() - c0
load_after = os.getloadavg()
peak_self = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
if engine == "bfs":
    peak_rss = peak_pss = peak_self
    per_state = (peak_self - base_rss) / res.distinct_states
else:
    peak_rss = max(s[0] for s in samples)
    peak_pss = max(s[1] for s in samples)
    per_state = (peak_pss - samples[0][1]) / res.distinct_states
print(json.dumps({
    "engine": "bfs" if engine == "bfs" else "parallel",
    "workers": 1 if engine == "bfs" else int(engine),
    "complete": res.complete,
    "distinct_states": res.distinct_states,
    "states_generated": res.states_generated,
    "depth": res.depth,
    "verdicts": {p.name: p.holds for p in res.properties},
    "wall_s": round(wall, 2),
    "cpu_s": round(cpu_s, 2),
    "cpu_share": round(cpu_s / wall, 2),
    "distinct_per_s": round(res.distinct_states / wall, 1),
    "distinct_per_cpu_s": round(res.distinct_states / cpu_s, 1),
    "peak_rss_sum_mib": round(peak_rss / 2**20, 1),
    "peak_pss_sum_mib": round(peak_pss / 2**20, 1),
    "bytes_per_state": round(per_state, 1),
    "cpu_critical_path_s": res.extra["parallel"]["cpu_critical_path"] if engine != "bfs" else None,
    "cpu_workers_s": res.extra["parallel"]["cpu_workers"] if engine != "bfs" else None,
    "moved_states": sum(v["moved"] for v in res.extra["parallel"]["levels"]) if engine != "bfs" else 0,
    "load_before": [round(x, 2) for x in load_before],
    "load_after": [round(x, 2) for x in load_after],
}))
"""

DEFAULT = {"protocol": "kip-320", "replicas": 3, "records": 2, "epochs": 2, "crashes": 1}

SPIN = (
    "import time\nt = time.perf_counter()\nx = 0\nfor i in range(20_000_000):\n    x += i\n"
    "print(time.perf_counter() - t)"
)


def available_parallelism(n: int) -> float:
    """How much faster ``n`` CPU-bound processes get through ``n`` units of work together than one
    process through one unit, right now: ``n`` on idle cores, less on a loaded machine. (With
    other jobs on the machine a run's wall-clock speed-up cannot exceed this.)"""
    one = float(
        subprocess.run(
            [sys.executable, "-c", SPIN], capture_output=True, text=True, check=True
        ).stdout
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", SPIN], stdout=subprocess.PIPE, text=True)
        for _ in range(n)
    ]
    slowest = max(float(p.communicate()[0]) for p in procs)
    return round(n * one / slowest, 2)


def machine() -> dict:
    cpu = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return {
        "cpus": os.cpu_count(),
        "cpu_model": cpu,
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def run(engine: str, cfg: dict) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, engine, json.dumps(cfg), str(ROOT)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def show(r: dict) -> None:
    name = "check_bfs" if r["engine"] == "bfs" else f"parallel x{r['workers']}"
    print(
        f"{name:12} {r['distinct_states']:,} distinct, {r['states_generated']:,} generated, "
        f"{r['wall_s']:.1f} s wall, {r['cpu_s']:.1f} s cpu (share {r['cpu_share']:.2f}), "
        f"{r['distinct_per_s']:,.0f} distinct/s, peak RSS sum {r['peak_rss_sum_mib']:.0f} MiB, "
        f"PSS sum {r['peak_pss_sum_mib']:.0f} MiB, {r['bytes_per_state']:.0f} B/state, "
        + (
            f"critical path {r['cpu_critical_path_s']:.1f} s cpu, moved {r['moved_states']:,}, "
            if r["engine"] == "parallel"
            else ""
        )
        + f"load {r['load_before'][0]:.2f} -> {r['load_after'][0]:.2f}",
        flush=True,
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=1, help="alternate the parallel runs N times")
    ap.add_argument("--workers", default="1,2", help="worker counts (default 1,2)")
    ap.add_argument("--config", default=json.dumps(DEFAULT), help="model config as JSON")
    ap.add_argument("--no-bfs", action="store_true", help="skip the check_bfs reference run")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "parallel_scaling.json"))
    args = ap.parse_args()
    cfg = json.loads(args.config)
    counts = [int(x) for x in args.workers.split(",")]
    info = machine()
    print(f"machine: {info['cpus']} cpus, {info['cpu_model']}, load {os.getloadavg()}")
    calibration = {"before": available_parallelism(max(counts))}
    print(f"available parallelism for {max(counts)} processes: {calibration['before']}")
    runs = []
    if not args.no_bfs:
        runs.append(run("bfs", cfg))
        show(runs[-1])
    for i in range(args.repeat):
        for n in counts if i % 2 == 0 else reversed(counts):
            runs.append(run(str(n), cfg))
            show(runs[-1])
    calibration["after"] = available_parallelism(max(counts))
    print(f"available parallelism for {max(counts)} processes: {calibration['after']}")
    par = [r for r in runs if r["engine"] == "parallel"]
    answers = {
        (r["distinct_states"], r["states_generated"], r["depth"], json.dumps(r["verdicts"]))
        for r in runs
    }
    summary: dict = {"same_answers": len(answers) == 1}

    def best(n: int) -> dict:
        return min((r for r in par if r["workers"] == n), key=lambda r: r["wall_s"])

    if 1 in counts:
        one = best(1)
        for n in counts:
            if n == 1:
                continue
            r = best(n)
            summary[f"speedup_{n}_vs_1_wall"] = round(one["wall_s"] / r["wall_s"], 2)
            summary[f"cpu_bound_speedup_{n}_vs_1"] = round(one["cpu_s"] / (r["cpu_s"] / n), 2)
            summary[f"critical_path_speedup_{n}_vs_1"] = round(
                one["cpu_critical_path_s"] / r["cpu_critical_path_s"], 2
            )
            if not args.no_bfs:
                summary[f"speedup_{n}_vs_bfs_wall"] = round(runs[0]["wall_s"] / r["wall_s"], 2)
    print(json.dumps(summary))
    out = {
        "config": cfg,
        "machine": info,
        "available_parallelism": calibration,
        "runs": runs,
        "summary": summary,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
