"""The kit's random kraft schedules, each run in full on the reference adapter (issue 28 item
1): ``isr conform --random N`` stops generating at its first rejection and shrinks it; this
runs all N schedules of a seed (the same strategy, ``scenarios.schedule_strategy`` over the
fault kinds the adapter supports) and counts the verdicts, those with a reassignment command
apart.

    python -m bench.kraft_conform_random --seeds 1-20 --n 40

Prints one line per seed ("accepted/run; with reassign commands: accepted/run") and each
rejection (schedule number, whether it reassigns, the reason). Measured 2026-11-27 over seeds
1-20 x 40: 790 of 800 accepted, 180 of 184 with reassignments (docs/conformance.md).
"""

from __future__ import annotations

import argparse
import time

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hseed
from isr.impl.adapter import Session
from isr.traces.conformance.runner import (
    ConformReport,
    InProcess,
    run_scenario_full,
    supported_kinds,
)
from isr.traces.conformance.scenarios import schedule_strategy

MOVES = ("reassign", "cancel_reassignment")


def run_seed(seed: int, n: int, mutant: str | None = None) -> list[tuple[list, str, str]]:
    """[(schedule, verdict, reason)] of the seed's ``n`` random kraft schedules."""
    ad = InProcess(Session(mutant))
    kinds = supported_kinds(ad, "kraft", seed, ConformReport())
    out: list[tuple[list, str, str]] = []

    @hseed(seed)
    @settings(
        max_examples=n,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(schedule_strategy(kinds))
    def one(sc: list) -> None:
        v, _ = run_scenario_full(ad, sc, f"random:{len(out) + 1}", seed, "kraft")
        out.append((sc, v.verdict, v.reason))

    one()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="1-20", help="a range, e.g. 1-20, or one seed")
    ap.add_argument("--n", type=int, default=40)
    a = ap.parse_args()
    lo, _, hi = a.seeds.partition("-")
    t0 = time.perf_counter()
    tot = acc = moved = moved_acc = 0
    for seed in range(int(lo), int(hi or lo) + 1):
        got = run_seed(seed, a.n)
        ok = sum(v == "accepted" for _sc, v, _r in got)
        mv = [(sc, v) for sc, v, _r in got if any(c["op"] in MOVES for c in sc)]
        mok = sum(v == "accepted" for _sc, v in mv)
        print(f"seed {seed}: {ok}/{len(got)} accepted; with reassign commands: {mok}/{len(mv)}")
        for k, (sc, v, r) in enumerate(got, 1):
            if v != "accepted":
                print(f"  {k} {any(c['op'] in MOVES for c in sc)} {r[:160]}")
        tot, acc, moved, moved_acc = tot + len(got), acc + ok, moved + len(mv), moved_acc + mok
    print(
        f"{acc}/{tot} accepted; with reassign commands {moved_acc}/{moved};"
        f" {time.perf_counter() - t0:.0f} s"
    )


if __name__ == "__main__":
    main()
