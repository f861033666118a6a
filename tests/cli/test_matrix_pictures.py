"""`isr matrix`: the heat map (`--html FILE`, cli/matrix_html.py) and the terminal table that
fits 100 columns (issue 30, item 4), on 2 versions x 2 fault modes at the default bounds."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from isr.cli.main import main
from isr.traces.counterexample import itf

CELLS = ["--protocols", "hw-truncation,kip-320", "--modes", "none,acks-1"]


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> dict:
    d = tmp_path_factory.mktemp("matrix")
    page = d / "heat" / "matrix.html"
    page.parent.mkdir()
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(
            ["matrix", *CELLS, "--max-seconds", "20", "--jobs", "1"]
            + ["--out", str(d), "--html", str(page)]
        )
    assert code == 0
    doc = json.loads((d / "matrix.json").read_text())
    return {"page": page, "doc": doc, "text": out.getvalue()}


def _cells(page: Path) -> dict[tuple[str, str], tuple[str, str]]:
    """(protocol, mode) -> (class, the cell's HTML)."""
    text = page.read_text()
    found = re.findall(
        r'<td class="([\w ]+)" data-protocol="([\w.-]+)" data-mode="([\w-]+)"[^>]*>(.*?)</td>',
        text,
    )
    return {(p, m): (cls.split()[0], body) for cls, p, m, body in found}


def test_each_cell_is_coloured_by_its_verdicts(run):
    cells = _cells(run["page"])
    assert len(cells) == 4
    for c in run["doc"]["cells"]:
        verdicts = c["verdicts"]
        cls, body = cells[(c["protocol"], c["mode"])]
        violated = [n for n, v in verdicts.items() if v.startswith("violated")]
        want = "violated" if violated else "holds"
        assert cls == want, (c["protocol"], c["mode"])
        for n in violated:  # each violated property named with its length
            length = c["properties"][n]["length"]
            assert f"{n} {length}</a>" in body
    # the facts of the table: hw-truncation loses a committed record, kip-320 not
    assert "NoCommittedLoss 6" in cells[("hw-truncation", "none")][1]
    assert "NoCommittedLoss" not in cells[("kip-320", "none")][1]
    assert "NoAckedLoss 3" in cells[("kip-320", "acks-1")][1]


def test_every_link_is_a_counterexample_page_beside_the_matrix(run):
    page = run["page"]
    text = page.read_text()
    assert not re.search(r"(src|href)=\"?https?:", text), "the page must not load anything"
    links = re.findall(r'<a href="([^"]+)">(\w+) (\d+)</a>', text)
    assert links
    for href, prop, length in links:
        target = page.parent / href
        assert target.is_file(), href
        trace = target.with_suffix(".ndjson")
        cx = itf.read_any(str(trace))  # what isr explain and isr replay read
        assert cx.header["property"] == prop and len(cx.steps) == int(length)
        assert f'id="step-{length}"' in target.read_text()


def test_the_replay_confirms_a_written_counterexample(run, capsys):
    trace = next((run["page"].parent / "matrix-cx").glob("*-kip-320-acks-1-NoAckedLoss.ndjson"))
    assert main(["replay", str(trace)]) == 1  # 1: the property is violated, as the file says
    assert "NoAckedLoss is violated" in capsys.readouterr().out


def test_the_text_table_fits_100_columns_and_keeps_every_verdict(run):
    text = run["text"]
    assert max(len(line) for line in text.splitlines()) <= 100
    assert "v(N): violated, with a shortest counterexample of N steps" in text
    table = text[: text.index("v(N)")].splitlines()
    rows = {}
    block = None
    for line in table:
        if line and not line.startswith(" ") and line.split()[0] in ("hw-truncation", "kip-320"):
            block = line.split()[0]
        elif line.startswith("  ") and block:
            words = line.split()
            rows[(block, words[0])] = words[1:]
    heads = next(ln for ln in table if ln.startswith("fault mode"))
    assert "Available" in heads
    for c in run["doc"]["cells"]:
        cells = rows[(c["protocol"], c["mode"])]
        short = [
            f"v({v.split('(')[1].split()[0]})" if v.startswith("violated") else v
            for n, v in c["verdicts"].items()
            if n in c["properties"] and any(x in v for x in ("violated", "incomplete"))
        ]
        for s in short:
            assert s in cells


def test_a_cell_cut_short_is_incomplete(tmp_path, capsys):
    page = tmp_path / "m.html"
    argv = ["matrix", "--protocols", "kip-320", "--modes", "none", "--crashes", "0"]
    assert main([*argv, "--max-states", "50", "--jobs", "1", "--html", str(page)]) == 3
    cells = _cells(page)
    assert cells[("kip-320", "none")][0] == "incomplete"
    assert "undecided (max-states)" in cells[("kip-320", "none")][1]
    assert not (tmp_path / "m-cx").exists()  # no violation, no counterexample written


def test_an_unwritable_page_is_exit_2(tmp_path, capsys):
    argv = ["matrix", "--protocols", "kip-320", "--modes", "none", "--crashes", "0"]
    bad = tmp_path / "no" / "such" / "m.html"
    assert main([*argv, "--max-states", "50", "--jobs", "1", "--html", str(bad)]) == 2
    assert capsys.readouterr().err.count("\n") == 1  # refused before any cell ran
