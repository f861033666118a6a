"""One broker process: ``python -m impl.cluster.broker --id N --port P --dir D --zk HOST:PORT``.

The runtime around the core: an asyncio loop serving TCP on loopback, the durable log, timers,
kazoo for the coordination service (its callbacks hop onto the loop), the controller role when
this broker wins /controller, the trace file and a metrics file. All protocol decisions are the
core's; this module only performs effects and feeds events back.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from kazoo.client import KazooState
from kazoo.exceptions import NodeExistsError

from traces.format import TraceWriter, header, last_clock

from ..config import Config
from ..core import messages as m
from ..core.controller import Controller
from ..core.replica import Broker
from ..storage.log import DurableLog
from . import wire, zkcoord


def now_ms() -> int:
    return int(time.monotonic() * 1000)


class BrokerProcess:
    def __init__(self, a: argparse.Namespace) -> None:
        self.id: int = a.id
        self.port: int = a.port
        self.dir = Path(a.dir)
        self.zk_hosts: str = a.zk
        self.session_timeout_s: float = a.session_timeout
        self.config = Config.from_dict(json.loads(a.config)) if a.config else Config()
        self.trace_dir = Path(a.trace_dir) if a.trace_dir else self.dir / "traces"
        self.metrics_path = Path(a.metrics) if a.metrics else self.dir / "metrics.json"
        self.timers: dict[str, asyncio.TimerHandle] = {}
        self.peers: dict[int, asyncio.Queue[bytes]] = {}
        self.clients: dict[str, asyncio.StreamWriter] = {}
        self.controller: Controller | None = None
        self._stop = asyncio.Event()
        self._last_metrics: tuple[float, dict[str, int]] | None = None
        self.rates: dict[str, float] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self.closing = False
        self.profile_path: str = a.profile
        self.profiler: Any = None
        if a.profile:
            import cProfile

            self.profiler = cProfile.Profile()
            self.profiler.enable()

    # ---- start / stop -------------------------------------------------------------------------
    async def run(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.store = DurableLog(self.dir / "log")
        restored = self.store.recover()
        trace_path = self.trace_dir / f"broker-{self.id}.ndjson"
        clock0 = max(last_clock(trace_path), self._runtime_clock())
        self.core = Broker(self.id, self.config, restored, clock_start=clock0)
        self.trace = TraceWriter(
            trace_path,
            header(
                self.config.protocol,
                f"broker-{self.id}",
                node=self.id,
                config=self.config.to_dict(),
            ),
        )
        server = await asyncio.start_server(self._on_conn, "127.0.0.1", self.port)
        self.zk = await self.loop.run_in_executor(
            None, zkcoord.connect, self.zk_hosts, self.session_timeout_s
        )
        self.zk.add_listener(self._on_zk_state)
        self.apply(self.core.start(now_ms()))
        await self.loop.run_in_executor(None, self._register)
        self.zk.ChildrenWatch("/brokers/ids", self._hop(self._on_live_changed))
        self.zk.DataWatch("/controller", self._hop(self._on_controller_node))
        self.zk.ChildrenWatch("/brokers/topics", self._hop(self._on_topics_changed))
        metrics_task = asyncio.create_task(self._metrics_loop())
        for sig in (signal.SIGTERM, signal.SIGINT):
            self.loop.add_signal_handler(sig, self._stop.set)
        await self._stop.wait()
        # Orderly stop (SIGTERM): leave the coordination service first so the controller moves
        # leadership at once, then close files. Exit without waiting for executor threads.
        self.closing = True
        metrics_task.cancel()
        server.close()
        for h in self.timers.values():
            h.cancel()
        with contextlib.suppress(Exception):
            self.zk.stop()
            self.zk.close()
        self.trace.close()
        self.store.close()
        if self.profiler is not None:
            self.profiler.disable()
            self.profiler.dump_stats(self.profile_path)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)

    def _runtime_clock(self) -> int:
        """The supervisor logs BrokerCrash for us with a clock; continue above it."""
        p = self.trace_dir / "runtime.ndjson"
        if not p.exists():
            return 0
        from traces.format import read

        _h, evs = read(p)
        return max((e["clock"] for e in evs if e.get("node") == self.id), default=0)

    def _register(self) -> None:
        """Ephemeral /brokers/ids/[id]; waits for a previous incarnation's session to expire."""
        data = json.dumps({"host": "127.0.0.1", "port": self.port}).encode()
        deadline = time.monotonic() + 60
        while True:
            try:
                self.zk.create(f"/brokers/ids/{self.id}", data, ephemeral=True)
                return
            except NodeExistsError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def _hop(self, fn: Any) -> Any:
        """A kazoo callback (its own thread) that runs ``fn`` on the loop."""

        def cb(*args: Any) -> None:
            self.loop.call_soon_threadsafe(fn, *args)

        return cb

    def _on_zk_state(self, state: str) -> None:
        if state == KazooState.LOST:
            self.loop.call_soon_threadsafe(self._session_lost)

    def _session_lost(self) -> None:
        self.controller = None  # our /controller node is gone with the session
        self.loop.run_in_executor(None, self._register_after_loss)

    def _register_after_loss(self) -> None:
        for _ in range(300):
            if self.zk.state == KazooState.CONNECTED:
                self._register()
                self.loop.call_soon_threadsafe(self._try_controller)
                return
            time.sleep(0.1)

    # ---- coordination events ------------------------------------------------------------------
    def _on_live_changed(self, children: list[str]) -> None:
        live = {int(c) for c in children}
        if self.controller is not None:
            self.apply(self.controller.on_brokers_changed(now_ms(), live))

    def _on_controller_node(self, data: bytes | None, *_rest: Any) -> None:
        if data is None:
            self._try_controller()

    def _on_topics_changed(self, _children: list[str]) -> None:
        if self.controller is None:
            return

        def read() -> Any:
            return zkcoord.assignments(self.zk)

        fut = self.loop.run_in_executor(None, read)
        fut.add_done_callback(lambda f: self._controller_call("topics", f))

    def _try_controller(self) -> None:
        def elect() -> Any:
            epoch = zkcoord.try_become_controller(self.zk, self.id)
            if epoch is None:
                return None
            live = zkcoord.live_brokers(self.zk)
            asg = zkcoord.assignments(self.zk)
            return epoch, live, asg, zkcoord.states(self.zk, list(asg))

        fut = self.loop.run_in_executor(None, elect)
        fut.add_done_callback(lambda f: self._controller_call("activate", f))

    def _controller_call(self, what: str, fut: asyncio.Future[Any]) -> None:
        if fut.cancelled() or fut.exception() is not None:
            print(f"broker {self.id}: controller {what} failed: {fut.exception()}", file=sys.stderr)
            return
        res = fut.result()
        if what == "activate":
            if res is None:
                return
            epoch, live, asg, states = res
            self.controller = Controller(self.id, self.config, epoch, self.core.clock)
            self.apply(self.controller.activate(now_ms(), live, asg, states))
        elif self.controller is None:
            return
        elif what == "topics":
            self.apply(self.controller.on_topics_changed(now_ms(), res))
        elif what == "resync":
            self.apply(self.controller.on_resync(now_ms(), res))

    # ---- effects ------------------------------------------------------------------------------
    def apply(self, effects: list[Any], source: str = "broker") -> None:
        if self.closing:
            return
        cas_broker: list[m.CasWrite] = []
        cas_ctrl: list[m.CasWrite] = []
        for e in effects:
            if isinstance(e, m.Send):
                self._send(e.dst, e.msg)
            elif isinstance(e, m.SetTimer):
                old = self.timers.pop(e.key, None)
                if old is not None:
                    old.cancel()
                self.timers[e.key] = self.loop.call_later(e.delay_ms / 1000, self._fire, e.key)
            elif isinstance(e, m.Trace):
                self.trace.write(e.event)
            elif isinstance(e, m.CasWrite):
                (cas_broker if e.purpose == "isr" else cas_ctrl).append(e)
            else:
                self.store.apply(e)
        for batch, target in ((cas_broker, "broker"), (cas_ctrl, "controller")):
            if batch:
                fut = self.loop.run_in_executor(
                    None, lambda b=batch: [zkcoord.cas(self.zk, w) for w in b]
                )
                fut.add_done_callback(lambda f, t=target: self._cas_done(t, f))

    def _cas_done(self, target: str, fut: asyncio.Future[Any]) -> None:
        # If the coordination service was unreachable nothing was written; the core retries.
        failed = fut.cancelled() or fut.exception() is not None
        res = [] if failed else fut.result()
        if target == "broker":
            if res:
                self.apply(self.core.on_cas_results(res, now_ms()))
            else:
                for p in self.core.partitions.values():
                    p.pending_isr = None
        elif self.controller is not None:
            self.apply(self.controller.on_cas_results(now_ms(), res))

    def _fire(self, key: str) -> None:
        self.timers.pop(key, None)
        if key == "resync":
            if self.controller is None:
                return
            tps = list(self.controller.assignments)
            fut = self.loop.run_in_executor(None, zkcoord.states, self.zk, tps)
            fut.add_done_callback(lambda f: self._controller_call("resync", f))
            return
        self.apply(self.core.on_timer(key, now_ms()))

    def _send(self, dst: int | str, msg: Any) -> None:
        frame = {"src": self.id, "clock": self.core.clock.value, "msg": m.to_wire(msg)}
        if dst == self.id:
            self.loop.call_soon(self._deliver, self.id, msg, frame["clock"])
        elif isinstance(dst, str):
            w = self.clients.get(dst)
            if w is not None and not w.is_closing():
                w.write(wire.encode(frame))
        else:
            q = self.peers.get(dst)
            if q is None:
                q = self.peers[dst] = asyncio.Queue(maxsize=10_000)
                self._tasks.append(asyncio.create_task(self._peer_sender(dst, q)))
            if q.full():
                return  # a dead peer's backlog: drop (the core times out and retries)
            q.put_nowait(wire.encode(frame))

    async def _peer_sender(self, b: int, q: asyncio.Queue[bytes]) -> None:
        """One outgoing connection per peer. The peer never writes on it, so end-of-file means it
        died: reconnect (to its next incarnation) instead of writing into a dead socket.
        Messages queued while it is down are dropped, like a lossy network (R8)."""
        while not self._stop.is_set():
            addr = await self.loop.run_in_executor(None, zkcoord.broker_address, self.zk, b)
            conn = None
            if addr is not None:
                with contextlib.suppress(OSError):
                    conn = await asyncio.open_connection(*addr)
            if conn is None:
                while not q.empty():
                    q.get_nowait()
                await asyncio.sleep(0.2)
                continue
            reader, writer = conn
            eof = asyncio.create_task(reader.read())
            try:
                while True:
                    get = asyncio.create_task(q.get())
                    await asyncio.wait({get, eof}, return_when=asyncio.FIRST_COMPLETED)
                    if eof.done():
                        get.cancel()
                        break
                    writer.write(get.result())
                    if q.empty():
                        await writer.drain()
            except (ConnectionError, OSError):
                pass
            eof.cancel()
            writer.close()
            await asyncio.sleep(0.05)

    # ---- incoming -----------------------------------------------------------------------------
    async def _on_conn(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                frame = await wire.read_frame(reader)
                if frame is None:
                    break
                if "op" in frame:
                    writer.write(wire.encode(self._runtime_op(frame)))
                    continue
                src = frame["src"]
                if isinstance(src, str):
                    self.clients[src] = writer
                self._deliver(src, m.from_wire(frame["msg"]), int(frame.get("clock", 0)))
        finally:
            writer.close()

    def _deliver(self, src: int | str, msg: Any, clock: int) -> None:
        self.apply(self.core.on_message(src, msg, clock, now_ms()))

    def _runtime_op(self, frame: dict[str, Any]) -> dict[str, Any]:
        if frame["op"] == "status":
            return {"op": "status", "id": frame.get("id"), "status": self.status()}
        return {"op": "error", "id": frame.get("id"), "error": f"unknown op {frame['op']!r}"}

    # ---- metrics (issue 5 item 6) -------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        return {
            "broker": self.id,
            "pid": os.getpid(),
            "controller": self.controller is not None,
            "partitions": self.core.describe(),
            "metrics": self.core.metrics_view(),
            "rates_per_s": self.rates,
        }

    async def _metrics_loop(self) -> None:
        while True:
            t = time.monotonic()
            cur = dict(self.core.metrics)
            if self._last_metrics is not None:
                t0, old = self._last_metrics
                dt = max(t - t0, 1e-6)
                self.rates = {
                    k: round((cur[k] - old.get(k, 0)) / dt, 1)
                    for k in (
                        "produce_records",
                        "fetch_requests",
                        "fetched_records",
                        "consumer_fetches",
                    )
                }
            self._last_metrics = (t, cur)
            tmp = self.metrics_path.with_suffix(".tmp")
            tmp.write_text(json.dumps(self.status()))
            os.replace(tmp, self.metrics_path)
            await asyncio.sleep(1.0)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m impl.cluster.broker")
    p.add_argument("--id", type=int, required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("--zk", required=True)
    p.add_argument("--config", default="")
    p.add_argument("--session-timeout", type=float, default=3.0)
    p.add_argument("--trace-dir", default="")
    p.add_argument("--metrics", default="")
    p.add_argument("--profile", default="", help="write cProfile stats here on exit")
    a = p.parse_args(argv)
    asyncio.run(BrokerProcess(a).run())
    return 0


if __name__ == "__main__":
    sys.exit(main())
