"""One --engine vocabulary across `isr check`, `isr simulate` and `isr validate` (issue 15):
`--engine local|spark`, `--workers N` (check), `--spark-master URL`; the old spellings still
work with a one-line deprecation notice on stderr; unsupported combinations exit 2 with one
line."""

from __future__ import annotations

import json

import pytest
from isr.cli.main import build_parser, main

SMALL = ["--protocol", "kip-320", "--replicas", "2", "--records", "1", "--epochs", "2"]
SMALL += ["--crashes", "1", "--quiet"]
TRACE = "traces/samples/accepted/sim-hw-truncation-no-faults.ndjson"


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def answers(text: str) -> tuple:
    d = json.loads(text)
    return (
        d["distinct_states"],
        d["states_generated"],
        d["depth"],
        d["engine"],
        [(p["name"], p["holds"]) for p in d["properties"]],
    )


def test_check_local_is_the_default_and_bfs_a_deprecated_alias(capsys):
    code0, out0, err0 = run(capsys, "check", *SMALL, "--format", "json")
    code1, out1, err1 = run(capsys, "check", *SMALL, "--format", "json", "--engine", "local")
    code2, out2, err2 = run(capsys, "check", *SMALL, "--format", "json", "--engine", "bfs")
    assert code0 == code1 == code2 == 0 and err0 == err1 == ""
    assert answers(out0) == answers(out1) == answers(out2)
    assert answers(out0)[0] == 2902 and answers(out0)[3] == "bfs"
    assert err2 == "isr: warning: --engine bfs is deprecated; use --engine local\n"


def test_check_local_with_workers_is_the_parallel_engine(capsys):
    code, out, err = run(
        capsys, "check", *SMALL, "--format", "json", "--engine", "local", "--workers", "2"
    )
    assert code == 0 and err == "" and answers(out)[0] == 2902 and answers(out)[3] == "parallel"


def test_simulate_seq_is_a_deprecated_alias(capsys):
    argv = ["simulate", *SMALL, "--walks", "20", "--depth", "10", "--format", "json"]
    code1, out1, err1 = run(capsys, *argv, "--engine", "local")
    code2, out2, err2 = run(capsys, *argv, "--engine", "seq")
    timing = {"seconds": 0, "states_per_second": 0}
    assert code1 == code2 == 0 and err1 == ""
    assert json.loads(out1) | timing == json.loads(out2) | timing
    assert err2 == "isr: warning: --engine seq is deprecated; use --engine local\n"


def test_validate_sequential_is_a_deprecated_alias(capsys):
    code1, out1, err1 = run(capsys, "validate", TRACE, "--quiet", "--engine", "local")
    code2, out2, err2 = run(capsys, "validate", TRACE, "--quiet", "--engine", "sequential")
    assert code1 == code2 == 0 and "ACCEPTED" in out1 and "ACCEPTED" in out2 and err1 == ""
    assert err2 == "isr: warning: --engine sequential is deprecated; use --engine local\n"


def test_master_is_a_deprecated_spelling_of_spark_master(capsys):
    for cmd in (["check", *SMALL], ["simulate", *SMALL, "--walks", "2"]):
        code, out, err = run(capsys, *cmd, "--master", "local[1]")
        # bad input: one line, the error (the deprecation notice is left out)
        assert code == 2 and out == ""
        assert err == "isr: error: --spark-master goes with --engine spark\n"


def test_master_sets_spark_master_with_a_notice_after_the_run(capsys):
    import argparse

    from isr.cli.sparkopts import engine_family, flush_notices

    args = argparse.Namespace(engine="spark", spark_master=None, deprecated_master="local[1]")
    assert engine_family(args, "simulate") == "spark" and args.spark_master == "local[1]"
    assert capsys.readouterr().err == ""  # not yet: after the run (cli.main)
    flush_notices()
    assert capsys.readouterr().err == "isr: warning: --master is deprecated; use --spark-master\n"


@pytest.mark.parametrize(
    "argv,message",
    [
        (
            ["check", *SMALL, "--spark-master", "local[1]"],
            "--spark-master goes with --engine spark",
        ),
        (
            ["validate", TRACE, "--spark-master", "local[1]"],
            "--spark-master goes with --engine spark",
        ),
        (
            ["check", *SMALL, "--engine", "spark", "--workers", "2"],
            "--workers goes with --engine local",
        ),
        (
            ["check", *SMALL, "--engine", "spark", "--spark-mode", "levels"]
            + ["--stop-at-first-violation"],
            "check engine 'spark' does not support stop-at-first-violation",
        ),
        (
            ["check", *SMALL, "--spark-mode", "levels"],
            "--spark-mode goes with --engine spark",
        ),
        (
            ["check", *SMALL, "--engine", "spark", "--master", "local[1]", "--spark-master", "x"],
            "--master and --spark-master name different masters",
        ),
    ],
)
def test_unsupported_combinations_exit_2_with_one_line(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    lines = err.splitlines()
    assert code == 2 and out == "" and len(lines) == 1 and message in lines[0], err


def test_no_workers_where_there_is_no_local_pool(capsys):
    code, _out, err = run(capsys, "simulate", *SMALL, "--workers", "2")
    assert code == 2 and "unrecognized arguments: --workers 2" in err


def test_help_shows_one_vocabulary():
    sub = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    for name in ("check", "simulate", "validate"):
        text = sub[name].format_help()
        assert "--engine {local,spark}" in text and "--spark-master URL" in text, name
        assert "--master " not in text.replace("--spark-master ", ""), name
    assert "--workers N" in sub["check"].format_help()


def test_store_and_reduction_flags(capsys, tmp_path):
    """Issue 26: --store disk gives the in-memory answers; --reduction dead-state the same
    verdicts from fewer states (both named in the text header); bad combinations exit 2."""
    code, out, err = run(capsys, "check", *SMALL, "--format", "json", "--store", "disk")
    assert code == 0 and err == "" and answers(out)[0] == 2902
    assert json.loads(out)["store"] == "disk"
    bug = ["--protocol", "hw-truncation", "--replicas", "2", "--records", "1", "--quiet"]
    code, plain, _ = run(capsys, "check", *bug, "--format", "json")
    code2, reduced, _ = run(capsys, "check", *bug, "--format", "json", "--reduction", "dead-state")
    assert code == code2 == 1
    a, b = json.loads(plain), json.loads(reduced)
    assert (a["distinct_states"], b["distinct_states"]) == (3361, 2025)
    assert [(p["name"], p["holds"]) for p in a["properties"]] == [
        (p["name"], p["holds"]) for p in b["properties"]
    ]
    code, text, _ = run(capsys, "check", *bug, "--reduction", "dead-state", "--store", "disk")
    assert "engine bfs, symmetry on, disk store, dead-state reduction" in text
    for argv, words in [
        (["--store-dir", str(tmp_path), "--checkpoint", str(tmp_path / "c")], "--store-dir goes"),
        (["--store", "memory", "--store-dir", str(tmp_path)], "--store-dir goes with --store disk"),
        (["--reduction", "dead-state", "--no-symmetry"], "drop --no-symmetry"),
        (["--store", "tape"], "invalid choice"),
    ]:
        code, _, err = run(capsys, "check", *SMALL, *argv)
        assert code == 2 and words in err, (argv, err)
