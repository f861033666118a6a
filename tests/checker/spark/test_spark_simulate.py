"""Simulation on Spark runs exactly the sequential engine's seeded walks."""

from __future__ import annotations

import pytest
from isr.checker.simulate import simulate
from isr.checker.spark.simulate import simulate_spark
from isr.spec import Config, IsrSpec

pytestmark = pytest.mark.spark


def big(protocol: str) -> IsrSpec:
    return IsrSpec(Config(replicas=3, records=2, epochs=3, crashes=2, protocol=protocol))


def test_spark_simulation_finds_the_hw_truncation_bug(spark):
    m = big("hw-truncation")
    seq = simulate(m, walks=300, depth=60, seed=1)
    par = simulate_spark(m, walks=300, depth=60, seed=1)
    assert par.engine == "spark-simulate" and not par.complete
    found = {p.name: p.counterexample.length for p in par.violated}
    assert found == {p.name: p.counterexample.length for p in seq.violated}
    assert "NoCommittedLoss" in found
    assert par.distinct_states == seq.distinct_states
    assert par.states_generated == seq.states_generated
    assert par.extra["simulation"]["violating_walk"] == seq.extra["simulation"]["violating_walk"]


def test_spark_simulation_of_a_fixed_protocol_finds_nothing(spark):
    res = simulate_spark(big("kip-320"), walks=100, depth=60, seed=7)
    assert res.violated == []
    assert all(p.holds is None for p in res.properties if p.kind == "always")
