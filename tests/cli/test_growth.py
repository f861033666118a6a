"""`isr check --html-report`: the distinct states first reached at each BFS depth (the result's
``level_sizes``, counted by check_bfs and the parallel engine alike) and the page plotting them
(cli/growth.py; issue 30, item 4)."""

from __future__ import annotations

import json
import re

import pytest
from isr.cli.main import main

# hw-truncation at 2 replicas, 1 record, 2 epochs, no crash: the whole space, 478 states at
# depths 0..11 (counted by hand from the two engines, which agree)
SMALL = ["--protocol", "hw-truncation", "--replicas", "2", "--records", "1", "--epochs", "2"]
SMALL += ["--crashes", "0", "--quiet"]
LEVELS = [1, 6, 16, 28, 48, 74, 91, 85, 68, 42, 16, 3]


@pytest.mark.parametrize("workers", ["1", "2"])
def test_level_sizes_sum_to_the_distinct_states(capsys, workers):
    assert main(["check", *SMALL, "--workers", workers, "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["engine"] == ("bfs" if workers == "1" else "parallel")
    assert out["level_sizes"] == LEVELS
    assert sum(out["level_sizes"]) == out["distinct_states"] == 478
    assert len(out["level_sizes"]) == out["depth"] + 1


def test_a_search_stopped_early_still_sums(capsys):
    """Every property decided before the space is exhausted: the level it stopped at counts."""
    argv = ["check", "--protocol", "hw-truncation", "--replicas", "2", "--records", "1"]
    assert (
        main([*argv, "--crashes", "2", "--quiet", "--max-states", "300", "--format", "json"]) == 3
    )
    out = json.loads(capsys.readouterr().out)
    assert sum(out["level_sizes"]) == out["distinct_states"]
    assert out["level_sizes"][:4] == [1, 8, 32, 80]  # the finished levels


def test_the_report_page_plots_every_level_and_the_verdicts(tmp_path, capsys):
    page = tmp_path / "report.html"
    assert main(["check", *SMALL, "--workers", "1", "--html-report", str(page)]) == 0
    text = page.read_text()
    assert not re.search(r"(src|href)=\"?https?:", text), "the page must not load anything"
    bars = re.findall(r'<rect class="bar" data-depth="(\d+)" data-states="(\d+)"', text)
    assert [int(d) for d, _ in bars] == list(range(len(LEVELS)))
    assert [int(n) for _, n in bars] == LEVELS
    rows = {p: c for c, p in re.findall(r'<tr class="(\w+)" data-property="(\w+)"', text)}
    assert rows["TypeOK"] == "holds" and rows["NoCommittedLoss"] == "holds"
    assert "478" in text.replace(",", "")


def test_violations_are_marked_at_their_depth(tmp_path, capsys):
    page = tmp_path / "report.html"
    argv = ["check", "--protocol", "hw-truncation", "--replicas", "2", "--records", "1"]
    argv += ["--crashes", "2", "--quiet", "--invariant", "StrongIsr", "--html-report", str(page)]
    assert main(argv) == 1
    text = page.read_text()
    rows = {p: c for c, p in re.findall(r'<tr class="(\w+)" data-property="(\w+)"', text)}
    assert rows == {"StrongIsr": "violated"}
    assert re.findall(r'<polygon class="cx" data-depth="(\d+)"', text) == ["5"]  # 5 steps


def test_an_unwritable_report_is_exit_2(tmp_path, capsys):
    bad = tmp_path / "no" / "such" / "dir" / "r.html"
    assert main(["check", *SMALL, "--workers", "1", "--html-report", str(bad)]) == 2
    assert capsys.readouterr().err.count("\n") == 1
