"""Sequential checker throughput and memory: distinct states per second and peak bytes per
distinct state, single process, on kip-320.

    python bench/checker_throughput.py                 # the reference config (3 replicas, 2 records, 2 epochs)
    python bench/checker_throughput.py --largest       # also: the largest listed config done in 10 min
    python bench/checker_throughput.py --json out.json
    python bench/checker_throughput.py --max-states 1000000 --baseline ../main --repeat 2
        # the first million states, this tree against another checkout, alternately (an A/B
        # on a shared machine: compare the CPU rates and their ratio)

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
from isr.spec import Config, IsrSpec
from isr.checker.bfs import Limits, check_bfs
cfg = json.loads(sys.argv[1])
limit = cfg.pop("max_seconds")
max_states = cfg.pop("max_states", None)
model = IsrSpec(Config(**cfg))
def rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
base = rss_kib()
c0 = time.process_time()
res = check_bfs(model, limits=Limits(max_states=max_states, max_seconds=limit))
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


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cfg: dict, max_seconds: float, root: str = ROOT, max_states: int | None = None) -> dict:
    arg = {**cfg, "max_seconds": max_seconds}
    if max_states is not None:
        arg["max_states"] = max_states
    load = os.getloadavg()[0]
    out = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(arg), root],
        capture_output=True,
        text=True,
        check=True,
    )
    r = json.loads(out.stdout)
    r["tree"] = root
    r["load_before"] = round(load, 2)
    r["load_after"] = round(os.getloadavg()[0], 2)
    return r


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
    ap.add_argument("--max-states", type=int, metavar="N", help="stop the reference run at N")
    ap.add_argument(
        "--baseline",
        metavar="DIR",
        help="another checkout of this repository: run it and this tree alternately",
    )
    ap.add_argument("--repeat", type=int, default=1, metavar="K", help="A/B pairs (--baseline)")
    args = ap.parse_args()
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cpus, Python {platform.python_version()}, "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    if args.baseline:
        return compare(args)
    results = [run(REFERENCE, 600, max_states=args.max_states)]
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


def compare(args: argparse.Namespace) -> int:
    """This tree against ``--baseline``, alternately, ``--repeat`` times: the ratio of the CPU
    rates (distinct states per CPU second) is what a load that changes during the run spoils
    least."""
    base = os.path.abspath(args.baseline)
    pairs = []
    for _ in range(args.repeat):
        b = run(REFERENCE, 3600, base, args.max_states)
        show(b)
        a = run(REFERENCE, 3600, ROOT, args.max_states)
        show(a)
        if (a["distinct"], a["generated"]) != (b["distinct"], b["generated"]):
            print("the two trees explore different state spaces: no comparison")
            return 1
        pairs.append({"baseline": b, "this": a})
    ratio = sum(p["this"]["distinct_per_cpu_s"] for p in pairs) / sum(
        p["baseline"]["distinct_per_cpu_s"] for p in pairs
    )
    print(f"this tree / baseline, distinct states per CPU second: {ratio:.3f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "machine": platform.machine(),
                    "cpus": os.cpu_count(),
                    "python": platform.python_version(),
                    "max_states": args.max_states,
                    "ratio_cpu_rate": round(ratio, 3),
                    "pairs": pairs,
                },
                f,
                indent=2,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
