"""`isr matrix`: the table's JSON for the cells public history fixes, and its CLI."""

from __future__ import annotations

import json

import pytest
from isr.cli.main import main


def matrix(tmp_path, *argv: str) -> dict:
    code = main(["matrix", "--out", str(tmp_path), "--max-seconds", "120", *argv])
    assert code == 0
    doc = json.loads((tmp_path / "matrix.json").read_text())
    assert (tmp_path / "matrix.md").read_text().startswith("# Verdict table")
    return {(c["replicas"], c["protocol"], c["mode"]): c["verdicts"] for c in doc["cells"]}


def test_the_cells_public_history_fixes(tmp_path, capsys):
    cells = matrix(
        tmp_path,
        *("--replicas", "2", "--crashes", "2", "--protocols", "kip-320"),
        *("--modes", "none,unclean,acks-1", "--jobs", "2"),
    )
    none = cells[(2, "kip-320", "none")]
    assert none["NoCommittedLoss"] == "holds" and none["NoAckedLoss"] == "holds"
    # unclean leader election loses an acknowledged record (KIP-106 made it off by default)
    assert cells[(2, "kip-320", "unclean")]["NoCommittedLoss"] == "violated (5 steps)"
    # acks=1 loses a record on leader failover; acks=all writes are not at risk
    acks1 = cells[(2, "kip-320", "acks-1")]
    assert acks1["NoAckedLoss"] == "violated (3 steps)" and acks1["NoCommittedLoss"] == "holds"
    out = capsys.readouterr().out
    assert "kip-320" in out
    # the terminal table names the properties that hold everywhere instead of giving each a
    # column, and fits 100 columns (issue 30: it was 240 columns wide): heads wrap between
    # their words, a violation reads v(N)
    table = out[: out.index("hold in every cell")]
    last = out[out.index("hold in every cell") :].splitlines()[0]
    assert "TypeOK" in last and "TypeOK" not in table
    assert "Committed" in table and "v(5)" in table
    assert max(len(line) for line in out.splitlines()) <= 100


def test_a_majority_quorum_survives_f_crashes_with_2f_plus_1_replicas(tmp_path):
    cells = matrix(
        tmp_path,
        *("--replicas", "3", "--crashes", "1", "--protocols", "majority-quorum"),
        *("--modes", "none", "--jobs", "1"),
    )
    v = cells[(3, "majority-quorum", "none")]
    assert v["NoCommittedLoss"] == v["Available"] == v["LogMatching"] == "holds"
    assert v["StrongIsr"] == "n/a"  # no ISR in a majority quorum


@pytest.mark.parametrize(
    "argv", [["--modes", "nosuch"], ["--protocols", "kip-9"], ["--max-seconds", "0"]]
)
def test_bad_input_is_exit_2(argv, capsys):
    assert main(["matrix", *argv]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_protocols_and_check_help_list_the_fault_modes(capsys):
    assert main(["protocols"]) == 0
    out = capsys.readouterr().out
    for name in ("original-design", "majority-quorum", "kip-966", "lose-unflushed", "retention"):
        assert name in out
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    out = capsys.readouterr().out
    for flag in ("--unclean", "--lose-unflushed", "--retries", "--retention", "--controller-"):
        assert flag in out
