"""The Spark engines through checker.engines' registry give the sequential engines' counts."""

from __future__ import annotations

import pytest
from isr.checker.engines import Options, run

from tests.checker.toys import grid, tokens

pytestmark = pytest.mark.spark


def test_spark_check_through_the_registry(spark):
    for model in (grid(4), tokens(3)):
        ref = run("check", "bfs", model, Options())
        res = run("check", "spark", model, Options(), partitions=2)
        assert res.engine == "spark"
        assert (res.distinct_states, res.states_generated, res.depth, res.deadlocks) == (
            ref.distinct_states,
            ref.states_generated,
            ref.depth,
            ref.deadlocks,
        )
        assert [(p.name, p.holds) for p in res.properties] == [
            (p.name, p.holds) for p in ref.properties
        ]
    assert run("check", "spark", grid(4), Options()).distinct_states == 25


def test_spark_simulate_through_the_registry(spark):
    model = tokens(3)
    seq = run("simulate", "seq", model, Options(), walks=40, depth=8, seed=1)
    par = run("simulate", "spark", model, Options(), walks=40, depth=8, seed=1, tasks=3)
    assert par.engine == "spark-simulate"
    assert (par.distinct_states, par.states_generated) == (
        seq.distinct_states,
        seq.states_generated,
    )
    assert [(p.name, p.holds) for p in par.properties] == [
        (p.name, p.holds) for p in seq.properties
    ]
