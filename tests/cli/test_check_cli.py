"""`isr check`, `isr protocols` and `isr replay`: exit codes, output and the JSON contract."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from isr.cli.main import main

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
    assert out["distinct_states"] == 7787  # 21,991 before R8's in-order delivery
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
    assert "NoCommittedLoss" in text and "VIOLATED (6 steps, found after " in text
    assert "Counterexample for StrongIsr (5 steps)" in text
    assert "verdict: VIOLATED (exit 1)" in text


def test_limits_exit_3(capsys):
    code, out = run_json(capsys, "--protocol", "kip-320", *SMALL, "--max-states", "50")
    assert code == 3 and out["complete"] is False and out["stop_reason"] == "max-states"


def test_violations_say_when_they_were_found(capsys):
    code, out = run_json(capsys, "--protocol", "hw-truncation", *SMALL)
    assert code == 1
    by = {p["name"]: p for p in out["properties"]}
    for p in out["properties"]:
        if p["holds"] is False and p["kind"] != "sometimes":
            assert p["found_after_seconds"] >= 0 and 0 < p["found_after_states"] <= 8620
        else:
            assert "found_after_seconds" not in p and "found_after_states" not in p
    assert by["StrongIsr"]["found_after_states"] < by["NoPhantomRead"]["found_after_states"]


def test_stop_at_first_violation(capsys):
    code, out = run_json(capsys, "--protocol", "hw-truncation", *SMALL, "--stop-at-first-violation")
    assert code == 1 and out["stop_reason"] == "first-violation" and out["complete"] is False
    violated = [p for p in out["properties"] if p["holds"] is False]
    # StrongIsr and WeakIsr fail in the same state, the first violating state found
    assert {p["name"] for p in violated} == {"StrongIsr", "WeakIsr"}
    assert all(p["counterexample"]["length"] == 5 for p in violated)
    full = run_json(capsys, "--protocol", "hw-truncation", *SMALL)[1]
    assert out["distinct_states"] == violated[0]["found_after_states"] < full["distinct_states"]
    # the others: checked to the depth reached, not decided
    rest = [p for p in out["properties"] if p["kind"] == "always" and p["holds"] is None]
    assert rest and all(p["checked_to_depth"] == 4 for p in rest)
    assert main(["check", "--protocol", "hw-truncation", *SMALL, "--quiet",
                 "--stop-at-first-violation"]) == 1  # fmt: skip
    text = capsys.readouterr().out
    assert "stopped early: at the first violation" in text and "INCOMPLETE" not in text
    assert "no violation up to depth 4 (" in text


def test_all_properties_decided_is_not_incomplete(capsys):
    argv = ["check", "--protocol", "hw-truncation", *SMALL, "--quiet", "--invariant", "StrongIsr"]
    assert main(argv) == 1
    text = capsys.readouterr().out
    assert "stopped early: every checked property decided" in text
    assert "INCOMPLETE" not in text and "verdict: VIOLATED (exit 1)" in text
    # every checked property decided and none violated: exit 0
    argv = [
        "check",
        "--protocol",
        "kip-320",
        *SMALL,
        "--quiet",
        "--invariant",
        "SometimesCommitted",
    ]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "stopped early: every checked property decided" in text
    assert "verdict: all checked properties hold (exit 0)" in text


def test_limits_report_how_far_undecided_properties_were_checked(capsys):
    code, out = run_json(capsys, "--protocol", "kip-320", *SMALL, "--max-states", "2000")
    assert code == 3 and out["stop_reason"] == "max-states" and out["unexplored"] > 0
    depth = out["depth"]
    for p in out["properties"]:
        if p["kind"] in ("always", "action"):
            assert p["holds"] is None and p["checked_to_depth"] == depth
    assert main(["check", "--protocol", "kip-320", *SMALL, "--quiet", "--max-states", "2000"]) == 3
    text = capsys.readouterr().out
    assert f"no violation up to depth {depth} ({out['distinct_states']:,} distinct states)" in text
    assert "INCOMPLETE: --max-states reached" in text and "verdict: INCOMPLETE (exit 3)" in text


@pytest.mark.parametrize("how", ["SIGINT", "SIGTERM", "SIGTERM-group"])
def test_ctrl_c_prints_the_partial_result(how, tmp_path):
    """SIGINT or SIGTERM (a supervisor's stop; to the process, or to its whole group as
    `timeout` sends it, workers included) to a running `isr check` (the default model runs
    ~2 min on every core): exit 3, the partial statistics and the properties checked so far,
    and how to make a run resumable; the last progress line keeps its queue."""
    import os
    import select
    import signal

    # (the group case also keeps a checkpoint: the run then says how to resume it)
    ck = ["--checkpoint", str(tmp_path / "ck")] if how.endswith("group") else []
    proc = subprocess.Popen(
        [sys.executable, "-m", "isr.cli", "check", *ck],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        start_new_session=how.endswith("group"),
    )
    try:
        # wait for the first progress line (after ~3 s), not a fixed time
        ready, _, _ = select.select([proc.stderr], [], [], 120)
        assert ready, "no progress line in 120 s"
        first = proc.stderr.readline()
        assert first.startswith("[progress]"), first
        if how == "SIGTERM-group":
            os.killpg(proc.pid, signal.SIGTERM)
        else:
            proc.send_signal(getattr(signal, how))
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 3, (out, err)
    assert "Traceback" not in err
    assert "INCOMPLETE: interrupted (" in out and "distinct states" in out
    assert "no violation up to depth" in out and "verdict: INCOMPLETE (exit 3)" in out
    if ck:
        assert f"continue this run with --resume {tmp_path / 'ck'}" in out
    else:
        assert "--checkpoint DIR" in out
    last = err.strip().splitlines()[-1]
    assert last.startswith("[stopped: interrupted]") and " queue 0 " not in last, last
    assert "peak RSS" in first


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
            [sys.executable, "-m", "isr.cli", "check", *argv, "--quiet"],
            capture_output=True,
            text=True,
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

    from isr.traces.format import schema_errors

    schema = json.loads(
        (pathlib.Path(__file__).parents[2] / "checker/result.schema.json").read_text()
    )
    for protocol, *more in (
        ("kip-320",),
        ("hw-truncation",),
        ("hw-truncation", "--stop-at-first-violation"),
        ("kip-320", "--max-states", "500"),
    ):
        _, out = run_json(capsys, "--protocol", protocol, *SMALL, *more)
        assert schema_errors(out, schema) == []
    broken = {**out, "properties": [{"name": "X", "kind": "bogus", "holds": 1}]}
    assert schema_errors(broken, schema)  # the check can fail


def test_version_is_the_distribution_version(capsys):
    """`isr --version` prints pyproject.toml's version and exits 0."""
    import tomllib
    from pathlib import Path

    import pytest
    from isr.cli.main import main

    expected = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())["project"][
        "version"
    ]
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out.startswith(f"isr {expected} (Python ")


def test_a_very_large_model_is_announced_before_the_run():
    """`isr check` says on stderr, before it starts, when the estimate is beyond 10^8 states
    (kraft at the default bounds: about 10^9), unless a limit was asked for; the estimate knows
    the split fetch's cost (kraft at 2/1/2/1: 818,042 states, within a factor of 10)."""
    import math

    from isr.cli.check import size_note
    from isr.spec import Config
    from isr.spec.size import estimate_log10_states

    note = size_note(Config(protocol="kraft"), None, None)
    assert note and note.startswith("isr: note: this model has roughly 3 x 10^9 distinct states")
    assert size_note(Config(protocol="kraft"), None, 600.0) is None
    assert size_note(Config(), None, None) is None  # the default model: 3,057,459
    # kip-320 at 3/2/3/1 (10^7.7 by the estimate; 13,286,960 with the dead-state reduction):
    # an hour's run, announced (issue 30: it was not, at a 10^8 threshold)
    big = size_note(Config(replicas=3, records=2, epochs=3, crashes=1), None, None)
    assert big and "roughly 5 x 10^7 distinct" in big and "about an hour" in big
    assert "--reduction dead-state" in big
    small = Config(protocol="kraft", replicas=2, records=1, epochs=2, crashes=1)
    assert abs(estimate_log10_states(small) - math.log10(781_691)) < 1
