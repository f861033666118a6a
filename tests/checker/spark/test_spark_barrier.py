"""The Spark barrier engine (``isr check --engine spark``, checker.spark.barrier): the parallel
engine's workers as the tasks of one barrier stage give the sequential engine's answers, share
the parallel engine's checkpoints, and fail a run (never a verdict) when a task dies."""

from __future__ import annotations

import json
import os

import pytest
from isr.checker.bfs import Limits, check_bfs
from isr.checker.model import Property, SimpleModel
from isr.checker.parallel import CheckpointError, EngineFailure, check_parallel
from isr.checker.spark.barrier import check_spark_barrier
from isr.cli.main import main
from isr.spec import Config, IsrSpec
from spark_helpers import assert_same_as_bfs, summary

pytestmark = pytest.mark.spark


def isr(protocol: str, bounds) -> IsrSpec:
    r, rec, ep, cr = bounds
    return IsrSpec(Config(replicas=r, records=rec, epochs=ep, crashes=cr, protocol=protocol))


# the pins of test_spark_engine.ISR: the same models, the same numbers
ISR = {
    # (6010, 17), (7010, 17), (5626, 16) before R8's in-order delivery
    "hw-truncation": ((2, 1, 2, 1), 3361, 18),
    "kip-101": ((2, 1, 2, 1), 3432, 16),
    "kip-320": ((2, 1, 2, 1), 2902, 15),
}


@pytest.mark.parametrize("protocol", sorted(ISR))
def test_protocols_match_bfs(spark, protocol):
    bounds, pinned, depth = ISR[protocol]
    model = isr(protocol, bounds)
    res = check_spark_barrier(model, config=model.config.to_json())
    assert_same_as_bfs(model, res)
    assert (res.distinct_states, res.depth, res.engine) == (pinned, depth, "spark")
    assert res.extra["spark"] == {"mode": "barrier", "master": "local[2]", "tasks": 2}
    assert res.extra["parallel"]["workers"] == 2
    if protocol == "hw-truncation":  # the known bug, found at its shortest
        lengths = {p.name: p.counterexample.length for p in res.violated}
        pinned = {"StrongIsr": 5, "WeakIsr": 5, "NoCommittedLoss": 6, "NoPhantomRead": 7}
        assert {name: lengths.get(name) for name in pinned} == pinned
    else:
        assert res.violated == []


def test_three_replicas_with_symmetry(spark):
    model = isr("kip-320", (3, 1, 2, 0))
    res = check_spark_barrier(model)
    assert res.distinct_states == 15_700 and res.complete
    assert_same_as_bfs(model, res)


def test_the_disk_store_on_spark_and_its_checkpoint_resumed_locally(spark, tmp_path):
    """Each task keeps its share on disk (checker.store); a disk checkpoint written on Spark
    resumes on the local engine with another number of workers, at the same counts."""
    model = isr("hw-truncation", (2, 1, 2, 1))
    res = check_spark_barrier(model, store="disk")
    assert_same_as_bfs(model, res)
    assert res.extra["store"] == "disk" and res.distinct_states == 3361
    d = tmp_path / "ck"
    cut = check_spark_barrier(model, store="disk", checkpoint=str(d), limits=Limits(max_states=900))
    assert not cut.complete and json.loads((d / "manifest.json").read_text())["store"] == "disk"
    assert summary(check_parallel(model, workers=3, resume=str(d))) == summary(check_bfs(model))


def test_stop_at_first_violation_and_limits(spark):
    model = isr("hw-truncation", (2, 1, 2, 1))
    res = check_spark_barrier(model, stop_at_first_violation=True)
    ref = check_bfs(model, stop_at_first_violation=True)
    assert res.stop_reason == ref.stop_reason == "first-violation" and res.exit_code() == 1
    assert {p.name: p.counterexample.length for p in res.violated} == {
        p.name: p.counterexample.length for p in ref.violated
    }
    res = check_spark_barrier(model, limits=Limits(max_states=100))
    assert not res.complete and res.stop_reason == "max-states" and res.exit_code() == 3
    assert 100 <= res.distinct_states < 3361


def test_checkpoints_are_the_parallel_engines(spark, tmp_path):
    """A run stopped on the local engine resumes on Spark, and the reverse, with the counts of
    one uninterrupted run."""
    model = isr("kip-320", (2, 1, 2, 1))
    ref = check_bfs(model)
    local = tmp_path / "local"
    cut = check_parallel(model, workers=2, checkpoint=str(local), limits=Limits(max_states=900))
    assert not cut.complete
    done = check_spark_barrier(model, resume=str(local))
    assert summary(done) == summary(ref)
    assert done.extra["parallel"]["resumed_from_level"] >= 1
    on_spark = tmp_path / "spark"
    cut = check_spark_barrier(model, checkpoint=str(on_spark), limits=Limits(max_states=900))
    assert not cut.complete
    done = check_parallel(model, workers=3, resume=str(on_spark))
    assert summary(done) == summary(ref)
    other = isr("kip-101", (2, 1, 2, 1))
    with pytest.raises(CheckpointError, match="another check"):
        check_spark_barrier(other, resume=str(on_spark))


def test_a_task_that_dies_fails_the_run(spark):
    driver = os.getpid()  # captured by value: the closure is shipped to the tasks

    def dies_on_an_executor(s):
        """Successors of a counter; the process expanding 5 dies, unless it is the test's."""
        (x,) = s
        if x == 5 and os.getpid() != driver:
            os._exit(9)
        if x < 8:
            yield (0, ()), (x + 1,)

    model = SimpleModel(
        "dies",
        ["Inc"],
        lambda: [(0,)],
        dies_on_an_executor,
        [Property("Small", "always", lambda s: s[0] < 100)],
    )
    with pytest.raises(EngineFailure, match=r"worker \d lost its connection|workers failed"):
        check_spark_barrier(model)
    # the context is still usable afterwards
    assert check_spark_barrier(isr("kip-320", (2, 1, 1, 0))).complete


def test_cli_default_is_barrier_and_resumes_a_local_checkpoint(spark, tmp_path, capsys):
    args = ["check", "--protocol", "kip-320", "--replicas", "2", "--records", "0"]
    args += ["--epochs", "2", "--crashes", "1", "--quiet", "--format", "json"]
    local = tmp_path / "local"
    assert main([*args, "--checkpoint", str(local), "--max-states", "100"]) == 3
    capsys.readouterr()
    # records 0: nothing can be committed, so SometimesCommitted fails (exit 1), as in bfs
    assert main([*args, "--engine", "spark", "--resume", str(local)]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["engine"] == "spark" and out["spark"]["mode"] == "barrier"
    assert out["distinct_states"] == 151 and out["complete"]
    assert [p["name"] for p in out["properties"] if p["holds"] is False] == ["SometimesCommitted"]
    assert main([*args, "--engine", "spark", "--stop-at-first-violation"]) == 1


def test_ctrl_c_on_spark_stops_every_task_and_prints_the_partial_result():
    """Ctrl-C (SIGINT to the whole process group, as a terminal sends it) to `isr check --engine
    spark`: exit 3 with the partial statistics, and no JVM or Python worker left behind."""
    import signal
    import subprocess
    import sys
    import time

    argv = [sys.executable, "-m", "isr.cli", "check", "--engine", "spark"]
    argv += ["--spark-master", "local[2]", "--no-spark-ui", "--replicas", "3", "--records", "2"]
    argv += ["--epochs", "2", "--crashes", "1"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # the search is under way once progress shows depth
            line = proc.stderr.readline()
            if line.startswith("[progress]") and " depth 0 " not in line:
                break
        else:
            raise AssertionError("no progress in 120 s")
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 3, (out, err[-2000:])
    assert "Traceback" not in err
    assert "INCOMPLETE: interrupted (" in out and "verdict: INCOMPLETE (exit 3)" in out
    deadline = time.monotonic() + 60  # the JVM and its Python daemon take a moment to exit
    while True:
        left = subprocess.run(["pgrep", "-a", "-s", str(proc.pid)], capture_output=True, text=True)
        if not left.stdout.strip() or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert left.stdout.strip() == "", f"processes of the run still alive: {left.stdout}"
