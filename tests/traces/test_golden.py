"""Golden traces (traces/samples/manifest.json): each keeps its verdict, through the CLI too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from isr.cli.main import main
from isr.traces.validator.validate import validate_paths

SAMPLES = Path(__file__).resolve().parents[2] / "traces" / "samples"
MANIFEST = json.loads((SAMPLES / "manifest.json").read_text())


def _files(rel: str) -> list[Path]:
    p = SAMPLES / rel
    return sorted(p.glob("*.ndjson")) if p.is_dir() else [p]


@pytest.mark.parametrize("rel", sorted(MANIFEST))
def test_golden_verdict(rel: str) -> None:
    want = MANIFEST[rel]
    v = validate_paths(_files(rel), rel)
    assert v.verdict == want["verdict"], (v.reason, v.mismatches)
    if "reason" in want:
        assert want["reason"] in v.reason
    if v.verdict == "rejected":
        assert v.index is not None and v.event is not None
        assert v.candidates and v.mismatches


def test_every_sample_is_in_the_manifest() -> None:
    """Apache Kafka's grey-box runs have their own manifest (tests/kafka/test_offline.py)."""
    kafka = json.loads((SAMPLES / "apache-kafka" / "manifest.json").read_text())
    listed = {SAMPLES / k for k in MANIFEST} | {SAMPLES / "apache-kafka" / k for k in kafka}
    for p in SAMPLES.rglob("*.ndjson"):
        assert p in listed or p.parent in listed, p


def test_cli_exit_codes(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    acc = str(SAMPLES / "accepted" / "sim-kip320-leader-crash.ndjson")
    rej = str(SAMPLES / "rejected" / "mutant-ack-before-commit.ndjson")
    uns = str(SAMPLES / "unsupported" / "sim-six-replicas.ndjson")
    assert main(["validate", acc]) == 0
    assert main(["validate", acc, rej]) == 1
    out = capsys.readouterr().out
    assert "REJECTED" in out and "enabled there" in out and "candidate spec state" in out
    assert main(["validate", uns]) == 2
    capsys.readouterr()
    assert main(["validate", "--format", "json", rej]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["traces"][0]["verdict"] == "rejected" and doc["traces"][0]["enabled"]
    bad = tmp_path / "bad.ndjson"
    bad.write_text("not json\n")
    assert main(["validate", str(bad)]) == 2
    assert main(["validate", str(tmp_path / "missing.ndjson")]) == 2


def test_tampered_trace_is_rejected(tmp_path: Path) -> None:
    """Raise one follower's HW above what its leader sent: the validator must notice."""
    src = SAMPLES / "accepted" / "sim-kip320-leader-crash.ndjson"
    lines = src.read_text().splitlines()
    out, done = [], False
    for ln in lines:
        ev = json.loads(ln)
        if not done and ev.get("args", {}).get("phase") == "apply" and ev["state"]["hw"] > 0:
            ev["state"]["hw"] = ev["state"]["leo"] + 1
            done = True
        out.append(json.dumps(ev))
    p = tmp_path / "t.ndjson"
    p.write_text("\n".join(out) + "\n")
    v = validate_paths([p])
    assert done and v.verdict == "rejected"
