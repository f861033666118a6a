"""Sweep: random simulation runs of the reference implementation, each validated against the spec.

The reference implementation is correct, so every run should be *accepted* (or *unsupported*
with a reason, for a fault the spec cannot express); a rejection is a false alarm of the tool
chain (traces/VALIDATION.md, "Known gaps"). Each run draws, from ``--seed`` and its index, a
protocol (kip-320, kip-279, kip-101, hw-truncation), 1-2 partitions, replication 2-3 on 3
brokers, min.insync.replicas, an fsync interval, and 1-4 faults among process crashes, bounces
(crash + restart at once), power failures (of one broker, or of every broker), network
partitions, duplication, loss and pauses, with acks=all producers. Prints counts by verdict and
by reason (its first line), then how to reproduce the first rejected runs:

    python scripts/validate_sweep.py --runs 500 --seed 1 [--json FILE]
    python scripts/validate_sweep.py --seed 1 --only 17 --trace run17.ndjson   # one run again
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from isr.impl.sim.scenarios import Fault, run_random
from isr.traces.format import merge
from isr.traces.validator.validate import validate_events

PROTOCOLS = ["kip-320", "kip-279", "kip-101", "hw-truncation"]
KINDS = [
    "crash",
    "restart",
    "power",
    "power-all",
    "crash-all",
    "partition",
    "duplicate",
    "loss",
    "pause",
    "elect",
    "preferred",
    "shutdown",
]


def draw(seed: int, k: int, records: int, kinds: list[str], protocols: list[str]) -> dict:
    """The recipe of run ``k`` of sweep ``seed``: everything ``run_random`` needs."""
    rng = random.Random(f"sweep-{seed}-{k}")
    n_faults = rng.randint(1, 4)
    span = 25 * records
    faults = [
        {
            "at_ms": rng.randint(0, span),
            "kind": rng.choice(kinds),
            "target": rng.randint(0, 2),
            "other": rng.randint(0, 2),
            # x4 is the outage: 40 ms .. 1.2 s, either side of the 600 ms session timeout
            "duration_ms": rng.randint(10, 300),
        }
        for _ in range(n_faults)
    ]
    replication = rng.choice([2, 3])
    return {
        "protocol": rng.choice(protocols),
        "faults": faults,
        "seed": rng.randrange(1 << 30),
        "records": records,
        "partitions": rng.choice([1, 2]),
        "replication": replication,
        "min_insync_replicas": rng.randint(1, replication),
        "flush_interval_batches": rng.randint(0, 3),
    }


def run(recipe: dict) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    r = recipe
    w = run_random(
        r["protocol"],
        [Fault(**f) for f in r["faults"]],
        seed=r["seed"],
        records=r["records"],
        brokers=3,
        replication=r["replication"],
        partitions=r["partitions"],
        min_insync_replicas=r["min_insync_replicas"],
        flush_interval_batches=r["flush_interval_batches"],
    )
    return w.trace_header(seed=r["seed"]), [dict(e) for e in w.trace]


def reproduce(recipe: dict) -> str:
    r = recipe
    faults = ", ".join(
        f"Fault({f['at_ms']}, {f['kind']!r}, {f['target']}, {f['other']}, {f['duration_ms']})"
        for f in r["faults"]
    )
    return (
        f"run_random({r['protocol']!r}, [{faults}], seed={r['seed']}, records={r['records']}, "
        f"replication={r['replication']}, partitions={r['partitions']}, "
        f"min_insync_replicas={r['min_insync_replicas']}, "
        f"flush_interval_batches={r['flush_interval_batches']})"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description="Validate random simulation runs of the reference implementation and count "
        "the verdicts (every run should be accepted or unsupported).",
    )
    ap.add_argument("--runs", type=int, default=100, help="how many runs (default 100)")
    ap.add_argument("--seed", type=int, default=0, help="sweep seed (default 0)")
    ap.add_argument("--records", type=int, default=10, help="acks=all records per run (10)")
    ap.add_argument("--kinds", default=",".join(KINDS), help="fault kinds, comma-separated")
    ap.add_argument("--protocols", default=",".join(PROTOCOLS), help="comma-separated")
    ap.add_argument("--show", type=int, default=5, help="rejected runs to print (default 5)")
    ap.add_argument("--json", metavar="FILE", help="write counts and every non-accepted run")
    ap.add_argument("--only", type=int, metavar="K", help="run only run K of this sweep seed")
    ap.add_argument("--trace", metavar="FILE", help="with --only: write that run's trace")
    ap.add_argument(
        "--order",
        choices=["merged", "sim"],
        default="merged",
        help="validate the events merged by Lamport clock, as `isr validate` reads a written "
        "trace (default), or in the simulation's own order (the tests' World.trace)",
    )
    ap.add_argument("--quiet", action="store_true", help="no progress lines")
    a = ap.parse_args(argv)
    kinds = a.kinds.split(",")
    protocols = a.protocols.split(",")
    bad = [k for k in kinds if k not in KINDS] + [p for p in protocols if p not in PROTOCOLS]
    if bad:
        ap.error(f"unknown kind or protocol: {', '.join(bad)}")
    todo = [a.only] if a.only is not None else range(a.runs)
    verdicts: Counter[str] = Counter()
    reasons: Counter[tuple[str, str]] = Counter()
    runs: list[dict[str, Any]] = []
    max_cands, slowest, n_events = 0, 0.0, 0
    t0 = time.perf_counter()
    for n, k in enumerate(todo, 1):
        recipe = draw(a.seed, k, a.records, kinds, protocols)
        head, events = run(recipe)
        if a.trace and a.only is not None:
            Path(a.trace).write_text(  # World.write_trace's content
                "\n".join(json.dumps(x) for x in [head, *events]) + "\n", encoding="utf-8"
            )
        if a.order == "merged":
            events = merge([events])  # as `isr validate` reads the written file
        v = validate_events(head, events, f"run-{k}")
        verdicts[v.verdict] += 1
        max_cands = max(max_cands, v.max_candidates)
        slowest = max(slowest, v.seconds)
        n_events += len(events)
        if v.verdict != "accepted":
            reason = _first_line(v.reason)
            reasons[(v.verdict, reason)] += 1
            runs.append(
                {
                    "run": k,
                    "verdict": v.verdict,
                    "reason": v.reason,
                    "index": v.index,
                    "event": v.event,
                    "mismatches": v.mismatches,
                    "recipe": recipe,
                    "reproduce": reproduce(recipe),
                }
            )
        if a.only is not None:
            print(json.dumps(v.to_json(), indent=1, default=str)[:4000])
        elif not a.quiet and (n % 25 == 0 or n == len(todo)):
            el = time.perf_counter() - t0
            print(
                f"[{n}/{len(todo)}] {el:.0f}s  "
                + "  ".join(f"{x}={c}" for x, c in sorted(verdicts.items())),
                file=sys.stderr,
                flush=True,
            )
    elapsed = time.perf_counter() - t0
    print(
        f"{sum(verdicts.values())} runs (sweep seed {a.seed}, {a.records} records), {elapsed:.0f} s"
    )
    print(
        f"  {n_events} events; largest candidate set {max_cands}; slowest validation "
        f"{slowest:.3f} s"
    )
    for x in ("accepted", "rejected", "unsupported", "incomplete", "bad-input"):
        if verdicts[x]:
            print(f"  {x:12} {verdicts[x]}")
    if reasons:
        print("by reason:")
        for (x, reason), c in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])):
            print(f"  {c:5}  {x}: {reason}")
    rejected = [r for r in runs if r["verdict"] != "unsupported"]
    if rejected and a.only is None:
        print(
            f"first {min(a.show, len(rejected))} rejected or bad input "
            f"(reproduce: --seed {a.seed} --only K, or the run_random call):"
        )
        for r in rejected[: a.show]:
            print(f"  run {r['run']}: {_first_line(r['reason'])}")
            print(f"    {r['reproduce']}")
    if a.json:
        doc = {
            "seed": a.seed,
            "runs": sum(verdicts.values()),
            "records": a.records,
            "seconds": round(elapsed, 1),
            "verdicts": dict(verdicts),
            "events": n_events,
            "max_candidates": max_cands,
            "slowest_seconds": round(slowest, 4),
            "reasons": [
                {"verdict": x, "reason": reason, "count": c} for (x, reason), c in reasons.items()
            ],
            "not_accepted": runs,
        }
        Path(a.json).write_text(json.dumps(doc, indent=1, default=str) + "\n", encoding="utf-8")
    return 1 if rejected else 0


def _first_line(reason: str) -> str:
    """The reason's first line without its run-specific detail (the partition, the event's
    arguments, the node, an unsupported mode's explanation), so equal causes count together."""
    line = (reason or "").splitlines()[0] if reason else ""
    line = re.sub(r"^[\w.-]+-\d+: ", "", line)  # "t-0: "
    line = re.sub(r"^unsupported: ", "", line)
    line = re.sub(r"\(.*\)", "", line)  # arguments, details
    return re.sub(r" at node \S+", "", line).strip()


if __name__ == "__main__":
    raise SystemExit(main())
