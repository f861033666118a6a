"""Memory and time of the in-memory and the disk store (checker.store), in one run.

    python bench/store_memory.py [--runs bfs:memory,bfs:disk,2:memory,2:disk]
                                 [--model '{"replicas": 3, ...}'] [--out FILE.json]

Each run is its own subprocess (``bfs``: check_bfs; ``N``: check_parallel with N workers), with
a thread sampling, twice a second, the resident set (RSS) and the proportional set (PSS: pages
shared since the fork split between the processes sharing them, the honest total) summed over
the run's processes, and the bytes the disk store holds. Reported per run: wall seconds,
distinct states per second, CPU seconds of all its processes (load-independent: compare these
when the machine is shared), peak RSS and PSS sums, PSS bytes per distinct state (peak minus the
process's size before the search, over the distinct states), peak disk, and the load average
before and after (a load above the number of cores means the runs shared the machine).
Counts and verdicts must agree between every run; the script says so, or fails.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, os, resource, sys, threading, time, tempfile, shutil
sys.path.insert(0, sys.argv[4])
from isr.spec import Config, IsrSpec
from isr.checker.bfs import check_bfs
from isr.checker.parallel import check_parallel
import multiprocessing

def field(pid, path, key):
    try:
        with open(f"/proc/{pid}/{path}") as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0

def du(root):
    total = 0
    for dirpath, _, files in os.walk(root):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(dirpath, name))
            except OSError:
                pass
    return total

engine, store = sys.argv[1], sys.argv[2]
model = IsrSpec(Config(**json.loads(sys.argv[3])))
where = tempfile.mkdtemp(prefix="isr-bench-store-")
peak = {"rss": 0, "pss": 0, "disk": 0}
base = field(os.getpid(), "smaps_rollup", "Pss:")
done = threading.Event()

def sampler():
    while not done.wait(0.5):
        pids = [os.getpid()] + [p.pid for p in multiprocessing.active_children()]
        peak["rss"] = max(peak["rss"], sum(field(p, "status", "VmRSS:") for p in pids))
        peak["pss"] = max(peak["pss"], sum(field(p, "smaps_rollup", "Pss:") for p in pids))
        peak["disk"] = max(peak["disk"], du(where))

threading.Thread(target=sampler, daemon=True).start()
def cpu():
    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime

load_before = os.getloadavg()
c0 = cpu()
w0 = time.perf_counter()
kw = dict(config=model.config.to_json(), store=store, store_dir=where if store == "disk" else None)
if engine == "bfs":
    res = check_bfs(model, **kw)
else:
    res = check_parallel(model, workers=int(engine), **kw)
wall = time.perf_counter() - w0
cpu_s = cpu() - c0
done.set()
shutil.rmtree(where, ignore_errors=True)
print(json.dumps({
    "run": f"{engine}:{store}",
    "distinct_states": res.distinct_states,
    "states_generated": res.states_generated,
    "depth": res.depth,
    "verdicts": {p.name: p.holds for p in res.properties},
    "wall_s": round(wall, 2),
    "distinct_per_s": round(res.distinct_states / wall, 1),
    "cpu_s": round(cpu_s, 2),
    "distinct_per_cpu_s": round(res.distinct_states / cpu_s, 1),
    "peak_rss_sum_mib": round(peak["rss"] / 2**20, 1),
    "peak_pss_sum_mib": round(peak["pss"] / 2**20, 1),
    "pss_bytes_per_state": round((peak["pss"] - base) / res.distinct_states, 1),
    "peak_disk_mib": round(peak["disk"] / 2**20, 1),
    "load_before": [round(x, 2) for x in load_before],
    "load_after": [round(x, 2) for x in os.getloadavg()],
}))
"""

DEFAULT = {"protocol": "kip-320", "replicas": 3, "records": 2, "epochs": 2, "crashes": 1}


def run_one(engine: str, store: str, model: dict) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, engine, store, json.dumps(model), str(ROOT)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    if out.returncode != 0:
        raise SystemExit(f"run {engine}:{store} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", default="bfs:memory,bfs:disk,2:memory,2:disk")
    ap.add_argument("--model", default=json.dumps(DEFAULT))
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    model = {**DEFAULT, **json.loads(args.model)}
    results = []
    for spec in args.runs.split(","):
        engine, _, store = spec.partition(":")
        r = run_one(engine, store or "memory", model)
        results.append(r)
        print(
            f"{r['run']:>10}: {r['distinct_states']:,} distinct, depth {r['depth']}, "
            f"{r['wall_s']:.1f} s, {r['distinct_per_s']:,.0f} distinct/s, CPU {r['cpu_s']:.0f} s "
            f"({r['distinct_per_cpu_s']:,.0f} distinct/CPU-s), peak PSS "
            f"{r['peak_pss_sum_mib']:,.0f} MiB (RSS {r['peak_rss_sum_mib']:,.0f}), "
            f"{r['pss_bytes_per_state']:.0f} B/state, disk {r['peak_disk_mib']:,.0f} MiB, "
            f"load {r['load_before'][0]:.1f}->{r['load_after'][0]:.1f}",
            flush=True,
        )
    first = results[0]
    same = all(
        (r["distinct_states"], r["states_generated"], r["depth"], r["verdicts"])
        == (first["distinct_states"], first["states_generated"], first["depth"], first["verdicts"])
        for r in results
    )
    print("counts and verdicts agree between every run" if same else "RUNS DISAGREE")
    report = {
        "model": model,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "runs": results,
        "agree": same,
    }
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1) + "\n")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
