"""Workloads on the real cluster: an acks=all produce stream with broker kills, controlled
shutdowns, leader elections and restarts (``isr chaos``, the CI test), and the throughput
benchmark's producer (R6, R9, R15, R17)."""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..core import messages as m
from ..core.messages import TP
from .client import ClusterClient, read_all
from .manager import Cluster, ClusterError
from .story import check_story
from .story import play as play_story

FAULT_KINDS = ("kill", "shutdown", "elect", "preferred")


@dataclass
class Ledger:
    """What the producers were told: acknowledged record ids at their offsets, and failures;
    and the client history of the run (traces/FORMAT.md, "Client history": every send and poll
    as an invoke and its completion, seconds since the ledger was made)."""

    acked: dict[str, tuple[TP, int]] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    history: list[dict[str, Any]] = field(default_factory=list)
    faults: list[dict[str, Any]] = field(default_factory=list)  # {time, event}, the same clock
    t0: float = field(default_factory=time.monotonic)

    def fault(self, event: str, at: float | None = None) -> None:
        """A fault event of the run (``kill 2``, ``restart 2``, ...) at ``at`` (time.monotonic(),
        default now), on the history's clock: the timeline draws them beside the ops."""
        t = time.monotonic() if at is None else at
        self.faults.append({"time": round(t - self.t0, 6), "event": event})

    def op(self, process: str, ty: str, f: str, tp: TP, **kw: Any) -> None:
        t = round(time.monotonic() - self.t0, 6)
        self.history.append(
            {"process": process, "type": ty, "f": f, "partition": tp[1], "time": t, **kw}
        )


async def produce_stream(
    client: ClusterClient,
    tps: list[TP],
    ledger: Ledger,
    stop: asyncio.Event,
    *,
    prefix: str,
    acks: int = -1,
    value: str = "x",
    batch: int = 1,
    retries: int = 30,
    limit: int | None = None,
) -> None:
    i = 0
    while not stop.is_set() and (limit is None or i < limit):
        tp = tps[i % len(tps)]
        recs = [(f"{prefix}-{i + k}", value) for k in range(batch)]
        i += batch
        a = "all" if acks == -1 else str(acks)
        for rid, _v in recs:
            ledger.op(prefix, "invoke", "send", tp, value=rid, acks=a)
        res = await client.produce(tp, recs, acks=acks, retries=retries, backoff_s=0.25)
        if res.error == m.NONE:
            ledger.latencies.append(res.latency_s)
            for k, (rid, _v) in enumerate(recs):
                ledger.acked[rid] = (tp, res.base_offset + k)
                ledger.op(prefix, "ok", "send", tp, value=rid, offset=res.base_offset + k, acks=a)
        else:
            ty = "info" if getattr(res, "maybe_appended", True) else "fail"
            for rid, _v in recs:
                ledger.failed[rid] = res.error
                ledger.op(prefix, ty, "send", tp, value=rid, error=res.error, acks=a)


async def consume_recorded(
    client: ClusterClient, tps: list[TP], ledger: Ledger, idle_rounds: int = 3
) -> dict[tuple[TP, int], str]:
    """``ClusterClient.consume_all`` with every poll in the ledger's history (process
    ``consumer``): ok with its records, the HW it reported and the offset it read from; a
    poll answered with an error, or not at all, fails (it read nothing)."""

    def observe(ty: str, tp: TP, **kw: Any) -> None:
        ledger.op("consumer", ty, "poll", tp, **kw)

    return await read_all(client, tps, idle_rounds, observe)


def history_doc(ledger: Ledger, idempotent: bool) -> dict[str, Any]:
    """The run's client history as one document (traces/FORMAT.md, "Client history")."""
    return {
        "format": "isr-history",
        "version": 1,
        "acks": "all",
        "idempotent": idempotent,
        "source": "isr chaos",
        "faults": ledger.faults,
        "ops": ledger.history,
    }


def verdict(ledger: Ledger, seen: dict[tuple[TP, int], str]) -> dict[str, Any]:
    """Acknowledged records missing from their offset are lost; ids read twice are duplicates."""
    lost = sorted(rid for rid, (tp, off) in ledger.acked.items() if seen.get((tp, off)) != rid)
    counts = Counter(seen.values())
    dups = sorted(rid for rid, n in counts.items() if n > 1)
    return {
        "acknowledged": len(ledger.acked),
        "failed": len(ledger.failed),
        "consumed": len(seen),
        "lost": len(lost),
        "lost_ids": lost[:20],
        "duplicated": len(dups),
        "duplicated_ids": dups[:20],
    }


def tps_of(cluster: Cluster) -> list[TP]:
    return [(cluster.state["topic"], p) for p in range(cluster.state["partitions"])]


async def chaos(
    cluster: Cluster,
    duration_s: float,
    seed: int = 0,
    producers: int = 2,
    kill_every_s: float = 4.0,
    down_for_s: float = 2.0,
    log: Any = None,
    between_steps: bool = False,
    kinds: tuple[str, ...] = ("kill",),
    idempotence: bool = True,
    story: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Produce with acks=all while SIGKILLing and restarting brokers (at most one down at a time,
    so an ISR member survives, R17), then restart everyone, consume everything and compare.
    ``between_steps``: kill between two steps of the broker (``Cluster.kill``), so that the
    traces of the run can be validated (a kill inside a step leaves a torn step).
    ``kinds``: the faults drawn, every ``kill_every_s``: ``kill`` (SIGKILL, restart after
    ``down_for_s``), ``shutdown`` (controlled shutdown, then stop and restart likewise, R9),
    ``elect`` (leadership moved to a random broker, R9) and ``preferred`` (preferred-replica
    election of every partition, R9). ``idempotence``: the producers are idempotent (Kafka
    3.x's default): a retry of a batch the leader holds is dropped, not appended again.
    ``story``: instead of random faults, rounds of a fault schedule on roles (impl/cluster/
    story.py) until ``duration_s`` is over."""
    for k in kinds:
        if k not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {k!r}; choose from {', '.join(FAULT_KINDS)}")
    if story is not None:
        check_story(story)  # before any fault: a story it cannot play is bad input
    rng = random.Random(seed)
    tps = tps_of(cluster)
    client = ClusterClient(cluster.zk_hosts, idempotent=idempotence)
    ledger = Ledger()
    stop = asyncio.Event()
    events: list[str] = []

    def note(event: str) -> None:
        events.append(event)
        ledger.fault(event)

    try:
        await client.refresh()
        tasks = [
            asyncio.create_task(produce_stream(client, tps, ledger, stop, prefix=f"p{k}"))
            for k in range(producers)
        ]
        t_end = time.monotonic() + duration_s
        loop = asyncio.get_running_loop()
        rounds = None
        if story is not None:
            rounds = await play_story(
                cluster,
                story,
                t_end,
                between_steps=between_steps,
                acked=lambda: len(ledger.acked),
                log=log,
            )
            events += [f"story {' '.join(r.log)}" for r in rounds]
            for r in rounds:
                for at, ev in r.events:
                    ledger.fault(ev, at)
        while story is None and time.monotonic() < t_end:
            await asyncio.sleep(min(kill_every_s, max(0.0, t_end - time.monotonic())))
            if time.monotonic() >= t_end:
                break
            kind = rng.choice(kinds)
            victim = rng.choice(cluster.broker_ids())
            if kind in ("elect", "preferred"):
                target = victim if kind == "elect" else None
                try:
                    await loop.run_in_executor(None, cluster.elect_leader, target)
                except ClusterError as e:  # e.g. the controller moved meanwhile
                    note(f"{kind} failed: {e}")
                    continue
                note(f"elect {victim}" if kind == "elect" else "preferred")
                if log:
                    log(f"{events[-1]} ({len(ledger.acked)} acknowledged so far)")
                continue
            if kind == "shutdown":
                try:
                    left = await loop.run_in_executor(None, cluster.controlled_shutdown, victim)
                    note(f"shutdown {victim}")
                    if log:
                        log(f"controlled shutdown of broker {victim}, still leading {left}")
                except ClusterError as e:
                    # as Kafka after its retries: an unclean shutdown (a kill) instead
                    await loop.run_in_executor(None, cluster.kill, victim, between_steps)
                    note(f"kill {victim} (controlled shutdown failed)")
                    if log:
                        log(f"controlled shutdown of broker {victim} failed ({e}); killed")
            else:
                await loop.run_in_executor(None, cluster.kill, victim, between_steps)
                note(f"kill {victim}")
                if log:
                    log(f"killed broker {victim} ({len(ledger.acked)} acknowledged so far)")
            await asyncio.sleep(down_for_s)
            await loop.run_in_executor(None, cluster.restart, victim)
            note(f"restart {victim}")
        stop.set()
        await asyncio.gather(*tasks)
        await loop.run_in_executor(None, cluster.wait_ready, 90.0)
        await client.refresh()
        seen = await consume_recorded(client, tps, ledger)
    finally:
        client.close()
    out = verdict(ledger, seen)
    out["faults"] = events
    if rounds is not None:
        out["story_rounds"] = [r.to_json() for r in rounds]
    out["history"] = history_doc(ledger, idempotence)
    return out


def percentile(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]
