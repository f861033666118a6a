"""An asyncio client for the real cluster: produce with acks and retries, consume below HW, status
(R5, R6, R15). Leaders come from the coordination service (the partition state znodes); a retry
after NotLeader or a time-out re-reads them. A retry after a lost answer can duplicate (R15)."""

from __future__ import annotations

import asyncio
import itertools
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..core import messages as m
from ..core.messages import TP
from . import wire, zkcoord

RETRIABLE = {
    # idempotence (impl/core/producer_state.py): not appended; retried under a new epoch
    # (OUT_OF_ORDER, KIP-360's bump) or with a sequence of the current one
    m.OUT_OF_ORDER_SEQUENCE_NUMBER,
    m.INVALID_PRODUCER_EPOCH,
    m.NOT_LEADER,
    m.NOT_ENOUGH_REPLICAS,
    m.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
    m.REQUEST_TIMED_OUT,
    "DISCONNECTED",
}
# answers proving the leader appended nothing (any other failed attempt may have appended)
NOT_APPENDED = {
    m.NOT_LEADER,
    m.NOT_ENOUGH_REPLICAS,
    m.OUT_OF_ORDER_SEQUENCE_NUMBER,
    m.INVALID_PRODUCER_EPOCH,
}
_ids = itertools.count()


@dataclass
class ProduceResult:
    error: str
    base_offset: int
    attempts: int
    latency_s: float
    # a failed send's records may have been appended all the same: an attempt timed out, lost
    # its connection or was answered NotEnoughReplicasAfterAppend (R6, R15); False: every
    # attempt was refused before the append (the client history's "fail", else "info")
    maybe_appended: bool = False


class _Conn:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.waiting: dict[Any, asyncio.Future[Any]] = {}
        self.task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        while True:
            frame = await wire.read_frame(self.reader)
            if frame is None:
                break
            if "op" in frame:
                fut = self.waiting.pop(("op", frame.get("id")), None)
                if fut and not fut.done():
                    fut.set_result(frame)
                continue
            msg = m.from_wire(frame["msg"])
            fut = self.waiting.pop(msg.correlation_id, None)
            if fut and not fut.done():
                fut.set_result(msg)
        for fut in self.waiting.values():
            if not fut.done():
                fut.set_exception(ConnectionError("connection closed"))
        self.waiting.clear()

    def close(self) -> None:
        self.task.cancel()
        self.writer.close()


class ClusterClient:
    def __init__(
        self, zk_hosts: str, *, request_timeout_s: float = 6.0, idempotent: bool = True
    ) -> None:
        self.zk = zkcoord.connect(zk_hosts)
        self.client_id = f"client-{os.getpid()}-{next(_ids)}"
        # Idempotent producer, on by default as in Kafka 3.x (KIP-98, KIP-679): a producer id
        # and per-partition sequence numbers; a retry resends the same (id, sequence), so a
        # leader that already holds the batch drops it (R15: no duplicates from retries).
        # The id is drawn at random (Kafka's InitProducerId asks the cluster for one), 48 bits:
        # traces carry it, and a trace's integers stay within JSON's exact range (±2^53,
        # traces/FORMAT.md).
        self.producer_id = int.from_bytes(os.urandom(6), "big") if idempotent else -1
        self.sequences: dict[TP, int] = {}
        self.producer_epoch = 0  # KIP-360: bumped after OUT_OF_ORDER_SEQUENCE_NUMBER
        self.timeout = request_timeout_s
        self.conns: dict[int, _Conn] = {}
        self.leaders: dict[TP, int] = {}
        self._corr = itertools.count(1)

    def close(self) -> None:
        for c in self.conns.values():
            c.close()
        self.zk.stop()
        self.zk.close()

    async def refresh(self) -> None:
        loop = asyncio.get_running_loop()
        self.leaders = await loop.run_in_executor(None, zkcoord.leaders, self.zk)

    async def _conn(self, b: int) -> _Conn:
        c = self.conns.get(b)
        if c is not None and not c.task.done():
            return c
        loop = asyncio.get_running_loop()
        addr = await loop.run_in_executor(None, zkcoord.broker_address, self.zk, b)
        if addr is None:
            raise ConnectionError(f"broker {b} not registered")
        r, w = await asyncio.wait_for(asyncio.open_connection(*addr), 2.0)
        other = self.conns.get(b)
        if other is not None and not other.task.done():
            # another send opened one while this one waited: keep that one (replacing it
            # would leave its reader task pending and unreferenced: "Task was destroyed")
            w.close()
            return other
        c = self.conns[b] = _Conn(r, w)
        return c

    async def request(self, b: int, msg: Any) -> Any:
        c = await self._conn(b)
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        c.waiting[msg.correlation_id] = fut
        c.writer.write(wire.encode({"src": self.client_id, "clock": 0, "msg": m.to_wire(msg)}))
        try:
            return await asyncio.wait_for(fut, self.timeout)
        finally:
            c.waiting.pop(msg.correlation_id, None)

    async def produce(
        self,
        tp: TP,
        records: list[tuple[str, str]],
        acks: int = -1,
        retries: int = 3,
        backoff_s: float = 0.2,
    ) -> ProduceResult:
        t0 = time.perf_counter()
        err = m.NOT_LEADER
        maybe = False
        seq = -1
        epoch = self.producer_epoch  # the producer epoch this batch's sequence belongs to
        if self.producer_id >= 0 and acks != 0:
            seq = self.sequences.get(tp, 0)
            self.sequences[tp] = seq + len(records)
        for attempt in range(1, retries + 2):
            leader = self.leaders.get(tp, -1)
            if leader < 0:
                await self.refresh()
                leader = self.leaders.get(tp, -1)
            if leader >= 0:
                req = m.ProduceRequest(
                    self.client_id,
                    next(self._corr),
                    tp[0],
                    tp[1],
                    acks,
                    tuple(records),
                    self.producer_id if seq >= 0 else -1,
                    seq,
                    epoch,
                )
                try:
                    if acks == 0:
                        c = await self._conn(leader)
                        frame = {"src": self.client_id, "clock": 0, "msg": m.to_wire(req)}
                        c.writer.write(wire.encode(frame))
                        return ProduceResult(m.NONE, -1, attempt, time.perf_counter() - t0)
                    resp = await self.request(leader, req)
                    err = resp.error
                    if err == m.NONE:
                        return ProduceResult(
                            err, resp.base_offset, attempt, time.perf_counter() - t0
                        )
                    if (
                        err in (m.OUT_OF_ORDER_SEQUENCE_NUMBER, m.INVALID_PRODUCER_EPOCH)
                        and seq >= 0
                    ):
                        if err == m.OUT_OF_ORDER_SEQUENCE_NUMBER and epoch == self.producer_epoch:
                            # a batch before this one is gone from the log (or was never
                            # appended): a new epoch, every partition's sequences from 0
                            # (KIP-360); once per epoch: a concurrent send's answer of the
                            # same epoch takes the new one as it is
                            self.producer_epoch += 1
                            self.sequences = {}
                        # (a batch's identity is its (epoch, sequence): a new one, of the
                        # current epoch, never one another send of that epoch holds)
                        epoch = self.producer_epoch
                        seq = self.sequences.get(tp, 0)
                        self.sequences[tp] = seq + len(records)
                except (TimeoutError, ConnectionError, OSError):
                    err = "DISCONNECTED"
                maybe = maybe or err not in NOT_APPENDED
            if err not in RETRIABLE:
                break
            await asyncio.sleep(backoff_s)
            await self.refresh()
        return ProduceResult(err, -1, retries + 1, time.perf_counter() - t0, maybe)

    async def consume(self, tp: TP, offset: int, max_records: int = 500) -> m.ConsumeResponse:
        leader = self.leaders.get(tp, -1)
        if leader < 0:
            await self.refresh()
            leader = self.leaders.get(tp, -1)
        req = m.ConsumeRequest(self.client_id, next(self._corr), tp[0], tp[1], offset, max_records)
        return await self.request(leader, req)

    async def consume_all(
        self,
        tps: list[TP],
        idle_rounds: int = 3,
        observe: Callable[..., None] | None = None,
    ) -> dict[tuple[TP, int], str]:
        """Every record below HW of every partition, read from the leaders (R5): ``read_all``."""
        return await read_all(self, tps, idle_rounds, observe)

    async def status(self, b: int) -> dict[str, Any]:
        c = await self._conn(b)
        rid = next(self._corr)
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        c.waiting[("op", rid)] = fut
        c.writer.write(wire.encode({"op": "status", "id": rid}))
        frame = await asyncio.wait_for(fut, self.timeout)
        return frame["status"]


async def read_all(
    client: Any,
    tps: list[TP],
    idle_rounds: int = 3,
    observe: Callable[..., None] | None = None,
) -> dict[tuple[TP, int], str]:
    """Every record below HW of every partition, read from the leaders (R5) by ``client`` (a
    ClusterClient, or anything with its ``consume`` and ``refresh``). ``observe``, if given, is
    told each poll: ``("invoke", tp, from_offset=o)``, then ``("fail", tp, error=e)`` (an error
    answer, or none: it read nothing) or ``("ok", tp, records=[[offset, id, value], ...],
    hw=h, from_offset=o)`` (workload.consume_recorded keeps the client history this way)."""
    seen: dict[tuple[TP, int], str] = {}
    pos = dict.fromkeys(tps, 0)
    idle = 0
    for _ in range(100_000):
        got = 0
        for tp in tps:
            if observe:
                observe("invoke", tp, from_offset=pos[tp])
            try:
                resp = await client.consume(tp, pos[tp])
            except (TimeoutError, ConnectionError, OSError) as e:
                if observe:
                    observe("fail", tp, error=type(e).__name__)
                await asyncio.sleep(0.2)
                await client.refresh()
                continue
            if resp.error != m.NONE:  # (an error answer carries no records)
                if observe:
                    observe("fail", tp, error=resp.error)
                if resp.error == m.NOT_LEADER:
                    await client.refresh()
                continue
            if observe:
                recs = [[resp.base_offset + k, e[1], e[0]] for k, e in enumerate(resp.entries)]
                observe("ok", tp, records=recs, hw=resp.high_watermark, from_offset=pos[tp])
            for i, e in enumerate(resp.entries):
                seen[(tp, resp.base_offset + i)] = e[1]
            pos[tp] += len(resp.entries)
            got += len(resp.entries)
        idle = idle + 1 if got == 0 else 0
        if idle >= idle_rounds:
            break
        if got == 0:
            await asyncio.sleep(0.1)
    return seen
