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
