"""The partial-order reduction's factor (docs/reduction.md, "Partial-order reduction"): distinct
states and seconds with and without ``por``, both with symmetry, A/B in one run, with the
machine and its load.

    python bench/por.py                       # the complete models (a few minutes)
    python bench/por.py --only kraft-2/1/2/1
    python bench/por.py --race 600            # kraft 3/1/2/1 --min-isr 2 --lose-unflushed:
                                              # how far each gets in 600 s, per depth level

Each model is checked by the one-process BFS engine (compiled modules if built: `make setup`),
first without ``por``, then with it, over the same other reductions; the verdicts must agree.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's isr, not an installed one

from isr.checker.bfs import check_bfs  # noqa: E402
from isr.checker.engines import Limits  # noqa: E402
from isr.spec import Config, IsrSpec  # noqa: E402

MODELS: dict[str, tuple[dict, str | None]] = {
    # name: (bounds, the reduction both arms share)
    "kraft-2/1/2/1": (dict(protocol="kraft", replicas=2, records=1, epochs=2, crashes=1), None),
    "kraft-2/1/2/1+dead-state": (
        dict(protocol="kraft", replicas=2, records=1, epochs=2, crashes=1),
        "dead-state",
    ),
    "kraft-3/1/1/0": (dict(protocol="kraft", replicas=3, records=1, epochs=1, crashes=0), None),
    "kraft-3/1/2/0+dead-state": (
        dict(protocol="kraft", replicas=3, records=1, epochs=2, crashes=0),
        "dead-state",
    ),
    "kip-320-3/1/2/1+dead-state": (
        dict(protocol="kip-320", replicas=3, records=1, epochs=2, crashes=1),
        "dead-state",
    ),
    "default+dead-state": (dict(), "dead-state"),
}
RACE = dict(protocol="kraft", replicas=3, records=1, epochs=2, crashes=1, min_isr=2)
RACE_FLAGS = dict(lose_unflushed=True)


def machine() -> str:
    load = os.getloadavg()
    return (
        f"{platform.node()} {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    )


def with_por(reduction: str | None) -> str:
    return "por" if reduction is None else f"{reduction},por"


def compare(name: str, max_seconds: float | None) -> dict:
    bounds, reduction = MODELS[name]
    out: dict = {"model": name}
    verdicts = {}
    for arm, red in (("without", reduction), ("with", with_por(reduction))):
        load = os.getloadavg()[0]
        t0 = time.perf_counter()
        res = check_bfs(
            IsrSpec(Config(**bounds), reduction=red), limits=Limits(max_seconds=max_seconds)
        )
        out[arm] = dict(
            states=res.distinct_states,
            seconds=time.perf_counter() - t0,
            complete=res.complete,
            depth=res.depth,
            load=load,
        )
        verdicts[arm] = {p.name: p.holds for p in res.properties if p.kind != "eventually"}
    out["same_verdicts"] = verdicts["with"] == verdicts["without"]
    return out


def race(seconds: float) -> None:
    """kraft 3/1/2/1 --min-isr 2 --lose-unflushed with dead-state, then with dead-state,por:
    the distinct states found by each depth in ``seconds`` (from the engine's progress reports,
    every half second: a level's count is the distinct total when the next level began)."""
    print(f"kraft 3/1/2/1 --min-isr 2 --lose-unflushed, {seconds:.0f} s each; {machine()}")
    for red in ("dead-state", "dead-state,por"):
        firsts: dict[int, tuple[int, float]] = {}

        def report(info: dict, firsts: dict = firsts) -> None:
            d = info["depth"]
            if d not in firsts:
                firsts[d] = (info["distinct"], info["seconds"])

        report.interval = 0.5  # type: ignore[attr-defined]
        t0 = time.perf_counter()
        res = check_bfs(
            IsrSpec(Config(**RACE, **RACE_FLAGS), reduction=red),
            limits=Limits(max_seconds=seconds),
            progress=report,
        )
        took = time.perf_counter() - t0
        print(
            f"  {red:<15} {res.distinct_states:>12,} distinct, depth {res.depth}, "
            f"{'complete' if res.complete else 'incomplete'}, {took:.0f} s, load "
            f"{os.getloadavg()[0]:.2f}"
        )
        print(
            "    depth reached: " + ", ".join(f"{d}@{n:,}" for d, (n, _s) in sorted(firsts.items()))
        )
        sys.stdout.flush()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", choices=sorted(MODELS))
    ap.add_argument("--max-seconds", type=float, default=None, help="per run")
    ap.add_argument("--race", type=float, default=None, metavar="S")
    args = ap.parse_args()
    if args.race:
        race(args.race)
        return 0
    print(machine())
    print(
        f"{'model':<28} {'without':>12} {'with por':>12} {'factor':>7} {'s without':>10} "
        f"{'s with':>8}  verdicts"
    )
    bad = False
    for name in args.only or MODELS:
        r = compare(name, args.max_seconds)
        w, p = r["without"], r["with"]
        done = "" if w["complete"] and p["complete"] else " (incomplete)"
        print(
            f"{name:<28} {w['states']:>12,} {p['states']:>12,} "
            f"{w['states'] / max(p['states'], 1):>7.2f} {w['seconds']:>10.1f} {p['seconds']:>8.1f}"
            f"  {'same' if r['same_verdicts'] else 'DIFFERENT'}{done} (load {w['load']:.1f}/"
            f"{p['load']:.1f})"
        )
        sys.stdout.flush()
        bad |= not r["same_verdicts"] and w["complete"] and p["complete"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
