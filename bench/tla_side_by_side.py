"""Our checker against TLC on the same state spaces: the public TLA+ Kafka spec.

    python bench/tla_side_by_side.py                       # our engine only
    python bench/tla_side_by_side.py --tla2tools /tmp/tla/tla2tools.jar --spec-dir /tmp/tla
    python bench/tla_side_by_side.py --only Kip320:3 --only Kip279:3 ...

Models: bench/kafka_tla, our transcription of github.com/hachikuji/kafka-specification, whose
state counts equal TLC's (tests/bench/test_public_spec.py). Bounds: LogSize = 2, MaxRecords = 2,
MaxLeaderEpoch = 2, no symmetry; both engines check StrongIsr only (the TLC config's INVARIANT),
so a violation ends both runs.

Engines: ``ours-bfs`` (checker.bfs.check_bfs, one core); ``ours-parallel`` (checker.parallel,
every core) when that module exists; ``tlc-1`` and ``tlc-N`` (TLC with ``-workers 1`` and one
worker per core) when given the TLC jar (``--tla2tools``) and a directory with the spec's .tla
files (``--spec-dir``: the user fetches them from the public repository; this project does not
ship them). Each run is its own process, and seconds are the process's wall time: interpreter or
JVM start, parsing or model building, and the search. TLC stops at the first violating state;
check_bfs finishes the BFS level it found it in (same shortest length, a few more states).

CPU seconds are those of the run's whole process tree (JVM threads, forked workers): on a shared
machine they are the fairer figure. Depth is given in TLC's convention (the initial states are level 1; checker results count
from 0). Results go to bench/results/tla_side_by_side.json, with the machine and its load
average before and after every run: the machine is shared, so read times next to the load.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BOUNDS = {"LogSize": 2, "MaxRecords": 2, "MaxLeaderEpoch": 2}
TLA_FILES = [
    "KafkaReplication.tla",
    "KafkaTruncateToHighWatermark.tla",
    "Kip101.tla",
    "Kip279.tla",
    "Kip320FirstTry.tla",
    "Kip320.tla",
    "FiniteReplicatedLog.tla",
    "IdSequence.tla",
    "Util.tla",
]
# (module, replicas): complete runs first, then first violations (TLC.md's table).
ROWS = [
    ("Kip320", 2),
    ("Kip279", 2),
    ("Kip320FirstTry", 2),
    ("Kip320", 3),
    ("KafkaTruncateToHighWatermark", 2),
    ("KafkaTruncateToHighWatermark", 3),
    ("Kip101", 2),
    ("Kip101", 3),
    ("Kip279", 3),
    ("Kip320FirstTry", 3),
]

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
c0 = time.process_time()
sys.path.insert(0, sys.argv[1])
args = json.loads(sys.argv[2])
if args["checker_root"]:
    sys.path.insert(0, args["checker_root"])
from bench.kafka_tla import make_model
from isr.checker.bfs import Limits, check_bfs
model = make_model(args["module"], args["replicas"])
limits = Limits(max_seconds=args["max_seconds"])
kw = dict(symmetry=False, limits=limits, properties=["StrongIsr"], progress=None, config={})
if args["workers"] == 0:
    res = check_bfs(model, **kw)
else:
    from isr.checker.parallel import check_parallel
    res = check_parallel(model, workers=args["workers"], **kw)
strong = res.properties[0]
print(json.dumps({
    "complete": res.complete, "stop_reason": res.stop_reason,
    "distinct": res.distinct_states, "generated": res.states_generated,
    "depth_tlc": res.depth + 1, "search_s": res.seconds,
    "strong_isr": strong.holds,
    "cx_length": strong.counterexample.length if strong.counterexample else None,
    "seconds": time.perf_counter() - t0,
    "cpu_s_main": time.process_time() - c0,
}))
"""


def parallel_available(checker_root: str | None) -> bool:
    """Whether checker.parallel imports (in a child, so that --checker-root applies)."""
    path = [checker_root] if checker_root else []
    code = "import sys; sys.path[:0] = sys.argv[1:]; from checker.parallel import check_parallel"
    probe = subprocess.run(
        [sys.executable, "-c", code, *path, ROOT], capture_output=True, check=False
    )
    return probe.returncode == 0


def run_ours(
    module: str,
    replicas: int,
    workers: int,
    max_seconds: float | None,
    checker_root: str | None = None,
) -> dict:
    """One run in a fresh interpreter (workers = 0: check_bfs)."""
    args = {
        "module": module,
        "replicas": replicas,
        "workers": workers,
        "max_seconds": max_seconds,
        "checker_root": checker_root,
    }
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", CHILD, ROOT, json.dumps(args)],
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - t0
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr else "failed"}
    res = json.loads(out.stdout.strip().splitlines()[-1])
    res["in_process_s"] = res.pop("seconds")
    res["seconds"] = seconds  # the process's wall time, interpreter start included, as TLC's
    return res


def tlc_config(replicas: int) -> str:
    names = ", ".join(f"r{i + 1}" for i in range(replicas))
    lines = [f"CONSTANTS Replicas = {{{names}}}"]
    lines += [f"{k} = {v}" for k, v in BOUNDS.items()]
    lines += ["SPECIFICATION Spec", "INVARIANT StrongIsr", ""]
    return "\n".join(lines)


def parse_tlc(text: str) -> dict:
    """The figures TLC prints at the end of a run."""
    res: dict = {}
    m = re.search(
        r"([\d,]+) states generated, ([\d,]+) distinct states found, ([\d,]+) states left", text
    )
    if m:
        res["generated"] = int(m.group(1).replace(",", ""))
        res["distinct"] = int(m.group(2).replace(",", ""))
        res["left_on_queue"] = int(m.group(3).replace(",", ""))
    m = re.search(r"The depth of the complete state graph search is (\d+)", text)
    res["depth_tlc"] = int(m.group(1)) if m else None
    violated = re.search(r"Invariant (\w+) is violated", text)
    states = [int(x) for x in re.findall(r"^State (\d+):", text, re.M)]
    if violated:
        res["strong_isr"] = False
        res["cx_length"] = max(states) - 1 if states else None  # transitions = states - 1
    elif "Model checking completed. No error has been found." in text:
        res["strong_isr"] = True
        res["cx_length"] = None
    res["complete"] = "Model checking completed. No error has been found." in text
    m = re.search(r"Finished in (?:(\d+)h )?(?:(\d+)min )?(\d+)s", text)
    if m:
        h, mi, s = (int(g) if g else 0 for g in m.groups())
        res["tlc_reported_s"] = h * 3600 + mi * 60 + s
    m = re.search(r"TLC2 Version (.+)", text)
    if m:
        res["tlc_version"] = m.group(1).strip()
    return res


def run_tlc(
    jar: str, spec_dir: str, module: str, replicas: int, workers: int, timeout: float | None
) -> dict:
    """TLC on a private copy of the spec (it leaves a states/ folder behind: removed here)."""
    work = tempfile.mkdtemp(prefix="tlc-side-by-side-")
    try:
        for f in TLA_FILES:
            shutil.copy(os.path.join(spec_dir, f), work)
        cfg = os.path.join(work, "bench.cfg")
        with open(cfg, "w") as fh:
            fh.write(tlc_config(replicas))
        cmd = [
            "java",
            "-XX:+UseParallelGC",
            "-cp",
            os.path.abspath(jar),
            "tlc2.TLC",
            "-workers",
            str(workers),
            "-deadlock",
            "-metadir",
            os.path.join(work, "states"),
            "-config",
            cfg,
            module,
        ]
        t0 = time.perf_counter()
        try:
            out = subprocess.run(
                cmd, cwd=work, capture_output=True, text=True, timeout=timeout, check=False
            )
        except subprocess.TimeoutExpired:
            return {"error": f"timeout after {timeout} s"}
        seconds = time.perf_counter() - t0
        res = parse_tlc(out.stdout + out.stderr)
        res["seconds"] = seconds
        if "distinct" not in res:
            res["error"] = (out.stdout + out.stderr).strip().splitlines()[-1:]
        return res
    finally:
        shutil.rmtree(work, ignore_errors=True)


def children_cpu() -> float:
    """CPU seconds (user + system) of every finished child process so far, grandchildren
    included (TLC's JIT and GC threads, the parallel engine's workers): on a shared machine
    this is fairer than wall time."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def machine() -> dict:
    cpu = ""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    java = ""
    if shutil.which("java"):
        v = subprocess.run(["java", "-version"], capture_output=True, text=True, check=False)
        java = (v.stderr or v.stdout).strip().splitlines()[0] if (v.stderr or v.stdout) else ""
    return {
        "cores": os.cpu_count(),
        "cpu": cpu,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "java": java,
    }


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def fmt_row(module: str, replicas: int, engine: str, r: dict) -> str:
    if "error" in r:
        return f"{module:29s} {replicas}  {engine:15s} ERROR {r['error']}"
    verdict = {True: "holds", False: "VIOLATED", None: "?"}[r.get("strong_isr")]
    cx = "" if r.get("cx_length") is None else f"len {r['cx_length']}"
    rate = r["distinct"] / r["seconds"] if r["seconds"] else 0.0
    if "search_s" in r:
        inner = f"  (search {r['search_s']:.2f} s)"
    elif "tlc_reported_s" in r:
        inner = f"  (TLC: Finished in {r['tlc_reported_s']} s)"
    else:
        inner = ""
    return (
        f"{module:29s} {replicas}  {engine:15s} {verdict:8s} {cx:7s} {r['distinct']:>9,} "
        f"{r['generated']:>10,} {r['depth_tlc'] if r['depth_tlc'] is not None else '-':>5} "
        f"{r['seconds']:8.2f} {r['cpu_s']:8.2f} {rate:>10,.0f}   load {r['load_before'][0]:.2f}{inner}"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tla2tools", help="TLC's jar (tla2tools.jar); without it, no TLC column")
    ap.add_argument("--spec-dir", help="directory with the public spec's .tla files")
    ap.add_argument(
        "--only", action="append", default=[], help="MODULE:REPLICAS, repeatable (default: all)"
    )
    ap.add_argument("--max-seconds", type=float, default=None, help="per run (both engines)")
    ap.add_argument("--no-parallel", action="store_true", help="skip the all-core columns")
    ap.add_argument(
        "--checker-root",
        help="take the checker package from this directory instead of this checkout "
        "(to measure an engine that is not merged yet); the models still come from here",
    )
    ap.add_argument(
        "--json", default=os.path.join(ROOT, "bench", "results", "tla_side_by_side.json")
    )
    args = ap.parse_args(argv)

    rows = ROWS
    if args.only:
        wanted = {(m, int(r)) for m, r in (o.split(":") for o in args.only)}
        rows = [row for row in ROWS if row in wanted]
    cores = os.cpu_count() or 1
    tlc = bool(args.tla2tools and args.spec_dir)
    if not tlc:
        print("TLC column skipped: give --tla2tools and --spec-dir to run TLC alongside.")
    engines: list[tuple[str, str, int]] = [("ours-bfs", "ours", 0)]
    if not args.no_parallel and cores > 1:
        if parallel_available(args.checker_root):
            engines.append((f"ours-parallel{cores}", "ours", cores))
        else:
            print("ours-parallel skipped: checker.parallel is not importable.")
    if tlc:
        engines.append(("tlc-1", "tlc", 1))
        if not args.no_parallel and cores > 1:
            engines.append((f"tlc-{cores}", "tlc", cores))

    info = machine()
    print(
        f"machine: {info['cores']} cores, {info['cpu']}; {info['platform']}; Python "
        f"{info['python']}; {info['java'] or 'no java'}; load average {load()}"
    )
    print(f"bounds: {BOUNDS}, no symmetry, INVARIANT StrongIsr")
    print(
        f"{'module':29s} R  {'engine':15s} {'StrongIsr':16s} {'distinct':>9s} "
        f"{'generated':>10s} {'depth':>5s} {'seconds':>8s} {'cpu s':>8s} {'states/s':>10s}"
    )
    results = []
    for module, replicas in rows:
        row: dict = {"module": module, "replicas": replicas, "engines": {}}
        for name, kind, workers in engines:
            before = load()
            cpu0 = children_cpu()
            if kind == "ours":
                r = run_ours(module, replicas, workers, args.max_seconds, args.checker_root)
            else:
                r = run_tlc(
                    args.tla2tools, args.spec_dir, module, replicas, workers, args.max_seconds
                )
            r["cpu_s"] = children_cpu() - cpu0
            r["load_before"] = before
            r["load_after"] = load()
            row["engines"][name] = r
            print(fmt_row(module, replicas, name, r), flush=True)
        row["ratios"] = ratios(row["engines"], cores)
        row["counts_match"] = counts_match(row["engines"])
        for k, v in row["ratios"].items():
            print(f"{'':32s}{k}: {v:.2f}")
        if row["counts_match"] is False:
            print(f"{'':32s}COUNTS DIFFER between our engine and TLC")
        results.append(row)

    out = {
        "benchmark": "tla_side_by_side",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": info,
        "bounds": BOUNDS,
        "invariant": "StrongIsr",
        "symmetry": False,
        "checker_root": args.checker_root,
        "rows": results,
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, "w") as fh:
        json.dump(out, fh, indent=1)
    print(f"wrote {args.json}")
    return 0


def ratios(engines: dict, cores: int) -> dict:
    """TLC's seconds over ours (above 1: we are faster), per core and on every core."""
    out = {}

    def ok(name: str) -> bool:
        return name in engines and "error" not in engines[name] and engines[name]["seconds"] > 0

    if ok("ours-bfs") and ok("tlc-1"):
        out["tlc-1 s / ours-bfs s"] = engines["tlc-1"]["seconds"] / engines["ours-bfs"]["seconds"]
        if engines["ours-bfs"].get("cpu_s"):
            out["tlc-1 cpu s / ours-bfs cpu s"] = (
                engines["tlc-1"]["cpu_s"] / engines["ours-bfs"]["cpu_s"]
            )
    par, tlcn = f"ours-parallel{cores}", f"tlc-{cores}"
    if ok(par) and ok(tlcn):
        out[f"{tlcn} s / {par} s"] = engines[tlcn]["seconds"] / engines[par]["seconds"]
    if ok(par) and ok("ours-bfs"):
        out[f"ours-bfs s / {par} s"] = engines["ours-bfs"]["seconds"] / engines[par]["seconds"]
    return out


def counts_match(engines: dict) -> bool | None:
    """On complete runs, distinct and generated states must be equal (None: nothing to compare;
    runs that stop at a violation stop at different points, so only the verdict and the
    counterexample length are compared)."""
    ours = engines.get("ours-bfs")
    theirs = engines.get("tlc-1")
    if not ours or not theirs or "error" in ours or "error" in theirs:
        return None
    if ours["complete"] and theirs["complete"]:
        return (ours["distinct"], ours["generated"], ours["depth_tlc"]) == (
            theirs["distinct"],
            theirs["generated"],
            theirs["depth_tlc"],
        )
    return (ours["strong_isr"], ours["cx_length"]) == (theirs["strong_isr"], theirs["cx_length"])


if __name__ == "__main__":
    sys.exit(main())
