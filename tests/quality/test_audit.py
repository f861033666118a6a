"""The audit of every published finding stays true (issue 25 item 3).

docs/audit.json lists every finding docs/ publishes, with its status and, for each
action kind of its counterexample, the Kafka code path of its era; docs/audit.md's tables are
generated from it (bench/audit.py). This test:

1. re-runs every row (bench.audit.run_row: a shortest counterexample, symmetry on): a violated
   row must be violated in exactly its stated number of steps, with exactly its stated action
   kinds, each of which has an entry in its era's code-path table, and traces/counterexample/reorder.py must
   find no reordered controller delivery in it (or exactly the number a row records, with a
   status that says so); a withdrawn row must hold at its bounds, or pass its stated
   alternative check;
2. checks that every finding row of docs/findings.md (README's "What the checker finds" until
   issue 30; a verdict that says
   violated, withdrawn or "used to show") has an audit row for each of its protocols and bounds,
   and that every violated cell of docs/matrix is covered by an audit row, so a new finding
   without an audit fails;
3. checks that docs/audit.md's generated part is the rendering of docs/audit.json, and that the
   code-path tables cover every action of their era's versions.

The whole runs in about a minute on one core (kraft-no-kip-903, 257 K states, is most of it).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from isr.spec import Config
from isr.spec.actions import ACTIONS
from isr.spec.protocols import get_protocol

from bench.audit import (
    AUDIT_MD,
    ROOT,
    generated_part,
    load,
    render,
    row_version,
    run_row,
    status_kind,
)
from tests.quality.test_readme_stories import listed, section

DOC = load()
FINDINGS_SOURCE = "docs/findings.md"  # the audit rows of its table (README's until issue 30)
ROWS = DOC["rows"]
KAFKA_MIRROR = Path("/work/.mirror/apache+kafka/repo")
MATRICES = [
    ROOT / "docs" / "matrix" / "matrix.json",
    ROOT / "docs" / "matrix" / "r3-f1" / "matrix.json",
]


def _era_of(protocol: str) -> str:
    return "kraft" if get_protocol(protocol).split_fetch else "zookeeper"


@pytest.mark.parametrize("row", ROWS, ids=[r["id"] for r in ROWS])
def test_the_row_is_what_the_checker_finds(row):
    kind = status_kind(row["status"])  # raises on an unknown status
    assert row["why"] and row["releases"], row["id"]
    era = "kraft" if row_version(row).split_fetch else "zookeeper"
    assert era == row["era"], "the row cites the other era's code paths"
    run = run_row(row)
    if row["expect"] == "holds":
        assert kind == "withdrawn", "only a withdrawn row is expected to hold"
        assert run.holds is True and run.complete, f"{row['id']} is violated again"
        return
    assert kind != "withdrawn", "a withdrawn row must hold"
    assert run.holds is False, f"{row['id']}: {row['property']} holds now"
    assert run.length == row["length"], (
        f"{row['id']}: {run.length} steps, audit says {row['length']}"
    )
    assert run.actions == row["actions"], "the counterexample's action kinds changed: re-audit"
    paths = DOC["eras"][row["era"]]["code_paths"]
    missing = [a for a in run.actions if a not in paths]
    assert not missing, f"no {row['era']}-era code path for {missing}"
    impossible = [a for a in run.actions if paths[a].get("no_kafka_step")]
    assert not impossible, f"{impossible}: a step Kafka's {row['era']} era cannot take"
    assert len(run.reorders) == row["reorders"], [str(r) for r in run.reorders]
    if row["reorders"]:  # a counterexample Kafka cannot perform as printed is never `real`
        assert kind == "open" and "order" in row["status"], row["status"]


def test_the_readme_listing_and_the_audit_agree_on_lengths():
    """docs/findings.md's counterexamples (its <details> block) and the audit's rows of the same protocol,
    bounds and property have the same length: one story, not two."""
    audit = {
        (r["protocol"], tuple(r["bounds"]), r["property"]): r["length"]
        for r in ROWS
        if r["source"] == FINDINGS_SOURCE and r["expect"] == "violated"
    }
    matched = 0
    for cx in listed():
        key = (cx["protocol"], cx["bounds"], cx["property"])
        if key in audit:
            matched += 1
            assert audit[key] == cx["length"], key
    assert matched >= 12, matched


def readme_findings() -> set[tuple[str, tuple[int, ...]]]:
    """(protocol, bounds) of every docs/findings.md table row that publishes a finding: its verdict says
    violated, withdrawn or that it used to show a counterexample."""
    out = set()
    for line in section().splitlines():
        if not line.startswith("| `"):
            continue
        cols = [c.strip() for c in line.strip("|").split("|")]
        if not re.search(r"violated|withdrawn|used to show", cols[2], re.I):
            continue
        protocols = re.findall(r"`([a-z0-9.-]+)`", cols[0])
        bounds = [tuple(map(int, b)) for b in re.findall(r"(\d), (\d), (\d), (\d)", cols[1])]
        assert protocols and bounds, line[:120]
        out |= {(p, b) for p in protocols for b in bounds}
    return out


def test_every_finding_has_an_audit_row():
    findings = readme_findings()
    assert len(findings) >= 12, findings  # the parser found the table
    audited = {(r["protocol"], tuple(r["bounds"])) for r in ROWS if r["source"] == FINDINGS_SOURCE}
    assert findings - audited == set(), "findings without an audit row"
    assert audited - findings == set(), "audit rows for a finding that is gone"


def _covers(spec: dict, protocol: str, mode: str, prop: str) -> bool:
    return all(
        spec[k] == "*" or v in spec[k]
        for k, v in (("protocols", protocol), ("modes", mode), ("properties", prop))
    )


def test_every_matrix_finding_is_covered_by_an_audit_row():
    specs = [(r["id"], r["matrix"]) for r in ROWS if r.get("matrix")]
    uncovered = []
    cells = 0
    for path in MATRICES:
        for cell in json.loads(path.read_text())["cells"]:
            for prop, verdict in cell["verdicts"].items():
                if not verdict.startswith("violated"):
                    continue
                cells += 1
                if not any(_covers(s, cell["protocol"], cell["mode"], prop) for _, s in specs):
                    uncovered.append((path.parent.name, cell["protocol"], cell["mode"], prop))
    assert cells > 100, cells
    assert uncovered == []


def test_docs_audit_md_is_generated_from_the_json():
    """docs/audit.md's tables are docs/audit.json rendered (`python -m bench.audit --write`)."""
    assert generated_part(AUDIT_MD.read_text()) == render(DOC)


@pytest.mark.parametrize("era", sorted(DOC["eras"]))
def test_the_code_path_table_covers_every_action_of_its_era(era):
    spec = DOC["eras"][era]
    actions = set()
    for protocol in spec["protocols"]:
        assert _era_of(protocol) == era, protocol
        cfg = Config(
            protocol=protocol,
            replicas=2,
            lose_unflushed=True,
            unclean=True,
            retries=1,
            controller_failovers=0 if era == "kraft" else 1,
            session_expiries=0 if era == "kraft" else 1,
            retention=True,
            delete_records=1 if era == "kraft" else 0,
        )
        version = get_protocol(protocol)
        actions |= {a.name for a in ACTIONS if a.exists_in(cfg, version)}
    actions |= (
        {"ControllerFenceBroker", "BrokerUnfence", "BrokerRegister"} if era == "kraft" else set()
    )
    assert actions - set(spec["code_paths"]) == set()
    for action, e in spec["code_paths"].items():
        assert e["path"] and e["method"] and e["note"] and e["at"], action


@pytest.mark.skipif(not KAFKA_MIRROR.exists(), reason="no apache/kafka mirror on this machine")
def test_every_cited_file_exists_at_its_commit():
    """Each code path's file is in Kafka's tree at the commit the table says it was read at."""
    for spec in DOC["eras"].values():
        for action, e in spec["code_paths"].items():
            r = subprocess.run(
                ["git", f"--git-dir={KAFKA_MIRROR}", "cat-file", "-e", f"{e['at']}:{e['path']}"],
                capture_output=True,
            )
            assert r.returncode == 0, (action, e["at"], e["path"])
