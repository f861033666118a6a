"""`--junit FILE` of `isr matrix` and `isr validate` (cli/junit.py): XML a CI server reads."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from isr.cli import junit
from isr.cli.main import main

SAMPLES = Path(__file__).resolve().parents[2] / "traces" / "samples"


def test_matrix_junit_has_a_suite_per_cell_and_fails_violations(tmp_path, capsys):
    out = tmp_path / "m.xml"
    rc = main(
        ["matrix", "--protocols", "hw-truncation,kip-320", "--modes", "none", "--jobs", "1"]
        + ["--max-seconds", "60", "--junit", str(out)]
    )
    assert rc == 0
    root = ET.parse(out).getroot()
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert set(suites) == {"R=2 f=2 hw-truncation none", "R=2 f=2 kip-320 none"}
    old = {c.get("name"): c for c in suites["R=2 f=2 hw-truncation none"].iter("testcase")}
    fail = old["StrongIsr"].find("failure")
    assert fail is not None and fail.get("message").startswith("violated in 5 steps: ")
    assert "BrokerRestart(replica=1)" in fail.get("message")
    assert old["LogMatching"].find("failure") is None
    new = suites["R=2 f=2 kip-320 none"]
    assert new.get("failures") == "1"  # only Available (both brokers may be down)
    assert int(root.get("failures")) == sum(int(s.get("failures")) for s in suites.values())


def test_validate_junit_fails_a_rejected_trace(tmp_path):
    good = SAMPLES / "accepted" / "sim-kip320-leader-crash.ndjson"
    bad = SAMPLES / "rejected" / "mutant-hw-before-isr.ndjson"
    out = tmp_path / "v.xml"
    assert main(["validate", str(good), str(bad), "--quiet", "--junit", str(out)]) == 1
    cases = {c.get("name"): c for c in ET.parse(out).getroot().iter("testcase")}
    assert cases[str(good)].find("failure") is None
    msg = cases[str(bad)].find("failure").get("message")
    assert msg.startswith("rejected at event #")


def test_xml_escapes_and_counts():
    suite = junit.Suite(
        "s <&>", [junit.Case('a"b', "c", failure="x < y & z"), junit.Case("ok", "c")]
    )
    root = ET.fromstring(junit.to_xml([suite]))
    assert root.get("tests") == "2" and root.get("failures") == "1"
    assert root.find("testsuite/testcase/failure").get("message") == "x < y & z"


def test_check_suite_and_sarif_of_a_violating_run():
    from isr.checker.bfs import check_bfs
    from isr.cli import sarif
    from isr.cli.render import render_counterexample
    from isr.spec import Config, IsrSpec

    res = check_bfs(IsrSpec(Config(protocol="hw-truncation", replicas=2, records=1, crashes=2)))
    root = ET.fromstring(junit.to_xml([junit.check_suite(res, "isr check", render_counterexample)]))
    fails = {c.get("name"): c.find("failure") for c in root.iter("testcase")}
    assert fails["StrongIsr"].get("message").startswith("violated in 5 steps: ProducerSend(")
    assert "0. Init" in fails["StrongIsr"].text  # the full counterexample in the body
    assert fails["LogMatching"] is None
    doc = sarif.check_sarif(res)
    results = {r["ruleId"]: r for r in doc["runs"][0]["results"] if r["level"] == "error"}
    assert set(results) == {n for n, f in fails.items() if f is not None}
    assert "replica 1 is in the ISR but lacks offset 0" in results["StrongIsr"]["message"]["text"]
    assert len(doc["runs"][0]["tool"]["driver"]["rules"]) == len(res.properties)
