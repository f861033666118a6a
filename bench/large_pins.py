"""Exhaustive verdicts too large for CI's twelve minutes, kept true by hand.

    python bench/large_pins.py            # every pin; exit 1 if a count or verdict moved
    python bench/large_pins.py --only kraft-kip-966-election-lose-unflushed

Each pin is a complete search whose distinct-state count and verdicts the test suite used to
assert. The suite keeps a bounded neighbour of each (named in the pin), which fails when the
property breaks within the part of the space it explores; the full "holds" lives here. Run this
after a change to spec/ that moves a count, and update the pin with the reason, as the tests'
pins are updated. Results are printed for people and written to bench/results/large_pins.json
(states, seconds, states/s, the load average before and after).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from isr.checker.bfs import check_bfs
from isr.spec import Config, IsrSpec
from isr.spec.protocols import get_protocol


@dataclass(frozen=True)
class Pin:
    name: str
    protocol: str
    bounds: dict
    properties: list[str]
    distinct_states: int
    why: str
    flags: dict = field(default_factory=dict)  # the version's variant (ProtocolVersion.variant)
    neighbour: str = ""  # the test that keeps a bounded part of it in the suite


PINS = [
    Pin(
        name="kraft-kip-966-election-lose-unflushed",
        protocol="kraft",
        flags=dict(elect_last_known_leader=False),
        bounds=dict(replicas=2, records=1, epochs=2, crashes=1, lose_unflushed=True),
        properties=["NoCommittedLoss", "NoPhantomRead", "MonotonicReads"],
        distinct_states=2_638_388,
        # (the count was 289,269 before the partition epoch was apart, 731,420 before
        # KIP-841's fencing and registration, 1,119,222 before KIP-392's consumer, 1,359,182
        # before the epoch cache was its own state, 1,404,608 before issue 25's Kafka 4.x rules,
        # 2,682,532 before a crash was fenced at its session timeout, 2,752,872 before a fence's
        # leader -1 took a new leader epoch, 2,334,656 before a clean exit was told apart from
        # a kill)
        why=(
            "kraft with kip-966's election rule keeps NoCommittedLoss at the bounds where removing"
            " KIP-903 loses the record in 15 steps (KAFKA-14139)"
        ),
        neighbour=(
            "tests/spec/test_kraft.py::"
            "test_without_kip_903_a_disk_losing_follower_rejoins_and_loses_the_record"
        ),
    ),
    Pin(
        name="kraft-2-1-2-1-safety",
        protocol="kraft",
        bounds=dict(replicas=2, records=1, epochs=2, crashes=1),
        properties=[],  # every safety property (always and action)
        distinct_states=818_042,
        why=(
            "kraft at two replicas, one record, two epochs, one crash: every safety property"
            " holds (the count's history is in the neighbour's docstring)"
        ),
        neighbour="tests/spec/test_kraft.py::test_two_records_and_a_crash_hold",
    ),
    Pin(
        name="kraft-2-2-2-0-safety",
        protocol="kraft",
        bounds=dict(replicas=2, records=2, epochs=2, crashes=0),
        properties=[],
        distinct_states=375_601,
        why=(
            "kraft holds at the bounds where counting a diverging fetch (KAFKA-13141) breaks"
            " StrongIsr in 7 steps"
        ),
        neighbour=(
            "tests/spec/test_kraft.py::test_counting_a_diverging_fetch_loses_a_committed_record"
        ),
    ),
    Pin(
        name="kraft-fresh-hw-2-1-2-1-safety",
        protocol="kraft",
        flags=dict(fresh_hw_in_response=True),
        bounds=dict(replicas=2, records=1, epochs=2, crashes=1),
        properties=[],
        distinct_states=628_638,
        why="a fetch answer carrying the HW after the fetch (KAFKA-7104 undone) breaks no safety",
        neighbour="tests/spec/test_kraft.py::test_fresh_hw_is_not_a_safety_bug",
    ),
    Pin(
        name="kraft-2-1-2-0-controller-failover",
        protocol="kraft",
        bounds=dict(replicas=2, records=1, epochs=2, crashes=0, controller_failovers=1),
        properties=[],
        distinct_states=316_272,
        why=(
            "kraft with one lost AlterPartition answer (issue 28 item 2) holds where dropping a"
            " pending change at a refusal loses a committed record in 10 steps and a deposed"
            " controller's final refusal (KAFKA-14154) leaves a change pending in 5"
        ),
        neighbour=(
            "tests/spec/test_kraft_alter_partition.py::"
            "test_the_fixed_kraft_holds_within_reach_of_both_bugs"
        ),
    ),
]


def _safety(model: IsrSpec) -> list[str]:
    return [p.name for p in model.properties if p.kind in ("always", "action")]


def run_pin(pin: Pin) -> dict:
    version = get_protocol(pin.protocol)
    variant = version.variant(**pin.flags) if pin.flags else None
    model = IsrSpec(Config(protocol=pin.protocol, **pin.bounds), protocol=variant)
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    res = check_bfs(model, properties=pin.properties or _safety(model))
    secs = time.perf_counter() - t0
    verdicts = {p.name: p.holds for p in res.properties}
    ok = res.complete and res.distinct_states == pin.distinct_states and all(verdicts.values())
    return {
        "pin": pin.name,
        "why": pin.why,
        "neighbour": pin.neighbour,
        "ok": ok,
        "complete": res.complete,
        "distinct_states": res.distinct_states,
        "expected_states": pin.distinct_states,
        "verdicts": verdicts,
        "seconds": round(secs, 1),
        "states_per_second": round(res.distinct_states / secs) if secs else None,
        "load_before": round(load0, 2),
        "load_after": round(os.getloadavg()[0], 2),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", default=[], help="run only this pin (repeatable)")
    ap.add_argument("--out", default="bench/results/large_pins.json")
    args = ap.parse_args(argv)
    names = {p.name for p in PINS}
    unknown = [n for n in args.only if n not in names]
    if unknown:
        print(
            f"error: unknown pin {unknown[0]!r}; known: {', '.join(sorted(names))}", file=sys.stderr
        )
        return 2
    results = []
    try:
        for pin in PINS:
            if args.only and pin.name not in args.only:
                continue
            print(f"{pin.name}: {pin.protocol} {pin.bounds} ...", flush=True)
            r = run_pin(pin)
            results.append(r)
            mark = "ok" if r["ok"] else "MOVED"
            print(
                f"  {mark}: {r['distinct_states']:,} states (pinned {pin.distinct_states:,}),"
                f" {r['verdicts']}, {r['seconds']} s, {r['states_per_second']:,} states/s,"
                f" load {r['load_before']} -> {r['load_after']}",
                flush=True,
            )
            if not r["ok"]:  # what the pin stands for, and the suite's bounded part of it
                print(f"  pin: {pin.why}; in the suite: {pin.neighbour}", flush=True)
    except KeyboardInterrupt:
        print("interrupted: results so far kept", file=sys.stderr)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    # --only updates its pins' entries and keeps the others' last results (each with its time)
    kept: list[dict] = []
    if args.only and out.exists():
        try:
            kept = [r for r in json.loads(out.read_text()).get("results", [])
                    if r.get("pin") not in {x["pin"] for x in results}]  # fmt: skip
        except (OSError, ValueError, AttributeError):
            kept = []
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    for r in results:
        r["when"] = now
    order = {p.name: k for k, p in enumerate(PINS)}
    merged = sorted(kept + results, key=lambda r: order.get(r.get("pin"), len(order)))
    out.write_text(json.dumps({"machine": os.uname().nodename, "results": merged}, indent=1))
    return 0 if results and all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
