"""A real 3-broker cluster with Debian's ZooKeeper: SIGKILL the leader during an acks=all produce
stream; no acknowledged record may be lost (R15, R17). Runs for real: without ZooKeeper installed
it fails with a message saying what to install."""

from __future__ import annotations

import asyncio
import time

import pytest
from isr.impl.cluster.client import ClusterClient
from isr.impl.cluster.workload import (
    Ledger,
    consume_recorded,
    history_doc,
    produce_stream,
    verdict,
)
from isr.traces import format as tf
from isr.traces import history as th

pytestmark = pytest.mark.zookeeper
TP = ("t", 0)


def test_sigkill_leader_during_acks_all_stream_loses_nothing(cluster):
    async def scenario() -> tuple[Ledger, dict, int, int]:
        client = ClusterClient(cluster.zk_hosts)
        ledger = Ledger()
        stop = asyncio.Event()
        try:
            await client.refresh()
            old = client.leaders[TP]
            task = asyncio.create_task(
                produce_stream(client, [TP], ledger, stop, prefix="r", value="v" * 1024)
            )
            while len(ledger.acked) < 200:  # bounded by the stream's own progress
                await asyncio.sleep(0.05)
                assert not task.done(), "producer stopped early"
            before = len(ledger.acked)
            await asyncio.get_running_loop().run_in_executor(None, cluster.kill, old)
            deadline = time.monotonic() + 40
            while len(ledger.acked) < before + 200 and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
            stop.set()
            await task
            await asyncio.get_running_loop().run_in_executor(None, cluster.restart, old)
            await asyncio.get_running_loop().run_in_executor(None, cluster.wait_ready, 60.0)
            await client.refresh()
            seen = await consume_recorded(client, [TP], ledger)
            return ledger, seen, old, before
        finally:
            client.close()

    ledger, seen, old, before = asyncio.run(scenario())
    rep = verdict(ledger, seen)
    assert rep["lost"] == 0, rep
    # the client history of the same run (traces/history.py): valid, every ack read at its offset
    doc = history_doc(ledger, idempotent=True)
    h = th.check(th.parse({k: v for k, v in doc.items() if k != "ops"}, doc["ops"], "run"))
    assert h.valid, h.summary()
    assert h.stats["sends_ok"] == len(ledger.acked) and h.stats["acked_unseen"] == 0
    assert h.stats["distinct_values_read"] == len(seen)
    assert len(ledger.acked) >= before + 200, "no failover: nothing acknowledged after the kill"
    d = cluster.describe()
    assert (
        d["partitions"]["t-0"]["state"]["leader"] != old
        or d["partitions"]["t-0"]["state"]["leader_epoch"] >= 2
    )
    # The traces of all processes are valid and merge into one order by Lamport clock.
    paths = sorted((cluster.dir / "traces").glob("*.ndjson"))
    heads, events = tf.merge_files(paths)
    assert {h["source"] for h in heads} >= {"broker-0", "broker-1", "broker-2", "runtime"}
    for ev in events[:2000]:
        assert tf.validate_line(ev) == [], ev
    actions = {e["action"] for e in events}
    assert {"BrokerCrash", "ControllerElectLeader", "BrokerBecomeLeader", "ProduceAcked"} <= actions
    crash = next(e for e in events if e["action"] == "BrokerCrash")
    assert crash["node"] == old


def test_chaos_history_is_valid(cluster):
    """`isr chaos`'s workload (kills and restarts under an acks=all stream) returns its client
    history; checked as `isr history` does, it is valid and agrees with the run's own count."""
    from isr.impl.cluster.workload import chaos

    rep = asyncio.run(chaos(cluster, 5.0, seed=1, kill_every_s=1.5, down_for_s=1.0))
    assert rep["lost"] == 0, rep
    doc = rep["history"]
    h = th.check(th.parse({k: v for k, v in doc.items() if k != "ops"}, doc["ops"], "chaos"))
    assert h.valid, h.summary()
    assert h.stats["sends_ok"] == rep["acknowledged"] > 0
    assert h.stats["acked_unseen"] == 0 and h.anomalies["lost"].count == 0
