"""Random kraft runs of the simulation with partition reassignments, each validated against
the spec (issue 28 item 1, KIP-455; traces/VALIDATION.md, "kraft: partition reassignment").

    python -m bench.kraft_reassign_random                 # seeds 0-99
    python -m bench.kraft_reassign_random --seeds 20 --first 100

Each seed: 3 brokers, replication factor 2 (broker 2 the spare, the spec's --reassignments
layout), min ISR 1 or 2, 25 random steps (produce, crash, restart, a reassignment to any two
brokers, a cancel, an election), then heal. Prints one line per seed (verdict, then the
OperatorReassignPartition, OperatorCancelReassignment, BrokerStopReplica and completions:
ControllerHandleAlterPartition events followed by a new replica set) and the count rejected.
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter

from isr.impl.sim.world import World, sim_config
from isr.traces.validator.validate import validate_events

from bench.kraft_random_world import TP, random_run


def run(seed: int) -> World:
    rng = random.Random(seed)
    w = World(2 + 1, 1, 2, sim_config("kraft", min_insync_replicas=rng.choice([1, 2])), seed=seed)
    return random_run(w, rng, 0.62, _reassign)


def _reassign(w: World, rng: random.Random, r: float) -> None:
    if r < 0.8:
        w.reassign(TP, sorted(rng.sample(w.ids, 2)))
    elif r < 0.87:
        w.reassign(TP, None)  # a cancel
    elif r < 0.92:
        w.elect_leader(rng.choice(w.ids))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=100)
    ap.add_argument("--first", type=int, default=0)
    a = ap.parse_args()
    t0 = time.perf_counter()
    bad = 0
    for seed in range(a.first, a.first + a.seeds):
        w = run(seed)
        n = Counter(e["action"] for e in w.trace)
        v = validate_events(w.trace_header(), list(w.trace))
        bad += v.verdict != "accepted"
        print(
            seed,
            v.verdict,
            n["OperatorReassignPartition"],
            n["OperatorCancelReassignment"],
            n["BrokerStopReplica"],
            "" if v.verdict == "accepted" else v.reason[:200],
        )
    print(f"rejected {bad} of {a.seeds} in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
