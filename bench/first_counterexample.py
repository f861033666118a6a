"""Time to the first counterexample: `isr check --stop-at-first-violation` beside TLC (issue 12).

    python bench/first_counterexample.py                       # our checker only
    python bench/first_counterexample.py --tla2tools /tmp/tla/tla2tools.jar --spec-dir /tmp/tla
    python bench/first_counterexample.py --only kip-279 --variants question,records-1

The question (issue 12): with three replicas, two records, three leader elections and no crash,
how long until the checker prints the first counterexample of kip-101, kip-279 and
kip-320-first-try? TLC answers it on the public TLA+ specification (modules Kip101, Kip279,
Kip320FirstTry of github.com/hachikuji/kafka-specification; 3 replicas, LogSize = MaxRecords = 2,
MaxLeaderEpoch = 2, INVARIANT StrongIsr, no symmetry), and stops at the first violating state
(its default). Our initial state already has a leader at epoch 1, so TLC's three elections
(epochs 0, 1, 2) are our `--epochs 3` (docs/performance.md, "Against TLC").

Our variants (each a fresh `isr check` process, `--quiet --format json`):

- ``question``: ``--replicas 3 --records 2 --epochs 3 --crashes 0 --invariant StrongIsr
  --stop-at-first-violation``, symmetry on (the tool's default): TLC's exact question.
- ``any-property``: the same without ``--invariant``: the first violation of any safety
  property, which is what `isr check --stop-at-first-violation` gives a bug hunter.
- ``records-1``: ``--records 1``: the hole needs one committed record, not two.
- ``workers-2``: ``question`` on both cores (``--workers 2``).
- ``no-symmetry``: ``question`` with ``--no-symmetry``, as TLC runs (no symmetry set).

TLC runs with ``-workers 1`` (and ``-workers N`` on N cores with ``--tlc-workers``). Seconds are
wall time of the whole process (interpreter or JVM start included); CPU seconds are the process
tree's user + system time (RUSAGE_CHILDREN), the fairer figure on a shared machine. The load
average is recorded before and after every run. Results: bench/results/first_counterexample.json.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from bench.tla_side_by_side import load, machine, run_tlc  # noqa: E402

# our protocol name -> the public spec's module
PROTOCOLS = {"kip-101": "Kip101", "kip-279": "Kip279", "kip-320-first-try": "Kip320FirstTry"}
QUESTION = ["--replicas", "3", "--records", "2", "--epochs", "3", "--crashes", "0"]
VARIANTS: dict[str, list[str]] = {
    "question": [*QUESTION, "--invariant", "StrongIsr"],
    "any-property": [*QUESTION],
    "records-1": [*QUESTION[:2], "--records", "1", *QUESTION[4:], "--invariant", "StrongIsr"],
    "workers-2": [*QUESTION, "--invariant", "StrongIsr", "--workers", "2"],
    "no-symmetry": [*QUESTION, "--invariant", "StrongIsr", "--no-symmetry"],
}


def children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _when(p: dict) -> float:
    """When a violation was found (the parallel engine does not say: then by length)."""
    return p.get("found_after_seconds") or float(p["counterexample"]["length"])


def run_ours(protocol: str, extra: list[str], max_seconds: float) -> dict:
    """One `isr check` process; its JSON verdicts, wall and CPU seconds."""
    cmd = [
        os.path.join(os.path.dirname(sys.executable), "isr"),
        "check",
        "--protocol",
        protocol,
        *extra,
        "--stop-at-first-violation",
        "--max-seconds",
        str(max_seconds),
        "--quiet",
        "--format",
        "json",
    ]
    cpu0 = children_cpu()
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=ROOT)
    seconds = time.perf_counter() - t0
    cpu = children_cpu() - cpu0
    if out.returncode not in (0, 1, 3):
        return {"error": (out.stderr.strip().splitlines() or ["failed"])[-1], "cmd": cmd[1:]}
    doc = json.loads(out.stdout)
    first = None
    for p in doc["properties"]:
        found = p["holds"] is False and p.get("counterexample")
        if found and (first is None or _when(p) < _when(first)):
            first = p
    res = {
        "cmd": "isr " + " ".join(cmd[1:]),
        "exit": out.returncode,
        "stop_reason": doc["stop_reason"],
        "distinct": doc["distinct_states"],
        "generated": doc["states_generated"],
        "depth": doc["depth"],
        "search_s": doc["seconds"],
        "seconds": round(seconds, 2),
        "cpu_s": round(cpu, 2),
    }
    if first is not None:
        cx = first["counterexample"]
        res.update(
            property=first["name"],
            steps=cx["length"],
            actions=[s["action"] for s in cx["steps"]],
            found_after_seconds=first.get("found_after_seconds"),
            found_after_states=first.get("found_after_states"),
        )
    return res


def run_tlc_timed(jar: str, spec_dir: str, module: str, workers: int, timeout: float) -> dict:
    cpu0 = children_cpu()
    r = run_tlc(jar, spec_dir, module, 3, workers, timeout)
    r["cpu_s"] = round(children_cpu() - cpu0, 2)
    r["seconds"] = round(r.get("seconds", 0.0), 2)
    if "cx_length" in r:
        r["steps"] = r.pop("cx_length")
    return r


def fmt(name: str, r: dict) -> str:
    if "error" in r:
        return f"  {name:14s} ERROR {r['error']}"
    prop = r.get("property", "StrongIsr" if r.get("strong_isr") is False else "-")
    steps = r.get("steps")
    return (
        f"  {name:14s} {prop:14s} {steps if steps is not None else '-':>5} steps "
        f"{r.get('distinct', 0):>10,} distinct {r['seconds']:8.1f} s {r['cpu_s']:8.1f} cpu s"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tla2tools", help="TLC's jar; without it, no TLC column")
    ap.add_argument("--spec-dir", help="directory with the public spec's .tla files")
    ap.add_argument("--only", action="append", default=[], help="protocol, repeatable")
    ap.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated")
    ap.add_argument("--tlc-workers", type=int, default=0, help="also run TLC on N workers")
    ap.add_argument("--max-seconds", type=float, default=600.0, help="per run")
    ap.add_argument(
        "--json", default=os.path.join(ROOT, "bench", "results", "first_counterexample.json")
    )
    args = ap.parse_args(argv)
    protocols = args.only or list(PROTOCOLS)
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    for v in variants:
        if v not in VARIANTS:
            ap.error(f"unknown variant {v!r}; known: {', '.join(VARIANTS)}")
    tlc = bool(args.tla2tools and args.spec_dir)
    info = machine()
    print(f"machine: {info['cores']} cores, {info['cpu']}; load average {load()}", flush=True)
    rows = []
    for protocol in protocols:
        print(f"{protocol} (TLC module {PROTOCOLS[protocol]}), 3 replicas, 2 records, 3 elections")
        row: dict = {"protocol": protocol, "module": PROTOCOLS[protocol], "runs": {}}
        runs = [(f"ours:{v}", "ours", v) for v in variants]
        if tlc:
            runs.append(("tlc-1", "tlc", 1))
            if args.tlc_workers > 1:
                runs.append((f"tlc-{args.tlc_workers}", "tlc", args.tlc_workers))
        for name, kind, what in runs:
            before = load()
            if kind == "ours":
                r = run_ours(protocol, VARIANTS[str(what)], args.max_seconds)
            else:
                assert args.tla2tools and args.spec_dir
                r = run_tlc_timed(
                    args.tla2tools, args.spec_dir, PROTOCOLS[protocol], int(what), args.max_seconds
                )
            r["load_before"], r["load_after"] = before, load()
            row["runs"][name] = r
            print(fmt(name, r), flush=True)
        row["ratios"] = ratios(row["runs"])
        for k, v in row["ratios"].items():
            print(f"    {k}: {v:.2f}")
        rows.append(row)
    out = {
        "benchmark": "first_counterexample",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": info,
        "question": "3 replicas, 2 records, 3 leader elections (our --epochs 3), 0 crashes; "
        "TLC: LogSize = MaxRecords = 2, MaxLeaderEpoch = 2, INVARIANT StrongIsr",
        "variants": {v: VARIANTS[v] for v in variants},
        "rows": rows,
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, "w") as fh:
        json.dump(out, fh, indent=1)
    print(f"wrote {args.json}")
    return 0


def ratios(runs: dict) -> dict:
    """Our seconds and CPU seconds over TLC's one-worker run (at most 2 is issue 12's target)."""
    out = {}
    tlc = runs.get("tlc-1")
    if not tlc or "error" in tlc or not tlc.get("seconds"):
        return out
    for name, r in runs.items():
        if not name.startswith("ours:") or "error" in r:
            continue
        v = name.split(":", 1)[1]
        out[f"{v} s / tlc-1 s"] = r["seconds"] / tlc["seconds"]
        if tlc.get("cpu_s"):
            out[f"{v} cpu s / tlc-1 cpu s"] = r["cpu_s"] / tlc["cpu_s"]
    return out


if __name__ == "__main__":
    sys.exit(main())
