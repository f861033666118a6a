"""Scenarios per minute of the deterministic simulation (issue 5 item 3): random fault schedules
of 40 acks=all records on a 3-broker, replication-3 cluster under kip-320.

    python bench/impl_sim_throughput.py --scenarios 500
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from isr.impl.sim.scenarios import Fault, run_random

KINDS = ["crash", "restart", "pause", "partition", "loss", "duplicate"]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenarios", type=int, default=500)
    ap.add_argument("--protocol", default="kip-320")
    a = ap.parse_args()
    t0 = time.perf_counter()
    lost = 0
    for s in range(a.scenarios):
        rng = random.Random(s)
        faults = [
            Fault(
                rng.randint(0, 1500),
                rng.choice(KINDS),
                rng.randint(0, 2),
                rng.randint(0, 2),
                rng.randint(10, 300),
            )
            for _ in range(rng.randint(1, 8))
        ]
        lost += bool(run_random(a.protocol, faults, seed=s).lost_acked())
    dt = time.perf_counter() - t0
    print(
        f"{a.scenarios} scenarios in {dt:.1f}s = {a.scenarios / dt * 60:.0f}/min; runs losing an acknowledged record: {lost}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
