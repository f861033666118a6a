"""The disk store (checker.store, issue 26): the pieces on their own, and the engines that use it
giving the same counts, verdicts and shortest counterexamples as in memory, a disk checkpoint
resumed with any number of workers, and a damaged one refused."""

from __future__ import annotations

import json
import random
import shutil
from array import array

import pytest
from isr.checker.bfs import Limits, check_bfs
from isr.checker.fpset import FingerprintSet
from isr.checker.parallel import CheckpointError, check_parallel
from isr.checker.store import (
    CHUNK,
    DiskParents,
    LevelQueue,
    SearchStore,
    StoreDir,
    TraceWriter,
    visited_from_trace,
)
from isr.spec import Config, IsrSpec

from .test_parallel import summary
from .toys import grid, tokens, with_dec


def isr(protocol: str, r=2, rec=1, ep=2, cr=1) -> IsrSpec:
    return IsrSpec(Config(replicas=r, records=rec, epochs=ep, crashes=cr, protocol=protocol))


def test_fingerprint_set_is_a_set_of_nonzero_ints():
    rng = random.Random(7)
    values = [rng.getrandbits(64) - (1 << 63) or 1 for _ in range(50_000)]
    values += values[:1000]  # duplicates
    fs, ref = FingerprintSet(), set()
    for v in values:
        assert fs.add(v) == (v not in ref)
        ref.add(v)
    assert len(fs) == len(ref) and set(fs) == ref
    assert all(v in fs for v in values[:500]) and 12345 not in fs
    # at most three quarters full, so 8 bytes a slot come to at most 21.4 bytes a state
    assert len(fs) <= fs.nbytes // 8 * 3 // 4 and fs.nbytes / len(fs) < 22


def states_of(model, count: int) -> list:
    """Some distinct canonical states of ``model`` (breadth first)."""
    out, seen = [], set()
    todo = [model.canonicalize(s) for s in model.init_states()]
    while todo and len(out) < count:
        s = todo.pop(0)
        if s in seen:
            continue
        seen.add(s)
        out.append(s)
        todo.extend(model.canonicalize(t) for _, t in model.successors(s))
    return out


def test_level_queue_round_trips_states_in_chunks(tmp_path):
    model = isr("kip-320", ep=3, cr=2)
    states = states_of(model, 2 * CHUNK + 100)
    fps = [hash(s) for s in states]
    q = LevelQueue(tmp_path / "q", model.to_wire, model.from_wire)
    for s, fp in zip(states, fps, strict=True):
        q.append(s, fp)
    assert len(q) == len(states) and (tmp_path / "q").exists()
    # what is taken from the end comes back in order, and the rest is still there
    taken, taken_fps = q.take(CHUNK + 150)
    assert taken == states[-(CHUNK + 150) :] and list(taken_fps) == fps[-(CHUNK + 150) :]
    q.extend(taken[:10], taken_fps[:10])
    got, got_fps = [], []
    for chunk, chunk_fps in q.chunks():
        got += chunk
        got_fps += list(chunk_fps)
    assert got == states[: -(CHUNK + 150)] + taken[:10]
    assert got_fps == [hash(s) for s in got]
    assert type(got[0]) is type(states[0]) and not (tmp_path / "q").exists()


def test_a_sealed_queue_is_read_back_by_another_process(tmp_path):
    model = isr("kip-320")
    states = states_of(model, CHUNK + 5)
    q = LevelQueue(tmp_path / "q", model.to_wire, model.from_wire, keep=True)
    for s in states:
        q.append(s, hash(s))
    q.seal(sync=True)
    q.close()
    again = LevelQueue(tmp_path / "q", model.to_wire, model.from_wire, keep=True)
    again.attach()
    assert len(again) == len(states)
    assert [s for chunk, _ in again.chunks() for s in chunk] == states
    assert (tmp_path / "q").exists()  # kept: a checkpoint's manifest names it


def test_parent_links_on_disk(tmp_path):
    store = StoreDir(tmp_path)
    w = TraceWriter(store, "w0-of-1")
    w.level(0)
    w.fps.append(11)
    w.parents.append(11)
    w.level(1)
    for fp in range(100, 200):
        w.fps.append(fp)
        w.parents.append(11)
    w.level(2)
    w.fps.append(7)
    w.parents.append(150)
    w.close()
    parents = DiskParents(tmp_path)
    assert parents[7] == 150 and parents[150] == 11 and parents[11] == 11
    assert len(parents) == 102
    with pytest.raises(KeyError):
        parents[12345]
    assert set(visited_from_trace(tmp_path, 1)) == {11, *range(100, 200)}
    assert set(visited_from_trace(tmp_path, 2, lambda fp: fp % 2 == 1)) == {
        11,
        7,
        *range(101, 200, 2),
    }


def test_a_temporary_store_is_removed():
    store = SearchStore(isr("kip-320"), "disk")
    root = store.dir.root
    assert root.exists()
    store.cleanup()
    assert not root.exists()
    with pytest.raises(ValueError, match="unknown store 'tape'"):
        SearchStore(isr("kip-320"), "tape")


PINNED = [
    # (protocol, replicas, records, epochs, crashes): distinct states, pinned elsewhere too
    (("kip-320", 2, 1, 2, 1), 2_902),
    (("kip-320", 2, 1, 3, 2), 34_618),
    (("kip-101", 2, 1, 2, 1), 3_432),
    (("hw-truncation", 2, 1, 2, 1), 3_361),
]


@pytest.mark.parametrize(("bounds", "distinct"), PINNED)
def test_bfs_on_disk_matches_memory_exactly(bounds, distinct):
    model = isr(*bounds)
    mem = check_bfs(model)
    disk = check_bfs(model, store="disk")
    assert mem.distinct_states == distinct
    assert summary(disk) == summary(mem)
    # one process, the same order: the very same counterexamples
    for a, b in zip(mem.properties, disk.properties, strict=True):
        cx = a.counterexample
        assert (cx and cx.to_json()) == (b.counterexample and b.counterexample.to_json())
    assert disk.extra["store"] == "disk"


def test_the_known_bug_is_found_on_disk_at_its_shortest():
    res = check_bfs(isr("hw-truncation"), store="disk")
    lengths = {p.name: p.counterexample.length for p in res.properties if p.holds is False}
    assert lengths == {
        "StrongIsr": 5,
        "WeakIsr": 5,
        "NoCommittedLoss": 6,
        "NoPhantomRead": 7,
        "NoAckedLoss": 6,
    }


@pytest.mark.parametrize("toy", [lambda: grid(4), lambda: tokens(3), lambda: with_dec(5)])
def test_toys_without_a_wire_form(toy):
    model = toy()
    assert summary(check_bfs(model, store="disk")) == summary(check_bfs(model))
    assert summary(check_parallel(model, workers=2, store="disk")) == summary(check_bfs(model))


@pytest.mark.parametrize("workers", [1, 2])
def test_parallel_on_disk_matches_bfs(workers, tmp_path):
    model = isr("kip-320", ep=3, cr=2)
    ref = check_bfs(model)
    res = check_parallel(model, workers=workers, store="disk", store_dir=str(tmp_path / "s"))
    assert summary(res) == summary(ref) and res.distinct_states == 34_618
    # the run's files are removed from a directory the user named (no checkpoint to keep)
    assert not (tmp_path / "s").exists()
    bugs = check_parallel(isr("hw-truncation"), workers=workers, store="disk")
    assert summary(bugs) == summary(check_bfs(isr("hw-truncation")))


def test_disk_checkpoint_resumes_with_any_number_of_workers(tmp_path):
    model = isr("kip-320")
    cfg = model.config.to_json()
    ref = check_bfs(model, config=cfg)
    d = tmp_path / "ck"
    part = check_parallel(
        model, workers=2, limits=Limits(max_states=500), checkpoint=str(d), store="disk"
    )
    assert part.stop_reason == "max-states" and part.exit_code() == 3
    manifest = json.loads((d / "manifest.json").read_text())
    assert manifest["store"] == "disk"
    depth = manifest["frontier_depth"]
    # the store is the checkpoint: one queue file per worker at the frontier's depth
    assert sorted(p.name for p in (d / "queue").iterdir()) == [
        f"{depth:05d}-w0-of-2.states",
        f"{depth:05d}-w1-of-2.states",
    ]
    for workers in (2, 3, 1):
        copy = tmp_path / f"resume{workers}"
        shutil.copytree(d, copy)
        res = check_parallel(model, workers=workers, resume=str(copy))
        assert summary(res) == summary(ref), workers
        assert res.extra["parallel"]["resumed_from_level"] == len(part.extra["parallel"]["levels"])
        # the trace files hold every distinct state once, whoever wrote them
        fps = sum(p.stat().st_size // 8 for p in (copy / "trace").glob("*.fps"))
        assert fps == ref.distinct_states
    # a resumed disk run found the known bug at its shortest too
    bug = isr("hw-truncation")
    d2 = tmp_path / "bug"
    check_parallel(bug, workers=2, limits=Limits(max_states=300), checkpoint=str(d2), store="disk")
    assert summary(check_parallel(bug, workers=2, resume=str(d2))) == summary(check_bfs(bug))


def test_a_damaged_disk_checkpoint_is_refused(tmp_path):
    model = isr("kip-320")
    d = tmp_path / "ck"
    check_parallel(model, workers=2, limits=Limits(max_states=500), checkpoint=str(d), store="disk")
    queue = sorted((d / "queue").iterdir())[0]
    queue.write_bytes(queue.read_bytes()[:-3])
    with pytest.raises(CheckpointError, match="does not match its manifest"):
        check_parallel(model, workers=2, resume=str(d))
    queue.unlink()
    with pytest.raises(CheckpointError, match="does not match its manifest"):
        check_parallel(model, workers=2, resume=str(d))


def test_trace_arrays_stay_the_same_objects(tmp_path):
    """Engines hold the trace arrays' bound append methods across flushes."""
    w = TraceWriter(StoreDir(tmp_path), "x")
    w.level(0)
    fps, append = w.fps, w.fps.append
    for i in range(1, 70_000):
        append(i)
        w.parents.append(0)
        w.maybe_flush()
    assert w.fps is fps and isinstance(fps, array)
    w.close()
    assert (tmp_path / "trace" / "00000-x.fps").stat().st_size == 8 * 69_999
