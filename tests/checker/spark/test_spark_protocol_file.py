"""A user's protocol file (`--protocol-file`) runs on Spark: executors never read the file, the
task closure carries the version's classes by value (issue 15's follow-up)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from isr.cli.main import main

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[3]
MY_KIP = ROOT / "examples" / "protocols" / "my_kip.py"
BOUNDS = ["--replicas", "2", "--records", "1", "--epochs", "2", "--crashes", "1"]


def _run(capsys, *args: str) -> dict:
    code = main(["check", *BOUNDS, "--quiet", "--format", "json", *args])
    result = json.loads(capsys.readouterr().out)
    result["exit"] = code
    return result


def test_spark_runs_the_users_version_not_the_builtin(spark, capsys):
    local = _run(capsys, "--workers", "1", "--protocol-file", str(MY_KIP))
    remote = _run(capsys, "--engine", "spark", "--protocol-file", str(MY_KIP))
    builtin = _run(capsys, "--workers", "1", "--protocol", "kip-320")
    # my-kip drops KIP-320's fencing: more states than kip-320 at the same bounds, so equal
    # counts below mean the executors ran the file's version, not a built-in one
    assert local["distinct_states"] == remote["distinct_states"] == 3_432
    assert builtin["distinct_states"] == 2_902
    assert remote["exit"] == local["exit"] == 0
    assert remote["config"]["protocol"] == "my-kip"


def test_spark_validation_uses_the_users_version(spark, capsys):
    """`validate --engine spark --protocol-file` once validated against the header's version:
    a hw-truncation trace (its follower truncates to the HW on becoming follower, which my-kip,
    a kip-320, never does) was ACCEPTED on Spark and REJECTED locally."""
    trace = str(
        ROOT / "traces" / "samples" / "accepted" / "sim-hw-truncation-kip101-scenario1.ndjson"
    )
    verdicts = {}
    for engine in ("local", "spark"):
        code = main(
            [
                "validate",
                "--engine",
                engine,
                "--protocol-file",
                str(MY_KIP),
                "--format",
                "json",
                trace,
            ]
        )
        doc = json.loads(capsys.readouterr().out)
        verdicts[engine] = (code, [t["verdict"] for t in doc["traces"]])
    assert verdicts["local"] == verdicts["spark"] == (1, ["rejected"])
    # and without the file, the header's hw-truncation accepts it on both engines
    for engine in ("local", "spark"):
        assert main(["validate", "--engine", engine, "--quiet", trace]) == 0
