"""A campaign of real Apache Kafka runs under the conformance kit (issue 24): random fault
schedules (traces/conformance/apache_kafka/scenarios.py, kafka_schedule_strategy) on one or more
Kafka releases, and the same schedules on the reference implementation for comparison.

Every run is appended to OUT/runs.ndjson as it completes (verdict, reason, seconds, cluster start,
the history checker's counts) and its trace kept as OUT/traces/<release>-<n>.ndjson, so a stopped
campaign keeps what it did and `--revalidate OUT` re-judges every kept trace with the current
spec and validator (after a spec fix). A summary per release goes to stdout and OUT/summary.json.

    python bench/kafka_campaign.py --releases 4.4.0,4.0.2 --runs 100 --out out/campaign
    python bench/kafka_campaign.py --revalidate out/campaign
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from isr.traces.conformance.apache_kafka.scenarios import kafka_schedule_strategy
from isr.traces.conformance.runner import Adapter, AdapterError, run_scenario_full
from isr.traces.validator.greybox import read, validate_run


def schedules(n: int, seed: int) -> list[list[dict[str, Any]]]:
    """n schedules drawn by hypothesis from one seed: the same list for every release."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed

    out: list[list[dict[str, Any]]] = []

    @hseed(seed)
    @settings(
        max_examples=n,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(kafka_schedule_strategy())
    def draw(sc: list[dict[str, Any]]) -> None:
        out.append(sc)

    draw()
    return out[:n]


def history_counts(events: list[dict[str, Any]], header: dict[str, Any]) -> dict[str, Any]:
    from isr.traces import history

    ops = [{k: v for k, v in e.items() if k != "kind"} for e in events if e.get("kind") == "client"]
    cfg = header.get("config") or {}
    head = {"acks": cfg.get("acks", "all"), "idempotent": bool(cfg.get("idempotence"))}
    res = history.check(history.parse(head, ops, "campaign"))
    j = res.to_json()
    j["counts"] = {k: a["count"] for k, a in (j.get("anomalies") or {}).items() if a.get("count")}
    return j


def run_release(release: str, scheds: list, out: Path, log) -> None:  # type: ignore[no-untyped-def]
    if release == "reference":
        cmd = f"{sys.executable} -m isr.impl.adapter"
    else:
        cmd = f"{sys.executable} -m isr.traces.conformance.apache_kafka.adapter --version {release}"
    (out / "traces").mkdir(parents=True, exist_ok=True)
    ad = Adapter(cmd, out / f"adapter-{release}.stderr", timeout=300)
    try:
        for n, sc in enumerate(scheds, 1):
            t0 = time.time()
            try:
                if release == "reference":
                    v, o = run_scenario_full(ad, sc, f"{release}:{n}", n, "kraft")
                else:  # collected now, judged by revalidate() at the end (or after a spec fix)
                    v, o = _collect(ad, sc, f"{release}:{n}")
            except AdapterError as e:
                log({"release": release, "run": n, "verdict": "adapter-error", "reason": str(e)})
                ad.close()
                ad = Adapter(cmd, out / f"adapter-{release}.stderr", timeout=300)
                continue
            rec: dict[str, Any] = {
                "release": release,
                "run": n,
                "verdict": v.verdict,
                "reason": v.reason,
                "seconds": round(time.time() - t0, 1),
                "validate_seconds": round(v.seconds, 2),
                "ops": len(sc),
            }
            if o.header and o.header.get("observation") == "grey-box":
                rec["ready_seconds"] = o.header.get("ready_seconds")
                path = out / "traces" / f"{release}-{n}.ndjson"
                path.write_text(
                    "\n".join(json.dumps(x) for x in [o.header, *(o.events or [])]) + "\n"
                )
                (out / "traces" / f"{release}-{n}.commands.json").write_text(json.dumps(sc))
                rec["history"] = _summary(history_counts(o.events or [], o.header))
            log(rec)
    finally:
        ad.close()


def _collect(ad: Adapter, sc: list[dict[str, Any]], name: str) -> tuple[Any, Any]:
    """Run a schedule on a real cluster and keep its trace, without judging it."""
    from isr.traces.conformance.runner import Outcome
    from isr.traces.validator.validate import Verdict

    o = Outcome()
    o.header = ad.request({"protocol": "kraft", **sc[0]}).get("header")
    for op in sc[1:]:
        ad.request(op)
    o.events = ad.request({"op": "trace"}).get("events")
    return Verdict(name, "collected"), o


def _summary(h: dict[str, Any]) -> dict[str, Any]:
    if not h:
        return {}
    keep = ("valid", "violations", "counts", "stats")
    return {k: h[k] for k in keep if k in h}


def revalidate(out: Path, cap: int = 300_000) -> list[dict[str, Any]]:
    rows = []
    for f in sorted(
        (out / "traces").glob("*.ndjson"),
        key=lambda p: (p.stem.rsplit("-", 1)[0], int(p.stem.rsplit("-", 1)[1])),
    ):
        head, evs = read(f)
        v = validate_run(head, evs, f.stem, cap=cap)
        rows.append(
            {
                "release": f.stem.rsplit("-", 1)[0],
                "run": int(f.stem.rsplit("-", 1)[1]),
                "verdict": v.verdict,
                "reason": v.reason,
                "validate_seconds": round(v.seconds, 2),
                "history": _summary(history_counts(evs, head)),
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    return rows


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    by: dict[str, dict[str, Any]] = {}
    for r in rows:
        s = by.setdefault(
            r["release"], {"runs": 0, "verdicts": Counter(), "seconds": [], "ready": []}
        )
        s["runs"] += 1
        s["verdicts"][r["verdict"]] += 1
        if "seconds" in r:
            s["seconds"].append(r["seconds"])
        if r.get("ready_seconds"):
            s["ready"].append(r["ready_seconds"])
        for k, v in ((r.get("history") or {}).get("counts") or {}).items():
            s.setdefault("history", Counter())[k] += v
    out = {}
    for rel, s in by.items():
        out[rel] = {
            "runs": s["runs"],
            "verdicts": dict(s["verdicts"]),
            "mean_seconds_per_run": round(sum(s["seconds"]) / len(s["seconds"]), 1)
            if s["seconds"]
            else None,
            "mean_start_seconds": round(sum(s["ready"]) / len(s["ready"]), 1)
            if s["ready"]
            else None,
            "history": dict(s.get("history", {})),
        }
    return out


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--releases", default="4.4.0,4.0.2", help="comma-separated; 'reference' too")
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, default=Path("out/kafka-campaign"))
    ap.add_argument("--revalidate", type=Path, default=None, metavar="OUT")
    ap.add_argument(
        "--cap", type=int, default=300_000, help="validator cap per run (undecided past it)"
    )
    args = ap.parse_args()
    if args.revalidate:
        rows = revalidate(args.revalidate, args.cap)
        summ = summarize(rows)
        (args.revalidate / "revalidated.json").write_text(json.dumps(summ, indent=2))
        print(json.dumps(summ, indent=2))
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    runs = args.out / "runs.ndjson"
    rows: list[dict[str, Any]] = []

    def log(rec: dict[str, Any]) -> None:
        rows.append(rec)
        with runs.open("a") as f:
            f.write(json.dumps(rec) + "\n")
        print(json.dumps(rec), flush=True)

    scheds = schedules(args.runs, args.seed)
    meta = {
        "machine": platform.machine(),
        "cpus": __import__("os").cpu_count(),
        "started": time.time(),
    }
    try:
        for rel in args.releases.split(","):
            run_release(rel.strip(), scheds, args.out, log)
    except KeyboardInterrupt:
        print("stopped: partial results kept", file=sys.stderr)
    judged = {(r["release"], r["run"]): r for r in revalidate(args.out, args.cap)}
    for r in rows:  # the kept traces' verdicts replace "collected"
        j = judged.get((r["release"], r["run"]))
        if j is not None:
            r.update(verdict=j["verdict"], reason=j["reason"], history=j["history"])
    summ = summarize(rows)
    (args.out / "summary.json").write_text(json.dumps({"meta": meta, "releases": summ}, indent=2))
    print(json.dumps(summ, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
