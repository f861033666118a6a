"""A real Spark standalone cluster (master + 2 workers on loopback, started by
scripts/spark-cluster.sh): `isr check --engine spark --master spark://...` gives bfs's answers."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from isr.checker.bfs import check_bfs
from isr.spec import Config, IsrSpec

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "spark-cluster.sh"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def cluster(tmp_path):
    env = {
        **os.environ,
        "PYTHON": sys.executable,
        "ISR_SPARK_CLUSTER_DIR": str(tmp_path / "cluster"),
        "ISR_SPARK_MASTER_PORT": str(free_port()),
    }
    started = subprocess.run(
        [str(SCRIPT), "start"], env=env, capture_output=True, text=True, timeout=300
    )
    try:
        assert started.returncode == 0, started.stderr
        yield started.stdout.strip().splitlines()[-1]
    finally:
        subprocess.run([str(SCRIPT), "stop"], env=env, capture_output=True, timeout=120)
        status = subprocess.run([str(SCRIPT), "status"], env=env, capture_output=True, text=True)
        assert "running (pid" not in status.stdout


def test_check_on_a_standalone_cluster_matches_bfs(cluster):
    assert cluster.startswith("spark://127.0.0.1:")
    bounds = ["--replicas", "2", "--records", "1", "--epochs", "1", "--crashes", "1"]
    run = subprocess.run(
        [sys.executable, "-m", "isr.cli", "check", "--protocol", "hw-truncation", *bounds]
        + ["--engine", "spark", "--master", cluster, "--format", "json", "--quiet"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 1, run.stderr[-3000:]  # the hw-truncation bug
    out = json.loads(run.stdout)
    assert out["engine"] == "spark" and out["spark"]["master"] == cluster
    ref = check_bfs(
        IsrSpec(Config(replicas=2, records=1, epochs=1, crashes=1, protocol="hw-truncation"))
    )
    assert out["distinct_states"] == ref.distinct_states == 307
    assert out["depth"] == ref.depth and out["states_generated"] == ref.states_generated
    verdicts = {
        p["name"]: (p["holds"], (p["counterexample"] or {}).get("length"))
        for p in out["properties"]
    }
    assert verdicts == {
        p.name: (p.holds, p.counterexample.length if p.counterexample else None)
        for p in ref.properties
    }
