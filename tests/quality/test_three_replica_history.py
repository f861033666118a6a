"""Kafka's three-replica history, found with no crash at all: leadership moved off live leaders
(preferred elections, controlled shutdown, R9) is enough to break KIP-101, KIP-279 and KIP-320's
first design, and the released KIP-320 fences the same path. The public TLA+ specification
(hachikuji/kafka-specification, modules Kip279 and Kip320FirstTry, 3 replicas) shows the same
story; docs/findings.md tells it. TLC's bound is two records; one is enough for
the hole and keeps this test fast (bench/tla_side_by_side.py runs the two-record bound)."""

from __future__ import annotations

import functools

import pytest
from isr.checker.bfs import check_bfs
from isr.spec import Config, IsrSpec


def model(protocol: str, records: int = 1) -> IsrSpec:
    return IsrSpec(Config(protocol=protocol, replicas=3, records=records, epochs=3, crashes=0))


@functools.cache
def strong_isr(protocol: str):
    res = check_bfs(model(protocol), symmetry=True, properties=["StrongIsr"])
    (p,) = res.properties
    return res, p


@pytest.mark.parametrize("protocol", ["kip-279", "kip-320-first-try"])
def test_strong_isr_falls_to_moves_without_a_crash(protocol):
    _, p = strong_isr(protocol)
    assert p.holds is False
    cx = p.counterexample
    # shortest: BFS, the same length with and without symmetry; 9 steps while requests could
    # overtake each other (TLC's public Kip279 module still allows that), 10 in order (R8), 11
    # since the would-be leader answers from Kafka 2.0's cache: it never wrote, so its cache is
    # empty and the answer UNDEFINED, and the follower cuts to its HW, which must lag the
    # record (before, the leader had its epoch cached from becoming leader, KAFKA-7415's 2.1)
    assert cx.length == 11
    actions = [s.action for s in cx.steps]
    assert "BrokerCrash" not in actions
    # a leader move, a would-be leader applying its stale request late, the truncation of
    # the record against it, and the HW passing the record once the lagging member is dropped
    assert {"ControllerMoveLeader", "ControllerShutdownBroker"} & set(actions)
    assert actions[-2:] == ["FollowerTruncate", "LeaderShrinkIsr"]


def _replay(m: IsrSpec, steps) -> list[str]:
    """Replay a counterexample's steps by action name and arguments; the names of the steps the
    model allows, up to the first it does not."""
    s = m.init_states()[0]
    done = []
    for st in steps:
        nxt = [
            t
            for a, t in m.successors(s)
            if m.action_names[a[0]] == st.action and m.describe_action(a)["args"] == st.args
        ]
        if not nxt:
            break
        s = nxt[0]
        done.append(st.action)
    return done


def test_kip_320_fences_the_kip_279_path():
    """The released KIP-320 on KIP-279's counterexample: the follower still at epoch 1 cannot
    fetch from the leader at epoch 3 (FENCED_LEADER_EPOCH), so the path stops there."""
    _, p = strong_isr("kip-279")
    steps = p.counterexample.steps
    done = _replay(model("kip-279"), steps)
    assert len(done) == len(steps)  # the replay itself is faithful
    fenced = _replay(model("kip-320"), steps)
    assert len(fenced) < len(steps)
    assert steps[len(fenced)].action == "FollowerFetch"
