"""A mistyped name gets the closest real one, and a verdict the bounds force says so (issue 30:
the rough edges a first hour meets). Each is still bad input, exit 2, one line."""

from __future__ import annotations

import pytest
from isr.cli.main import main
from isr.spec.config import did_you_mean


@pytest.mark.parametrize(
    "argv, hint",
    [
        (["check", "--protocol", "kip320"], "(did you mean kip-320?)"),
        (["check", "--protocol", "KRAFT-4.0"], "(did you mean kraft-4.0?)"),
        (["check", "--invariant", "StrongISR"], "(did you mean StrongIsr?)"),
        (["check", "--replica", "3"], "(did you mean --replicas?)"),
        (["check", "--invariants", "StrongIsr"], "(did you mean --invariant?)"),
    ],
)
def test_a_mistyped_name_is_answered_with_the_closest(argv, hint, capsys) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("isr: error: ") and hint in err and "\n" not in err


def test_no_hint_for_a_word_far_from_every_name() -> None:
    assert did_you_mean("zookeeper", ["kip-320", "kraft"]) == ""
    assert did_you_mean("--bogus", ["--replicas", "--records"]) == ""


def test_records_0_says_why_sometimes_committed_fails(capsys) -> None:
    args = ["check", "--replicas", "2", "--records", "0", "--epochs", "1", "--crashes", "0"]
    assert main(args) == 1
    out = capsys.readouterr().out
    assert "SometimesCommitted" in out and "NEVER REACHED" in out
    assert "note: SometimesCommitted cannot be reached with --records 0" in out
    assert main(["check", "--replicas", "2", "--records", "1", "--epochs", "2"]) == 0
    assert "note:" not in capsys.readouterr().out


def test_a_folder_of_runs_is_explained_and_a_batch_ends_with_totals(capsys) -> None:
    """`isr validate DIR` takes DIR as one run's per-process files: a folder of runs (or of
    folders of runs) gets one line saying how to pass them; several traces end with totals."""
    from pathlib import Path

    samples = Path(__file__).resolve().parents[2] / "traces" / "samples"
    assert main(["validate", str(samples)]) == 2
    err = capsys.readouterr().err.strip()
    assert "folder(s) below it hold some" in err and "/*/*.ndjson" in err and "\n" not in err
    assert main(["validate", str(samples / "accepted")]) == 2
    assert "to validate separate runs, pass their files" in capsys.readouterr().err
    files = [str(p) for p in sorted((samples / "accepted").glob("*.ndjson"))][:2]
    files += [str(p) for p in sorted((samples / "rejected").glob("*.ndjson"))][:1]
    assert main(["validate", "--quiet", *files]) == 1
    assert capsys.readouterr().out.strip().splitlines()[-1] == "3 traces: 2 accepted, 1 rejected"
