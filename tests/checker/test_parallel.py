"""The parallel engine: the same answers as check_bfs, checkpoint/resume, and its failure modes
(a dead worker, Ctrl-C, a bad checkpoint)."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import signal
from pathlib import Path

import pytest
from isr.checker.bfs import Limits, check_bfs
from isr.checker.model import Property
from isr.checker.parallel import (
    FIRST_VIOLATION,
    INTERRUPTED,
    CheckpointError,
    EngineFailure,
    check_parallel,
)
from isr.checker.parallel.engine import balance_plan
from isr.checker.result import CheckResult
from isr.spec import Config, IsrSpec
from isr.spec.protocols import PROTOCOLS

from .toys import grid, tokens, with_dec


def cx_len(cx) -> int | None:
    return None if cx is None else cx.length


def summary(res: CheckResult) -> dict:
    """Everything the two engines must agree on (the traces themselves may differ)."""
    return {
        "distinct": res.distinct_states,
        "generated": res.states_generated,
        "depth": res.depth,
        "complete": res.complete,
        "stop_reason": res.stop_reason,
        "deadlocks": res.deadlocks,
        "deadlock_example": cx_len(res.deadlock_example),
        "never_fired": res.actions_never_fired,
        "verdicts": [(p.name, p.holds, cx_len(p.counterexample)) for p in res.properties],
        "exit": res.exit_code(),
    }


def isr(protocol: str, r=2, rec=1, ep=2, cr=1) -> IsrSpec:
    return IsrSpec(Config(replicas=r, records=rec, epochs=ep, crashes=cr, protocol=protocol))


def no_workers_left() -> bool:
    return multiprocessing.active_children() == []


TOYS = {
    "grid": lambda: grid(4),
    "grid-invariant": lambda: grid(4, [Property("SumBelow5", "always", lambda s: s[0] + s[1] < 5)]),
    "tokens": lambda: tokens(3),
    "counter": lambda: with_dec(5),
}


@pytest.mark.parametrize("workers", [1, 2, 3])
@pytest.mark.parametrize("toy", sorted(TOYS))
def test_toys_match_bfs(toy, workers):
    for symmetry in (True, False):
        model = TOYS[toy]()
        res = check_parallel(model, workers=workers, symmetry=symmetry)
        assert summary(res) == summary(check_bfs(model, symmetry=symmetry))
        assert res.engine == "parallel" and res.extra["parallel"]["workers"] == workers
    assert no_workers_left()


def test_toy_counts_are_the_known_ones():
    res = check_parallel(grid(4), workers=2)
    assert (res.distinct_states, res.states_generated, res.depth, res.deadlocks) == (25, 41, 8, 1)
    steps = check_parallel(with_dec(5), workers=2).properties[0].counterexample.steps
    assert [s.action for s in steps] == ["Inc", "Inc", "Inc", "Dec"]  # replayed, a real path


def test_balance_plan_evens_out_the_frontier():
    assert balance_plan([1, 0]) == []  # within the slack
    assert balance_plan([100, 0]) == [(0, 1, 50)]
    assert balance_plan([0, 90, 0]) == [(1, 0, 30), (1, 2, 30)]
    assert balance_plan([70, 10, 10, 10]) == [(0, 1, 15), (0, 2, 15), (0, 3, 15)]
    assert balance_plan([1000, 990]) == []  # less than 2% apart


def test_work_is_shared_between_workers():
    """One initial state: without moving frontier states, the worker holding it would expand
    every state. Balancing keeps each worker within 2% (or 8 states) of half of each level."""
    res = check_parallel(isr("kip-320", ep=3), workers=2)
    extra = res.extra["parallel"]
    assert sum(level["moved"] for level in extra["levels"]) > 0
    assert sum(extra["expanded"]) == res.distinct_states
    assert min(extra["expanded"]) > 0.4 * res.distinct_states


@pytest.mark.parametrize("protocol", sorted(PROTOCOLS))
def test_every_protocol_matches_bfs(protocol):
    # the kraft presets without a crash (27,139 states for kraft): the
    # engines' agreement is the point here, the crash handling of each preset is test_kraft's;
    # with a crash the three cost about 280 s of CI's 13 minutes
    model = isr(protocol, cr=0 if PROTOCOLS[protocol].split_fetch else 1)
    res = check_parallel(model, workers=2)
    ref = check_bfs(model)
    assert summary(res) == summary(ref)
    assert res.complete and res.distinct_states == ref.distinct_states > 200


def test_known_bug_at_its_shortest():
    res = check_parallel(isr("hw-truncation"), workers=3)
    lengths = {p.name: p.counterexample.length for p in res.violated}
    pinned = {"StrongIsr": 5, "WeakIsr": 5, "NoCommittedLoss": 6, "NoPhantomRead": 7}
    assert {name: lengths.get(name) for name in pinned} == pinned
    assert res.exit_code() == 1


def test_property_filter_and_no_symmetry():
    model = isr("hw-truncation", ep=1)
    props = ["WeakIsr", "StrongIsr"]
    res = check_parallel(model, workers=2, properties=props)
    assert summary(res) == summary(check_bfs(model, properties=props))
    assert res.stop_reason == "all-properties-decided"
    res = check_parallel(model, workers=2, symmetry=False)
    assert summary(res) == summary(check_bfs(model, symmetry=False))


def test_stop_at_first_violation():
    model = isr("hw-truncation")
    full = {p.name: cx_len(p.counterexample) for p in check_bfs(model).violated}
    res = check_parallel(model, workers=2, stop_at_first_violation=True)
    assert res.stop_reason == FIRST_VIOLATION and not res.complete and res.exit_code() == 1
    assert res.violated and all(cx_len(p.counterexample) == 5 for p in res.violated)
    assert {p.name for p in res.violated} <= {n for n, length in full.items() if length == 5}
    assert res.distinct_states < check_bfs(model).distinct_states


def test_limits_end_the_run_incomplete():
    model = isr("kip-320")
    res = check_parallel(model, workers=2, limits=Limits(max_states=100))
    assert not res.complete and res.stop_reason == "max-states" and res.exit_code() == 3
    assert 100 <= res.distinct_states < 1287
    assert all(p.holds is None for p in res.properties if p.kind == "always")
    res = check_parallel(grid(3000), workers=2, limits=Limits(max_seconds=0.3))
    assert not res.complete and res.stop_reason == "max-seconds" and res.exit_code() == 3


def test_checkpoint_then_resume_reaches_the_same_counts(tmp_path):
    model = isr("kip-320")
    cfg = model.config.to_json()
    ref = check_bfs(model, config=cfg)
    d = tmp_path / "ck"
    part = check_parallel(model, workers=2, limits=Limits(max_states=500), checkpoint=str(d))
    assert part.stop_reason == "max-states" and part.exit_code() == 3
    assert sorted(p.name for p in d.iterdir() if p.is_dir()) == [
        f"level-{part.extra['parallel']['levels'][-1]['level']:05d}"
    ]
    # resume with the same number of workers, with more, and with one
    for workers in (2, 3, 1):
        copy = tmp_path / f"resume{workers}"
        shutil.copytree(d, copy)
        res = check_parallel(model, workers=workers, resume=str(copy))
        assert summary(res) == summary(ref)
        assert res.extra["parallel"]["resumed_from_level"] == len(part.extra["parallel"]["levels"])
    # a finished run's checkpoint resumes to the same result at once
    res = check_parallel(model, workers=2, resume=str(tmp_path / "resume2"))
    assert (
        summary(res) == summary(ref) and res.extra["parallel"]["resumed_from_level"] == 16
    )  # 17 before R8


def test_checkpoint_of_another_check_or_altered_is_refused(tmp_path):
    model = isr("kip-320")
    d = tmp_path / "ck"
    check_parallel(
        model, workers=2, limits=Limits(max_states=200), checkpoint=str(d), config={"a": 1}
    )
    with pytest.raises(
        CheckpointError, match=r"another check \(config.a: 1 in the checkpoint, 2 now\)"
    ):
        check_parallel(model, workers=2, resume=str(d), config={"a": 2})
    with pytest.raises(CheckpointError, match="symmetry: True in the checkpoint, False now"):
        check_parallel(model, workers=2, resume=str(d), config={"a": 1}, symmetry=False)
    with pytest.raises(CheckpointError, match="no checkpoint to resume"):
        check_parallel(model, workers=2, resume=str(tmp_path / "nothing"))
    frontier = next(d.glob("level-*/w1-of-2.frontier"))
    data = bytearray(frontier.read_bytes())
    data[-3] ^= 0xFF
    frontier.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match=r"w1-of-2\.frontier does not match its manifest"):
        check_parallel(model, workers=2, resume=str(d), config={"a": 1})
    manifest = json.loads((d / "manifest.json").read_text())
    manifest["files"][0]["path"] = "../../etc/passwd"
    (d / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(CheckpointError, match="outside the checkpoint"):
        check_parallel(model, workers=2, resume=str(d), config={"a": 1})
    assert no_workers_left()


def test_frontier_files_hold_plain_values_only(tmp_path):
    """A frontier file is marshal data of tuples, lists and ints: a value of another type (here a
    float smuggled in, with the manifest's hash updated to match) is refused, not used."""
    import hashlib
    import marshal

    from isr.checker.parallel import checkpoint as ck

    model = isr("kip-320")
    d = tmp_path / "ck"
    check_parallel(model, workers=1, limits=Limits(max_states=50), checkpoint=str(d))
    path = next(d.glob("level-*/w0-of-1.frontier"))
    count, body = ck._read(str(path), ck.FRONTIER_MAGIC)
    names, states = marshal.loads(body[8 * count :])
    assert names and all(n.startswith("isr.spec.state:") for n in names)  # the spec's NamedTuples
    states[0] = [0, 1.5]
    data = ck.HEADER.pack(ck.FRONTIER_MAGIC, count) + body[: 8 * count]
    data += marshal.dumps((names, states), 4)
    path.write_bytes(data)
    manifest = json.loads((d / "manifest.json").read_text())
    for e in manifest["files"]:
        if e["path"].endswith(path.name):
            e["sha256"] = hashlib.sha256(data).hexdigest()
    (d / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(CheckpointError, match="holds a float"):
        check_parallel(model, workers=1, resume=str(d))
    assert no_workers_left()


def test_a_dead_worker_fails_the_run(monkeypatch):
    monkeypatch.setenv("ISR_PARALLEL_KILL", "1:3")
    with pytest.raises(EngineFailure, match=r"worker 1 died \(killed by signal 9\)"):
        check_parallel(isr("kip-320"), workers=2)
    assert no_workers_left()


def test_ctrl_c_returns_partial_statistics():
    calls = []

    def reporter(info: dict) -> None:
        calls.append(info)
        if len(calls) == 3:
            os.kill(os.getpid(), signal.SIGINT)

    reporter.interval = 0.0  # type: ignore[attr-defined]
    before = signal.getsignal(signal.SIGINT)
    res = check_parallel(isr("kip-320"), workers=2, progress=reporter)
    assert res.stop_reason == INTERRUPTED and not res.complete and res.exit_code() == 3
    assert res.depth == 3 and 0 < res.distinct_states < 1287
    assert signal.getsignal(signal.SIGINT) is before
    assert no_workers_left()


def test_checkpoint_and_resume_must_agree(tmp_path):
    with pytest.raises(CheckpointError, match="give --resume DIR alone"):
        check_parallel(grid(2), workers=2, checkpoint=str(tmp_path / "a"), resume=str(tmp_path))
    with pytest.raises(ValueError):
        check_parallel(grid(2), workers=0)
    assert not Path(tmp_path / "a").exists()


def test_the_progress_line_has_an_eta_and_counts_every_process():
    """Issue 30: the parallel engine's progress reports carry a rough ETA once the levels shrink
    (estimated from the states generated so far in the level), and a peak memory summed over
    the workers too (more than one process's)."""
    infos: list[dict] = []

    def report(info: dict) -> None:
        infos.append(info)

    report.interval = 0.0  # type: ignore[attr-defined]
    res = check_parallel(isr("kip-320", ep=3, cr=2), workers=2, progress=report, store="disk")
    assert res.complete and res.distinct_states == 34_618
    assert any(i.get("eta_seconds") is not None for i in infos if not i["final"])
    assert all(i.get("disk_mib") is not None for i in infos)
