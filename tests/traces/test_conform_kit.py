"""The conformance kit for third-party adapters (issue 14): the node example adapter is
accepted, a broken one is rejected with the broken property named, the report (JSON, JUnit,
failing traces with the command that re-validates them) is usable, unsupported commands are
coverage gaps, and the adapter's stderr never blocks it."""

from __future__ import annotations

import json
import shutil
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from isr.cli.main import main
from isr.impl.adapter import Session
from isr.traces.conformance.report import ENCODING, GAP, PROPERTY, classify
from isr.traces.conformance.runner import Adapter, InProcess, conform, run_scenario_full
from isr.traces.conformance.scenarios import FAULT_KINDS, rare, schedule_strategy
from isr.traces.validator.validate import ACCEPTED, BAD_INPUT, REJECTED, UNSUPPORTED

TOY = Path(__file__).resolve().parents[2] / "traces/conformance/examples/toy_adapter.js"
NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed")


@needs_node
def test_node_example_is_accepted_with_its_quirks() -> None:
    """The toy logs idle fetches, no no-op truncations and a restarted broker's old epoch,
    with integer record ids: all protocol-neutral, all accepted (ADAPTER.md, the contract)."""
    flags = "--log-idle-fetches --quiet-truncation --restart-keeps-epoch"
    ad = Adapter(f"{NODE} {TOY} {flags}")
    try:
        rep = conform(ad, random_examples=3, seed=1)
    finally:
        ad.close()
    assert not rep.rejected, [(n, v.reason, v.mismatches) for n, _s, v in rep.rejected]
    assert rep.counts()[ACCEPTED] >= 25
    assert {"ProducerSend", "FollowerFetch", "ControllerElectLeader", "BrokerRestart"} <= (
        rep.actions
    )
    # what the toy cannot do is a coverage gap, never a pass
    assert {"partition", "pause", "power_fail"} <= set(rep.gaps)
    assert rep.counts()[UNSUPPORTED] >= 1


@needs_node
def test_broken_node_example_names_the_property(tmp_path: Path, capsys) -> None:
    """acks=all acknowledged on append: rejected, classified as NoCommittedLoss with the
    record; --out holds the failing trace, which `isr validate` re-rejects; JSON and JUnit."""
    junit = tmp_path / "junit.xml"
    out = tmp_path / "out"
    code = main(
        [
            "conform", "--adapter", f"{NODE} {TOY} --bug ack-early", "--random", "2",
            "--format", "json", "--junit", str(junit), "--out", str(out),
        ]
    )  # fmt: skip
    assert code == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] is False
    failing = [s for s in doc["scenarios"] if s["verdict"] == REJECTED]
    assert failing
    f = failing[0]["failure"]
    assert f["kind"] == PROPERTY and f["property"] == "NoCommittedLoss"
    assert isinstance(f["record"], int)
    files = failing[0]["files"]
    assert files["revalidate"] == f"isr validate {files['trace']}"
    assert json.loads(Path(files["commands"]).read_text())[0]["op"]
    assert main(["validate", files["trace"]]) == 1  # the saved trace is rejected again
    suite = ET.parse(junit).getroot()
    assert int(suite.get("failures", "0")) == len(
        [s for s in doc["scenarios"] if s["verdict"] in (REJECTED, BAD_INPUT)]
    )
    assert int(suite.get("skipped", "0")) >= 1
    assert suite.find("testcase/failure").get("type") == PROPERTY
    assert (out / "adapter.stderr").exists()


@needs_node
def test_require_coverage_fails_on_a_missing_transition(capsys) -> None:
    """The toy never moves a live leader, so leader->follower is never exercised."""
    args = ["conform", "--adapter", f"{NODE} {TOY}", "--random", "0"]
    assert main(args) == 0
    assert main([*args, "--require-coverage"]) == 1
    assert "required coverage not met: transition leader->follower" in capsys.readouterr().out


class _Corrupting(InProcess):
    """The reference adapter, but its trace has a HW as a string (an encoding mismatch)."""

    def request(self, cmd):
        resp = super().request(cmd)
        if cmd["op"] == "trace":
            for ev in resp["events"]:
                if "hw" in (ev.get("state") or {}):
                    ev["state"]["hw"] = str(ev["state"]["hw"])
                    break
        return resp


def test_encoding_mismatch_names_the_field() -> None:
    v, _o = run_scenario_full(_Corrupting(Session(None)), [{"op": "produce", "count": 1}], "enc")
    assert v.verdict == BAD_INPUT
    assert "state.hw" in v.reason and "expected integer" in v.reason
    assert classify(v)["kind"] == ENCODING


def test_unsupported_command_is_a_coverage_gap() -> None:
    """The simulation has no partition from the coordination service."""
    sc = [{"op": "partition_coord", "broker": 1}, {"op": "run", "ms": 100}]
    v, out = run_scenario_full(InProcess(Session(None)), sc, "gap")
    assert v.verdict == UNSUPPORTED and out.unsupported == "partition_coord"
    assert classify(v)["kind"] == GAP


def test_adapter_stderr_is_drained(tmp_path: Path) -> None:
    """An adapter logging far more than a pipe buffer (64 KiB) on stderr does not block."""
    cmd = (
        f"{sys.executable} -c \"import sys; sys.stderr.write('x' * 400000); sys.stderr.flush(); "
        'from isr.impl.adapter import main; main()"'
    )
    ad = Adapter(cmd, tmp_path / "err")
    try:
        v, _o = run_scenario_full(ad, [{"op": "produce", "count": 2}], "loud")
    finally:
        ad.close()
    assert v.verdict == ACCEPTED
    assert (tmp_path / "err").stat().st_size >= 400000


def test_fault_commands_reach_the_implementation() -> None:
    """The new commands of the reference adapter do what ADAPTER.md says (R8, R9, R14), and
    the reference implementation is accepted on every rare directed scenario."""
    ad = InProcess(Session(None))
    seen: dict[str, set[str]] = {}
    for name, sc in rare().items():
        v, out = run_scenario_full(ad, sc, name)
        if v.verdict == UNSUPPORTED:  # leader moves, until the World has them
            assert name == "leader-moves"
            continue
        assert v.verdict == ACCEPTED, (name, v.reason, v.mismatches)
        assert out.events is not None
        seen[name] = {e["action"] for e in out.events}
        if name == "power-failures":
            assert any(e["args"].get("lose_unflushed") for e in out.events)
    assert "BrokerPause" in seen["zombie-leader-deposed"]
    assert "IsrUpdateConflict" in seen["controller-not-leader-failed-cas"]  # a failed CAS
    assert "ControllerShrinkIsr" in seen["controller-not-leader-failed-cas"]


def test_swarm_schedules_use_only_the_supported_kinds() -> None:
    from hypothesis import given, settings

    ops_of_kind = {"crash", "restart", "power_fail", "pause", "partition", "jitter", "loss"}

    @settings(max_examples=30, database=None, deadline=None)
    @given(schedule_strategy(["pause"], max_ops=12))
    def check(sc):
        start, ops = sc[0], sc[1:]
        assert start["op"] == "start" and 2 <= start["replication"] <= start["brokers"] <= 5
        body = ops[: len(ops) - 7 - start["brokers"]]  # without the settling tail
        assert {o["op"] for o in body} & ops_of_kind <= {"pause"}

    check()
    assert "elect_leader" in FAULT_KINDS and "controlled_shutdown" in FAULT_KINDS


@pytest.mark.parametrize(
    ("mutant", "kind", "prop"),
    [
        ("consumer-past-hw", PROPERTY, "NoPhantomRead"),
        ("follower-hw-not-capped", PROPERTY, "HwAtMostLeo"),
        ("no-epoch-walk-back", "step", None),
    ],
)
def test_rejections_are_classified(mutant: str, kind: str, prop: str | None) -> None:
    rep = conform(InProcess(Session(mutant)), random_examples=0, stop_at_first=True, shrink=False)
    assert rep.rejected
    c = classify(rep.rejected[0][2])
    assert (c["kind"], c.get("property")) == (kind, prop), c
    if kind == "step":
        assert c["requirements"] and c["observed_vs_spec"]
