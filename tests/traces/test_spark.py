"""Spark validation engine: a small batch on local[2] gives the sequential verdicts, in order,
including a run recorded as several per-process files (the real cluster's directory)."""

from __future__ import annotations

from pathlib import Path

import pytest
from isr.traces.validator.validate import validate_text

SAMPLES = Path(__file__).resolve().parents[2] / "traces" / "samples"


@pytest.mark.spark
def test_spark_batch_matches_sequential() -> None:
    from isr.traces.validator.spark_validate import validate_many

    files = sorted(SAMPLES.glob("*/*.ndjson"))
    items: list = [(str(p.relative_to(SAMPLES)), p.read_text()) for p in files]
    runs = [d for d in sorted(SAMPLES.glob("*/*")) if d.is_dir()]
    assert runs  # the real cluster's per-broker files
    items += [(str(d.relative_to(SAMPLES)), [f.read_text() for f in sorted(d.glob("*.ndjson"))])
              for d in runs]  # fmt: skip
    verdicts, summary = validate_many(items, master="local[2]", partitions=2)
    seq = [(n, validate_text(t, n).verdict) for n, t in items]
    assert [(v.name, v.verdict) for v in verdicts] == seq
    assert dict(seq)[str(runs[0].relative_to(SAMPLES))] == "accepted"
    assert summary["traces"] == len(items) and summary["events"] > 0
    assert "rejected" in summary["verdicts"] and "accepted" in summary["verdicts"]
