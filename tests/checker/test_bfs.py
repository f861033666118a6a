"""The BFS engine on toy models with known answers."""

from __future__ import annotations

from isr.checker.bfs import Limits, check_bfs
from isr.checker.model import Property

from .toys import grid, tokens, with_dec


def test_grid_counts_depth_and_deadlock():
    res = check_bfs(grid(4))
    assert res.complete and res.stop_reason == "exhausted"
    assert res.distinct_states == 25
    assert res.depth == 8
    assert res.deadlocks == 1
    assert res.states_generated == 1 + 2 * 4 * 5  # the initial state + every edge
    assert res.actions_never_fired == []
    assert res.exit_code() == 0


def test_shortest_counterexample_for_an_invariant():
    prop = Property("SumBelow5", "always", lambda s: s[0] + s[1] < 5)
    res = check_bfs(grid(4, [prop]))
    (p,) = res.properties
    assert p.holds is False
    assert p.counterexample.length == 5
    final = p.counterexample.steps[-1]
    assert final.action in ("IncX", "IncY")
    assert res.exit_code() == 1


def test_symmetry_reduces_and_keeps_the_verdict():
    sym = check_bfs(tokens(3), symmetry=True)
    full = check_bfs(tokens(3), symmetry=False)
    assert full.distinct_states == 27
    assert sym.distinct_states == 10  # multisets of size 3 over {0, 1, 2}
    assert [p.holds for p in sym.properties] == [p.holds for p in full.properties] == [False]
    assert sym.properties[0].counterexample.length == full.properties[0].counterexample.length == 6


def test_action_property_and_sometimes():
    res = check_bfs(with_dec(5))
    by = {p.name: p for p in res.properties}
    assert by["Monotonic"].holds is False
    steps = by["Monotonic"].counterexample.steps
    assert [s.action for s in steps] == ["Inc", "Inc", "Inc", "Dec"]
    assert by["ReachesTop"].holds is True
    assert by["ReachesMinusOne"].holds is False  # a `sometimes` never met is a failure
    assert res.exit_code() == 1


def test_limits_end_the_run_incomplete():
    res = check_bfs(grid(50), limits=Limits(max_states=100))
    assert not res.complete and res.stop_reason == "max-states"
    assert res.distinct_states >= 100
    assert res.exit_code() == 3
    res = check_bfs(grid(2000), limits=Limits(max_seconds=0.2))
    assert not res.complete and res.stop_reason == "max-seconds"
    assert res.exit_code() == 3


def test_never_fired_actions_are_reported():
    res = check_bfs(with_dec(2))  # Dec needs x == 3
    assert res.actions_never_fired == ["Dec"]
