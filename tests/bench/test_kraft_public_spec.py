"""The transcription of Vanlightly's KRaft-era TLA+ specs (bench/kraft_tla) against TLC's figures.

Every number here is TLC 2.20's on the same module and constants (bench/kraft_tla CONFIGS; Values =
{A}, no symmetry, -deadlock, no VIEW), measured on this project's machine: distinct and generated
states and depth of complete runs (TLC run with no INVARIANT), and the length in transitions of
TLC's shortest counterexample. TLC counts the initial state among generated states, as check_bfs
does; its depth counts the initial state as level 1 (ours as level 0).
"""

from __future__ import annotations

from functools import cache

import pytest
from isr.checker.bfs import check_bfs
from isr.checker.fingerprint import check_hashable_value

from bench.kraft_tla import CONFIGS, SAFETY, V35, make_model

# (module, config): (distinct, generated, TLC depth) of TLC's complete run.
COMPLETE = {
    ("v3_5", "shrink1"): (367, 718, 18),
    ("v3_5", "fence1"): (14_613, 35_234, 36),
    ("v3_5", "unclean1"): (14_304, 30_447, 39),
    ("v3_5", "clean1"): (13_348, 28_673, 35),
    ("v3_5", "three-brokers"): (5_531, 14_267, 31),
    ("v3_5", "lrs-minisr1"): (106_009, 235_059, 46),
    ("kip_966", "shrink1"): (367, 718, 18),
    ("kip_966", "fence1"): (14_613, 35_234, 36),
    ("kip_966", "unclean1"): (14_304, 30_447, 39),
    # NoDataLossShutdown chooses clean or not (\E is_clean_shutdown \in BOOLEAN): twice 3.5's
    ("kip_966", "clean1"): (26_677, 57_325, 35),
    ("kip_966", "lrs-minisr1"): (50_149, 111_191, 46),
}
SLOW = {("v3_5", "lrs-minisr1")}


@pytest.mark.parametrize(
    ("module", "config"),
    [pytest.param(*k, marks=pytest.mark.slow) if k in SLOW else k for k in COMPLETE],
)
def test_state_space_equals_tlc(module, config):
    distinct, generated, tlc_depth = COMPLETE[(module, config)]
    result = check_bfs(make_model(module, config), symmetry=False, properties=[])
    assert result.complete
    assert (result.distinct_states, result.states_generated, result.depth + 1) == (
        distinct,
        generated,
        tlc_depth,
    )


@cache
def first_violation(module: str, config: str, props: tuple[str, ...]):
    model = make_model(module, config)
    return model, check_bfs(
        model, symmetry=False, properties=list(props), stop_at_first_violation=True
    )


LRS_STORY = [
    "WriteRecordToLeader",  # leader 1 writes with ISR {1, 2}
    "FenceBroker",  # the controller fences follower 2: ISR {1}
    "ReceiveMetadataUpdate",  # leader 1 learns ISR {1} and advances the HW alone
    "UncleanShutdown",  # leader 1 loses its disk; the ISR stays {1}, no leader
    "BrokerStart",
    "ReceiveBrokerRegRequest",  # 1 registers again and, as the sole ISR member, is elected
    "ReceiveBrokerRegResponse",  # with an empty log: the committed record is gone
]


def test_v3_5_last_replica_standing_with_min_isr_2_is_tlcs_counterexample():
    """The 3.5 spec's "last replica standing" data loss (the reason for KIP-966): with min ISR 2
    and one unclean shutdown, TLC's counterexample has 7 transitions (8 states), the same story."""
    _, result = first_violation("v3_5", "lrs-minisr2", ("LeaderCompletenessProperty",))
    (prop,) = result.properties
    assert prop.holds is False
    assert prop.counterexample.length == 7
    assert [s.action for s in prop.counterexample.steps] == LRS_STORY


def test_v3_5_last_replica_standing_with_min_isr_1():
    _, result = first_violation("v3_5", "lrs-minisr1", ("LeaderCompletenessProperty",))
    (prop,) = result.properties
    assert prop.holds is False
    assert prop.counterexample.length == 7  # TLC: 8 states
    assert prop.counterexample.steps[-1].action == "ReceiveBrokerRegResponse"
    assert "UncleanShutdown" in [s.action for s in prop.counterexample.steps]


def test_kip_966_holds_where_3_5_loses_data():
    """KIP-966 on the same constants: every safety property holds over the whole space (TLC: no
    error, 50,149 states). The committed record is still lost *globally* (the one replica that
    had it lost its disk; MinISR = DataLossShutdownLimit, the case the spec's config says to drop
    that invariant for), but no replica without it is elected: unavailable, not inconsistent."""
    _, result = first_violation("kip_966", "lrs-minisr1", (*SAFETY, "MinIsrRecoveryQuorum"))
    assert result.complete
    assert result.distinct_states == 50_149
    assert all(p.holds for p in result.properties)
    _, lost = first_violation("kip_966", "lrs-minisr1", ("NoCommittedRecordLostGlobally",))
    (prop,) = lost.properties
    assert prop.holds is False
    assert prop.counterexample.length == 4  # TLC: 5 states
    assert prop.counterexample.steps[-1].action == "DataLossShutdown"


def test_safety_holds_without_lrs_faults():
    """The clean-shutdown and fencing configs: every invariant of the 3.5 spec holds (TLC: no
    error with all of them)."""
    for config in ("fence1", "clean1", "shrink1"):
        model = make_model("v3_5", config)
        result = check_bfs(model, symmetry=False)
        assert result.complete
        assert all(p.holds for p in result.properties), config


def test_guards_matter():
    """A guard the spec marks CHECK, dropped, is caught (the spec's own claim, checked here): without
    KIP-903's broker-epoch check in AlterPartition, one unclean shutdown of a follower lets the
    leader re-add it from a fetch sent before the shutdown, with its disk gone (13 steps); without
    "a joining follower has reached the HW" the ISR takes a follower that lacks committed data
    (8 steps). Dropping a guard that never fires at these bounds leaves the state space as is."""
    for drop, config, length, last in (
        ("broker-epoch", "unclean1", 13, "ReceiveAlterPartitionRequest"),
        ("isr-hwm", "shrink1", 8, "ReceiveAlterPartitionRequest"),
    ):
        model = V35(**CONFIGS[config], drop={drop})
        result = check_bfs(
            model,
            symmetry=False,
            properties=["LeaderCandidateCompletenessProperty"],
            stop_at_first_violation=True,
        )
        (prop,) = result.properties
        assert prop.holds is False, drop
        assert prop.counterexample.length == length, drop
        assert prop.counterexample.steps[-1].action == last
    with pytest.raises(ValueError, match="unknown guards"):
        V35(drop={"no-such-guard"})


def test_states_are_hashable_values_and_json():
    for module in ("v3_5", "kip_966"):
        for config in CONFIGS:
            model = make_model(module, config)
            (init,) = model.init_states()
            check_hashable_value(init)
            js = model.state_to_json(init)
            assert js["partition_status"][0] == 1  # broker 1 leads
            for action, t in model.successors(init):
                check_hashable_value(t)
                assert model.describe_action(action)["action"] in model.action_names
