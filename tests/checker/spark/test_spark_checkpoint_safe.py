"""--resume DIR runs no code from DIR (issue 17): a checkpoint is data only, checked against its
manifest's hashes; a tampered one is refused with exit 2, even when the manifest is rewritten
to match (whoever can write DIR can do that), and nothing it carries runs."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import pickle
from pathlib import Path

import pytest
from isr.checker.bfs import Limits
from isr.checker.spark.engine import check_spark
from isr.cli.main import main
from isr.spec import Config, IsrSpec

pytestmark = pytest.mark.spark

ARGS = ["check", "--protocol", "hw-truncation", "--replicas", "2", "--records", "0"]
ARGS += [
    "--epochs",
    "2",
    "--crashes",
    "1",
    "--quiet",
    "--engine",
    "spark",
    "--spark-mode",
    "levels",
]


class Boom:
    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _checkpoint(tmp_path: Path) -> Path:
    m = IsrSpec(Config(replicas=2, records=0, epochs=2, crashes=1, protocol="hw-truncation"))
    d = tmp_path / "ckpt"
    check_spark(m, checkpoint=str(d), limits=Limits(max_states=30), config=m.config.to_json())
    return d


def _lines(d: Path) -> list[tuple[Path, int, str]]:
    out = []
    for p in sorted(d.glob("state-*/part-*")):
        for i, ln in enumerate(p.read_text().splitlines()):
            out.append((p, i, ln))
    return out


def _rewrite(d: Path, p: Path, i: int, new: str, fix_manifest: bool) -> None:
    rows = p.read_text().splitlines()
    old = rows[i]
    rows[i] = new
    p.write_text("\n".join(rows) + "\n")
    if fix_manifest:
        mp = d / "manifest.json"
        man = json.loads(mp.read_text())
        sha = lambda s: hashlib.sha256(s.encode()).hexdigest()  # noqa: E731
        man["hashes"] = sorted([h for h in man["hashes"] if h != sha(old)] + [sha(new)])
        mp.write_text(json.dumps(man))


def test_checkpoint_is_data_and_resumes(spark, tmp_path, capsys) -> None:
    d = _checkpoint(tmp_path)
    lines = _lines(d)
    assert lines and all(json.loads(ln)["visited"] for _p, _i, ln in lines)
    m = IsrSpec(Config(replicas=2, records=0, epochs=2, crashes=1, protocol="hw-truncation"))
    r = check_spark(m, resume=str(d), limits=Limits(max_states=40), config=m.config.to_json())
    assert r.extra["spark"]["resumed_from_level"] >= 1 and r.distinct_states >= 30


def test_code_in_a_rewritten_checkpoint_does_not_run(spark, tmp_path, capsys) -> None:
    d = _checkpoint(tmp_path)
    marker = tmp_path / "pwned"
    p, i, ln = next(x for x in _lines(d) if json.loads(x[2])["frontier"])
    rec = json.loads(ln)
    rec["frontier"] = base64.b64encode(pickle.dumps([(1, Boom(str(marker)))])).decode()
    _rewrite(d, p, i, json.dumps(rec, separators=(",", ":")), fix_manifest=True)
    assert main([*ARGS, "--resume", str(d)]) == 2
    assert "refused" in capsys.readouterr().err
    assert not marker.exists()


def test_flipped_byte_is_refused(spark, tmp_path, capsys) -> None:
    d = _checkpoint(tmp_path)
    p, i, ln = _lines(d)[0]
    k = ln.index('"frontier":"') + 15
    _rewrite(d, p, i, ln[:k] + ("A" if ln[k] != "A" else "B") + ln[k + 1 :], fix_manifest=False)
    assert main([*ARGS, "--resume", str(d)]) == 2
    assert "manifest" in capsys.readouterr().err
