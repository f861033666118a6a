"""`isr check`, `isr protocols` and `isr replay`: exit codes, output and the JSON contract."""

from __future__ import annotations

import json
import subprocess
import sys

from cli.main import main

SMALL = ["--replicas", "2", "--records", "1", "--epochs", "2", "--crashes", "2"]


def run_json(capsys, *argv):
    code = main(["check", *argv, "--format", "json", "--quiet"])
    return code, json.loads(capsys.readouterr().out)


def test_holds_exit_0_and_json_fields(capsys):
    code, out = run_json(capsys, "--protocol", "kip-320", *SMALL)
    assert code == 0
    for key in (
        "protocol",
        "config",
        "engine",
        "complete",
        "distinct_states",
        "states_generated",
        "depth",
        "seconds",
        "properties",
        "actions_never_fired",
    ):
        assert key in out, key
    assert out["protocol"] == "kip-320" and out["engine"] == "bfs" and out["complete"] is True
    assert out["distinct_states"] == 21991
    assert out["config"]["replicas"] == 2 and out["config"]["crashes"] == 2
    assert all(p["holds"] is True for p in out["properties"] if p["kind"] != "eventually")
    assert {p["name"] for p in out["properties"]} >= {"StrongIsr", "NoCommittedLoss", "HwMonotonic"}


def test_violation_exit_1_with_a_readable_counterexample(capsys):
    code, out = run_json(capsys, "--protocol", "hw-truncation", *SMALL)
    assert code == 1
    loss = next(p for p in out["properties"] if p["name"] == "NoCommittedLoss")
    assert loss["holds"] is False and loss["kind"] == "always"
    cx = loss["counterexample"]
    assert cx["length"] == len(cx["steps"]) == 6
    for step in cx["steps"]:
        assert set(step) >= {"action", "args", "changed"} and step["changed"]
    assert cx["steps"][0]["action"] == "ProducerSend"
    assert cx["steps"][0]["args"] == {"leader": 0, "record": 1}


def test_text_output_names_verdicts(capsys):
    assert main(["check", "--protocol", "hw-truncation", *SMALL, "--quiet"]) == 1
    text = capsys.readouterr().out
    assert "NoCommittedLoss" in text and "VIOLATED (6 steps)" in text
    assert "Counterexample for StrongIsr (5 steps)" in text
    assert "verdict: VIOLATED (exit 1)" in text


def test_limits_exit_3(capsys):
    code, out = run_json(capsys, "--protocol", "kip-320", *SMALL, "--max-states", "50")
    assert code == 3 and out["complete"] is False and out["stop_reason"] == "max-states"


def test_single_invariant(capsys):
    code, out = run_json(
        capsys, "--protocol", "hw-truncation", *SMALL, "--invariant", "LogMatching"
    )
    assert code == 0 and [p["name"] for p in out["properties"]] == ["LogMatching"]


def test_bad_input_exit_2_one_line_no_traceback():
    for argv in (
        ["--replicas", "9"],
        ["--protocol", "kip-999"],
        ["--invariant", "Nope"],
        ["--acks", "2"],
        ["--records", "x"],
        ["--min-isr", "4"],
    ):
        proc = subprocess.run(
            [sys.executable, "-m", "cli", "check", *argv, "--quiet"], capture_output=True, text=True
        )
        assert proc.returncode == 2, argv
        assert "Traceback" not in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1 or "usage:" in proc.stderr, proc.stderr
        assert "error:" in proc.stderr


def test_trace_out_and_replay(tmp_path, capsys):
    trace = tmp_path / "cx.ndjson"
    assert (
        main(
            [
                "check",
                "--protocol",
                "hw-truncation",
                *SMALL,
                "--quiet",
                "--invariant",
                "NoCommittedLoss",
                "--trace-out",
                str(trace),
            ]
        )
        == 1
    )
    capsys.readouterr()
    lines = trace.read_text().splitlines()
    assert json.loads(lines[0])["property"] == "NoCommittedLoss"
    assert len(lines) == 2 + 6
    assert main(["replay", str(trace)]) == 1
    assert "confirmed: all 6 steps" in capsys.readouterr().out
    # tamper with one step: the replay must reject it
    step = json.loads(lines[3])
    step["state"]["records_written"] = 99
    lines[3] = json.dumps(step)
    trace.write_text("\n".join(lines) + "\n")
    assert main(["replay", str(trace)]) == 4
    assert "rejected at step 2" in capsys.readouterr().out
    # stop early: the trace is a behaviour of the spec, the property holds at its end
    trace.write_text("\n".join(json.loads(x) and x for x in lines[:3]) + "\n")
    assert main(["replay", str(trace)]) == 0
    bad = tmp_path / "bad.ndjson"
    bad.write_text("not json\n")
    assert main(["replay", str(bad)]) == 2


def test_protocols_lists_the_versions(capsys):
    assert main(["protocols", "--format", "json"]) == 0
    names = [p["name"] for p in json.loads(capsys.readouterr().out)["protocols"]]
    assert {"hw-truncation", "kip-101", "kip-279", "kip-320"} <= set(names)


def test_json_result_matches_its_schema(capsys):
    import pathlib

    from traces.format import schema_errors

    schema = json.loads(
        (pathlib.Path(__file__).parents[2] / "checker/result.schema.json").read_text()
    )
    for protocol in ("kip-320", "hw-truncation"):
        _, out = run_json(capsys, "--protocol", protocol, *SMALL)
        assert schema_errors(out, schema) == []
    broken = {**out, "properties": [{"name": "X", "kind": "bogus", "holds": 1}]}
    assert schema_errors(broken, schema)  # the check can fail
