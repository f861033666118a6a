"""The known holes of each protocol version are found, with their shortest counterexamples, and
the fixed version holds every safety property on the bounds the suite can exhaust. State counts
are pinned: a change to the spec that changes them must say why."""

from __future__ import annotations

import pytest

from checker.bfs import check_bfs
from spec import Config, IsrSpec

SAFETY = [
    "TypeOK",
    "HwAtMostLeo",
    "LeaderInIsr",
    "IsrWithinAssigned",
    "StrongIsr",
    "WeakIsr",
    "NoCommittedLoss",
    "NoPhantomRead",
    "LogMatching",
    "HwMonotonic",
]


def check(protocol, replicas, records, epochs, crashes, symmetry=True, properties=None):
    cfg = Config(
        replicas=replicas, records=records, epochs=epochs, crashes=crashes, protocol=protocol
    )
    return check_bfs(IsrSpec(cfg), symmetry=symmetry, properties=properties)


def verdicts(res):
    return {p.name: p for p in res.properties}


def test_hw_truncation_loses_an_acknowledged_record_with_two_replicas():
    res = check("hw-truncation", 2, 1, 2, 2)
    v = verdicts(res)
    assert v["NoCommittedLoss"].holds is False
    cx = v["NoCommittedLoss"].counterexample
    assert cx.length == 6
    actions = [s.action for s in cx.steps]
    # the acknowledged record is truncated away by a restart to a lagging HW checkpoint
    assert "BrokerRestart" in actions and actions[0] == "ProducerSend"
    assert v["StrongIsr"].holds is False and v["StrongIsr"].counterexample.length == 5
    assert v["NoPhantomRead"].holds is False


def test_hw_truncation_lets_logs_diverge_with_two_replicas():
    res = check("hw-truncation", 2, 3, 2, 2, properties=["LogMatching"])
    cx = verdicts(res)["LogMatching"].counterexample
    assert cx.length == 9
    # the restarted leader truncated to its own lagging checkpoint and wrote new records over
    # offsets its follower still holds; the follower then appends after its stale entry
    final = cx.steps[-1]
    assert final.action == "FollowerFetch"


def test_kip_101_lets_logs_diverge():
    res = check("kip-101", 2, 3, 3, 2, properties=["LogMatching", "StrongIsr"])
    v = verdicts(res)
    assert v["LogMatching"].holds is False
    assert v["LogMatching"].counterexample.length == 14
    assert v["StrongIsr"].holds is False
    assert v["StrongIsr"].counterexample.length == 13
    # the hole KIP-279 closes: a follower whose last epoch the new leader never had
    actions = [s.action for s in v["LogMatching"].counterexample.steps]
    assert actions.count("ControllerElectLeader") == 2 and "FollowerTruncate" in actions


@pytest.mark.parametrize("protocol", ["kip-101", "kip-279", "kip-320"])
def test_epoch_truncation_keeps_committed_records(protocol):
    res = check(protocol, 2, 1, 2, 2)
    assert res.complete
    assert all(p.holds for p in res.properties), [p.name for p in res.properties if not p.holds]


@pytest.mark.parametrize("bounds", [(2, 2, 3, 2), (3, 1, 2, 1), (2, 1, 3, 2)])
def test_kip_320_holds_every_safety_property(bounds):
    res = check("kip-320", *bounds)
    assert res.complete
    v = verdicts(res)
    for name in SAFETY:
        assert v[name].holds is True, name
    for p in res.properties:
        if p.kind == "sometimes":
            assert p.holds is True, p.name


# (protocol, replicas, records, epochs, crashes) -> (distinct with symmetry, without, depth)
PINNED = {
    ("hw-truncation", 2, 1, 2, 2): (8620, 9874),
    ("kip-101", 2, 1, 2, 2): (10755, 12390),
    ("kip-279", 2, 1, 2, 2): (10755, 12390),
    ("kip-320", 2, 1, 2, 2): (8223, 9856),
    ("kip-320", 2, 2, 2, 1): (8576, 10119),
    ("kip-320", 3, 1, 2, 1): (35653, 85891),
}


@pytest.mark.parametrize("key", sorted(PINNED))
def test_pinned_state_counts_with_and_without_symmetry(key):
    sym_count, full_count = PINNED[key]
    sym = check(*key, symmetry=True)
    full = check(*key, symmetry=False)
    assert (sym.distinct_states, full.distinct_states) == (sym_count, full_count)
    # depth may differ: a state's orbit can be reached earlier through a symmetric twin
    assert {p.name: p.holds for p in sym.properties} == {p.name: p.holds for p in full.properties}
    for a, b in zip(sym.properties, full.properties, strict=True):
        if a.counterexample or b.counterexample:
            assert a.counterexample.length == b.counterexample.length, a.name
