"""The Spark engine gives the sequential engine's answers: counts, depth, verdicts, shortest
counterexample lengths, on toy models and on every protocol version of the ISR spec."""

from __future__ import annotations

import pytest
from isr.checker.bfs import Limits, check_bfs
from isr.checker.model import Property, SimpleModel
from isr.checker.spark.engine import check_spark
from isr.spec import Config, IsrSpec
from spark_helpers import assert_same_as_bfs

pytestmark = pytest.mark.spark

N, TOP = 4, 3  # four counters in 0..3


def _succ(s):
    for i in range(N):
        if s[i] < TOP:
            yield (0, (i,)), s[:i] + (s[i] + 1,) + s[i + 1 :]
    if TOP in s and 0 in s:
        yield (1, ()), (0,) * N


def counters(symmetric: bool) -> SimpleModel:
    """Toy: counters that go up; a reset when one is full and another empty. Without
    symmetry: a boundary (sum <= 10) keeps the all-full state out of reach; with symmetry (any
    permutation, canonical form sorted) there is no boundary and all-full is a terminal state."""
    return SimpleModel(
        name="counters-sym" if symmetric else "counters",
        action_names=["Inc", "Reset", "Never"],
        init=lambda: [(0,) * N],
        next=_succ,
        properties=[
            Property("SumBelow7", "always", lambda s: sum(s) < 7),
            Property("FirstNotFull", "action", lambda s, a, t: not (s[0] == 2 and t[0] == 3)),
            Property("StepByOne", "action", lambda s, a, t: a[0] == 1 or sum(t) == sum(s) + 1),
            Property("AllFull", "sometimes", lambda s: all(c == TOP for c in s)),
            Property("Resets", "sometimes", lambda s, a, t: a[0] == 1, on_transitions=True),
            Property("Live", "eventually", lambda s: True),
        ],
        boundary=None if symmetric else (lambda s: sum(s) <= 10),
        canon=(lambda s: tuple(sorted(s))) if symmetric else None,
    )


@pytest.mark.parametrize("symmetric", [False, True])
def test_toy_models_match_bfs(spark, symmetric):
    model = counters(symmetric)
    res = check_spark(model, symmetry=True, cut_every=3)
    ref = assert_same_as_bfs(model, res, symmetry=True)
    # pinned: the toy's numbers do not depend on either engine
    assert (ref.distinct_states, ref.depth, ref.deadlocks) == (
        (35, 12, 1) if symmetric else (255, 11, 0)
    )
    assert res.engine == "spark" and res.complete
    verdicts = {p.name: p.holds for p in res.properties}
    assert verdicts["SumBelow7"] is False and verdicts["FirstNotFull"] is False
    assert verdicts["StepByOne"] is True and verdicts["AllFull"] is symmetric
    assert res.actions_never_fired == ["Never"]


# protocol -> (replicas, records, epochs, crashes), pinned distinct states and depth (leader moves
# included: ControllerMoveLeader, ControllerShutdownBroker)
ISR = {
    # (6010, 17), (7010, 17), (7010, 17), (5626, 16) before R8's in-order delivery
    "hw-truncation": ((2, 1, 2, 1), 3361, 18),
    "kip-101": ((2, 1, 2, 1), 3432, 16),
    "kip-279": ((2, 1, 2, 1), 3432, 16),
    "kip-320": ((2, 1, 2, 1), 2902, 15),
}


def isr(protocol: str, bounds) -> IsrSpec:
    r, rec, ep, cr = bounds
    return IsrSpec(Config(replicas=r, records=rec, epochs=ep, crashes=cr, protocol=protocol))


@pytest.mark.parametrize("protocol", sorted(ISR))
def test_isr_protocols_match_bfs(spark, protocol):
    bounds, pinned, depth = ISR[protocol]
    model = isr(protocol, bounds)
    res = check_spark(model, config=model.config.to_json())
    assert_same_as_bfs(model, res)
    assert res.distinct_states == pinned
    assert res.depth == depth
    if protocol == "hw-truncation":  # the known bug, found at its shortest
        lengths = {p.name: p.counterexample.length for p in res.violated}
        pinned = {"StrongIsr": 5, "WeakIsr": 5, "NoCommittedLoss": 6, "NoPhantomRead": 7}
        assert {name: lengths.get(name) for name in pinned} == pinned
    else:
        assert res.violated == []


def test_without_symmetry_and_with_a_property_filter(spark):
    model = isr("hw-truncation", (2, 1, 1, 1))
    res = check_spark(model, symmetry=False)
    assert_same_as_bfs(model, res, symmetry=False)
    # two properties, both violated: the search stops once they are decided, as bfs does
    res = check_spark(model, properties=["WeakIsr", "StrongIsr"])
    ref = assert_same_as_bfs(model, res, properties=["WeakIsr", "StrongIsr"])
    assert ref.stop_reason == "all-properties-decided" and res.exit_code() == 1


def test_a_state_limit_is_never_a_pass(spark):
    model = isr("kip-320", (2, 1, 1, 1))
    res = check_spark(model, limits=Limits(max_states=100))
    assert not res.complete and res.stop_reason == "max-states"
    assert res.exit_code() == 3 and res.distinct_states >= 100
    assert all(p.holds is None for p in res.properties if p.kind == "always")
    assert check_bfs(model).distinct_states == 277 > res.distinct_states
