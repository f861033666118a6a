"""The worker processes of the parallel engine, seen from the coordinator: start them (fork),
send them requests, collect one reply from each while watching for a dead one, stop them.

Fork, not spawn: the workers inherit the coordinator's model object as it is (a spec model, a toy
built from closures, anything), so nothing has to rebuild it from a description and nothing of it
is pickled. A worker that dies (killed, out of memory) or raises turns into
:class:`EngineFailure` at the next collection (a checkpoint file it cannot read into
:class:`~.checkpoint.CheckpointError`: bad input); every exit path of :class:`Pool` (normal, error,
Ctrl-C) terminates and reaps all workers, so none is left behind.
"""

from __future__ import annotations

import contextlib
import multiprocessing
from collections.abc import Callable
from multiprocessing.connection import wait
from typing import Any

from ..errors import EngineFailure  # re-exported (the engines' errors: checker.errors)
from .checkpoint import CheckpointError
from .worker import Shared, worker_main

STOP_GRACE_SECONDS = 5.0


class Requests:
    """The request/reply bookkeeping of a coordinator's transport, shared by :class:`Pool`
    (forked workers, pipes) and :class:`.net.NetPool` (workers anywhere, TCP): a request goes
    to every worker or to one, then :meth:`collect` gathers one reply from each asked. A
    transport supplies ``n``, ``_send(k, msg)`` and ``collect``; its ``_take`` hands each message
    to :meth:`_reply`."""

    n: int
    _pending: set[int]
    _replies: list[Any]

    def _send(self, k: int, msg: tuple) -> None:
        raise NotImplementedError

    def collect(self, idle: Callable[[], None] | None = None, every: float = 1.0) -> list[Any]:
        raise NotImplementedError

    def _expect(self, workers) -> None:
        self._pending = set(workers)
        self._replies = [None] * self.n

    def ask_all(self, msg: tuple) -> None:
        for k in range(self.n):
            self._send(k, msg)
        self._expect(range(self.n))

    def ask_one(self, k: int, msg: tuple) -> Any:
        self._send(k, msg)
        self._expect([k])
        return self.collect()[k]

    def _reply(self, k: int, kind: str, payload: Any) -> None:
        """Worker ``k``'s message: an error it reports fails the run (a checkpoint it cannot
        use, or anything else: the engine's failure); else its reply, if it was asked."""
        if kind == "error":
            what, text = payload
            raise (CheckpointError if what == "checkpoint" else EngineFailure)(text)
        if k in self._pending:
            self._replies[k] = payload
            self._pending.discard(k)


class Pool(Requests):
    def __init__(self, n: int, model: Any, symmetry: bool, props: list, resume=None) -> None:
        try:
            ctx = multiprocessing.get_context("fork")
        except ValueError:  # pragma: no cover - Windows
            raise EngineFailure("--workers needs the fork start method (Linux, macOS)") from None
        self.n = n
        self.inboxes = [ctx.Queue() for _ in range(n)]
        self.shared = Shared(ctx.RawArray("q", n), ctx.RawArray("q", n), ctx.RawValue("b", 0))
        self.abort = self.shared.abort
        self.conns = []
        self.procs = []
        self._pending: set[int] = set()
        self._replies: list[Any] = []
        try:
            for k in range(n):
                mine, theirs = ctx.Pipe()
                args = (k, n, model, symmetry, props, theirs, self.inboxes, self.shared)
                p = ctx.Process(target=worker_main, args=(*args, resume), name=f"isr-worker-{k}")
                p.daemon = True  # a coordinator that exits without close() still takes them along
                p.start()
                theirs.close()
                self.conns.append(mine)
                self.procs.append(p)
            self._expect(range(n))  # each worker reports once it holds its initial partition
        except OSError as e:  # fork failed: out of memory or processes
            self.close(graceful=False)
            raise EngineFailure(f"cannot start worker processes: {e}") from None
        except BaseException:
            self.close(graceful=False)
            raise

    # --- requests and replies ------------------------------------------------------------------
    def _send(self, k: int, msg: tuple) -> None:
        try:
            self.conns[k].send(msg)
        except OSError:
            raise self._died(k) from None

    def collect(self, idle: Callable[[], None] | None = None, every: float = 1.0) -> list[Any]:
        """The replies to the last request (one per worker asked), calling ``idle`` every
        ``every`` seconds while waiting. Resumable: a signal handler that raises leaves the
        replies gathered so far in place."""
        by_sentinel = {p.sentinel: k for k, p in enumerate(self.procs)}
        by_conn = {id(c): k for k, c in enumerate(self.conns)}
        while self._pending:
            watch = [self.conns[k] for k in sorted(self._pending)] + list(by_sentinel)
            ready_list = wait(watch, None if idle is None else every)
            if not ready_list and idle is not None:
                idle()
            for ready in ready_list:
                if isinstance(ready, int):  # a worker exited: only "stop" may end one
                    k = by_sentinel[ready]
                    try:
                        while self.conns[k].poll():  # what it said before it went
                            self._take(k)
                    except (EOFError, OSError):
                        pass
                    raise self._died(k)
                k = by_conn[id(ready)]
                try:
                    self._take(k)
                except (EOFError, OSError):  # its end of the pipe closed: it is exiting
                    raise self._died(k) from None
        return self._replies

    def _died(self, k: int) -> EngineFailure:
        self.procs[k].join(STOP_GRACE_SECONDS)
        code = self.procs[k].exitcode
        if code is None:  # pragma: no cover - closed its pipe but did not exit
            return EngineFailure(f"worker {k} stopped answering")
        how = f"killed by signal {-code}" if code < 0 else f"exit {code}"
        return EngineFailure(f"worker {k} died ({how})")

    def _take(self, k: int) -> None:
        self._reply(k, *self.conns[k].recv())

    # --- shutdown ------------------------------------------------------------------------------
    def close(self, graceful: bool = True) -> None:
        if graceful:
            for conn in self.conns:
                with contextlib.suppress(OSError):
                    conn.send(("stop",))
            for p in self.procs:
                p.join(STOP_GRACE_SECONDS)
        for p in self.procs:
            if p.is_alive():
                p.terminate()
        for p in self.procs:
            p.join(STOP_GRACE_SECONDS)
            if p.is_alive():  # pragma: no cover - SIGTERM is not ignored by workers
                p.kill()
                p.join()
        for conn in self.conns:
            conn.close()
        for q in self.inboxes:
            q.close()
            q.join_thread()

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, exc_type, *_: object) -> None:
        self.close(graceful=exc_type is None)
