"""One broker process: ``python -m isr.impl.cluster.broker --id N --port P --dir D --zk HOST:PORT``.

The runtime around the core: an asyncio loop serving TCP on loopback, the durable log, timers,
kazoo for the coordination service (its callbacks hop onto the loop), the controller role when
this broker wins /controller, the trace file and a metrics file. All protocol decisions are the
core's; this module only performs effects and feeds events back.

Lamport clocks through ZooKeeper (traces/FORMAT.md, "Clocks"): /isr/clock is raised before every
write others react to (registration, each compare-and-set, by enough to cover the events that
record the write) and merged after every read this broker acts on (watches, the controller's
reads, a lost compare-and-set). While a write is in flight the core is held: its inputs wait in
a backlog, so no other step takes a clock between the write and the events that record it.
A (re)started process registers, then starts its core (R13 recovery, BrokerRestart) at the
controller's first request to the new registration, so the restart follows whatever the
controller decided while it was away; requests that arrive before it registered were meant for
the previous incarnation and are dropped. As controller it tells a restarted broker by the czxid
of its registration (a bounce: what it led is re-elected, not resumed).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import signal
import sys
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from isr.traces.format import TraceWriter, header, last_clock
from kazoo.client import KazooState
from kazoo.exceptions import NodeExistsError

from ..core import messages as m
from ..core.config import Config
from ..core.controller import Controller
from ..core.replica import Broker
from ..storage.log import DurableLog
from . import wire, zkcoord

# A registered broker that no controller spoke to (it hosts nothing) starts anyway after this.
START_FALLBACK_S = 30.0
log = logging.getLogger("isr.broker")


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
        self.timers: dict[str, tuple[asyncio.TimerHandle, object]] = {}
        self.peers: dict[int, asyncio.Queue[bytes]] = {}
        self.clients: dict[str, asyncio.StreamWriter] = {}
        self.controller: Controller | None = None
        # only members speak (issue 17): the cluster's secret signs frames, owns ZooKeeper nodes
        self.key = wire.load_secret(a.secret_file)
        self._warned: set[tuple[Any, ...]] = set()
        self._zk_controller_epoch = 0
        self._stop = asyncio.Event()
        self._last_metrics: tuple[float, dict[str, int]] | None = None
        self.rates: dict[str, float] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self.closing = False
        # Held (``_busy``) while a coordination write is in flight and until the core started:
        # the core's inputs queue in ``_backlog``, the writes in ``_ops``, one at a time.
        self._busy = True
        self.registered = False  # /brokers/ids/[id] is ours (this process, this session)
        self.started = False  # the core started (BrokerRestart recorded)
        self._czxids: dict[int, int] = {}  # as a controller: registrations last seen (czxid)
        self._my_czxid: int | None = None  # our own registration's czxid (this session)
        self._shutdown_waiters: dict[int, asyncio.Future[m.ControlledShutdownResponse]] = {}
        self._shutdown_corr = 0
        self._backlog: deque[tuple[Callable[..., None], tuple[Any, ...]]] = deque()
        self._ops: deque[tuple[Callable[[int], Any], Callable[[asyncio.Future[Any]], None]]] = (
            deque()
        )
        self.profile_path: str = a.profile
        self.profiler: Any = None
        if a.profile:
            import cProfile

            self.profiler = cProfile.Profile()
            self.profiler.enable()

    # ---- start / stop -------------------------------------------------------------------------
    async def run(self) -> None:
        self.loop = asyncio.get_running_loop()
        # The supervisor's "crash between two steps" (Cluster.kill(between_steps=True)).
        self.loop.add_signal_handler(signal.SIGUSR1, self._run_early, self._freeze)
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
            None, zkcoord.connect, self.zk_hosts, self.session_timeout_s, self.key
        )
        self.zk.add_listener(self._on_zk_state)
        # Register once a previous incarnation's session is gone (with the coordination service's
        # clock, published before the registration). The core starts (BrokerRestart) at the
        # controller's first request to this registration, a Lamport receive: after whatever the
        # controller decided while we were away, even on a view read before we registered. Or
        # when this broker becomes the controller (its activation reads the service's clock).
        z = await self.loop.run_in_executor(None, self._wait_for_id)
        self._sync_in(z)
        await self.loop.run_in_executor(None, self._register, self.core.clock.value)
        self.registered = True
        self.zk.DataWatch("/controller", self._hop_early(self._on_controller_node))
        self.loop.call_later(START_FALLBACK_S, self._start_core, None)
        metrics_task = asyncio.create_task(self._metrics_loop())
        for sig in (signal.SIGTERM, signal.SIGINT):
            self.loop.add_signal_handler(sig, self._stop.set)
        await self._stop.wait()
        # Orderly stop (SIGTERM): leave the coordination service first so the controller moves
        # leadership at once, then close files. Exit without waiting for executor threads.
        self.closing = True
        metrics_task.cancel()
        server.close()
        for h, _tok in self.timers.values():
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
        from isr.traces.format import read

        _h, evs = read(p)
        return max((e["clock"] for e in evs if e.get("node") == self.id), default=0)

    def _wait_for_id(self) -> int:
        """Until /brokers/ids/[id] is free (a previous incarnation's session expired); then the
        coordination service's clock, read after everything that ended that session."""
        deadline = time.monotonic() + 60
        while self.zk.exists(f"/brokers/ids/{self.id}") is not None:
            if time.monotonic() > deadline:
                raise RuntimeError(f"/brokers/ids/{self.id} still held after 60 s")
            time.sleep(0.1)
        return zkcoord.read_clock(self.zk)

    def _register(self, clock: int) -> None:
        """Publish ``clock`` (our steps so far), then the ephemeral /brokers/ids/[id]."""
        zkcoord.raise_clock(self.zk, clock)
        # ``restart``: this process has not started its core yet (a restarted broker, not a
        # running one back in a new session): a controller that sees it re-registered without
        # having seen it leave handles that bounce as a failure, then a startup.
        reg = {"host": "127.0.0.1", "port": self.port, "restart": not self.started}
        data = json.dumps(reg).encode()
        while True:
            try:
                path = self.zk.create(f"/brokers/ids/{self.id}", data, ephemeral=True)
                st = self.zk.exists(path)
                self._my_czxid = st.czxid if st is not None else None
                return
            except NodeExistsError:
                self._wait_for_id()

    def _start_core(self, clock: int | None, release: bool = True) -> None:
        """R13 recovery and BrokerRestart (``clock``: of the controller request that starts us,
        or our own activation's read of /isr/clock), then the other coordination watches."""
        if self.started or self.closing:
            return
        if clock is None:
            print(
                f"broker {self.id}: no controller request in {START_FALLBACK_S}s", file=sys.stderr
            )
        self.started = True
        self._sync_in(clock)
        self.apply(self.core.start(now_ms()))
        self.zk.ChildrenWatch("/brokers/ids", self._on_membership)
        self.zk.ChildrenWatch("/brokers/topics", self._hop(self._on_topics_changed))
        if release:
            self._release()

    def _freeze(self) -> None:
        """Stop this process between two steps, no coordination write in flight (it runs through
        the hold); the supervisor then SIGKILLs it."""
        sys.stdout.flush()
        sys.stderr.flush()
        os.kill(os.getpid(), signal.SIGSTOP)

    # ---- the hold: core inputs wait while a coordination write is in flight -------------------
    def _run(self, fn: Callable[..., None], *args: Any) -> None:
        """Every input of the core and the controller goes through here."""
        if self._busy or self._backlog:
            self._backlog.append((fn, args))
        else:
            fn(*args)

    def _submit(
        self, work: Callable[[int], Any], done: Callable[[asyncio.Future[Any]], None]
    ) -> None:
        """A coordination write: ``work(clock)`` runs in a thread with the core held (``clock``
        is the core's clock at the start), then ``done(future)`` on the loop, still held."""
        self._ops.append((work, done))
        self._pump()

    def _pump(self) -> None:
        if self._busy or not self._ops or self.closing:
            return
        work, done = self._ops.popleft()
        self._busy = True
        fut = self.loop.run_in_executor(None, work, self.core.clock.value)
        fut.add_done_callback(lambda f: self._op_done(done, f))

    def _op_done(self, done: Callable[[asyncio.Future[Any]], None], f: asyncio.Future[Any]) -> None:
        try:
            done(f)
        finally:
            self._release()

    def _release(self) -> None:
        self._busy = False
        self._pump()
        while self._backlog and not self._busy:
            fn, args = self._backlog.popleft()
            fn(*args)

    # ---- Lamport clock through the coordination service ---------------------------------------
    def _sync_in(self, z: int | None) -> None:
        """A read of the coordination service: the next step's clock exceeds ``z``."""
        if z is not None and z > self.core.clock.value:
            self.core.clock.value = z

    def _read_clock(self) -> int | None:
        try:
            return zkcoord.read_clock(self.zk)
        except Exception as e:  # unreachable: the read it follows failed or will
            print(f"broker {self.id}: reading /isr/clock failed: {e!r}", file=sys.stderr)
            return None

    def _hop(self, fn: Any) -> Any:
        """A kazoo callback (its own thread) that runs ``fn`` on the loop."""

        def cb(*args: Any) -> None:
            self.loop.call_soon_threadsafe(self._run, fn, *args)

        return cb

    def _run_early(self, fn: Callable[..., None], *args: Any) -> None:
        """Before the core started there is nothing to hold: run at once (the /controller watch,
        a freeze); afterwards through the hold."""
        if self.started:
            self._run(fn, *args)
        else:
            fn(*args)

    def _hop_early(self, fn: Any) -> Any:
        def cb(*args: Any) -> None:
            self.loop.call_soon_threadsafe(self._run_early, fn, *args)

        return cb

    def _synced(self, z: int | None, fn: Callable[..., None], *args: Any) -> None:
        self._sync_in(z)
        fn(*args)

    def _on_zk_state(self, state: str) -> None:
        if state == KazooState.LOST:
            self.loop.call_soon_threadsafe(self._session_lost)

    def _session_lost(self) -> None:
        self.controller = None  # our /controller node is gone with the session
        self.registered = False
        fut = self.loop.run_in_executor(None, self._wait_connected)
        fut.add_done_callback(lambda f: self._run(self._rejoin, f))

    def _wait_connected(self) -> bool:
        for _ in range(300):
            if self.zk.state == KazooState.CONNECTED:
                return True
            time.sleep(0.1)
        return False

    def _rejoin(self, f: asyncio.Future[bool]) -> None:
        if f.cancelled() or f.exception() is not None or not f.result():
            print(f"broker {self.id}: no new ZooKeeper session", file=sys.stderr)
            return

        def work(clock: int) -> int | None:
            z = self._wait_for_id()
            self._register(max(clock, z))
            return z

        def done(fut: asyncio.Future[int | None]) -> None:
            if fut.cancelled() or fut.exception() is not None:
                print(
                    f"broker {self.id}: re-registering failed: {fut.exception()}", file=sys.stderr
                )
                return
            self.registered = True
            self._sync_in(fut.result())
            self._try_controller()

        self._submit(work, done)

    # ---- coordination events ------------------------------------------------------------------
    def _on_membership(self, _children: list[str] | None = None) -> None:
        """The /brokers/ids watch (kazoo's thread): the registrations with their czxids, then
        /isr/clock (after them: it covers a crash or registration the change shows), merged on
        the loop before the controller acts. Also read once a controller is activated: a change
        while its activation was on the way found no controller to tell."""
        try:
            czx: dict[int, int] | None = zkcoord.broker_czxids(self.zk)
            restarts = zkcoord.restarted_brokers(self.zk, czx)
        except Exception as e:
            print(f"broker {self.id}: reading /brokers/ids failed: {e!r}", file=sys.stderr)
            czx, restarts = None, set()
        z = self._read_clock()
        self.loop.call_soon_threadsafe(
            self._run, self._synced, z, self._on_live_changed, czx, restarts
        )

    def _on_live_changed(self, czx: dict[int, int] | None, restarts: set[int]) -> None:
        if self.controller is None or czx is None:
            return
        # A broker registered again since we last looked, its leaving unseen (a bounce). A
        # restarted process is handled as a failure, then a startup: it starts its core at the
        # first request, which comes after that handling, so the run is one where this
        # controller saw it leave first (KIP-380's handling; for 0.11-2.1 the run with the
        # failure seen, the one Kafka's NODEEXISTS registration makes likely). A running broker
        # back in a new session keeps the missed-bounce handling: what it led is re-elected.
        bounced = sorted(b for b, z in czx.items() if self._czxids.get(b, z) != z)
        self._czxids = czx
        for b in bounced:
            self.apply(self.controller.on_broker_bounced(now_ms(), b, as_failure=b in restarts))
        self.apply(self.controller.on_brokers_changed(now_ms(), set(czx)))

    def _on_controller_node(self, data: bytes | None, *_rest: Any) -> None:
        if data is None:
            self._try_controller()

    def _on_topics_changed(self, _children: list[str]) -> None:
        if self.controller is None:
            return
        self._controller_read("topics", lambda: zkcoord.assignments(self.zk))

    def _try_controller(self) -> None:
        def elect() -> Any:
            epoch = zkcoord.try_become_controller(self.zk, self.id)
            if epoch is None:
                return None
            czx = zkcoord.broker_czxids(self.zk)
            asg = zkcoord.assignments(self.zk)
            states = zkcoord.states(self.zk, list(asg))
            return epoch, czx, asg, states, zkcoord.bounced_leaders(self.zk, list(asg), czx)

        self._controller_read("activate", elect)

    def _controller_read(self, what: str, read: Callable[[], Any]) -> None:
        """The controller reads the coordination service in a thread, then /isr/clock (after the
        data: it covers every write the data shows), and acts on the loop (``_controller_call``)."""

        def work() -> tuple[Any, int | None]:
            res = read()
            return res, (None if res is None else zkcoord.read_clock(self.zk))

        fut = self.loop.run_in_executor(None, work)
        fut.add_done_callback(lambda f: self._run_early(self._controller_call, what, f))

    def _controller_call(self, what: str, fut: asyncio.Future[Any]) -> None:
        if fut.cancelled() or fut.exception() is not None:
            print(f"broker {self.id}: controller {what} failed: {fut.exception()}", file=sys.stderr)
            return
        res, z = fut.result()
        self._sync_in(z)
        if what == "activate":
            if res is None:
                return
            epoch, czx, asg, states, bounced = res
            early = not self.started
            if early:  # elected before any controller spoke to us: we start now
                self._start_core(z, release=False)
            self.controller = Controller(self.id, self.config, epoch, self.core.clock)
            self._czxids = czx
            self.apply(
                self.controller.activate(now_ms(), set(czx), asg, states, frozenset(bounced))
            )
            if early:
                self._release()
            # Changes while the activation was on the way found no controller: look again.
            self.loop.run_in_executor(None, self._on_membership)
            self._on_topics_changed([])
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
        for e in effects:
            if isinstance(e, m.Send):
                self._send(e.dst, e.msg)
            elif isinstance(e, m.SetTimer):
                old = self.timers.pop(e.key, None)
                if old is not None:
                    old[0].cancel()
                tok = object()
                h = self.loop.call_later(e.delay_ms / 1000, self._run, self._fire, e.key, tok)
                self.timers[e.key] = (h, tok)
            elif isinstance(e, m.Trace):
                self.trace.write(e.event)
            elif isinstance(e, m.CasWrite):
                self._submit_cas(e)
            else:
                self.store.apply(e)

    def _submit_cas(self, w: m.CasWrite) -> None:
        """One compare-and-set, the core held from before it until its result is handled. The
        events recording the write (LeaderShrinkIsr, ControllerElectLeader ...) are traced when
        the result comes back, so /isr/clock is first raised past the clocks they will take:
        whoever reads the write reads a higher clock (traces/FORMAT.md, "Clocks")."""
        reserve = self._reserve(w)

        def work(clock: int) -> tuple[m.CasResult, int | None]:
            zkcoord.raise_clock(self.zk, clock + reserve)
            res = zkcoord.cas(self.zk, w)
            return res, self._read_clock()

        self._submit(work, lambda f: self._cas_done(w, f))

    def _reserve(self, w: m.CasWrite) -> int:
        """Clocks the events recording one result can take: one per replica at most (an ISR
        change per follower, a ControllerShrinkIsr per removed replica) or one (an election, a
        conflict), each possibly followed by a BrokerFlush."""
        if w.purpose == "isr":
            p = self.core.partitions.get(w.tp)
            n = len(getattr(p, "replicas", ()) or ())
        else:
            n = len(self.controller.assignments.get(w.tp, ())) if self.controller else 0
        return 2 * (max(n, len(w.state.isr)) + 1)

    def _cas_done(self, w: m.CasWrite, fut: asyncio.Future[Any]) -> None:
        if fut.cancelled() or fut.exception() is not None:
            # The coordination service was unreachable: taken as not written; the core retries.
            if w.purpose == "isr":
                p = self.core.partitions.get(w.tp)
                if p is not None:
                    p.pending_isr = None
            elif self.controller is not None:
                self.controller.in_flight.discard(w.tp)  # repaired again at the next resync
            return
        res, z = fut.result()
        if not res.ok:
            self._sync_in(z)  # lost: the answer is a read of the write that won
        if w.purpose == "isr":
            self.apply(self.core.on_cas_results([res], now_ms()))
        elif self.controller is not None:
            self.apply(self.controller.on_cas_results(now_ms(), [res]))
        self._sync_in(z)  # after the events recording our write, which stay within the reserve

    def _fire(self, key: str, tok: object) -> None:
        cur = self.timers.get(key)
        if cur is None or cur[1] is not tok:
            return  # replaced or cancelled while it waited in the backlog
        del self.timers[key]
        if key == "resync":
            if self.controller is None:
                return
            tps = list(self.controller.assignments)
            self._controller_read("resync", lambda: zkcoord.states(self.zk, tps))
            return
        self.apply(self.core.on_timer(key, now_ms()))

    def _send(self, dst: int | str, msg: Any) -> None:
        frame = {"src": self.id, "clock": self.core.clock.value, "msg": m.to_wire(msg)}
        if isinstance(msg, (m.LeaderAndIsr, m.StopReplica)) and dst in self._czxids:
            # the registration it is meant for: Kafka's request goes down the connection to that
            # process, which a restarted broker does not share (dropped there otherwise)
            frame["to"] = self._czxids[dst]
        if dst == self.id:
            self.loop.call_soon(self._run, self._deliver, self.id, msg, frame["clock"])
        elif isinstance(dst, str):
            w = self.clients.get(dst)
            if w is not None and not w.is_closing():
                w.write(wire.encode(frame, self.key))
        else:
            q = self.peers.get(dst)
            if q is None:
                q = self.peers[dst] = asyncio.Queue(maxsize=10_000)
                self._tasks.append(asyncio.create_task(self._peer_sender(dst, q)))
            if q.full():
                return  # a dead peer's backlog: drop (the core times out and retries)
            q.put_nowait(wire.encode(frame, self.key))

    async def _peer_sender(self, b: int, q: asyncio.Queue[bytes]) -> None:
        """One outgoing connection per peer. The peer never writes on it, so end-of-file means it
        died: reconnect (to its next incarnation) instead of writing into a dead socket.
        Messages queued while it is down are dropped, like a lossy network (R8)."""
        while not self._stop.is_set():
            try:
                addr = await self.loop.run_in_executor(None, zkcoord.broker_address, self.zk, b)
            except Exception:  # a session expired or lost under us (a pause)
                # kazoo raises SessionExpiredError / ConnectionLoss while the session is being
                # replaced; the task must outlive it, or every later message to this peer waits
                # in a queue nobody reads (a broker paused past its session never fetched again)
                addr = None
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
    def _warn_once(self, key: tuple[Any, ...], text: str) -> None:
        """One log line per kind of rejected input and peer (issue 17: a flood of bad frames
        must not flood the log, and never leaves a traceback)."""
        if key not in self._warned and len(self._warned) < 10_000:
            self._warned.add(key)
            log.warning("%s", text)

    async def _controller_epoch_ok(self, msg: m.LeaderAndIsr | m.StopReplica) -> bool:
        """A control request's controller epoch is checked against the one ZooKeeper records
        (R9), never trusted from the frame: a request claiming a newer epoch than any
        controller was elected with is forged, and must not make this broker ignore the real
        controller from then on (issue 17)."""
        ce = msg.controller_epoch
        if ce <= self._zk_controller_epoch:
            return True
        got = await self.loop.run_in_executor(None, zkcoord.read_controller_epoch, self.zk)
        self._zk_controller_epoch = max(self._zk_controller_epoch, got)
        return ce <= self._zk_controller_epoch

    async def _on_conn(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        host = peer[0] if isinstance(peer, tuple) and peer else "?"
        try:
            while True:
                try:
                    frame = await wire.read_frame(reader)
                except wire.BadFrame as e:
                    self._warn_once(("malformed", host), f"malformed frame from {peer}: {e}")
                    break  # the stream cannot be trusted past it: close the connection
                if frame is None:
                    break
                if "op" in frame:
                    if frame["op"] in ("shutdown", "elect_leader") and not wire.verify(
                        frame, self.key
                    ):
                        self._warn_once(
                            ("op", frame["op"]), f"unauthenticated {frame['op']!r} op dropped"
                        )
                        continue
                    if frame["op"] == "shutdown":  # answered when the controller has answered
                        self._tasks.append(asyncio.create_task(self._shutdown_op(frame, writer)))
                        continue
                    writer.write(wire.encode(self._runtime_op(frame)))
                    continue
                got = self._admit(frame, host)
                if got is None:
                    continue
                src, msg, clock = got
                if isinstance(src, str):
                    self.clients[src] = writer
                if isinstance(msg, (m.LeaderAndIsr, m.StopReplica)):
                    if not await self._controller_epoch_ok(msg):
                        self._warn_once(
                            ("epoch", src),
                            f"{type(msg).__name__} from {src} claims controller epoch "
                            f"{msg.controller_epoch}, ZooKeeper records "
                            f"{self._zk_controller_epoch}: dropped",
                        )
                        continue
                    if not self.registered or frame.get("to", self._my_czxid) != self._my_czxid:
                        # Addressed to a previous incarnation (or session): the controller has
                        # not seen this one register. Dropped, as that process's connection was.
                        continue
                    if not self.started:
                        self._backlog.append((self._deliver, (src, msg, clock)))
                        self._start_core(clock)
                        continue
                self._run(self._deliver, src, msg, clock)
        finally:
            writer.close()

    def _admit(self, frame: dict[str, Any], host: str) -> tuple[int | str, Any, int] | None:
        """A frame's (source, message, clock) if it may be delivered (issue 17): a member's
        frame (an int source: a broker or the controller) carries a valid HMAC with the
        cluster's secret; a client's (a str source) is a well-typed produce or consume
        request. Anything else is logged once per peer and dropped."""
        src = frame.get("src")
        clock = frame.get("clock", 0)
        if isinstance(src, bool) or not isinstance(src, int | str) or type(clock) is not int:
            self._warn_once(("malformed", host), f"malformed frame from {host}: bad src/clock")
            return None
        if isinstance(src, int) and not wire.verify(frame, self.key):
            self._warn_once(("mac", host, src), f"frame claiming broker {src} fails its HMAC")
            return None
        try:
            msg = m.from_wire(frame.get("msg"))
        except (KeyError, TypeError, ValueError, RecursionError) as e:
            self._warn_once(("malformed", host), f"malformed message from {host}: {e!r}")
            return None
        if isinstance(src, str) and not _client_request_ok(msg):
            self._warn_once(("client", host), f"client frame from {host} is not a valid request")
            return None
        if isinstance(src, int) and not hasattr(msg, "__dataclass_fields__"):
            self._warn_once(("malformed", host), f"frame from {host} holds no message")
            return None
        return src, msg, clock

    def _deliver(self, src: int | str, msg: Any, clock: int) -> None:
        if isinstance(msg, m.ControlledShutdownRequest):
            self.core.clock.merge(clock)
            self._on_shutdown_request(src, msg)
            return
        if isinstance(msg, m.ControlledShutdownResponse):
            self.core.clock.merge(clock)
            fut = self._shutdown_waiters.pop(msg.correlation_id, None)
            if fut is not None and not fut.done():
                fut.set_result(msg)
            return
        self.apply(self.core.on_message(src, msg, clock, now_ms()))

    def _runtime_op(self, frame: dict[str, Any]) -> dict[str, Any]:
        if frame["op"] == "status":
            return {"op": "status", "id": frame.get("id"), "status": self.status()}
        if frame["op"] == "elect_leader":
            return self._elect_leader_op(frame)
        return {"op": "error", "id": frame.get("id"), "error": f"unknown op {frame['op']!r}"}

    # ---- leadership moves (R9) ----------------------------------------------------------------
    def _elect_leader_op(self, frame: dict[str, Any]) -> dict[str, Any]:
        """An admin's election request, to the controller: move leadership to ``broker`` (or
        each partition's preferred replica), for ``partitions`` (or every partition)."""
        rid = frame.get("id")
        if self.controller is None:
            return {"op": "error", "id": rid, "error": m.NOT_CONTROLLER}
        target = frame.get("broker")
        parts = frame.get("partitions")
        tps = None if parts is None else [(str(t), int(p)) for t, p in parts]
        self._run(self._elect_leader, None if target is None else int(target), tps)
        return {"op": "elect_leader", "id": rid, "ok": True}

    def _elect_leader(self, target: int | None, tps: list[tuple[str, int]] | None) -> None:
        if self.controller is not None:
            self.apply(self.controller.elect_leader(now_ms(), target, tps))

    async def _shutdown_op(self, frame: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        """Controlled shutdown, asked by the supervisor: ask the controller (R9), answer with
        the partitions this broker still leads. It keeps running; the supervisor stops it."""
        rid = frame.get("id")
        try:
            data, _ = await self.loop.run_in_executor(None, self.zk.get, "/controller")
            ctl = int(json.loads(data)["brokerid"])
            self._shutdown_corr += 1
            corr = self._shutdown_corr
            fut: asyncio.Future[m.ControlledShutdownResponse] = self.loop.create_future()
            self._shutdown_waiters[corr] = fut
            req = m.ControlledShutdownRequest(self.id, corr)
            self._run(self._send, ctl, req)
            resp = await asyncio.wait_for(fut, float(frame.get("timeout_s", 15.0)))
            out: dict[str, Any] = {
                "op": "shutdown",
                "id": rid,
                "controller": ctl,
                "error": resp.error,
                "remaining": [list(tp) for tp in resp.remaining],
            }
        except Exception as e:  # no controller, or it did not answer in time
            out = {"op": "error", "id": rid, "error": repr(e)}
        if not writer.is_closing():
            writer.write(wire.encode(out))

    def _on_shutdown_request(self, src: int | str, req: m.ControlledShutdownRequest) -> None:
        """As controller: move leadership off the broker and take it out of the ISRs, then
        answer once those writes have landed (a no-op queued behind them on the hold)."""
        if self.controller is None or not isinstance(src, int):
            err = m.ControlledShutdownResponse(self.id, req.correlation_id, m.NOT_CONTROLLER, ())
            if isinstance(src, int):
                self._send(src, err)
            return
        self.apply(self.controller.controlled_shutdown(now_ms(), req.broker_id))

        def answer(_f: asyncio.Future[Any]) -> None:
            ctl = self.controller
            if ctl is None:
                resp = m.ControlledShutdownResponse(
                    self.id, req.correlation_id, m.NOT_CONTROLLER, ()
                )
            else:
                left = tuple(ctl.unmovable(req.broker_id))
                resp = m.ControlledShutdownResponse(self.id, req.correlation_id, m.NONE, left)
            self._send(src, resp)

        self._submit(lambda _clock: None, answer)

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


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _client_request_ok(msg: Any) -> bool:
    """A client (no cluster secret) may only produce and consume, with well-typed fields."""
    if isinstance(msg, m.ProduceRequest):
        return (
            isinstance(msg.client_id, str)
            and _is_int(msg.correlation_id)
            and isinstance(msg.topic, str)
            and _is_int(msg.partition)
            and msg.acks in (0, 1, -1)
            and isinstance(msg.records, tuple)
            and all(
                isinstance(r, tuple) and len(r) == 2 and all(isinstance(x, str) for x in r)
                for r in msg.records
            )
        )
    if isinstance(msg, m.ConsumeRequest):
        return (
            isinstance(msg.client_id, str)
            and _is_int(msg.correlation_id)
            and isinstance(msg.topic, str)
            and _is_int(msg.partition)
            and _is_int(msg.offset)
            and msg.offset >= 0
            and _is_int(msg.max_records)
            and msg.max_records > 0
        )
    return False


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m isr.impl.cluster.broker")
    p.add_argument("--id", type=int, required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("--zk", required=True)
    p.add_argument("--config", default="")
    p.add_argument("--session-timeout", type=float, default=3.0)
    p.add_argument("--trace-dir", default="")
    p.add_argument("--metrics", default="")
    p.add_argument("--profile", default="", help="write cProfile stats here on exit")
    p.add_argument("--secret-file", default="", help="the cluster's secret (HMAC, ZooKeeper ACLs)")
    a = p.parse_args(argv)
    # warnings of the storage (a corrupt checkpoint, a stray file) and the wire (a rejected
    # frame) go to broker.log, one line each
    logging.basicConfig(
        level=logging.WARNING,
        format=f"%(asctime)s broker {a.id} %(levelname)s %(name)s: %(message)s",
    )
    asyncio.run(BrokerProcess(a).run())
    return 0


if __name__ == "__main__":
    sys.exit(main())
