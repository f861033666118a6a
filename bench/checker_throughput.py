"""Sequential checker throughput and memory: distinct states per second and peak bytes per
distinct state, single process, on kip-320.

    python bench/checker_throughput.py                 # the reference config (3 replicas, 2 records, 2 epochs)
    python bench/checker_throughput.py --largest       # also: the largest listed config done in 10 min
    python bench/checker_throughput.py --json out.json
    python bench/checker_throughput.py --max-states 1000000 --baseline ../main --repeat 2
        # the first million states, this tree against another checkout, alternately (an A/B
        # on a shared machine: compare the CPU rates and their ratio)
    python bench/checker_throughput.py --baseline ../main --repeat 3 \
        --workload 3/2/2/1:300000 --workload 3/2/2/0 --json bench/results/speed_ab.json
        # several workloads in one run (replicas/records/epochs/crashes[:max states]): each
        # pair runs baseline then this tree, the workloads interleaved, K rounds

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
import isr.spec.model
print(json.dumps({
    "model_module": isr.spec.model.__file__,
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


def run(
    cfg: dict,
    max_seconds: float,
    root: str = ROOT,
    max_states: int | None = None,
    pure: bool | None = None,
) -> dict:
    """One run in a subprocess; ``pure``: True runs the hot modules as Python
    (``ISR_PURE_PYTHON=1``), False compiled (as built), None as the environment says."""
    arg = {**cfg, "max_seconds": max_seconds}
    if max_states is not None:
        arg["max_states"] = max_states
    load = os.getloadavg()[0]
    env = dict(os.environ)
    if pure is not None:
        env.pop("ISR_PURE_PYTHON", None)
        if pure:
            env["ISR_PURE_PYTHON"] = "1"
    out = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(arg), root],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    r = json.loads(out.stdout)
    r["tree"] = root
    r["pure_python"] = env.get("ISR_PURE_PYTHON", "") not in ("", "0")
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
    ap.add_argument(
        "--compiled-ab",
        action="store_true",
        help="this tree as Python (ISR_PURE_PYTHON=1, the baseline) and compiled, alternately",
    )
    ap.add_argument(
        "--repeat", type=int, default=1, metavar="K", help="A/B pairs (--baseline, --compiled-ab)"
    )
    ap.add_argument(
        "--workload",
        action="append",
        metavar="R/REC/EP/CR[:N]",
        help="kip-320 with R replicas, REC records, EP epochs, CR crashes, stopped at N states "
        "(--baseline; repeatable; default: the reference config with --max-states)",
    )
    args = ap.parse_args()
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cpus, Python {platform.python_version()}, "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    if args.baseline and args.compiled_ab:
        ap.error("--baseline or --compiled-ab, not both")
    if args.baseline or args.compiled_ab:
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


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def parse_workload(text: str) -> tuple[dict, int | None]:
    """``R/REC/EP/CR[:N]`` -> (kip-320 config, max states or None)."""
    spec, _, limit = text.partition(":")
    r, rec, ep, cr = (int(x) for x in spec.split("/"))
    cfg = {"protocol": "kip-320", "replicas": r, "records": rec, "epochs": ep, "crashes": cr}
    return cfg, int(limit) if limit else None


def compare(args: argparse.Namespace) -> int:
    """This tree against ``--baseline``, alternately, ``--repeat`` rounds; each round runs every
    workload as a pair (baseline, then this tree). The ratio of the CPU rates (distinct states
    per CPU second) is what a load that changes during the run spoils least. With
    ``--compiled-ab`` the baseline is this tree run as Python, against this tree compiled."""
    ab = args.compiled_ab
    base = ROOT if ab else os.path.abspath(args.baseline)
    workloads = [parse_workload(w) for w in args.workload or []] or [(REFERENCE, args.max_states)]
    pairs: list[list[dict]] = [[] for _ in workloads]
    for _ in range(args.repeat):
        for w, (cfg, limit) in enumerate(workloads):
            b = run(cfg, 3600, base, limit, pure=True if ab else None)
            show(b)
            a = run(cfg, 3600, ROOT, limit, pure=False if ab else None)
            show(a)
            if (a["distinct"], a["generated"]) != (b["distinct"], b["generated"]):
                print("the two trees explore different state spaces: no comparison")
                return 1
            pairs[w].append({"baseline": b, "this": a})
    summary = []
    for (cfg, limit), ps in zip(workloads, pairs, strict=True):
        ratio = sum(p["this"]["distinct_per_cpu_s"] for p in ps) / sum(
            p["baseline"]["distinct_per_cpu_s"] for p in ps
        )
        loads = [x[k] for p in ps for x in p.values() for k in ("load_before", "load_after")]
        summary.append(
            {
                "config": cfg,
                "max_states": limit,
                "complete": ps[0]["this"]["complete"],
                "distinct": ps[0]["this"]["distinct"],
                "generated": ps[0]["this"]["generated"],
                "ratio_cpu_rate": round(ratio, 3),
                "this_per_cpu_s": [round(p["this"]["distinct_per_cpu_s"]) for p in ps],
                "baseline_per_cpu_s": [round(p["baseline"]["distinct_per_cpu_s"]) for p in ps],
                "this_bytes_per_state": [round(p["this"]["bytes_per_state"]) for p in ps],
                "baseline_bytes_per_state": [round(p["baseline"]["bytes_per_state"]) for p in ps],
                "load_range": [min(loads), max(loads)],
                "pairs": ps,
            }
        )
        what = f"first {limit:,} states" if limit else "complete"
        print(
            f"R={cfg['replicas']} records={cfg['records']} epochs={cfg['epochs']} "
            f"crashes={cfg['crashes']} ({what}): this tree / baseline, distinct states per CPU "
            f"second: {ratio:.3f} (load {min(loads)}-{max(loads)})"
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "machine": f"{platform.machine()}, {os.cpu_count()} cpus, "
                    f"{platform.processor() or 'unknown cpu'}",
                    "cpus": os.cpu_count(),
                    "python": platform.python_version(),
                    "cpu_model": _cpu_model(),
                    "baseline": "this tree, ISR_PURE_PYTHON=1" if ab else base,
                    "this": f"{ROOT}, compiled" if ab else ROOT,
                    "rounds": args.repeat,
                    "workloads": summary,
                },
                f,
                indent=2,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
