"""Liveness of the ISR spec on small bounds, with the verdicts explained in spec/liveness.py."""

from __future__ import annotations

import json

import networkx as nx
import pytest
from isr.checker.graph import WithoutActions, build_graph, graph_stats
from isr.checker.liveness import STUTTER, check_liveness
from isr.cli.liveness import MOVES
from isr.cli.main import main
from isr.spec import Config, IsrSpec

SMALL = dict(replicas=2, records=1, crashes=1, epochs=2)


def _verdicts(model) -> dict[str, object]:
    """Liveness as `isr liveness` checks it by default: without the leader moves, which under
    the epoch bound can spend the epochs a recovery election needs (cli/liveness.py)."""
    model = WithoutActions(model, list(MOVES))
    return {p.name: p for p in check_liveness(model).properties}


def test_leader_moves_no_longer_strand_a_write_at_these_bounds():
    """With the moves kept, the bound used to show through here: two moves spent epochs 2 and 3
    and the leader, applying epoch 3 before epoch 2, kept its purgatory; lost afterwards, it
    could never be replaced (no epoch left) and a write waited forever. Each broker applies its
    requests in order (R8): the leader applies epoch 2 first, becomes a follower and answers
    the write NotLeaderForPartition, so both properties hold at these bounds."""
    spec = IsrSpec(Config(protocol="kip-320", replicas=2, records=1, crashes=1, epochs=3))
    res = check_liveness(WithoutActions(spec, ["NetworkLoseLeaderAndIsr"]))
    v = {p.name: p for p in res.properties}
    assert v["AcksAllAnswered"].holds is True
    assert v["CaughtUpFollowerRejoinsIsr"].holds is True


@pytest.mark.parametrize("protocol", ["hw-truncation", "kip-320"])
def test_lost_leader_and_isr_leaves_a_write_unanswered(protocol):
    """A follower crashes, the controller shrinks the ISR, and the LeaderAndIsr to the leader is
    lost: the leader's cached zkVersion is stale, so it can neither shrink the ISR itself nor
    advance its HW past the dead follower (KAFKA-2729's stuck partition); the write waits
    forever while the leader stays. Kafka's controller loses a request only with its queue, when
    it handles the broker's failure (R8): here the leader's session expires and the controller
    drops the queue holding the shrink's request. Without a session expiry nothing is lost to a
    live broker and the write is answered."""
    v = _verdicts(IsrSpec(Config(protocol=protocol, session_expiries=1, **SMALL)))
    p = v["AcksAllAnswered"]
    assert p.holds is False
    actions = [s.action for s in p.counterexample.steps]
    assert actions[0] == "ProducerSend"
    assert "CoordinationExpireSession" in actions and "NetworkLoseLeaderAndIsr" in actions
    assert actions[-1] == STUTTER and p.counterexample.loop_start == len(actions)
    v = _verdicts(IsrSpec(Config(protocol=protocol, **SMALL)))
    assert v["AcksAllAnswered"].holds is True


@pytest.mark.parametrize("protocol", ["hw-truncation", "kip-101", "kip-320"])
def test_both_hold_when_leader_and_isr_is_never_lost(protocol):
    spec = IsrSpec(Config(protocol=protocol, replicas=2, records=1, crashes=1, epochs=3))
    v = _verdicts(WithoutActions(spec, ["NetworkLoseLeaderAndIsr"]))
    assert v["AcksAllAnswered"].holds is True
    assert v["CaughtUpFollowerRejoinsIsr"].holds is True


def test_no_crash_no_problem():
    v = _verdicts(IsrSpec(Config(protocol="kip-320", replicas=2, records=2, crashes=0)))
    assert all(p.holds is True for p in v.values())


def test_without_fairness_the_spec_violates_both():
    spec = IsrSpec(Config(protocol="kip-320", **SMALL))
    spec.fairness = []
    v = _verdicts(spec)
    assert v["AcksAllAnswered"].holds is False
    assert v["CaughtUpFollowerRejoinsIsr"].holds is False


def test_graph_of_the_spec_matches_bfs_count():
    sg = build_graph(IsrSpec(Config(protocol="kip-320", **SMALL)))
    st = graph_stats(sg)
    # `isr check --no-symmetry` on the same bounds (leader moves in); 6,378 before R8's order
    assert st["states"] == 3387
    assert st["diameter"] == 15  # 16 before


def test_cli_liveness_json_and_trace(tmp_path, capsys):
    out = tmp_path / "lasso.ndjson"
    args = ["liveness", "--protocol", "hw-truncation", "--replicas", "2", "--records", "1"]
    args += ["--session-expiries", "1"]  # R8: a request is lost only with a failure
    code = main([*args, "--crashes", "1", "--format", "json", "--trace-out", str(out)])
    assert code == 1
    res = json.loads(capsys.readouterr().out)
    names = {p["name"]: p["holds"] for p in res["properties"]}
    assert names == {"AcksAllAnswered": False, "CaughtUpFollowerRejoinsIsr": True}
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert lines[0]["loop_start"] == len(lines) - 2
    code = main([*args, "--crashes", "1", "--without", "NetworkLoseLeaderAndIsr"])
    assert code == 0
    assert main([*args, "--without", "Nope"]) == 2


def test_cli_graph_exports(tmp_path, capsys):
    gml, dot = tmp_path / "g.graphml", tmp_path / "g.dot"
    code = main(
        ["graph", "--replicas", "2", "--records", "1", "--crashes", "0", "--graphml", str(gml)]
        + ["--dot", str(dot), "--format", "json"]
    )
    assert code == 0
    stats = json.loads(capsys.readouterr().out)
    g = nx.read_graphml(gml)
    assert g.number_of_nodes() == stats["states"] and g.number_of_edges() == stats["edges"]
    assert dot.read_text().count("->") == stats["edges"]
    # each node says what it is: leader, epoch, ISR, then each replica's log length and HW
    # (issue 30: the labels were s0...sN); the initial state: leader 0, epoch 1, both in sync
    assert 's0 [label="s0\\nL0 e1 {0,1}\\n0/0 0/0", shape=doublecircle' in dot.read_text()
    # no tooltips unless asked (issue 30: 5.8 MB for 6,378 states, most of it the JSON states)
    assert "tooltip" not in dot.read_text()
    tips = tmp_path / "t.dot"
    argv = ["graph", "--replicas", "2", "--records", "1", "--crashes", "0"]
    assert main([*argv, "--dot", str(tips), "--dot-tooltips"]) == 0
    assert tips.read_text().count("tooltip=") == stats["states"]
    assert len(tips.read_text()) > 3 * len(dot.read_text())
