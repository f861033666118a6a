"""isr.checker.engines: every engine through the one registry gives the same answers on toy models
(tests/checker/toys.py); options an engine does not support are refused; one property split;
counterexamples carry whole states."""

from __future__ import annotations

import pytest
from isr.checker import bfs, engines
from isr.checker.engines import EngineOptionError, Limits, Options, run, split_properties
from isr.checker.model import Property, SimpleModel

from .toys import grid, tokens, with_dec


def counts(res) -> tuple:
    return (
        res.distinct_states,
        res.states_generated,
        res.depth,
        res.deadlocks,
        res.complete,
        [
            (p.name, p.holds, None if p.counterexample is None else p.counterexample.length)
            for p in res.properties
        ],
    )


def test_registry_names_and_limits_reexported():
    assert engines.names("check") == ["bfs", "parallel", "spark", "spark-barrier"]
    assert engines.names("simulate") == ["seq", "spark"]
    assert engines.names("liveness") == ["scc"]
    assert bfs.Limits is Limits  # old import path still works
    with pytest.raises(
        EngineOptionError, match=r"unknown check engine 'dfs'.*bfs, parallel, spark"
    ):
        engines.engine("check", "dfs")


@pytest.mark.parametrize("name,extras", [("bfs", {}), ("parallel", {"workers": 2})])
def test_check_engines_agree_on_the_grid(name, extras):
    res = run("check", name, grid(4), Options(), **extras)
    # (n+1)^2 states, 2n(n+1) transitions plus the initial state, depth 2n, one deadlock
    assert counts(res) == (25, 41, 8, 1, True, [])
    assert res.engine == name
    if name == "parallel":
        assert res.extra["parallel"]["workers"] == 2


@pytest.mark.parametrize("name,extras", [("bfs", {}), ("parallel", {"workers": 2})])
def test_check_engines_agree_with_symmetry_and_violations(name, extras):
    res = run("check", name, tokens(3), Options(), **extras)
    # multisets of 3 values in 0..2: C(5,3) = 10 canonical states; NotAllTop fails at (2,2,2)
    assert res.distinct_states == 10 and res.depth == 6
    assert [(p.name, p.holds, p.counterexample.length) for p in res.properties] == [
        ("NotAllTop", False, 6)
    ]
    off = run("check", name, tokens(3), Options(symmetry=False), **extras)
    assert off.distinct_states == 27 and off.symmetry is False
    action = run("check", name, with_dec(5), Options(), **extras)
    assert [(p.name, p.holds) for p in action.properties] == [
        ("Monotonic", False),
        ("ReachesTop", True),
        ("ReachesMinusOne", False),
    ]


def test_limits_and_stop_at_first_violation_through_options():
    res = run("check", "bfs", grid(20), Options(limits=Limits(max_states=30)))
    assert res.stop_reason == "max-states" and not res.complete
    first = run("check", "bfs", with_dec(5), Options(stop_at_first_violation=True))
    assert first.stop_reason == "first-violation"
    only = run("check", "bfs", with_dec(5), Options(properties=["ReachesTop"]))
    assert [p.name for p in only.properties] == ["ReachesTop"]


def test_an_option_an_engine_does_not_support_is_refused_before_it_runs():
    m = grid(2)
    with pytest.raises(
        EngineOptionError, match=r"'bfs' does not support checkpoint.*parallel, spark"
    ):
        run("check", "bfs", m, Options(checkpoint="/nonexistent"))
    with pytest.raises(EngineOptionError, match="'spark' does not support stop-at-first-violation"):
        run("check", "spark", m, Options(stop_at_first_violation=True))
    with pytest.raises(EngineOptionError, match="'bfs' does not take workers"):
        run("check", "bfs", m, Options(), workers=2)
    with pytest.raises(EngineOptionError, match="'seq' does not support max-states"):
        run("simulate", "seq", m, Options(limits=Limits(max_states=3)))
    with pytest.raises(EngineOptionError, match="'seq' does not take master"):
        run("simulate", "seq", m, Options(), master="local[1]")
    with pytest.raises(EngineOptionError, match="'scc' does not support symmetry"):
        run("liveness", "scc", m, Options(symmetry=False))


def test_simulate_seq_through_the_registry_is_simulate():
    from isr.checker.simulate import simulate

    m = with_dec(6)
    a = run("simulate", "seq", m, Options(), walks=30, depth=12, seed=5)
    b = simulate(m, walks=30, depth=12, seed=5)
    timing = {"seconds": 0, "states_per_second": 0}
    assert a.to_json() | timing == b.to_json() | timing
    assert a.engine == "simulate" and a.distinct_states == 7


def test_liveness_through_the_registry():
    res = run("liveness", "scc", grid(2), Options(limits=Limits(max_states=3)))
    assert res.stop_reason == "max-states" and res.engine == "liveness"


def test_one_property_split():
    props = [
        Property("Inv", "always", lambda s: True),
        Property("Act", "action", lambda s, a, t: True),
        Property("SomeS", "sometimes", lambda s: True),
        Property("SomeT", "sometimes", lambda s, a, t: True, on_transitions=True),
        Property("Live", "eventually", lambda s: True),
    ]
    m = SimpleModel("p", ["A"], lambda: [0], lambda s: iter(()), props)
    split = split_properties(m)
    assert [p.name for p in split.invariants] == ["Inv"]
    assert [p.name for p in split.action_properties] == ["Act"]
    assert [p.name for p in split.sometimes_states] == ["SomeS"]
    assert [p.name for p in split.sometimes_transitions] == ["SomeT"]
    assert [p.name for p in split.liveness] == ["Live"]
    assert [p.name for p in split.safety] == ["Inv", "Act", "SomeS", "SomeT"]
    assert [p.name for p in split_properties(m, ["Live", "Inv"]).selected] == ["Inv", "Live"]
    assert engines.unknown_properties(m, ["Inv", "Nope"]) == (
        ["Nope"],
        ["Inv", "Act", "SomeS", "SomeT", "Live"],
    )


def test_counterexamples_carry_the_engines_whole_states():
    res = run("check", "bfs", tokens(3), Options(symmetry=False))
    cx = res.properties[0].counterexample
    assert cx.states is not None and len(cx.states) == cx.length + 1
    assert cx.states[0] == cx.initial == {"state": [0, 0, 0]}
    assert cx.states[-1] == {"state": [2, 2, 2]}
    # what the engine had is what rebuilding from the changes would give
    rebuilt = type(cx)(cx.initial, cx.steps).whole_states()
    assert rebuilt == cx.whole_states() == cx.states
    assert "states" not in cx.to_json()  # the JSON form is unchanged


def test_engines_take_the_options_whole_and_entries_are_functions():
    """Issue 29 item 2: each registry entry loads its engine through a function (no
    "module:function" string), every engine is ``fn(model, options)``, and the keyword form
    builds the same Options (``takes_options``)."""
    from isr.checker.errors import BAD_INPUT, CheckpointError, EngineFailure, SparkError
    from isr.checker.parallel import CheckpointError as ParallelCheckpointError
    from isr.checker.parallel import EngineFailure as ParallelEngineFailure

    for (kind, name), spec in engines.ENGINES.items():
        assert callable(spec.load_fn) and not isinstance(spec.load_fn, str), (kind, name)
    fn = engines.engine("check", "bfs").load()
    assert fn is bfs.check_bfs
    whole = fn(tokens(3), Options(symmetry=False, limits=Limits(max_states=12)))
    keywords = bfs.check_bfs(tokens(3), symmetry=False, max_states=12)
    assert counts(whole) == counts(keywords) and whole.distinct_states == 12
    assert Options.of(max_states=5, workers=2) == Options(limits=Limits(5), workers=2)
    with pytest.raises(TypeError):
        Options.of(worker=2)  # a misspelt option is an error, as for a function's keyword
    # one module for the engines' errors: the parallel and the Spark engines raise the same ones
    assert ParallelCheckpointError is CheckpointError and ParallelEngineFailure is EngineFailure
    assert {EngineOptionError, CheckpointError, SparkError} == set(BAD_INPUT)
