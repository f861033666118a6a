"""`isr check --workers N` and `--checkpoint/--resume` with the local engine: the same JSON
answers as one core, exit 2 for bad input or a bad checkpoint, exit 5 when a worker dies."""

from __future__ import annotations

import json
import os

from isr.cli.main import main

SMALL = ["--protocol", "kip-320", "--replicas", "2", "--records", "1", "--epochs", "2"]
SMALL += ["--crashes", "1"]


def run_json(capsys, *argv):
    code = main(["check", *SMALL, *argv, "--format", "json", "--quiet"])
    captured = capsys.readouterr()
    return code, (json.loads(captured.out) if captured.out else None), captured.err


def same_answers(a: dict, b: dict) -> bool:
    keys = ("distinct_states", "states_generated", "depth", "complete", "deadlocks")
    verdicts = lambda out: [(p["name"], p["holds"]) for p in out["properties"]]  # noqa: E731
    return all(a[k] == b[k] for k in keys) and verdicts(a) == verdicts(b)


def test_workers_give_the_same_answers(capsys):
    code1, one, _ = run_json(capsys)
    code2, two, err = run_json(capsys, "--workers", "2")
    assert code1 == code2 == 0 and one["engine"] == "bfs" and two["engine"] == "parallel"
    assert same_answers(one, two) and two["distinct_states"] == 2902
    assert two["parallel"]["workers"] == 2 and err == ""


def test_more_workers_than_cores_warns(capsys):
    n = (os.cpu_count() or 1) + 1
    code, out, err = run_json(capsys, "--workers", str(n))
    assert code == 0 and out["distinct_states"] == 2902
    assert err.splitlines() == [f"isr: warning: --workers {n} is more than the {n - 1} cores here"]


def test_bad_worker_counts_exit_2(capsys):
    for argv in (["--workers", "0"], ["--workers", "2", "--engine", "spark"]):
        code, out, err = run_json(capsys, *argv)
        assert code == 2 and out is None and len(err.splitlines()) == 1, argv
        assert err.startswith(("isr: error: --workers", "isr check: error: argument --workers"))


def test_checkpoint_and_resume_with_the_local_engine(capsys, tmp_path):
    d = str(tmp_path / "ck")
    code, part, _ = run_json(capsys, "--max-states", "400", "--checkpoint", d)
    assert code == 3 and part["stop_reason"] == "max-states"
    code, full, _ = run_json(capsys, "--workers", "2", "--resume", d)
    _, ref, _ = run_json(capsys)
    assert code == 0 and same_answers(full, ref)
    assert full["parallel"]["resumed_from_level"] == len(part["parallel"]["levels"])
    code, out, err = run_json(capsys, "--resume", d, "--replicas", "3")
    assert code == 2 and out is None
    assert err.startswith("isr: error: checkpoint in ")
    assert "config.replicas: 2 in the checkpoint, 3 now" in err  # the field and both values
    code, out, err = run_json(capsys, "--resume", str(tmp_path / "none"))
    assert code == 2 and "no checkpoint to resume" in err


def test_a_dead_worker_exits_5(capsys, monkeypatch):
    monkeypatch.setenv("ISR_PARALLEL_KILL", "0:2")
    code, out, err = run_json(capsys, "--workers", "2")
    assert code == 5 and out is None
    assert err == "isr: engine failure: worker 0 died (killed by signal 9)\n"


def test_default_workers_every_core_unless_small(monkeypatch):
    """--workers defaults to every core, but to 1 for a model estimated below
    AUTO_WORKERS_MIN_STATES (fork and barriers cost more than they give) and for Spark."""
    from isr.cli import sparkopts
    from isr.cli.main import build_parser
    from isr.cli.models import model_from_args

    def workers(*argv):
        args = build_parser().parse_args(["check", *argv])
        return sparkopts.default_workers(model_from_args(args), args.engine)

    default = ["--protocol", "kip-320"]  # 3 replicas, 2 records, 2 epochs, 1 crash: millions
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    assert workers(*default) == 4
    assert workers(*SMALL) == 1
    assert workers(*default, "--engine", "spark") == 1
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert workers(*default) == 1


def test_small_model_runs_on_one_process_by_default(capsys):
    code, out, _ = run_json(capsys)
    assert code == 0 and out["engine"] == "bfs" and out["distinct_states"] == 2902
