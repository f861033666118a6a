"""The parallel engine's workers over TCP (checker.parallel.net), started here as forked
processes with a rendezvous of our own instead of Spark's barrier stage: the same answers as the
forked pool, and the coordinator's abort flag that only the next level order can lower."""

from __future__ import annotations

import multiprocessing
import threading
import time
from multiprocessing import AuthenticationError
from multiprocessing.connection import Client

from isr.checker.bfs import Limits, check_bfs
from isr.checker.engines import Options
from isr.checker.parallel.engine import LevelRun
from isr.checker.parallel.net import CoordinatorLink, Flag, NetPool, NetShared, serve_worker
from isr.checker.parallel.worker import LevelOrder
from isr.spec import Config, IsrSpec

from .toys import tokens, with_dec


class _Forked:
    """Workers as forked processes; ``allGather`` through a Manager dict and a Barrier."""

    def __init__(self, n, model, symmetry, props, resume, stray=False):
        ctx = multiprocessing.get_context("fork")
        self.mgr = ctx.Manager()
        addresses, barrier = self.mgr.dict(), ctx.Barrier(n)
        self.procs = []

        def start(rendezvous):
            if stray:  # a connection with the wrong key as well: refused, and the run goes on
                refused = []

                def intrude():
                    try:
                        Client(rendezvous.hub, authkey=b"not the run's key")
                    except AuthenticationError:
                        refused.append(True)

                self.intruder = threading.Thread(target=intrude, daemon=True)
                self.intruder.start()
                self.refused = refused
            for k in range(n):

                def exchange(mine, k=k):
                    addresses[k] = mine
                    barrier.wait()
                    return [addresses[j] for j in range(n)]

                args = (k, rendezvous, model, symmetry, props, resume, "127.0.0.1", exchange)
                p = ctx.Process(target=serve_worker, args=args, daemon=True)
                p.start()
                self.procs.append(p)
            return self

        self.pool = NetPool(n, start, "127.0.0.1", "127.0.0.1", 30.0)

    def failed(self):
        codes = [p.exitcode for p in self.procs if p.exitcode not in (None, 0)]
        return f"a worker exited with {codes[0]}" if codes else None

    def join(self, timeout):
        for p in self.procs:
            p.join(timeout)
        return all(p.exitcode is not None for p in self.procs)

    def cancel(self):
        for p in self.procs:
            p.terminate()


def _run(model, n=2, limits=None, stop=False, stray=False):
    def factory(n, model, symmetry, props, resume):
        forked = _Forked(n, model, symmetry, props, resume, stray)
        if stray:
            forked.intruder.join(10)
            assert forked.refused == [True]
        return forked.pool

    options = Options(workers=n, limits=limits or Limits(), config={}, stop_at_first_violation=stop)
    run = LevelRun(model, options, pool_factory=factory, engine="net")
    return run.execute(None, False)


def test_same_answers_as_bfs_on_toys_and_the_spec():
    for model in (tokens(3, 3), with_dec(6)):
        res, ref = _run(model), check_bfs(model)
        assert (res.distinct_states, res.states_generated, res.depth) == (
            ref.distinct_states,
            ref.states_generated,
            ref.depth,
        )
        assert [(p.name, p.holds) for p in res.properties] == [
            (p.name, p.holds) for p in ref.properties
        ]
    model = IsrSpec(Config(replicas=3, records=1, epochs=2, crashes=0))
    res = _run(model, n=3, stray=True)
    assert res.distinct_states == 15_700 and res.complete and res.engine == "net"
    bad = IsrSpec(Config(replicas=2, records=1, epochs=2, crashes=1, protocol="hw-truncation"))
    res, ref = _run(bad, stop=True), check_bfs(bad, stop_at_first_violation=True)
    assert res.stop_reason == "first-violation"
    assert {p.name: p.counterexample.length for p in res.violated} == {
        p.name: p.counterexample.length for p in ref.violated
    }


def test_a_deadline_crosses_machines_as_time_left():
    model = IsrSpec(Config(replicas=3, records=2, epochs=2, crashes=1))
    t0 = time.monotonic()
    res = _run(model, limits=Limits(max_seconds=1.5))
    assert not res.complete and res.stop_reason == "max-seconds" and res.exit_code() == 3
    assert time.monotonic() - t0 < 30


class _Conn:
    """A connection whose coordinator sends what the test gives it."""

    def __init__(self, msgs):
        self.msgs = list(msgs)
        self.sent = []

    def recv(self):
        if not self.msgs:
            time.sleep(0.2)
            raise EOFError
        return self.msgs.pop(0)

    def send(self, msg):
        self.sent.append(msg)


def _link(shared, msgs):
    link = CoordinatorLink(_Conn(msgs), 0, shared)
    link.gone.wait(5)  # the reader has taken every message
    return link


def test_during_a_level_the_coordinator_only_raises_the_abort_flag():
    order = LevelOrder(0, (), (), (), (), 2.0, None, False)
    shared = NetShared([0, 0], [0, 0], Flag())
    shared.abort.value = 1  # the worker stopped by itself (a limit, a violation)
    _link(shared, [("ctl", 0, [0, 3], 0)])  # a ctl of the running level: it cannot lower it
    assert shared.abort.value == 1 and shared.sizes == [0, 3]
    # the ctl sent just before the next level order sets the flag, either way
    link = _link(shared, [("ctl", 1, [0, 7], 0), ("level", order)])
    assert shared.abort.value == 0 and shared.sizes == [0, 7] and link.level == 1
    got = link.requests.get_nowait()
    assert got[0] == "level" and got[1].deadline > time.monotonic()  # time left -> a deadline
    _link(shared, [("ctl", 0, [0, 7], 1)])  # another worker stopped: raised
    assert shared.abort.value == 1
