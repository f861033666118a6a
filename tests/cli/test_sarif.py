"""`--sarif FILE` of `isr check`, `isr matrix`, `isr validate` and `isr conform` (cli/sarif.py,
issue 16 item 2): a SARIF 2.1.0 log that code-scanning dashboards read. The shape is checked
against the parts of the SARIF 2.1.0 schema a reader needs (version, runs[].tool.driver.name and
rules, results[].ruleId/level/message/locations), and each result against the verdict it
reports."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from isr.cli.main import main

from .test_exit_codes import one_scenario

SAMPLES = Path(__file__).resolve().parents[2] / "traces" / "samples"
SMALL = ["--replicas", "2", "--records", "1", "--epochs", "2", "--crashes", "2", "--quiet"]
LEVELS = {"none", "note", "warning", "error"}


def sarif_shape(doc: dict) -> dict:
    """Assert the SARIF 2.1.0 shape; return the single run."""
    assert doc["version"] == "2.1.0"
    assert doc["$schema"].endswith("sarif-2.1.0.json")
    (run,) = doc["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "isr"
    rule_ids = [r["id"] for r in driver["rules"]]
    assert len(rule_ids) == len(set(rule_ids)), "rule ids must be unique"
    for r in driver["rules"]:
        assert isinstance(r["shortDescription"]["text"], str) and r["shortDescription"]["text"]
    for res in run["results"]:
        assert res["ruleId"] in rule_ids
        assert rule_ids[res["ruleIndex"]] == res["ruleId"]
        assert res["level"] in LEVELS
        assert isinstance(res["message"]["text"], str) and res["message"]["text"]
        (loc,) = res["locations"]
        assert loc["physicalLocation"]["artifactLocation"]["uri"]
    (inv,) = run["invocations"]
    assert isinstance(inv["executionSuccessful"], bool)
    return run


def load(path: Path) -> dict:
    return json.loads(path.read_text())


def test_check_sarif_has_a_rule_per_property_and_a_result_per_violation(tmp_path, capsys):
    out = tmp_path / "c.sarif"
    rc = main(["check", "--protocol", "hw-truncation", *SMALL, "--sarif", str(out)])
    assert rc == 1
    capsys.readouterr()
    run = sarif_shape(load(out))
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    from isr.spec import Config, IsrSpec

    model = IsrSpec(Config(protocol="hw-truncation", replicas=2, records=1, epochs=2, crashes=2))
    assert set(rules) == {p.name for p in model.properties}  # passing properties are rules too
    errors = {r["ruleId"]: r for r in run["results"] if r["level"] == "error"}
    # the verdicts `isr check` prints at these bounds (docs/findings.md)
    assert set(errors) == {
        "StrongIsr",
        "WeakIsr",
        "NoCommittedLoss",
        "NoAckedLoss",
        "NoPhantomRead",
    }
    text = errors["StrongIsr"]["message"]["text"]
    assert "violated in 5 steps: ProducerSend(leader=0, record=1)" in text
    assert "replica 1 is in the ISR but lacks offset 0" in text  # what breaks, in words
    assert errors["StrongIsr"]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == (
        "spec/properties.py"
    )
    # liveness properties are not checked by `isr check`: notes, not errors
    notes = {r["ruleId"] for r in run["results"] if r["level"] == "note"}
    assert notes == {p.name for p in model.properties if p.kind == "eventually"}
    assert run["invocations"][0]["commandLine"] == "isr check"


def test_check_sarif_of_a_passing_run_has_no_error(tmp_path, capsys):
    out = tmp_path / "ok.sarif"
    assert main(["check", "--protocol", "kip-320", *SMALL, "--sarif", str(out)]) == 0
    capsys.readouterr()
    run = sarif_shape(load(out))
    assert [r for r in run["results"] if r["level"] == "error"] == []
    assert run["invocations"][0]["executionSuccessful"] is True


def test_matrix_sarif_names_the_cell_of_each_violation(tmp_path, capsys):
    out = tmp_path / "m.sarif"
    argv = ["matrix", "--protocols", "hw-truncation,kip-320", "--modes", "none", "--jobs", "1"]
    assert main([*argv, "--max-seconds", "60", "--sarif", str(out)]) == 0
    capsys.readouterr()
    run = sarif_shape(load(out))
    errors = [r for r in run["results"] if r["level"] == "error"]
    by_cell: dict[str, set[str]] = {}
    for r in errors:
        by_cell.setdefault(r["properties"]["suite"], set()).add(r["ruleId"])
    assert by_cell["R=2 f=2 kip-320 none"] == {"Available"}  # both brokers may be down
    assert {"StrongIsr", "NoCommittedLoss"} <= by_cell["R=2 f=2 hw-truncation none"]
    assert "LogMatching" in {r["id"] for r in run["tool"]["driver"]["rules"]}


def test_validate_sarif_points_at_the_rejected_trace(tmp_path, capsys):
    good = SAMPLES / "accepted" / "sim-kip320-leader-crash.ndjson"
    bad = SAMPLES / "rejected" / "mutant-hw-before-isr.ndjson"
    out = tmp_path / "v.sarif"
    assert main(["validate", str(good), str(bad), "--quiet", "--sarif", str(out)]) == 1
    capsys.readouterr()
    run = sarif_shape(load(out))
    (res,) = run["results"]
    assert res["ruleId"] == "trace-rejected" and res["level"] == "error"
    assert res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == str(bad)
    assert "rejected at event #" in res["message"]["text"]


@pytest.mark.parametrize(("mutant", "code", "errors"), [(None, 0, 0), ("ack-before-commit", 1, 1)])
def test_conform_sarif_reports_failed_scenarios(
    tmp_path, capsys, monkeypatch, mutant, code, errors
):
    one_scenario(monkeypatch)
    out = tmp_path / "k.sarif"
    adapter = (
        []
        if mutant is None
        else ["--adapter", f"{sys.executable} -m isr.impl.adapter --mutant {mutant}"]
    )
    assert main(["conform", *adapter, "--sarif", str(out)]) == code
    capsys.readouterr()
    run = sarif_shape(load(out))
    assert len([r for r in run["results"] if r["level"] == "error"]) == errors


def test_sarif_to_an_unwritable_path_is_bad_input(tmp_path, capsys):
    rc = main(["check", "--protocol", "kip-320", *SMALL, "--sarif", str(tmp_path / "no/such/x")])
    assert rc == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot write" in err[0]
