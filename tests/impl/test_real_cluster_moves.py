"""Leadership moved without a crash on a real 3-broker cluster with Debian's ZooKeeper (R9):
during an acks=all stream an operator election moves leadership to broker 1, broker 1 then shuts
down in a controlled way (it asks the controller, which moves leadership off it and out of the
ISR, then it stops), comes back, an operator election moves leadership to broker 2 and a
preferred-replica election gives it back to broker 0. Nothing acknowledged is lost, and the merged traces validate against the spec's
ControllerMoveLeader and ControllerShutdownBroker."""

from __future__ import annotations

import asyncio
import shutil
import time
from pathlib import Path

import pytest
from isr.impl.cluster.client import ClusterClient
from isr.impl.cluster.workload import Ledger, produce_stream, verdict
from isr.traces import format as tf
from isr.traces.validator.validate import validate_paths

pytestmark = pytest.mark.zookeeper
TP = ("t", 0)


def _quiet_copy(src: Path, dst: Path, quiet_s: float = 1.0, timeout_s: float = 15.0) -> None:
    """Copy the trace files once none has grown for ``quiet_s`` (a consistent cut)."""
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


def _leader(cluster) -> dict:
    return cluster.describe()["partitions"]["t-0"]["state"]


def test_elect_and_controlled_shutdown_during_acks_all_stream(cluster, tmp_path):
    async def scenario() -> tuple[Ledger, dict, list, dict, dict]:
        client = ClusterClient(cluster.zk_hosts)
        ledger = Ledger()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()

        async def more(n: int) -> None:
            want = len(ledger.acked) + n
            deadline = time.monotonic() + 30
            while len(ledger.acked) < want and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
                assert not task.done(), "producer stopped early"
            assert len(ledger.acked) >= want, "the stream made no progress"

        try:
            await client.refresh()
            assert client.leaders[TP] == 0
            task = asyncio.create_task(produce_stream(client, [TP], ledger, stop, prefix="r"))
            await more(30)
            await loop.run_in_executor(None, cluster.elect_leader, 1)
            moved = await loop.run_in_executor(None, _leader, cluster)
            await more(30)
            left = await loop.run_in_executor(None, cluster.controlled_shutdown, 1)
            shut = await loop.run_in_executor(None, _leader, cluster)
            await more(30)
            stop.set()
            await task
            await loop.run_in_executor(None, cluster.restart, 1)
            await loop.run_in_executor(None, cluster.wait_ready, 60.0)
            await loop.run_in_executor(None, cluster.elect_leader, 2)
            await loop.run_in_executor(None, cluster.elect_leader, None)
            await client.refresh()
            seen = await client.consume_all([TP])
            return ledger, seen, left, moved, shut
        finally:
            client.close()

    ledger, seen, left, moved, shut = asyncio.run(scenario())
    assert verdict(ledger, seen)["lost"] == 0
    assert moved["leader"] == 1 and moved["leader_epoch"] == 1, moved
    assert left == [] and shut["leader"] != 1 and 1 not in shut["isr"], shut
    assert _leader(cluster)["leader"] == 0  # the preferred replica again

    snap = tmp_path / "traces"
    _quiet_copy(cluster.dir / "traces", snap)
    paths = sorted(snap.glob("*.ndjson"))
    _heads, events = tf.merge_files(paths)
    moves = [e for e in events if e["action"] == "ControllerMoveLeader"]
    assert [e["args"]["leader"] for e in moves] == [1, 2, 0], moves
    (sd,) = [e for e in events if e["action"] == "ControllerShutdownBroker"]
    assert sd["args"]["replica"] == 1 and sd["args"]["leader"] == sd["state"]["coord"]["leader"]
    # the deposed leader 0 was alive: it became a follower of 1 without crashing
    assert any(
        e["action"] == "BrokerBecomeFollower" and e["node"] == 0 and e["args"]["leader"] == 1
        for e in events
    )
    crash = next(e for e in events if e["action"] == "BrokerCrash")
    assert crash["node"] == 1 and crash["clock"] > sd["clock"]
    v = validate_paths(paths, "cluster run with leader moves")
    assert v.verdict == "accepted", v.to_json()


def test_elect_a_just_restarted_broker_and_status_ages(cluster, capsys):
    """issue 30: `cluster elect-leader` right after a restart waited 20 s for an election the
    controller had refused (the broker's registration not yet handled), then printed the raw
    view. The request is asked again while pending; the election lands."""
    from isr.cli.cluster import _print_status

    leader = cluster.describe()["partitions"]["t-0"]["state"]["leader"]
    b = next(x for x in cluster.broker_ids() if x != leader)
    cluster.kill(b, between_steps=True)
    cluster.restart(b)
    cluster.wait_ready(30.0)
    d = cluster.elect_leader(b, partition=0)
    assert d["partitions"]["t-0"]["state"]["leader"] == b
    _print_status(cluster)
    out = capsys.readouterr().out
    assert "as of" in out and " s ago" in out  # each broker's own view says how old it is
