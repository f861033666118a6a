"""The parallel engine's workers over TCP: the same :class:`~.worker.Worker`, on any machines.

:mod:`.pool` runs the workers as forked processes of this machine, talking through
multiprocessing Queues, a Pipe to the coordinator and shared memory (the abort flag, the live
counts). Here the same worker code runs wherever something starts it (Spark's barrier tasks,
:mod:`checker.spark.barrier`), and those three channels are replaced by sockets:

- **Peers.** Each worker listens on a port of its own; every worker connects to every other one
  and keeps one outgoing connection per peer (:class:`Outbox`: ``put`` queues the message and a
  sender thread writes it, so a put never blocks, as a Queue's feeder thread) and one receiving
  thread per incoming connection, which puts what arrives into the worker's inbox (a
  ``queue.Queue``). The worker's messages (``R``/``A``/``E``, the balancing ``S``/``M``) are the
  same bytes as on one machine.
- **The coordinator.** One connection per worker (:class:`CoordinatorLink` on the worker's side,
  :class:`NetPool` on the coordinator's). Requests and replies are those of :mod:`.pool`. What
  was shared memory becomes two small messages: every ``TICK_SECONDS`` the worker sends
  ``("tick", level, distinct, generated, abort)`` (its own slots), and the coordinator sends
  ``("ctl", level, sizes, abort)`` back (everyone's distinct counts, for ``max_states``, and the
  abort flag). ``level`` numbers the level orders, so a late tick of a finished level cannot
  abort the next one.
- **Clocks.** A deadline is a ``time.monotonic()`` value on one machine; across machines the
  coordinator sends the time left and the worker turns it back into its own clock's deadline.

Every connection is authenticated with a per-run random key (``multiprocessing.connection``'s
HMAC challenge), so a stray process cannot join a run. Pickles cross these connections (requests,
balancing) as they cross the Pipe between forked processes; the key is what makes them trusted.

A worker whose coordinator is gone exits (``os._exit``: nothing of the task lingers); a
coordinator that loses a worker's connection fails the run (:class:`~.pool.EngineFailure`), as
when a forked worker dies.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import queue
import signal
import threading
import time
from collections.abc import Callable, Sequence
from multiprocessing import AuthenticationError
from multiprocessing.connection import Client, Connection, Listener, wait
from typing import Any, Protocol

from ..nogc import paused_gc
from .pool import EngineFailure, Requests
from .worker import Worker, report_failure

TICK_SECONDS = 0.25  # how often a worker reports its counts, and the coordinator answers
CONNECT_SECONDS = 60.0  # how long a worker tries to reach a peer that is not listening yet


class Flag:
    """The shared abort flag's stand-in: a ``.value`` like multiprocessing's RawValue."""

    def __init__(self) -> None:
        self.value = 0


@dataclasses.dataclass
class NetShared:
    """What :class:`~.worker.Worker` reads as shared memory: its own slots are written by the
    worker, the others come from the coordinator's ``ctl`` messages."""

    sizes: list[int]
    generated: list[int]
    abort: Flag


def connect(address: tuple[str, int], authkey: bytes, budget: float = CONNECT_SECONDS):
    """A client connection to ``address``, retried while the other end is not listening yet."""
    deadline = time.monotonic() + budget
    while True:
        try:
            return Client(address, authkey=authkey)
        except (ConnectionRefusedError, FileNotFoundError):
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.05)


class Outbox:
    """Messages to one peer: ``put`` never blocks; a thread writes them in order."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.q: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self.failed: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True, name="isr-outbox")
        self.thread.start()

    def put(self, data: bytes) -> None:
        self.q.put(data)

    def _run(self) -> None:
        while True:
            data = self.q.get()
            if data is None:
                return
            try:
                self.conn.send_bytes(data)
            except OSError as e:  # the peer is gone: its coordinator fails the run
                self.failed = e
                return

    def close(self) -> None:
        self.q.put(None)
        self.thread.join(5.0)
        self.conn.close()


def receive_into(conn: Connection, inbox: queue.Queue) -> threading.Thread:
    """A thread putting every message from ``conn`` into ``inbox`` until the peer closes."""

    def run() -> None:
        with contextlib.suppress(EOFError, OSError):
            while True:
                inbox.put(conn.recv_bytes())

    thread = threading.Thread(target=run, daemon=True, name="isr-inbox")
    thread.start()
    return thread


class CoordinatorLink:
    """The worker's end of its coordinator connection, seen by :class:`~.worker.Worker` as the
    Pipe it has on one machine (``send``, ``poll``, ``recv``). A thread reads the connection:
    ``ctl`` messages go straight to the shared stand-ins, requests to a queue."""

    def __init__(self, conn: Connection, k: int, shared: NetShared) -> None:
        self.conn = conn
        self.k = k
        self.shared = shared
        self.requests: queue.Queue[Any] = queue.Queue()
        self._head: Any = None  # a request poll has taken off the queue, first in line
        self.lock = threading.Lock()
        self.level = 0  # level orders received
        self.gone = threading.Event()
        self.reader = threading.Thread(target=self._read, daemon=True, name="isr-coordinator")
        self.reader.start()
        self.ticker = threading.Thread(target=self._tick, daemon=True, name="isr-tick")
        self.ticker.start()

    def _read(self) -> None:
        shared = self.shared
        try:
            while True:
                msg = self.conn.recv()
                if msg[0] == "ctl":
                    _, level, sizes, abort = msg
                    for j, size in enumerate(sizes):
                        if j != self.k:
                            shared.sizes[j] = size
                    if level == self.level + 1:  # sent just before the next order: set or reset
                        shared.abort.value = abort
                    elif level == self.level and abort:  # during a level it only ever raises
                        shared.abort.value = 1  # (the worker may have raised it itself)
                    continue
                if msg[0] == "level":
                    order = msg[1]
                    if order.deadline is not None:  # time left -> this machine's clock
                        order = dataclasses.replace(
                            order, deadline=time.monotonic() + order.deadline
                        )
                    msg = ("level", order)
                    self.level += 1
                self.requests.put(msg)
        except (EOFError, OSError):
            self.gone.set()

    def _tick(self) -> None:
        shared, k = self.shared, self.k
        last = None
        while not self.gone.wait(TICK_SECONDS):
            level = self.level  # read first: a reset abort flag is in place before it moves on
            now = (level, shared.sizes[k], shared.generated[k], shared.abort.value)
            if now != last:
                last = now
                try:
                    self.send(("tick", *now))
                except OSError:
                    return

    # --- the Pipe's interface, as Worker uses it ---
    def send(self, msg: Any) -> None:
        with self.lock:
            self.conn.send(msg)

    def poll(self, timeout: float = 0.0) -> bool:
        if self._head is not None:
            return True
        try:
            self._head = self.requests.get(timeout=timeout)
        except queue.Empty:
            return False
        return True

    def recv(self) -> Any:
        if self._head is not None:
            msg, self._head = self._head, None
            return msg
        return self.requests.get()


class NetWorker(Worker):
    """A :class:`~.worker.Worker` whose parent is a coordinator on the network."""

    def check_parent(self) -> None:
        link = self.conn
        if (
            link.gone.is_set() and link._head is None and link.requests.empty()
        ):  # the coordinator is gone
            os._exit(1)


@dataclasses.dataclass(frozen=True)
class Rendezvous:
    """What a worker needs to join a run: the coordinator's address, the run's key."""

    hub: tuple[str, int]
    authkey: bytes
    n: int


def serve_worker(
    k: int,
    rendezvous: Rendezvous,
    model: Any,
    symmetry: bool,
    props: list,
    resume: Any,
    my_host: str,
    exchange: Callable[[str], Sequence[str]],
) -> None:
    """Run worker ``k`` of ``rendezvous.n`` until the coordinator says stop.

    ``my_host``: this machine's address as the other workers reach it. ``exchange``: given this
    worker's ``host:port``, returns every worker's, in worker order (Spark's ``allGather``)."""
    n, key = rendezvous.n, rendezvous.authkey
    with contextlib.suppress(ValueError):  # not the main thread: Ctrl-C is not ours anyway
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    listener = Listener(("0.0.0.0", 0), authkey=key)
    port = listener.address[1]
    inbox: queue.Queue[bytes] = queue.Queue()
    accepted: list[Connection] = []

    def accept_peers() -> None:
        while len(accepted) < n - 1:
            try:
                conn = listener.accept()
            except (AuthenticationError, EOFError, ConnectionError):
                continue  # not one of this run's workers (a wrong key, a port scan): ignored
            except OSError:
                return  # the listener is closed
            accepted.append(conn)
            receive_into(conn, inbox)

    acceptor = threading.Thread(target=accept_peers, daemon=True, name="isr-accept")
    acceptor.start()
    addresses = list(exchange(f"{my_host}:{port}"))
    outboxes: list[Any] = []
    for j, address in enumerate(addresses):
        if j == k:
            outboxes.append(inbox)  # a worker never writes to itself; kept for the indexing
            continue
        host, _, p = address.rpartition(":")
        outboxes.append(Outbox(connect((host, int(p)), key)))
    acceptor.join(CONNECT_SECONDS)
    shared = NetShared([0] * n, [0] * n, Flag())
    hub = connect(rendezvous.hub, key)
    hub.send(("hello", k))
    link = CoordinatorLink(hub, k, shared)
    try:
        with paused_gc():
            NetWorker(k, n, model, symmetry, props, link, outboxes, shared).serve(resume)
    except BaseException as e:  # reported to the coordinator, which fails the run
        report_failure(link, k, e)
    finally:
        for box in outboxes:
            if isinstance(box, Outbox):
                box.close()
        for conn in accepted:
            conn.close()
        listener.close()
        hub.close()


class NetShareView:
    """The coordinator's view of the workers' counts (what :mod:`.engine` reads from
    ``pool.shared``) and the abort flag it sets."""

    def __init__(self, n: int, on_abort: Callable[[], None]) -> None:
        self.sizes = [0] * n
        self.generated = [0] * n
        self._abort = 0
        self._on_abort = on_abort

    @property
    def value(self) -> int:  # pool.abort.value, as multiprocessing's RawValue
        return self._abort

    @value.setter
    def value(self, v: int) -> None:
        if v != self._abort:
            self._abort = v
            self._on_abort()


class Launch(Protocol):
    """Workers started in the background by whatever runs them (Spark, a test's processes)."""

    def failed(self) -> str | None:
        """Why the workers ended, once they have (None while they run)."""

    def join(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for them to end; True if they have."""

    def cancel(self) -> None:
        """Stop them now."""


STOP_GRACE_SECONDS = 10.0


class NetPool(Requests):
    """The coordinator's side: the :class:`~.pool.Pool` interface over the workers' connections.

    ``start`` launches the workers, given the rendezvous, in the background."""

    def __init__(
        self,
        n: int,
        start: Callable[[Rendezvous], Launch],
        bind: str,
        host: str,
        connect_budget: float,
    ) -> None:
        self.n = n
        self.launch: Launch | None = None
        self.authkey = os.urandom(32)
        self.listener = Listener((bind, 0), authkey=self.authkey)
        self.shared = NetShareView(n, self._abort_changed)
        self.abort = self.shared
        self.conns: list[Connection | None] = [None] * n
        self.level = 0
        self._dirty = False
        self._last_ctl = 0.0
        self._pending: set[int] = set()
        self._replies: list[Any] = [None] * n
        self.closed = False
        try:
            self.launch = start(Rendezvous((host, self.listener.address[1]), self.authkey, n))
            self._accept(connect_budget)
            self._expect(range(n))  # each worker reports once it holds its initial partition
        except BaseException:
            self.close(graceful=False)
            raise

    def _accept(self, budget: float) -> None:
        """Wait for every worker's hello (the accept runs in a thread, so a failed start is seen
        while waiting)."""
        got: queue.Queue[Any] = queue.Queue()

        def run() -> None:
            taken = 0
            while taken < self.n:
                try:
                    conn = self.listener.accept()
                except (AuthenticationError, EOFError, ConnectionError):
                    continue  # not one of this run's workers (a wrong key, a port scan)
                except OSError as e:
                    got.put(e)
                    return
                got.put(conn)
                taken += 1

        threading.Thread(target=run, daemon=True, name="isr-hub-accept").start()
        deadline = time.monotonic() + budget
        joined = 0
        while joined < self.n:
            why = self._failed()
            if why:
                raise EngineFailure(f"the workers did not start: {why}")
            if time.monotonic() >= deadline:
                raise EngineFailure(
                    f"only {joined} of {self.n} workers reached the coordinator within {budget:g} s"
                )
            try:
                conn = got.get(timeout=0.5)
            except queue.Empty:
                continue
            if isinstance(conn, BaseException):
                raise EngineFailure(f"the coordinator stopped listening: {conn}")
            kind, k = conn.recv()
            if kind != "hello" or not 0 <= k < self.n or self.conns[k] is not None:
                raise EngineFailure(f"a worker introduced itself as {kind!r} {k!r}")
            self.conns[k] = conn
            joined += 1

    # --- control ----------------------------------------------------------------------------------
    def _abort_changed(self) -> None:
        self._dirty = True

    def _broadcast_ctl(self) -> None:
        msg = ("ctl", self.level, list(self.shared.sizes), self.shared.value)
        for k in range(self.n):
            self._send_raw(k, msg)
        self._dirty = False
        self._last_ctl = time.monotonic()

    # --- requests and replies -------------------------------------------------------------------
    def ask_all(self, msg: tuple) -> None:
        """As :meth:`.pool.Requests.ask_all`, after the abort flag and counts, which a new level
        or a change since the last tick sends first."""
        if msg[0] == "level":
            self.level += 1
        if self._dirty or msg[0] == "level":
            self._broadcast_ctl()
        super().ask_all(msg)

    def _send(self, k: int, msg: tuple) -> None:
        if msg[0] == "level" and msg[1].deadline is not None:  # this clock -> time left
            order = msg[1]
            msg = ("level", dataclasses.replace(order, deadline=order.deadline - time.monotonic()))
        self._send_raw(k, msg)

    def _send_raw(self, k: int, msg: tuple) -> None:
        conn = self.conns[k]
        try:
            assert conn is not None
            conn.send(msg)
        except OSError:
            raise self._died(k) from None

    def collect(self, idle: Callable[[], None] | None = None, every: float = 1.0) -> list[Any]:
        """The replies to the last request, as :meth:`.pool.Pool.collect`; ticks are folded into
        the counts on the way, and the abort flag and counts sent back."""
        by_conn = {id(c): k for k, c in enumerate(self.conns)}
        last_idle = time.monotonic()
        while self._pending:
            watch = [c for c in self.conns if c is not None]
            ready_list = wait(watch, min(TICK_SECONDS, every))
            for ready in ready_list:
                k = by_conn[id(ready)]
                try:
                    self._take(k)
                except (EOFError, OSError):
                    raise self._died(k) from None
            now = time.monotonic()
            if self._dirty or now - self._last_ctl >= TICK_SECONDS:
                self._broadcast_ctl()
            if idle is not None and now - last_idle >= every:
                last_idle = now
                idle()
            if not ready_list:
                why = self._failed()
                if why:
                    raise EngineFailure(f"the workers failed: {why}")
        return self._replies

    def _failed(self) -> str | None:
        return self.launch.failed() if self.launch is not None else None

    def _died(self, k: int) -> EngineFailure:
        why = self._failed()
        return EngineFailure(
            f"worker {k} lost its connection to the coordinator" + (f" ({why})" if why else "")
        )

    def _take(self, k: int) -> None:
        conn = self.conns[k]
        assert conn is not None
        kind, *payload = conn.recv()
        if kind == "tick":
            level, size, generated, abort = payload
            self.shared.sizes[k] = size
            if level == self.level:
                self.shared.generated[k] = generated
                if abort and not self.shared.value:
                    self.shared.value = 1
            return
        (payload,) = payload
        if kind == "report":
            self.shared.generated[k] = 0  # counted in the report from now on
        self._reply(k, kind, payload)

    # --- shutdown -------------------------------------------------------------------------------
    def close(self, graceful: bool = True) -> None:
        if self.closed:
            return
        self.closed = True
        if graceful:
            for conn in self.conns:
                if conn is not None:
                    with contextlib.suppress(OSError):
                        conn.send(("stop",))
        launch = self.launch
        if launch is not None and not (graceful and launch.join(STOP_GRACE_SECONDS)):
            with contextlib.suppress(Exception):
                launch.cancel()
                launch.join(STOP_GRACE_SECONDS)
        for conn in self.conns:
            if conn is not None:
                conn.close()
        self.listener.close()

    def __enter__(self) -> NetPool:
        return self

    def __exit__(self, exc_type, *_: object) -> None:
        self.close(graceful=exc_type is None)
