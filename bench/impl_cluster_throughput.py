"""Throughput and produce latency of the reference cluster (issue 5, performance).

Real cluster on loopback: 3 brokers, replication 3, min.insync.replicas 2, 1 KiB records, one
partition by default (one leader does all the work). Several producer coroutines each keep one
request in flight. Reports records/s and p50/p99 produce latency for acks=all and acks=1, then
(with --profile) the hottest functions of the leader broker from cProfile.

    python bench/impl_cluster_throughput.py --duration 10 --concurrency 16 [--batch 1] [--profile]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import pstats
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from isr.impl.cluster.client import ClusterClient
from isr.impl.cluster.manager import Cluster
from isr.impl.cluster.workload import Ledger, percentile, produce_stream, tps_of
from isr.impl.core.config import Config


async def measure(c: Cluster, acks: int, duration: float, conc: int, batch: int, size: int) -> dict:
    client = ClusterClient(c.zk_hosts)
    ledger = Ledger()
    stop = asyncio.Event()
    try:
        await client.refresh()
        tps = tps_of(c)
        # warm-up: connections, first fetch cycles
        await produce_stream(
            client, tps, Ledger(), asyncio.Event(), prefix="w", acks=acks, limit=50
        )
        t0 = time.perf_counter()
        tasks = [
            asyncio.create_task(
                produce_stream(
                    client,
                    tps,
                    ledger,
                    stop,
                    prefix=f"a{acks}-{k}",
                    acks=acks,
                    value="x" * size,
                    batch=batch,
                )
            )
            for k in range(conc)
        ]
        await asyncio.sleep(duration)
        stop.set()
        await asyncio.gather(*tasks)
        elapsed = time.perf_counter() - t0
    finally:
        client.close()
    lat = ledger.latencies
    return {
        "acks": "all" if acks == -1 else str(acks),
        "records": len(ledger.acked),
        "failed": len(ledger.failed),
        "records_per_s": round(len(ledger.acked) / elapsed, 1),
        "MiB_per_s": round(len(ledger.acked) * size / elapsed / (1 << 20), 2),
        "p50_ms": round(percentile(lat, 0.50) * 1000, 2),
        "p99_ms": round(percentile(lat, 0.99) * 1000, 2),
        "requests": len(lat),
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", type=float, default=10.0)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--batch", type=int, default=1, help="records per produce request")
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--partitions", type=int, default=1)
    ap.add_argument("--profile", action="store_true", help="cProfile the brokers")
    ap.add_argument("--json", default="", help="also write the results here")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="isr-bench-"))
    if a.profile:
        os.environ["ISR_BROKER_PROFILE_DIR"] = str(tmp)
    c = Cluster(tmp / "cluster")
    c.up(brokers=3, partitions=a.partitions, replication=3, config=Config(min_insync_replicas=2))
    results = []
    try:
        leader = c.describe()["partitions"]["t-0"]["state"]["leader"]
        for acks in (-1, 1):
            r = asyncio.run(measure(c, acks, a.duration, a.concurrency, a.batch, a.size))
            results.append(r)
            print(json.dumps(r))
    finally:
        c.down()
    info = {
        "machine": f"{platform.machine()} {os.cpu_count()} cpus, {platform.python_implementation()} "
        f"{platform.python_version()}",
        "brokers": 3,
        "replication": 3,
        "record_bytes": a.size,
        "concurrency": a.concurrency,
        "batch": a.batch,
        "partitions": a.partitions,
        "results": results,
    }
    print(json.dumps(info, indent=1))
    if a.json:
        Path(a.json).write_text(json.dumps(info, indent=1))
    if a.profile:
        prof = tmp / f"broker-{leader}.prof"
        if prof.exists():
            print(f"\nleader broker {leader}: top functions by own time")
            pstats.Stats(str(prof)).sort_stats("tottime").print_stats(18)
    return 0


if __name__ == "__main__":
    sys.exit(main())
