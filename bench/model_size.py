"""What makes the three-replica models large: distinct states of kip-320 with and without the
crash and the leader moves, on one core (check_bfs, symmetry on).

    python bench/model_size.py [--json bench/results/model_size.json]

Leader moves (ControllerMoveLeader: preferred-replica election or reassignment;
ControllerShutdownBroker: controlled shutdown) are part of the base model; here they are taken
out by removing the two actions from the model object (a measurement only: no option of
`isr check` does that). Each configuration runs in its own subprocess.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys

CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[2])
from isr.spec import Config, IsrSpec
from isr.checker.bfs import check_bfs
cfg = json.loads(sys.argv[1])
drop = cfg.pop("drop")
model = IsrSpec(Config(**cfg))
gone = {model.kind_of[n] for n in drop}
model._fns = [(k, f) for k, f in model._fns if k not in gone]
c0 = time.process_time()
res = check_bfs(model)
print(json.dumps({"config": cfg, "without": drop, "distinct": res.distinct_states,
    "generated": res.states_generated, "depth": res.depth, "complete": res.complete,
    "cpu_s": round(time.process_time() - c0, 1),
    "holds": all(p.holds is not False for p in res.properties)}))
"""

MOVES = ["ControllerMoveLeader", "ControllerShutdownBroker"]
CONFIGS = [
    {"protocol": "kip-320", "replicas": 3, "records": 1, "epochs": 2, "crashes": 0},
    {"protocol": "kip-320", "replicas": 3, "records": 1, "epochs": 2, "crashes": 1},
    {"protocol": "kip-320", "replicas": 3, "records": 2, "epochs": 2, "crashes": 0},
    {"protocol": "kip-320", "replicas": 3, "records": 1, "epochs": 3, "crashes": 0},
]


def run(cfg: dict, drop: list[str]) -> dict:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps({**cfg, "drop": drop}), root],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", metavar="FILE", help="write the results as JSON")
    args = ap.parse_args()
    load = os.getloadavg()[0]
    results = []
    for cfg in CONFIGS:
        pair = [run(cfg, MOVES), run(cfg, [])]
        results.extend(pair)
        c = cfg
        print(
            f"R={c['replicas']} records={c['records']} epochs={c['epochs']} "
            f"crashes={c['crashes']}: {pair[0]['distinct']:,} without moves, "
            f"{pair[1]['distinct']:,} with (x{pair[1]['distinct'] / pair[0]['distinct']:.1f})",
            flush=True,
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "machine": platform.machine(),
                    "cpus": os.cpu_count(),
                    "python": platform.python_version(),
                    "load_before": round(load, 2),
                    "load_after": round(os.getloadavg()[0], 2),
                    "results": results,
                },
                f,
                indent=2,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
