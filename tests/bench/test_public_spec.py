"""The transcription of the public TLA+ spec (bench/kafka_tla) against TLC's own figures.

Every number here is TLC 2.20's on the same module and configuration (LogSize = 2, MaxRecords =
2, MaxLeaderEpoch = 2, no symmetry, -deadlock), measured on this project's machine: distinct and
generated states of the complete runs, and the length (transitions) of TLC's shortest
counterexample to StrongIsr. TLC counts the initial state among generated states, as check_bfs
does; its depth counts the initial state as level 1 (ours as level 0).
"""

from __future__ import annotations

from functools import cache

import pytest
from isr.checker.bfs import check_bfs
from isr.checker.fingerprint import check_hashable_value

from bench.kafka_tla import MODULES, make_model

# module: (distinct, generated, TLC depth) of the complete two-replica run (TLC with no INVARIANT
# for the modules that violate the ISR properties, so that it does not stop), then the length of
# TLC's shortest counterexample to WeakIsr and to StrongIsr (None: holds).
TWO_REPLICAS = {
    "Kip320": (5_973, 11_839, 18, None, None),
    "Kip279": (9_027, 23_425, 18, None, None),
    "Kip320FirstTry": (8_429, 19_387, 18, None, None),
    "KafkaTruncateToHighWatermark": (10_131, 24_459, 20, 8, 9),
    "Kip101": (9_045, 21_447, 18, 11, 11),
}


@pytest.mark.parametrize("module", sorted(TWO_REPLICAS))
def test_two_replica_state_space_equals_tlc(module):
    distinct, generated, tlc_depth, weak_len, strong_len = TWO_REPLICAS[module]
    result = check_bfs(make_model(module, 2), symmetry=False)
    assert result.complete
    assert result.distinct_states == distinct
    assert result.states_generated == generated
    assert result.depth == tlc_depth - 1
    lengths = {
        p.name: (p.holds, p.counterexample.length if p.counterexample else None)
        for p in result.properties
    }
    assert lengths == {
        "TypeOk": (True, None),
        "LeaderInIsr": (False, 0),  # the spec starts with no leader: false in the initial state
        "WeakIsr": (weak_len is None, weak_len),
        "StrongIsr": (strong_len is None, strong_len),
    }


# (module, replicas): length of TLC's (shortest, BFS) StrongIsr counterexample, in transitions.
STRONG_ISR_VIOLATED = {
    ("KafkaTruncateToHighWatermark", 2): 9,
    ("Kip101", 2): 11,
    ("KafkaTruncateToHighWatermark", 3): 8,
    ("Kip101", 3): 10,
    ("Kip279", 3): 10,
    ("Kip320FirstTry", 3): 12,
}


@cache
def strong_isr_run(module: str, replicas: int):
    """check_bfs on StrongIsr alone (TLC's config), stopping once it is decided; shared by the
    tests that look at the same counterexample."""
    model = make_model(module, replicas)
    return model, check_bfs(model, symmetry=False, properties=["StrongIsr"])


@pytest.mark.parametrize(
    ("module", "replicas"),
    [
        pytest.param(m, r, marks=pytest.mark.slow) if (m, r) == ("Kip320FirstTry", 3) else (m, r)
        for m, r in STRONG_ISR_VIOLATED
    ],
)
def test_strong_isr_violation_as_short_as_tlcs(module, replicas):
    model, result = strong_isr_run(module, replicas)
    (strong,) = result.properties
    assert strong.holds is False
    cx = strong.counterexample
    assert cx.length == STRONG_ISR_VIOLATED[(module, replicas)]
    # Rebuilt by replay, so every step is a transition of the model; the last state violates.
    assert cx.steps[-1].action in model.action_names


def test_kip279_three_replica_trace_is_the_known_story():
    """TLC's KIP-279 counterexample: three elections without a crash, a follower truncating
    committed data against a leader that never took over."""
    _, result = strong_isr_run("Kip279", 3)
    actions = [s.action for s in result.properties[0].counterexample.steps]
    assert actions.count("ControllerElectLeader") == 3
    assert actions[-1] == "BecomeFollowerTruncateKip279"
    assert "LeaderIncHighWatermark" in actions


def test_states_are_flat_int_tuples_and_json_is_tla_shaped():
    for module in MODULES:
        model = make_model(module, 3)
        (init,) = model.init_states()
        check_hashable_value(init)
        assert model.TypeOk(init)
        js = model.state_to_json(init)
        assert js["quorumState"] == {"leaderEpoch": -1, "leader": "NONE", "isr": ["r1", "r2", "r3"]}
        assert js["replicaLog"]["r1"] == {"endOffset": 0, "records": [-1, -1]}
        assert js["leaderAndIsrRequests"] == []
        for action, t in model.successors(init):
            assert model.describe_action(action)["action"] in model.action_names
            assert model.TypeOk(t)


def test_epoch_bound_limits_quorum_changes():
    """LeaderEpochSeq: MaxLeaderEpoch = e allows exactly e + 1 quorum changes; each one files a
    request with the next epoch."""
    for e in range(3):
        model = make_model("Kip320", 2, max_leader_epoch=e)
        seen = set(model.init_states())
        frontier = list(seen)
        while frontier:
            nxt = []
            for s in frontier:
                for _, t in model.successors(s):
                    if t not in seen:
                        seen.add(t)
                        nxt.append(t)
            frontier = nxt
        most = max(s[model.NLE] for s in seen)
        assert most == e + 1
        for s in seen:
            assert [r[0] for r in model.requests(s)] == list(range(s[model.NLE]))
