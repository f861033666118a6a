"""Spark validation engine: a small batch on local[2] gives the sequential verdicts."""

from __future__ import annotations

from pathlib import Path

import pytest

from traces.validate import validate_text

SAMPLES = Path(__file__).resolve().parents[2] / "traces" / "samples"


@pytest.mark.spark
def test_spark_batch_matches_sequential() -> None:
    from traces.spark_validate import validate_many

    files = sorted(SAMPLES.glob("*/*.ndjson"))
    items = [(str(p.relative_to(SAMPLES)), p.read_text()) for p in files]
    verdicts, summary = validate_many(items, master="local[2]", partitions=2)
    seq = {n: validate_text(t, n).verdict for n, t in items}
    assert {v.name: v.verdict for v in verdicts} == seq
    assert summary["traces"] == len(items) and summary["events"] > 0
    assert "rejected" in summary["verdicts"] and "accepted" in summary["verdicts"]
