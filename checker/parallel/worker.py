"""One worker process of the parallel engine: owns the fingerprints that are ``k`` mod ``n``,
expands its share of each level, and tells its peers which of their successors are new.

Shared-nothing: each worker holds, in a :class:`~checker.store.SearchStore` (in memory or on
disk), the visited set of its partition with the parent links of its fingerprints, and a share of
the frontier (canonical states with their fingerprints, kept so they are not hashed again on
expansion).

States never leave the worker that generated them. A successor owned by another worker is kept
aside and only its fingerprint and its parent's go to the owner, in batches of raw int64 arrays;
the owner records those it has not seen (with their parents) and answers with one flag byte
each; the asker then queues the new ones for the next level and checks the state properties on
them. Why not ship states to their owner: the spec's states are NamedTuples, which pickle
(protocol 5) and unpickle at about 17 us each way, a quarter of the cost of a distinct state;
fingerprints cost nothing to move. Each state is still expanded once (the owner says "new" to
exactly one asker). Since a worker keeps what it generates, the frontier would stay wherever the
initial states were: before each level the coordinator has the fullest workers hand states to
the emptiest (``balance``; pickled, protocol 5), which after the first levels moves few states.

Messages between workers go through each worker's inbox (a multiprocessing Queue, whose feeder
thread means a put never blocks): ``R`` (questions), ``A`` (answers, in the order asked) and
``E`` (no more questions from that peer in this level). A worker reads its inbox while it expands
and, at the end of a level, until every peer has ended and every question of its own is
answered; then it reports to the coordinator. Levels cannot mix: no worker starts a level before
the coordinator has every report of the previous one.

Requests from the coordinator (over a Pipe): ``("balance", plan)``, ``("level", LevelOrder)``,
``("save", dir, seq)``, ``("parent", fp)``, ``("stop",)``. The cyclic GC is off for the worker's whole life
(:mod:`checker.nogc`: states are acyclic) and SIGINT is ignored: Ctrl-C is the coordinator's to
handle, it stops the workers itself.

Test hook: ``ISR_PARALLEL_KILL=k:d`` makes worker ``k`` SIGKILL itself when told to expand the
level at depth ``d`` (tests of the engine-failure path use it; nothing else reads it).
"""

from __future__ import annotations

import os
import pickle
import queue
import signal
import struct
import time
import traceback
from array import array
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..expand import all_of, broken
from ..expand import witnessed as step_witnesses
from ..fingerprint import ZERO_STANDIN, fingerprint
from ..fpset import FingerprintSet
from ..model import Model, Property, State
from ..nogc import paused_gc
from ..store import MemoryQueue, MemoryTrace, SearchStore, StoreDir
from .checkpoint import (
    CheckpointError,
    count_visited,
    fp_array,
    read_frontier,
    read_visited,
    write_partition,
)

BATCH = 1024  # successors per batch sent to one peer
TICK = 256  # expanded states between looks at the inbox, the shared counters and the clock
HEAD = struct.Struct("<I")  # after the one-byte tag of a message: the sending worker
KILL_ENV = "ISR_PARALLEL_KILL"


@dataclass(frozen=True)
class Shared:
    """Shared memory between the coordinator and the workers (each worker writes only its own
    slots, every TICK states: aligned 8-byte stores, so readers see whole values)."""

    sizes: Any  # RawArray q[n]: distinct states each worker owns
    generated: Any  # RawArray q[n]: states each worker generated in the current level so far
    abort: Any  # RawValue b: stop expanding this level


@dataclass(frozen=True)
class Start:
    """How a worker starts: where it keeps its share of the search (checker.store: "memory", or
    "disk" in ``store_dir``, a directory every worker reaches) and what it resumes from (None:
    the initial states; else the checkpoint's parts and its number of workers). The pools pass
    it through as they are given it."""

    store: str = "memory"
    store_dir: str | None = None
    resume: Any = None
    keep_queues: bool = (
        False  # a disk checkpoint: queue files stay until the coordinator drops them
    )


@dataclass(frozen=True)
class LevelOrder:
    """What the coordinator asks of one level: the properties still open, and the limits."""

    depth: int  # depth of the frontier to expand
    invariants: tuple[str, ...]
    actions: tuple[str, ...]
    some_states: tuple[str, ...]
    some_trans: tuple[str, ...]
    deadline: float | None  # time.monotonic() value (one clock for every process on the host)
    max_states: int | None
    stop_on_violation: bool


def new_report() -> dict[str, Any]:
    return {
        "generated": 0,
        "expanded": 0,
        "size": 0,
        "frontier": 0,
        "deadlocks": 0,
        "deadlock": None,
        "inv": {},
        "act": {},
        "wit": {},
        "fired": 0,
        "aborted": False,
        "cpu": 0.0,
    }


class Worker:
    def __init__(self, k, n, model: Model, symmetry, props, conn, inboxes, shared: Shared):
        self.k = k
        self.n = n
        self.model = model
        self.canon = model.canonicalize if symmetry else None
        self.by_name: dict[str, Property] = {p.name: p for p in props}
        self.conn = conn
        self.inboxes = inboxes
        self.inbox = inboxes[k]
        self.sizes = shared.sizes
        self.generated = shared.generated
        self.abort = shared.abort
        self.ppid = os.getppid()
        self.cpu_mark = time.process_time()
        # the store (checker.store) is opened by serve(), which is told where it is
        self.store: SearchStore | None = None
        self.keep_queues = False
        self.frontier: Any = MemoryQueue()
        self.next: Any = MemoryQueue()
        self.report = new_report()
        self.ends = 0  # end-of-level markers received during the current level
        # per peer: batches of (states, fps) asked about and not yet answered, oldest first
        self.pending: list[deque[tuple[list[State], array]]] = [deque() for _ in range(n)]
        self.invariants: list[Property] = []
        self.inv_checks: list = []
        self.some_states: list[Property] = []
        self.stop_on_violation = False
        who, _, depth = os.environ.get(KILL_ENV, "").partition(":")
        self.kill_at = int(depth) if who == str(k) and depth.isdigit() else None

    # --- new states ------------------------------------------------------------------------------
    def open_store(self, start: Start) -> None:
        kind = start.store
        where = StoreDir(start.store_dir) if kind == "disk" else None
        self.store = SearchStore(self.model, kind, dir_obj=where, name=f"w{self.k}-of-{self.n}")
        self.seen = self.store.seen
        self.trace = self.store.trace
        self.keep_queues = start.keep_queues

    def new_state(self, fp: int, c: State) -> None:
        """``c`` is new to the whole search and this worker holds it: queue it for the next level
        and check the state properties on it."""
        self.next.append(c, fp)
        if self.invariants or self.some_states:
            self.check_new_state(fp, c)

    def check_new_state(self, fp: int, c: State) -> None:
        """The state properties on a new state (the invariants' checks first, as functions: on
        the hot path, no list is built unless one fails)."""
        rep = self.report
        if self.invariants:
            for check in self.inv_checks:
                if not check(c):
                    break
            else:
                check = None
            if check is not None:
                for p in self.invariants:
                    if not p.check(c):
                        rep["inv"][p.name] = fp
                self.set_invariants([p for p in self.invariants if p.name not in rep["inv"]])
                if self.stop_on_violation:
                    self.abort.value = 1
        if self.some_states:
            met = [p for p in self.some_states if p.check(c)]
            if met:
                for p in met:
                    rep["wit"][p.name] = fp
                self.some_states = [p for p in self.some_states if p.name not in rep["wit"]]

    def set_invariants(self, props: list[Property]) -> None:
        self.invariants = props
        self.inv_checks = [p.check for p in props]

    # --- messages between workers ----------------------------------------------------------------
    def ask(self, owner: int, states: list[State], fps: array, parents: array) -> None:
        """Ask ``owner`` which of ``fps`` are new (it records them with their parents)."""
        self.inboxes[owner].put(b"R" + HEAD.pack(self.k) + fps.tobytes() + parents.tobytes())
        self.pending[owner].append((states, fps))

    def handle(self, data: bytes) -> None:
        tag = data[:1]
        (peer,) = HEAD.unpack_from(data, 1)
        body = memoryview(data)[1 + HEAD.size :]
        if tag == b"R":  # a peer asks about fingerprints this worker owns
            half = len(body) // 2
            fps, parents = array("q"), array("q")
            fps.frombytes(body[:half])
            parents.frombytes(body[half:])
            add = self.seen.add
            t_fps, t_parents = self.trace.fps, self.trace.parents
            flags = bytearray(len(fps))
            for i, fp in enumerate(fps):
                if add(fp):
                    flags[i] = 1
                    t_fps.append(fp)
                    t_parents.append(parents[i])
            self.inboxes[peer].put(b"A" + HEAD.pack(self.k) + bytes(flags))
        elif tag == b"A":  # the answer to this worker's oldest open question to that peer
            states, fps = self.pending[peer].popleft()
            new_state = self.new_state
            for i, flag in enumerate(body):
                if flag:
                    new_state(fps[i], states[i])
        else:  # b"E": the peer has asked everything it will ask in this level
            self.ends += 1

    def drain(self) -> None:
        inbox = self.inbox
        while True:
            try:
                data = inbox.get_nowait()
            except queue.Empty:
                return
            self.handle(data)

    def check_parent(self) -> None:
        if os.getppid() != self.ppid:  # the coordinator is gone: do not linger as an orphan
            os._exit(1)

    # --- levels ----------------------------------------------------------------------------------
    def initial(self) -> None:
        """Take the initial states this worker owns (every worker computes them all)."""
        self.set_invariants([p for p in self.by_name.values() if p.kind == "always"])
        self.some_states = [
            p for p in self.by_name.values() if p.kind == "sometimes" and not p.on_transitions
        ]
        canon = self.canon
        assert self.store is not None
        self.next = self.store.queue(0, self.keep_queues)
        self.trace.level(0)
        for s in self.model.init_states():
            c = canon(s) if canon else s
            fp = fingerprint(c)
            if fp % self.n == self.k and self.seen.add(fp):
                self.trace.fps.append(fp)
                self.trace.parents.append(fp)  # an initial state is its own parent
                self.new_state(fp, c)
        self.finish_level()

    def finish_level(self) -> None:
        self.trace.flush()
        self.frontier, self.next = self.next, MemoryQueue()
        rep = self.report
        rep["size"] = len(self.seen)
        rep["frontier"] = len(self.frontier)
        now = time.process_time()  # CPU since the last report: this level and its balancing
        rep["cpu"] = now - self.cpu_mark
        self.cpu_mark = now
        self.sizes[self.k] = len(self.seen)
        self.generated[self.k] = 0  # counted in the report from now on
        self.report = new_report()
        self.conn.send(("report", rep))

    def level(self, order: LevelOrder) -> None:
        if self.kill_at == order.depth:
            os.kill(os.getpid(), signal.SIGKILL)
        by_name = self.by_name
        self.set_invariants([by_name[n] for n in order.invariants])
        self.some_states = [by_name[n] for n in order.some_states]
        self.stop_on_violation = order.stop_on_violation
        action_props = [by_name[n] for n in order.actions]
        step_ok = all_of([p.check for p in action_props])
        some_trans = [by_name[n] for n in order.some_trans]
        rep = self.report
        model = self.model
        successors = model.successors
        within = model.within_boundary
        canon = self.canon
        fired = [False] * len(model.action_names)
        n_workers, me = self.n, self.k
        seen = self.seen
        seen_add = seen.add
        assert self.store is not None
        self.next = self.store.queue(order.depth + 1, self.keep_queues)
        next_append = self.next.append
        trace = self.trace
        trace.level(order.depth + 1)
        tr_fps_append, tr_par_append = trace.fps.append, trace.parents.append
        check_new_state = self.check_new_state
        ask = self.ask
        # per owner: successors to ask it about (states, fingerprints, parent fingerprints)
        b_states: list[list[State]] = [[] for _ in range(n_workers)]
        b_fps = [fp_array() for _ in range(n_workers)]
        b_parents = [fp_array() for _ in range(n_workers)]
        # fingerprints already asked about during this level: a FingerprintSet, 11-21 bytes an
        # entry where a Python set of ints takes about 70 (a level's successors owned by peers
        # run to millions in the large models)
        sent = FingerprintSet(1 << 16)
        sent_add = sent.add
        abort = self.abort
        sizes = self.sizes
        level_generated = self.generated
        deadline, max_states = order.deadline, order.max_states
        generated = deadlocks = 0
        deadlock_fp = None
        todo = self.frontier
        self.frontier = MemoryQueue()
        counter = 0
        expanded = 0
        stopped = False
        for frontier, fps in todo.chunks():
            for idx in range(len(frontier)):
                s = frontier[idx]
                frontier[idx] = None  # type: ignore[call-overload]  # free expanded states as we go
                counter += 1
                if counter >= TICK:
                    counter = 0
                    self.drain()
                    trace.maybe_flush()
                    sizes[me] = len(seen)
                    level_generated[me] = generated
                    if abort.value:
                        stopped = True
                        break
                    if deadline is not None and time.monotonic() >= deadline:
                        abort.value = 1
                        stopped = True
                        break
                    if max_states is not None and sum(sizes) >= max_states:
                        abort.value = 1
                        stopped = True
                        break
                    self.check_parent()
                expanded += 1
                if not within(s):
                    continue
                sfp = fps[idx]
                n = 0
                for action, t in successors(s):
                    n += 1
                    fired[action[0]] = True
                    if step_ok is not None and not step_ok(s, action, t):
                        for name in broken(action_props, s, action, t):
                            rep["act"][name] = sfp
                        action_props = [p for p in action_props if p.name not in rep["act"]]
                        step_ok = all_of([p.check for p in action_props])
                        if order.stop_on_violation:
                            abort.value = 1
                    if some_trans:
                        met = step_witnesses(some_trans, s, action, t)
                        if met:
                            for name in met:
                                rep["wit"][name] = sfp
                            some_trans = [p for p in some_trans if p.name not in rep["wit"]]
                    c = canon(t) if canon else t
                    fp = hash(c) or ZERO_STANDIN  # fingerprint(c), inlined: hot path
                    owner = fp % n_workers
                    if owner == me:
                        if not seen_add(fp):
                            continue  # visited
                        tr_fps_append(fp)
                        tr_par_append(sfp)
                        next_append(c, fp)
                        if self.invariants or self.some_states:
                            check_new_state(fp, c)
                    elif fp not in sent:
                        sent_add(fp)
                        states = b_states[owner]
                        states.append(c)
                        b_fps[owner].append(fp)
                        b_parents[owner].append(sfp)
                        if len(states) >= BATCH:
                            ask(owner, states, b_fps[owner], b_parents[owner])
                            b_states[owner] = []
                            b_fps[owner] = fp_array()
                            b_parents[owner] = fp_array()
                generated += n
                if n == 0:
                    deadlocks += 1
                    if deadlock_fp is None:
                        deadlock_fp = sfp
            if stopped:
                break
        if stopped:  # the rest of the level stays unexpanded (a checkpoint's queue stays on disk)
            todo.close() if self.keep_queues else todo.delete()
        del todo, sent
        # End of level: ask the rest, tell every peer, then answer and hear answers until every
        # peer has ended and every question of this worker is answered.
        for owner in range(n_workers):
            if owner != me:
                if b_states[owner]:
                    ask(owner, b_states[owner], b_fps[owner], b_parents[owner])
                self.inboxes[owner].put(b"E" + HEAD.pack(me))
        del b_states, b_fps, b_parents
        pending = self.pending
        while self.ends < n_workers - 1 or any(pending):
            try:
                data = self.inbox.get(timeout=1.0)
            except queue.Empty:
                self.check_parent()
                continue
            self.handle(data)
        self.ends = 0
        rep["generated"] = generated
        rep["expanded"] = expanded
        rep["deadlocks"] = deadlocks
        rep["deadlock"] = deadlock_fp
        rep["fired"] = sum(1 << i for i, f in enumerate(fired) if f)
        rep["aborted"] = bool(abort.value)
        self.finish_level()

    # --- balance ---------------------------------------------------------------------------------
    def balance(self, plan: list[tuple[int, int, int]]) -> None:
        """Move frontier states as ``plan`` says: (from worker, to worker, how many). States are
        pickled (protocol 5; trusted: between the processes of one run) in batches."""
        me, inboxes = self.k, self.inboxes
        for src, dst, count in plan:
            if src != me:
                continue
            states, fps = self.frontier.take(count)
            for i in range(0, count, BATCH):
                part = (fps[i : i + BATCH].tobytes(), states[i : i + BATCH])
                inboxes[dst].put(b"S" + HEAD.pack(me) + pickle.dumps(part, 5))
            inboxes[dst].put(b"M" + HEAD.pack(me))
        expected = sum(1 for _, dst, _ in plan if dst == me)
        while expected:
            try:
                data = self.inbox.get(timeout=1.0)
            except queue.Empty:
                self.check_parent()
                continue
            if data[:1] == b"M":
                expected -= 1
                continue
            fps_bytes, states = pickle.loads(memoryview(data)[1 + HEAD.size :])
            fps = fp_array()
            fps.frombytes(fps_bytes)
            self.frontier.extend(states, fps)
        self.conn.send(("balanced", len(self.frontier)))

    # --- checkpoints --------------------------------------------------------------------------
    def save(self, directory: str, depth: int) -> None:
        """Checkpoint this worker's share after a level. In memory: its visited entries and its
        frontier as files of their own. On disk, the store is the checkpoint: the frontier's
        queue file and the trace files are made durable, and named."""
        assert self.store is not None
        if self.store.dir is not None:
            self.frontier.seal(sync=True)
            self.trace.close(sync=True)
            path = self.frontier.path
            written = [
                {
                    "worker": self.k,
                    "kind": "queue",
                    "path": f"{path.parent.name}/{path.name}",
                    "states": len(self.frontier),
                    "bytes": path.stat().st_size if path.exists() else 0,
                }
            ]
        else:
            trace = self.trace
            assert isinstance(trace, MemoryTrace)
            fps, parents = fp_array(), fp_array()
            for f, p in trace.by_depth.values():
                fps.extend(f)
                parents.extend(p)
            written = write_partition(directory, depth, self.k, self.n, fps, parents, self.frontier)
        self.conn.send(("saved", written))

    def load(self, parts: Any, old_n: int) -> None:
        """Take this worker's share of a checkpoint (see :meth:`load_memory`,
        :meth:`load_disk`), and report."""
        if self.store is not None and self.store.dir is not None:
            self.load_disk(parts, old_n)
        else:
            self.load_memory(parts, old_n)
        self.sizes[self.k] = len(self.seen)
        rep = new_report()
        rep["size"] = len(self.seen)
        rep["frontier"] = len(self.frontier)
        self.conn.send(("report", rep))

    def load_memory(self, parts: list[tuple[int, str, str]], old_n: int) -> None:
        """``parts`` is [(old worker, visited file, frontier file)]. The visited entries it owns;
        with the same number of workers, its own files (a frontier state stays with the worker
        that generated it, whoever owns it), otherwise the frontier states it owns."""
        same = old_n == self.n
        if same:
            parts = [p for p in parts if p[0] == self.k]
        total = count_visited([p[1] for p in parts])
        assert self.store is not None
        self.store.seen = self.seen = type(self.seen)(total if same else total // self.n + 1)
        add = self.seen.add
        self.trace.level(-1)  # entries from before the resume: their depths are not kept
        t_fps, t_parents = self.trace.fps, self.trace.parents
        n, k = self.n, self.k
        self.frontier = MemoryQueue()
        for _, visited, frontier in parts:
            for fp, parent in read_visited(visited):
                if fp % n == k and add(fp):
                    t_fps.append(fp)
                    t_parents.append(parent)
            for fp, state in read_frontier(frontier):
                if same or fp % n == k:
                    self.frontier.append(state, fp)

    def load_disk(self, parts: dict[str, Any], old_n: int) -> None:
        """``parts``: {"depth": the frontier's depth, "queues": [(old worker, queue file)]}. The
        visited set is rebuilt from the trace files up to that depth (the fingerprints this
        worker owns); the frontier is its own queue file with the same number of workers,
        otherwise the states it owns of every queue file."""
        from ..store import read_queue_file, visited_from_trace

        assert self.store is not None and self.store.dir is not None
        depth = parts["depth"]
        n, k = self.n, self.k
        self.store.seen = self.seen = visited_from_trace(
            self.store.dir.root, depth, None if n == 1 else (lambda fp: fp % n == k)
        )
        if old_n == n:
            mine = [path for w, path in parts["queues"] if w == k]
            share = self.store.queue(depth, self.keep_queues)
            if mine and Path(mine[0]) != share.path:  # pragma: no cover - named by the store
                raise CheckpointError(f"unexpected queue file {mine[0]}")
            if mine:
                share.attach()
            self.frontier = share
        else:
            share = self.store.queue(depth, self.keep_queues)
            for _, path in parts["queues"]:
                for states, fps in read_queue_file(Path(path), self.store.from_wire):
                    for s, fp in zip(states, fps, strict=True):
                        if fp % n == k:
                            share.append(s, fp)
            self.frontier = share

    # --- the request loop ---------------------------------------------------------------------
    def serve(self, start: Start | None) -> None:
        start = start or Start()
        self.open_store(start)
        if start.resume is None:
            self.initial()
        else:
            self.load(*start.resume)
        conn = self.conn
        while True:
            while not conn.poll(1.0):
                self.check_parent()
            msg = conn.recv()
            op = msg[0]
            if op == "level":
                self.level(msg[1])
            elif op == "balance":
                self.balance(msg[1])
            elif op == "save":
                self.save(msg[1], msg[2])
            elif op == "parent":
                self.trace.flush()
                try:
                    parent = self.parents()[msg[1]]
                except KeyError:
                    parent = None
                conn.send(("parent", parent))
            elif op == "stop":
                if not self.keep_queues and self.store is not None:
                    self.store.cleanup()  # its own files (on an executor's host, nobody else will)
                return
            else:  # pragma: no cover - a coordinator bug
                raise RuntimeError(f"unknown request {op!r}")

    def parents(self) -> Any:
        """This worker's parent links as a mapping (kept across lookups: a chain walks down)."""
        if getattr(self, "_parents", None) is None:
            assert self.store is not None
            self.store.close()
            self._parents = self.store.parents()
        return self._parents


def worker_main(k, n, model, symmetry, props, conn, inboxes, shared, resume) -> None:
    """Entry point of a forked worker; never returns (``os._exit``: no atexit handlers or queue
    flushing of the coordinator's copy of the world run in the child)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for q in inboxes:
        q.cancel_join_thread()  # at exit, do not wait for peers to read what is still buffered
    code = 0
    try:
        with paused_gc():  # for the worker's whole life (checker.nogc: states are acyclic)
            Worker(k, n, model, symmetry, props, conn, inboxes, shared).serve(resume)
    except BaseException as e:  # reported to the coordinator, which fails the run
        code = 1
        report_failure(conn, k, e)
    os._exit(code)


def report_failure(conn, k: int, e: BaseException) -> None:
    """Tell the coordinator why worker ``k`` stopped: a checkpoint it cannot read is bad input,
    anything else an engine failure (one line, with where it was raised). Best effort: the
    coordinator may be gone already."""
    try:
        last = traceback.format_exception_only(type(e), e)[-1].strip()
        where = traceback.extract_tb(e.__traceback__)[-1] if e.__traceback__ else None
        at = f" at {os.path.basename(where.filename)}:{where.lineno}" if where else ""
        if isinstance(e, CheckpointError):  # bad input, not an engine failure
            conn.send(("error", ("checkpoint", str(e))))
        else:
            conn.send(("error", ("failure", f"worker {k}: {last}{at}")))
    except Exception:
        pass
