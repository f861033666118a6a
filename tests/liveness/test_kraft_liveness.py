"""kraft's liveness once a broker's metadata is lost only when a newer record supersedes it
(R8; spec/actions/broker.py ``network_lose_leader_and_isr``): the liveness property tells
KAFKA-14154's stale controller apart from the fixed KRaft, and a reassignment's new replica
rejoins. Before, a lost newest request left a leader behind for ever and both were violated
(docs/design/kraft.md)."""

from __future__ import annotations

from pathlib import Path

from isr.checker.graph import WithoutActions
from isr.checker.liveness import check_liveness
from isr.cli.liveness import MOVES
from isr.cli.protocol_file import load_protocol_file
from isr.spec import Config, IsrSpec

ROOT = Path(__file__).resolve().parents[2]
FAILOVER = dict(replicas=2, records=0, epochs=2, crashes=0, controller_failovers=1)


def _verdicts(model) -> dict:
    """As `isr liveness` checks by default (without the leader moves, cli/liveness.py)."""
    return {p.name: p for p in check_liveness(WithoutActions(model, list(MOVES))).properties}


def test_the_fixed_kraft_lets_a_caught_up_follower_rejoin_across_a_failover():
    v = _verdicts(IsrSpec(Config(protocol="kraft", **FAILOVER)))
    assert v["CaughtUpFollowerRejoinsIsr"].holds is True
    assert v["AcksAllAnswered"].holds is True


def test_kafka_14154_is_a_follower_that_never_rejoins():
    """The deposed controller's FENCED_LEADER_EPOCH taken as final (Kafka 3.0-3.2): the leader
    keeps its expansion pending with no newer metadata to come, and the follower, caught up,
    never rejoins the ISR (the JIRA's persistent under-replicated partition)."""
    proto = load_protocol_file(str(ROOT / "examples/protocols/kraft_stale_controller_is_final.py"))
    v = _verdicts(IsrSpec(Config(protocol=proto.name, **FAILOVER), proto))
    p = v["CaughtUpFollowerRejoinsIsr"]
    assert p.holds is False
    actions = [s.action for s in p.counterexample.steps]
    assert "ControllerFailover" in actions and "DeposedControllerHandleAlterPartition" in actions
    assert "NetworkLoseLeaderAndIsr" not in actions


def test_a_reassignments_new_replica_rejoins():
    spec = IsrSpec(
        Config(protocol="kraft", replicas=2, records=1, epochs=2, crashes=0, reassignments=1)
    )
    assert _verdicts(spec)["CaughtUpFollowerRejoinsIsr"].holds is True
