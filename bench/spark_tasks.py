"""The Spark engine's executor work without Spark: the per-level tasks (``expand`` and
``dedup`` of checker/spark/tasks.py) run in this process over the levels of a model, with the
states shipped in the model's wire form (plain tuples, the default) and, alternately, as the
NamedTuples themselves. CPU seconds of the tasks only (no JVM, no shuffle), so the ratio is what
the wire form saves the executors; the shuffled bytes are reported too.

    python bench/spark_tasks.py [--levels 10] [--repeat 3] [--out bench/results/spark_tasks.json]

Kept out of tests (a benchmark, no timing assertion); the counts it prints must equal the
sequential engine's at each level, and the script refuses to report a ratio otherwise.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from isr.checker.spark import tasks  # noqa: E402
from isr.spec import Config, IsrSpec  # noqa: E402


class _Acc:
    def __init__(self) -> None:
        self.value: dict = {}

    def add(self, d: dict) -> None:
        self.value.update(d)


def run_levels(model: IsrSpec, levels: int, parts: int, wire: bool) -> dict:
    codec = tasks.wire_codec
    if not wire:
        tasks.wire_codec = lambda m: (tasks._same, tasks._same)  # type: ignore[assignment]
    try:
        props = model.properties
        job = tasks.LevelJob(
            model=model,
            symmetry=True,
            parts=parts,
            invariants=tuple(p.name for p in props if p.kind == "always"),
            actions=tuple(p.name for p in props if p.kind == "action"),
            some_states=(),
            some_trans=(),
        )
        to_wire = tasks.wire_codec(model)[0]
        init = [model.canonicalize(s) for s in model.init_states()]
        buckets: list[list] = [[] for _ in range(parts)]
        for s in init:
            fp = hash(s)
            buckets[fp % parts].append((fp, s))
        blobs = [
            (tasks.new_visited(b), tasks.pack([(fp, tasks.pack(to_wire(c))) for fp, c in b]))
            for b in buckets
        ]
        cpu_expand = cpu_dedup = 0.0
        shuffled = 0
        counts = [len(init)]
        acc = _Acc()
        for level in range(1, levels + 1):
            t0 = time.process_time()
            records: list[list] = [[] for _ in range(parts)]
            for pid in range(parts):
                for q, payload in tasks.expand(job, pid, iter([blobs[pid]])):
                    records[q].append((q, payload))
                    if isinstance(payload, bytes):
                        shuffled += len(payload)
            t1 = time.process_time()
            blobs = [
                next(tasks.dedup(job, acc, level, pid, iter([(records[pid], blobs[pid])])))
                for pid in range(parts)
            ]
            t2 = time.process_time()
            cpu_expand += t1 - t0
            cpu_dedup += t2 - t1
            counts.append(sum(acc.value[level, pid]["new"] for pid in range(parts)))
        return {
            "wire": wire,
            "levels": levels,
            "new_per_level": counts,
            "distinct": sum(counts),
            "cpu_expand_s": round(cpu_expand, 3),
            "cpu_dedup_s": round(cpu_dedup, 3),
            "cpu_s": round(cpu_expand + cpu_dedup, 3),
            "shuffled_bytes": shuffled,
        }
    finally:
        tasks.wire_codec = codec


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--levels", type=int, default=10)
    ap.add_argument("--partitions", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "spark_tasks.json"))
    args = ap.parse_args()
    model = IsrSpec(
        Config()
    )  # the embedded default: kip-320, 3 replicas, 2 records, 2 epochs, 1 crash
    gc.collect()
    runs = []
    for r in range(args.repeat):
        for wire in (False, True):
            res = run_levels(model, args.levels, args.partitions, wire)
            res["round"] = r
            res["load"] = os.getloadavg()[0]
            runs.append(res)
            print(json.dumps(res), file=sys.stderr)
    counts = {tuple(r["new_per_level"]) for r in runs}
    if len(counts) != 1:
        print("the two forms disagree on the level counts: no ratio", file=sys.stderr)
        return 1
    named = sum(r["cpu_s"] for r in runs if not r["wire"])
    plain = sum(r["cpu_s"] for r in runs if r["wire"])
    out = {
        "what": "Spark executor tasks (expand + dedup) in-process, default model, CPU s",
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}",
        "levels": args.levels,
        "partitions": args.partitions,
        "runs": runs,
        "ratio_named_over_wire": round(named / plain, 3),
    }
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    print(f"NamedTuples {named:.1f} CPU s, wire form {plain:.1f} CPU s: {named / plain:.3f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
