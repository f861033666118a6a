"""Deterministic-simulation property tests (R8, R13, R17; KIP-101).

kip-320 never loses an acknowledged acks=all record under crash, restart, pause, loss,
duplication, reordering and partitions; the seeds' hw-truncation protocol does, in KIP-101's run.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from isr.impl.sim.scenarios import TP0, Fault, kip101_scenario, run_random
from isr.impl.sim.world import World, sim_config

faults = st.lists(
    st.builds(
        Fault,
        at_ms=st.integers(0, 1_500),
        kind=st.sampled_from(["crash", "restart", "pause", "partition", "loss", "duplicate"]),
        target=st.integers(0, 2),
        other=st.integers(0, 2),
        duration_ms=st.integers(10, 300),
    ),
    max_size=6,
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(faults=faults, seed=st.integers(0, 2**16))
def test_kip320_never_loses_an_acknowledged_record(faults, seed):
    w = run_random("kip-320", faults, seed=seed, records=30, partitions=2)
    assert w.lost_acked() == []
    # R5/R17: after healing, the consumer reads every acknowledged record at its offset.
    seen = w.consume_all()
    for rid, (tp, off) in w.producer.acked.items():
        assert seen.get((tp, off)) == rid
    # LogMatching below HW: every ISR member holds the leader's committed prefix.
    for tp in w.coord.assignments:
        leader = w.leader_of(tp)
        lp = w.broker(leader).partitions[tp]
        for r in lp.isr:
            fp = w.broker(r).partitions[tp]
            assert fp.log.view()[: lp.log.hw] == lp.log.view()[: lp.log.hw]
            assert fp.log.hw <= fp.log.leo


@settings(max_examples=15, deadline=None)
@given(faults=faults, seed=st.integers(0, 2**16))
def test_same_seed_same_run(faults, seed):
    a = run_random("kip-320", faults, seed=seed, records=10)
    b = run_random("kip-320", faults, seed=seed, records=10)
    assert a.trace == b.trace


def test_kip101_scenario_loses_data_under_hw_truncation():
    w = kip101_scenario("hw-truncation")
    assert [rid for rid, _tp, _off in w.lost_acked()] == ["m2"]
    leader = w.broker(w.leader_of(TP0))
    assert leader.partitions[TP0].log.view() == [["m1", 0]]


def test_kip101_scenario_is_safe_with_leader_epochs():
    for proto in ("kip-101", "kip-279", "kip-320"):
        w = kip101_scenario(proto)
        assert w.lost_acked() == [], proto


def test_random_faults_find_hw_truncation_loss():
    # Over a fixed set of seeds, the seeds' protocol loses an acknowledged record at least once.
    import random

    lost = 0
    for s in range(40):
        rng = random.Random(s)
        fs = [
            Fault(
                rng.randint(0, 1500),
                rng.choice(["crash", "restart", "pause", "partition"]),
                rng.randint(0, 2),
                rng.randint(0, 2),
                rng.randint(20, 300),
            )
            for _ in range(5)
        ]
        lost += bool(run_random("hw-truncation", fs, seed=s).lost_acked())
    assert lost > 0


def test_power_failure_of_every_isr_member_can_lose_committed_data_r14():
    # R14: followers acknowledge before fsync. With no flushing, a simultaneous power failure of
    # the whole ISR drops records that were acknowledged.
    w = World(3, 1, 3, sim_config("kip-320", flush_interval_batches=0), seed=3)
    w.run_until(100)
    for i in range(5):
        w.at(100 + 10 * i, w.produce, TP0, f"r{i}")
    w.run_until(600)
    assert len(w.producer.acked) == 5
    for b in range(3):
        w.crash(b, lose_unflushed=True)
    w.heal()
    w.run_until(3_000)
    assert len(w.lost_acked()) == 5
    # ... and flushing every batch closes it.
    w = World(3, 1, 3, sim_config("kip-320", flush_interval_batches=1), seed=3)
    w.run_until(100)
    for i in range(5):
        w.at(100 + 10 * i, w.produce, TP0, f"r{i}")
    w.run_until(600)
    for b in range(3):
        w.crash(b, lose_unflushed=True)
    w.heal()
    w.run_until(3_000)
    assert w.lost_acked() == []


def test_unclean_election_can_lose_committed_data():
    cfg = sim_config("kip-320", min_insync_replicas=1, unclean_leader_election=True)
    w = World(2, 1, 2, cfg, seed=1)
    w.run_until(100)
    leader = w.leader_of(TP0)
    other = 1 - leader
    w.crash(other)
    w.run_until(1_500)  # the follower leaves the ISR
    w.produce(TP0, "x")
    w.run_until(1_600)
    assert "x" in w.producer.acked
    w.crash(leader)
    w.restart(other)  # the only live replica is out of the ISR: unclean election picks it
    w.run_until(3_000)
    assert w.leader_of(TP0) == other
    assert [r for r, _t, _o in w.lost_acked()] == ["x"]
