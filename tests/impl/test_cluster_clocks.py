"""Lamport clocks through ZooKeeper (traces/FORMAT.md, "Clocks"), on a real 3-broker cluster.

SIGKILL the leader (the first controller too: both are broker 0 after ``up``) or a follower (the
controller reacting to it is alive) during an acks=all stream, wait until the controller has
taken it out of the ISR, restart it: in the trace merged by Lamport clock every controller
decision the crash caused comes after the crash, the restart comes after the decisions it waited
for, and the validator accepts the run. Without the clock threaded through the coordination
service the controller reacts to the session's end with its own, possibly lower, clock (the
leader's last events are as recent as they get) and the restarted broker starts from its own."""

from __future__ import annotations

import asyncio
import json
import shutil
import time
from pathlib import Path

import pytest
from isr.impl.cluster import zkcoord
from isr.impl.cluster.client import ClusterClient
from isr.impl.cluster.manager import Cluster
from isr.impl.cluster.workload import Ledger, produce_stream
from isr.traces import format as tf
from isr.traces.validator.validate import validate_paths

pytestmark = pytest.mark.zookeeper
TP = ("t", 0)


def _leader_state(cluster: Cluster) -> dict:
    return cluster.describe()["partitions"]["t-0"]["state"]


def _quiet_copy(src: Path, dst: Path, quiet_s: float = 1.0, timeout_s: float = 15.0) -> None:
    """Copy the trace files once none has grown for ``quiet_s`` (an idle cluster records
    nothing), so the copy is a consistent cut of the run."""
    deadline = time.monotonic() + timeout_s
    sizes: dict[str, int] = {}
    stable_since = time.monotonic()
    while time.monotonic() < deadline:
        now = {p.name: p.stat().st_size for p in src.glob("*.ndjson")}
        if now != sizes:
            sizes, stable_since = now, time.monotonic()
        elif time.monotonic() - stable_since >= quiet_s:
            break
        time.sleep(0.1)
    dst.mkdir(parents=True)
    for p in src.glob("*.ndjson"):
        shutil.copy(p, dst / p.name)


def _controller(cluster: Cluster) -> int:
    zk = zkcoord.connect(cluster.zk_hosts)
    try:
        return int(json.loads(zk.get("/controller")[0])["brokerid"])
    finally:
        zk.stop()
        zk.close()


@pytest.mark.parametrize("victim", ["leader", "follower"])
def test_decisions_after_crash_and_restart_after_decisions_in_merged_trace(
    cluster, tmp_path, victim
):
    async def stream_and_kill() -> tuple[int, dict]:
        client = ClusterClient(cluster.zk_hosts)
        ledger = Ledger()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        try:
            await client.refresh()
            old = client.leaders[TP]
            if victim == "follower":
                old = max({0, 1, 2} - {old, _controller(cluster)})
            task = asyncio.create_task(produce_stream(client, [TP], ledger, stop, prefix="r"))
            while len(ledger.acked) < 100:
                await asyncio.sleep(0.02)
                assert not task.done(), "producer stopped early"
            # Killed mid-stream, its last recorded events as recent as they get; between two
            # steps, so that no torn step (a record appended, its trace line not written) makes
            # the validator reject the run for another reason.
            await loop.run_in_executor(None, lambda: cluster.kill(old, between_steps=True))
            deadline = time.monotonic() + 20
            st = await loop.run_in_executor(None, _leader_state, cluster)
            while (old in st["isr"] or st["leader"] == -1) and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
                st = await loop.run_in_executor(None, _leader_state, cluster)
            stop.set()
            await task
            return old, st
        finally:
            client.close()

    old, st = asyncio.run(stream_and_kill())
    assert old not in st["isr"] and st["leader"] not in (old, -1), st
    cluster.restart(old)
    cluster.wait_ready(30.0)
    snap = tmp_path / "traces"
    _quiet_copy(cluster.dir / "traces", snap)

    paths = sorted(snap.glob("*.ndjson"))
    _heads, events = tf.merge_files(paths)
    crash = next(e for e in events if e["action"] == "BrokerCrash")
    assert crash["node"] == old
    restart = [e for e in events if e["action"] == "BrokerRestart" and e["node"] == old]
    assert restart, "the restarted broker recorded no BrokerRestart"
    # time_ms is CLOCK_MONOTONIC, one clock for every process on this machine: it tells which
    # steps really happened after the crash, the Lamport clock must agree.
    decisions = ("ControllerElectLeader", "ControllerShrinkIsr")
    after = [
        e
        for e in events
        if e["action"] in ("ControllerActivate", *decisions, "BrokerBecomeLeader")
        and e["time_ms"] > crash["time_ms"]
    ]
    expect = "ControllerElectLeader" if victim == "leader" else "ControllerShrinkIsr"
    assert any(e["action"] == expect for e in after), after
    for e in after:
        assert e["clock"] > crash["clock"], (e, crash)
    elected = [
        e for e in after if e["action"] in decisions and e["time_ms"] < restart[0]["time_ms"]
    ]
    assert elected, after
    for e in elected:
        assert restart[0]["clock"] > e["clock"], (restart[0], e)
    v = validate_paths(paths, "cluster run")
    assert v.verdict == "accepted", v.to_json()

    # The coordination service's clock covers everything that went through it.
    zk = zkcoord.connect(cluster.zk_hosts)
    try:
        assert zkcoord.read_clock(zk) >= max(e["clock"] for e in elected)
    finally:
        zk.stop()
        zk.close()
