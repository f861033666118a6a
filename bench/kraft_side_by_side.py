"""Our checker against TLC on the same state spaces: Vanlightly's KRaft-era Kafka replication specs.

    python bench/kraft_side_by_side.py                          # our engine only
    python bench/kraft_side_by_side.py --tla2tools /tmp/tlc/tla2tools.jar --spec-dir /tmp/vl
    python bench/kraft_side_by_side.py --only v3_5:lrs-minisr2:check --large ...

Models: bench/kraft_tla, our transcription of github.com/Vanlightly/kafka-tlaplus
(kafka_data_replication/kraft: kafka_replication_v3_5 and kafka_replication_kip_966), whose state
counts equal TLC's (tests/bench/test_kraft_public_spec.py). Constants: bench/kraft_tla CONFIGS,
Values = {A}, no symmetry, no VIEW, -deadlock.

Rows are (spec, config, mode). ``complete``: no invariant, the whole state space (distinct and
generated states and depth must be equal). ``check``: the spec's safety invariants (for
kip_966 with MinIsrRecoveryQuorum); both engines stop at the first violation (TLC's default,
check_bfs's --stop-at-first-violation), so the states at the stop differ and what is compared is
the verdict and the counterexample's length; the time to the first counterexample is our
``found_after_seconds`` and TLC's process time (it stops there). ``global``:
NoCommittedRecordLostGlobally alone. ``--large`` adds the reassignment rows (245,031 states, about
a minute for either engine): documented, not tested.

TLC (``tlc-1``, one worker) runs when given its jar (``--tla2tools``) and ``--spec-dir``, a
directory holding ``v3.5/`` and ``kip-966/`` with the repository's .tla files of that spec and
the four CommunityModules it extends (FiniteSetsExt, SequencesExt, Folds, Functions; in each
folder or in ``community/``). The user fetches them from the public repositories; this project
does not ship them. Each run is its own process; seconds are its wall time (interpreter or JVM
start included) and CPU seconds those of its whole process tree, the fairer figure on a shared
machine. Results go to bench/results/kraft_side_by_side.json with the load average around every
run.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from bench.kraft_tla import CONFIGS, SAFETY  # noqa: E402
from bench.tla_side_by_side import load, machine  # noqa: E402

ROWS = [
    ("v3_5", "shrink1", "complete"),
    ("v3_5", "fence1", "complete"),
    ("v3_5", "unclean1", "complete"),
    ("v3_5", "clean1", "complete"),
    ("v3_5", "three-brokers", "complete"),
    ("v3_5", "lrs-minisr1", "complete"),
    ("kip_966", "shrink1", "complete"),
    ("kip_966", "fence1", "complete"),
    ("kip_966", "unclean1", "complete"),
    ("kip_966", "clean1", "complete"),
    ("kip_966", "three-brokers", "complete"),
    ("kip_966", "lrs-minisr1", "complete"),
    ("v3_5", "lrs-minisr2", "check"),
    ("v3_5", "lrs-minisr1", "check"),
    ("kip_966", "lrs-minisr1", "check"),
    ("kip_966", "lrs-minisr1", "global"),
]
LARGE = [("v3_5", "reassign1", "complete"), ("kip_966", "reassign1", "complete")]

TLA_MODULE = {"v3_5": "kafka_replication_v3_5", "kip_966": "kafka_replication_kip_966"}
TLA_DIR = {"v3_5": "v3.5", "kip_966": "kip-966"}
MODEL_VALUES = [
    "FENCED",
    "UNFENCED",
    "CONTROLLED_SHUTDOWN",
    "SHUTDOWN_NOW",
    "STARTING",
    "RUNNING",
    "OFFLINE_CLEAN",
    "OFFLINE_DIRTY",
    "Leader",
    "Follower",
    "RegisterBrokerRequest",
    "RegisterBrokerResponse",
    "HeartbeatRequest",
    "HeartbeatResponse",
    "AlterPartitionRequest",
    "AlterPartitionResponse",
    "FetchRequest",
    "FetchResponse",
    "PartitionChangeRecord",
    "Controller",
    "IneligibleReplica",
    "FencedLeaderEpoch",
    "UnknownLeaderEpoch",
    "NotLeaderOrFollower",
    "NoLeader",
    "Nil",
]


def invariants(spec: str, mode: str) -> list[str]:
    if mode == "complete":
        return []
    if mode == "global":
        return ["NoCommittedRecordLostGlobally"]
    return [*SAFETY, "MinIsrRecoveryQuorum"] if spec == "kip_966" else list(SAFETY)


CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
sys.path.insert(0, sys.argv[1])
args = json.loads(sys.argv[2])
from bench.kraft_tla import make_model
from isr.checker.bfs import Limits, check_bfs
model = make_model(args["spec"], args["config"])
res = check_bfs(model, symmetry=False, properties=args["invariants"],
                stop_at_first_violation=True, limits=Limits(max_seconds=args["max_seconds"]))
bad = [p for p in res.properties if p.holds is False]
print(json.dumps({
    "complete": res.complete, "stop_reason": res.stop_reason,
    "distinct": res.distinct_states, "generated": res.states_generated,
    "depth_tlc": res.depth + 1, "search_s": res.seconds,
    "verdict": bad[0].name if bad else ("holds" if res.complete else "undecided"),
    "cx_length": bad[0].counterexample.length if bad else None,
    "first_cx_s": bad[0].found_after_seconds if bad else None,
    "in_process_s": time.perf_counter() - t0,
}))
"""


def children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def run_ours(spec: str, config: str, mode: str, max_seconds: float | None) -> dict:
    args = {
        "spec": spec,
        "config": config,
        "invariants": invariants(spec, mode),
        "max_seconds": max_seconds,
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
    res["seconds"] = seconds
    return res


def tlc_config(spec: str, config: str, mode: str) -> str:
    c = {
        "brokers": 2,
        "rf": None,
        "min_isr": 1,
        "init_isr": None,
        "clean": 0,
        "unclean": 0,
        "fence": 0,
        "shrink": 0,
        "reassign": 0,
        **CONFIGS[config],
    }
    rf = c["rf"] or c["brokers"]
    init_isr = c["init_isr"] or rf
    clean, unclean = (
        ("NoDataLossShutdownLimit", "DataLossShutdownLimit")
        if spec == "kip_966"
        else ("CleanShutdownLimit", "UncleanShutdownLimit")
    )
    lines = [
        "CONSTANTS",
        f"    BrokerCount = {c['brokers']}",
        f"    InitReplicationFactor = {rf}",
        "    Values = { A }",
        f"    MinISR = {c['min_isr']}",
        f"    InitIsrSize = {init_isr}",
        f"    {clean} = {c['clean']}",
        f"    {unclean} = {c['unclean']}",
        f"    FenceBrokerLimit = {c['fence']}",
        f"    LeaderShrinkIsrLimit = {c['shrink']}",
        f"    ReassignmentLimit = {c['reassign']}",
    ]
    if spec == "v3_5":
        lines.append("    AvoidLastReplicaStanding = FALSE")
    lines += [f"    {v} = {v}" for v in MODEL_VALUES]
    lines += ["INIT Init", "NEXT Next"]
    inv = invariants(spec, mode)
    if inv:
        lines += ["INVARIANT", *inv]
    return "\n".join(lines) + "\n"


def parse_tlc(text: str) -> dict:
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
    res["complete"] = "Model checking completed. No error has been found." in text
    violated = re.search(r"Invariant (\w+) is violated", text)
    states = [int(x) for x in re.findall(r"^State (\d+):", text, re.M)]
    if violated:
        res["verdict"] = violated.group(1)
        res["cx_length"] = max(states) - 1 if states else None  # transitions = states - 1
    else:
        res["verdict"] = "holds" if res["complete"] else "undecided"
        res["cx_length"] = None
    m = re.search(r"TLC2 Version (.+)", text)
    if m:
        res["tlc_version"] = m.group(1).strip()
    return res


def run_tlc(
    jar: str, spec_dir: str, spec: str, config: str, mode: str, timeout: float | None
) -> dict:
    work = tempfile.mkdtemp(prefix="tlc-kraft-")
    try:
        for d in (os.path.join(spec_dir, TLA_DIR[spec]), os.path.join(spec_dir, "community")):
            for f in glob.glob(os.path.join(d, "*.tla")):
                if "_TTrace_" not in f:
                    shutil.copy(f, work)
        cfg = os.path.join(work, "bench.cfg")
        with open(cfg, "w") as fh:
            fh.write(tlc_config(spec, config, mode))
        cmd = [
            "java",
            "-XX:+UseParallelGC",
            "-cp",
            os.path.abspath(jar),
            "tlc2.TLC",
            "-workers",
            "1",
            "-deadlock",
            "-metadir",
            os.path.join(work, "states"),
            "-config",
            cfg,
            TLA_MODULE[spec],
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
        if res["verdict"] != "holds" and res.get("cx_length") is not None:
            res["first_cx_s"] = seconds  # TLC stops at the first violation
        if "distinct" not in res:
            res["error"] = (out.stdout + out.stderr).strip().splitlines()[-3:]
        return res
    finally:
        shutil.rmtree(work, ignore_errors=True)


def fmt(spec: str, config: str, mode: str, engine: str, r: dict) -> str:
    head = f"{spec:8s} {config:14s} {mode:8s} {engine:8s}"
    if "error" in r:
        return f"{head} ERROR {r['error']}"
    cx = "" if r.get("cx_length") is None else f"len {r['cx_length']}"
    first = "" if r.get("first_cx_s") is None else f"{r['first_cx_s']:.2f}"
    return (
        f"{head} {r['verdict'][:28]:28s} {cx:7s} {r['distinct']:>9,} {r['generated']:>10,} "
        f"{r['depth_tlc'] if r['depth_tlc'] is not None else '-':>5} {r['seconds']:8.2f} "
        f"{r['cpu_s']:8.2f} {first:>8s}   load {r['load_before'][0]:.2f}"
    )


def counts_match(ours: dict, theirs: dict, mode: str) -> bool | None:
    if not ours or not theirs or "error" in ours or "error" in theirs:
        return None
    if mode == "complete":
        return (ours["distinct"], ours["generated"], ours["depth_tlc"]) == (
            theirs["distinct"],
            theirs["generated"],
            theirs["depth_tlc"],
        )
    same_verdict = (ours["verdict"] == "holds") == (theirs["verdict"] == "holds")
    return same_verdict and ours["cx_length"] == theirs["cx_length"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tla2tools", help="TLC's jar; without it, no TLC column")
    ap.add_argument("--spec-dir", help="directory with v3.5/, kip-966/ (and community/) .tla files")
    ap.add_argument("--only", action="append", default=[], help="SPEC:CONFIG:MODE, repeatable")
    ap.add_argument("--large", action="store_true", help="add the reassignment rows")
    ap.add_argument("--max-seconds", type=float, default=None, help="per run (both engines)")
    ap.add_argument(
        "--json", default=os.path.join(ROOT, "bench", "results", "kraft_side_by_side.json")
    )
    args = ap.parse_args(argv)
    rows = ROWS + (LARGE if args.large else [])
    if args.only:
        wanted = {tuple(o.split(":")) for o in args.only}
        rows = [r for r in ROWS + LARGE if r in wanted]
    tlc = bool(args.tla2tools and args.spec_dir)
    if not tlc:
        print("TLC column skipped: give --tla2tools and --spec-dir to run TLC alongside.")
    info = machine()
    print(
        f"machine: {info['cores']} cores, {info['cpu']}; Python {info['python']}; "
        f"{info['java'] or 'no java'}; load average {load()}"
    )
    print(
        f"{'spec':8s} {'config':14s} {'mode':8s} {'engine':8s} {'verdict':28s} {'cx':7s} "
        f"{'distinct':>9s} {'generated':>10s} {'depth':>5s} {'seconds':>8s} {'cpu s':>8s} "
        f"{'1st cx s':>8s}"
    )
    results = []
    for spec, config, mode in rows:
        row: dict = {"spec": spec, "config": config, "mode": mode, "constants": CONFIGS[config]}
        # the --large rows are measured here, not pinned by tests (about a minute each)
        row["documented_only"] = (spec, config, mode) in LARGE
        row["invariants"] = invariants(spec, mode)
        row["engines"] = {}
        engines = [("ours-bfs", "ours")] + ([("tlc-1", "tlc")] if tlc else [])
        for name, kind in engines:
            before, cpu0 = load(), children_cpu()
            if kind == "ours":
                r = run_ours(spec, config, mode, args.max_seconds)
            else:
                r = run_tlc(args.tla2tools, args.spec_dir, spec, config, mode, args.max_seconds)
            r["cpu_s"] = children_cpu() - cpu0
            r["load_before"], r["load_after"] = before, load()
            row["engines"][name] = r
            print(fmt(spec, config, mode, name, r), flush=True)
        row["counts_match"] = counts_match(
            row["engines"].get("ours-bfs", {}), row["engines"].get("tlc-1", {}), mode
        )
        if row["counts_match"] is False:
            print(f"{'':42s}DIFFERENT from TLC")
        results.append(row)
    out = {
        "benchmark": "kraft_side_by_side",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": info,
        "source": "github.com/Vanlightly/kafka-tlaplus@823615e8a0962d0160c11d9affb2576c56b7c054",
        "symmetry": False,
        "rows": results,
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, "w") as fh:
        json.dump(out, fh, indent=1)
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
