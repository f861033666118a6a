"""Sequential checker throughput and memory: distinct states per second and peak bytes per
distinct state, single process, on kip-320.

    python bench/checker_throughput.py                 # the reference config (3 replicas, 2 records, 2 epochs)
    python bench/checker_throughput.py --largest       # also: the largest listed config done in 10 min
    python bench/checker_throughput.py --json out.json

Each configuration runs in its own subprocess so peak memory is its own. Memory per state is
(peak RSS - RSS after building the model) / distinct states. CPU seconds are reported beside wall
seconds: on a shared machine the CPU rate is the fairer number.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[2])
from spec import Config, IsrSpec
from checker.bfs import Limits, check_bfs
cfg = json.loads(sys.argv[1])
limit = cfg.pop("max_seconds")
model = IsrSpec(Config(**cfg))
def rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
base = rss_kib()
c0 = time.process_time()
res = check_bfs(model, limits=Limits(max_seconds=limit))
cpu = time.process_time() - c0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({
    "config": model.config.to_json(), "complete": res.complete, "distinct": res.distinct_states,
    "generated": res.states_generated, "depth": res.depth, "wall_s": res.seconds, "cpu_s": cpu,
    "distinct_per_s": res.distinct_states / res.seconds,
    "distinct_per_cpu_s": res.distinct_states / cpu,
    "bytes_per_state": (peak - base) * 1024 / max(res.distinct_states, 1),
    "peak_rss_mib": peak / 1024,
}))
"""

REFERENCE = {"protocol": "kip-320", "replicas": 3, "records": 2, "epochs": 2, "crashes": 1}
# In increasing size; --largest runs them in order until one does not finish in 10 minutes.
LADDER = [
    {"protocol": "kip-320", "replicas": 3, "records": 2, "epochs": 3, "crashes": 1},
    {"protocol": "kip-320", "replicas": 3, "records": 3, "epochs": 2, "crashes": 1},
    {"protocol": "kip-320", "replicas": 3, "records": 3, "epochs": 3, "crashes": 1},
    {"protocol": "kip-320", "replicas": 3, "records": 3, "epochs": 3, "crashes": 2},
]


def run(cfg: dict, max_seconds: float) -> dict:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps({**cfg, "max_seconds": max_seconds}), root],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def show(r: dict) -> None:
    c = r["config"]
    print(
        f"{c['protocol']} R={c['replicas']} records={c['records']} epochs={c['epochs']} "
        f"crashes={c['crashes']}: {'complete' if r['complete'] else 'INCOMPLETE'} "
        f"{r['distinct']:,} distinct, {r['generated']:,} generated, depth {r['depth']}, "
        f"{r['wall_s']:.1f} s wall / {r['cpu_s']:.1f} s cpu, "
        f"{r['distinct_per_s']:,.0f} distinct/s ({r['distinct_per_cpu_s']:,.0f} per cpu-s), "
        f"{r['bytes_per_state']:.0f} B/state, peak {r['peak_rss_mib']:.0f} MiB",
        flush=True,
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--largest", action="store_true", help="also find the largest config done in 10 min"
    )
    ap.add_argument("--json", metavar="FILE", help="write the results as JSON")
    args = ap.parse_args()
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cpus, Python {platform.python_version()}, "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    results = [run(REFERENCE, 600)]
    show(results[0])
    if args.largest:
        for cfg in LADDER:
            r = run(cfg, 600)
            show(r)
            results.append(r)
            if not r["complete"]:
                break
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {"machine": platform.machine(), "cpus": os.cpu_count(), "results": results},
                f,
                indent=2,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
