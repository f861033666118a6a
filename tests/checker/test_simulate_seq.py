"""Sequential simulation: seeded, reproducible, violations real and shrunk; `isr simulate`."""

from __future__ import annotations

import json

from isr.checker.model import Property, SimpleModel
from isr.checker.simulate import shrink, simulate
from isr.cli.main import main


def line(limit: int = 20) -> SimpleModel:
    """Toy: x moves +1 or -1 in 0..limit; the invariant x < 5 fails at x = 5 (5 steps away)."""

    def succ(x):
        if x < limit:
            yield (0, ()), x + 1
        if x > 0:
            yield (1, ()), x - 1

    return SimpleModel(
        name="line",
        action_names=["Up", "Down"],
        init=lambda: [0],
        next=succ,
        properties=[
            Property("Below5", "always", lambda x: x < 5),
            Property("Unreachable", "always", lambda x: x < 100),
            Property("AtThree", "sometimes", lambda x: x == 3),
        ],
    )


def test_same_seed_same_result_and_a_shrunk_real_counterexample():
    m = line()
    a = simulate(m, walks=20, depth=60, seed=3)
    b = simulate(m, walks=20, depth=60, seed=3)
    timing = {"seconds": 0, "states_per_second": 0}
    assert a.to_json() | timing == b.to_json() | timing
    assert not a.complete and a.stop_reason == "simulation" and a.engine == "simulate"
    verdicts = {p.name: p.holds for p in a.properties}
    assert verdicts == {"Below5": False, "Unreachable": None, "AtThree": True}
    cx = next(p.counterexample for p in a.properties if p.name == "Below5")
    assert cx.length == 5  # shrunk to the direct path: Up x5
    assert [s.action for s in cx.steps] == ["Up"] * 5


def test_shrink_removes_detours():
    m = line()
    up, down = (0, ()), (1, ())
    walk = [up, up, down, up, up, down, up, up, up]
    path = shrink(m, 0, walk, m.properties[0])
    assert [a for a, _ in path[1:]] == [up] * 5


def test_cli_simulate_exit_codes(capsys):
    bounds = ["--replicas", "3", "--records", "2", "--epochs", "3", "--crashes", "2"]
    args = ["simulate", *bounds, "--walks", "300", "--depth", "60", "--seed", "1", "--quiet"]
    assert main([*args, "--protocol", "hw-truncation", "--format", "json"]) == 1
    out = json.loads(capsys.readouterr().out)
    found = {p["name"] for p in out["properties"] if p["holds"] is False}
    assert "NoCommittedLoss" in found and out["violation_found"]
    assert main([*args, "--protocol", "kip-320"]) == 0
    assert "no violation found in 300 walks (exit 0)" in capsys.readouterr().out
    assert main([*args, "--walks", "0"]) == 2
    assert main([*args, "--master", "local[1]"]) == 2  # --master needs --engine spark
