"""--checkpoint writes each level; --resume continues an interrupted run to the same counts."""

from __future__ import annotations

import json

import pytest
from isr.checker.bfs import Limits
from isr.checker.spark.checkpoint import CheckpointError
from isr.checker.spark.engine import check_spark
from isr.cli.main import main
from isr.spec import Config, IsrSpec
from spark_helpers import assert_same_as_bfs

pytestmark = pytest.mark.spark


def model(protocol="hw-truncation"):
    return IsrSpec(Config(replicas=2, records=0, epochs=2, crashes=1, protocol=protocol))


def test_resume_reaches_the_same_final_counts(spark, tmp_path):
    m = model()
    cfg = m.config.to_json()
    first = check_spark(m, checkpoint=str(tmp_path), limits=Limits(max_states=30), config=cfg)
    assert not first.complete and first.exit_code() == 3 and first.distinct_states < 173
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["tally"]["distinct"] == first.distinct_states
    assert len(list(tmp_path.glob("state-*"))) == 1
    done = check_spark(m, resume=str(tmp_path), config=cfg)
    assert done.extra["spark"]["resumed_from_level"] == manifest["level"]
    assert_same_as_bfs(m, done)
    assert done.distinct_states == 173 and done.complete


def test_resume_refuses_another_model(spark, tmp_path):
    m = model()
    check_spark(
        m, checkpoint=str(tmp_path), limits=Limits(max_states=20), config=m.config.to_json()
    )
    other = model("kip-320")
    with pytest.raises(CheckpointError, match="another check"):
        check_spark(other, resume=str(tmp_path), config=other.config.to_json())
    with pytest.raises(CheckpointError, match="no checkpoint"):
        check_spark(m, resume=str(tmp_path / "missing"))


def test_cli_checkpoint_options(spark, tmp_path, capsys):
    args = ["check", "--protocol", "kip-320", "--replicas", "2", "--records", "0"]
    args += ["--epochs", "2", "--crashes", "1", "--quiet", "--format", "json"]
    levels = ["--engine", "spark", "--spark-mode", "levels"]
    # the local engine checkpoints too, in a format of its own that Spark's levels mode refuses
    # (exit 2; the barrier mode shares it: test_spark_barrier)
    assert main([*args, "--checkpoint", str(tmp_path / "local")]) == 1
    assert main([*args, *levels, "--resume", str(tmp_path / "local")]) == 2
    assert main([*args, *levels, "--resume", str(tmp_path)]) == 2  # nothing there
    capsys.readouterr()
    # records 0: nothing can be committed, so SometimesCommitted fails (exit 1), as in bfs
    assert main([*args, *levels, "--checkpoint", str(tmp_path)]) == 1
    out = json.loads(capsys.readouterr().out)
    never = [p["name"] for p in out["properties"] if p["holds"] is False]
    assert never == ["SometimesCommitted"]
    assert out["engine"] == "spark" and out["distinct_states"] == 151 and out["complete"]
    assert (tmp_path / "manifest.json").exists()
