"""`isr history FILE --html OUT` (cli/timeline.py): a client history as a timeline, and the
fault events `isr chaos` now records in the history (issue 30, item 4)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from isr.cli.main import main
from isr.impl.cluster.workload import Ledger, history_doc
from isr.traces.history import check, load, parse

from tests.viewer.synthetic_history import FAULTS, LOST, history

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "history"


def _bars(page: str) -> dict[str, set[str]]:
    """data-done (the completion's op index) -> the bar's classes."""
    found = re.findall(r'<rect class="([\w -]+)" data-op="\d+" data-done="(\d*)"', page)
    return {done: set(cls.split()) for cls, done in found}


def test_the_lost_write_of_the_example_is_red(tmp_path, capsys):
    out = tmp_path / "t.html"
    assert main(["history", str(EXAMPLES / "lost-write.ndjson"), "--html", str(out)]) == 1
    page = out.read_text()
    assert not re.search(r"(src|href)=\"?https?:", page), "the page must not load anything"
    bars = _bars(page)
    assert len(bars) == 5  # four sends and a poll
    lost = {d for d, c in bars.items() if "lost" in c}
    assert lost == {"3"}  # the checker's lost op: r1's ok
    assert bars["5"] >= {"send", "fail"} and bars["7"] >= {"send", "info"}
    assert bars["9"] >= {"poll", "ok"}
    assert re.findall(r'<polygon class="lost-mark" data-done="(\d+)"', page) == ["3"]
    assert "no fault events" in page  # the example has none: read as before


def test_a_valid_history_has_no_red(tmp_path, capsys):
    out = tmp_path / "t.html"
    assert main(["history", str(EXAMPLES / "valid.ndjson"), "--html", str(out)]) == 0
    assert not any("lost" in c for c in _bars(out.read_text()).values())


def test_every_lost_write_and_the_faults_are_drawn(tmp_path, capsys):
    src = tmp_path / "h.json"
    src.write_text(json.dumps(history()))
    out = tmp_path / "t.html"
    assert main(["history", str(src), "--html", str(out)]) == 1
    page = out.read_text()
    res = check(load(src))
    assert len(res.lost_ops["lost"]) == len(LOST) == res.anomalies["lost"].count
    ops = load(src).ops
    assert {ops[i]["value"] for i in res.lost_ops["lost"]} == set(LOST)
    red = {int(d) for d, c in _bars(page).items() if "lost" in c}
    assert red == set(res.lost_ops["lost"])
    # the consumer's polls that returned records nobody sent are outlined
    flagged = {d for d, c in _bars(page).items() if "anomaly" in c}
    assert flagged and all("poll" in _bars(page)[d] for d in flagged)
    # broker 1 down from its kill to its restart; the election a tick with its name
    assert re.search(r'<rect class="down"[^>]*><title>broker 1 down from 2.00 s to 3.00 s', page)
    assert page.count('<rect class="event"') == len(FAULTS)
    assert ">elect 2</text>" in page


def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.ndjson"
    bad.write_text('{"process": "w", "type": "ok", "f": "send", "partition": 0, "time": 0}\n')
    assert main(["history", str(bad), "--html", str(tmp_path / "x.html")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    unwritable = tmp_path / "no" / "dir" / "x.html"
    assert main(["history", str(EXAMPLES / "valid.ndjson"), "--html", str(unwritable)]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_the_chaos_history_carries_its_faults():
    """Ledger.fault records on the ops' clock; the document stays a valid history."""
    ledger = Ledger()
    ledger.op("p0", "invoke", "send", ("t", 0), value="p0-0", acks="all")
    ledger.fault("kill 2")
    ledger.fault("restart 2", at=ledger.t0 + 5.0)
    doc = history_doc(ledger, idempotent=True)
    assert [f["event"] for f in doc["faults"]] == ["kill 2", "restart 2"]
    assert doc["faults"][1]["time"] == 5.0 and 0 <= doc["faults"][0]["time"] < 5.0
    head = {k: v for k, v in doc.items() if k != "ops"}
    h = parse(head, doc["ops"], "chaos")
    assert h.header["faults"] == doc["faults"]
