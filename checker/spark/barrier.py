"""BFS on Spark as one long barrier stage: ``check_spark_barrier``.

The level-per-job engine (:mod:`.engine`) pays Spark's fixed costs at every BFS level: a job,
a shuffle, PySpark's serialisation of every candidate state, about 1 s per level on two cores
(checker/spark/README.md). On a model of a few million states that is as much as the search.

This engine pays them once. It starts one Spark job of ``tasks`` tasks in barrier execution mode
(Spark's gang scheduling: all tasks start together or none does, and a failed task fails the
stage). Each task is a worker of the parallel engine (:mod:`checker.parallel.worker`, the same
compiled code), talking to its peers and to the coordinator here on the driver over
authenticated TCP (:mod:`checker.parallel.net`); Spark's ``allGather`` tells the tasks each
other's addresses. The driver's coordinator is the parallel engine's
(:class:`checker.parallel.engine.LevelRun`): levels, balancing, verdicts, counterexamples,
checkpoints and limits are exactly those of ``isr check --workers N``. So are the answers:
the same distinct states, depth, verdicts and shortest counterexample lengths as one process.

What Spark gives here: the executors (on any number of machines, placed by its scheduler), the
shipping of the model and code to them, and the failure handling (a lost task fails the stage,
and this run with it, as :class:`~checker.parallel.pool.EngineFailure`: the coordinator never
mixes a restarted worker into a search). What it does not: a barrier stage is not retried here,
since the visited set lives in the tasks; ``--checkpoint DIR`` (on storage every executor and the
driver share) is how a long run survives a loss, and its checkpoints are the parallel engine's
own, so a run checkpointed on Spark can be resumed by ``isr check --workers N`` and the
reverse.

Needs ``tasks`` free task slots at once (Spark refuses a barrier stage larger than the cluster);
the default is the cluster's default parallelism (``local[2]``: 2).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ..model import Model
from ..options import Options, takes_options
from ..parallel.checkpoint import one_directory
from ..parallel.engine import LevelRun
from ..parallel.net import NetPool, Rendezvous, serve_worker
from ..result import CheckResult
from .session import _first_line, spark_context
from .session import options as session_options


def _barrier_task(rendezvous: Rendezvous, model, symmetry, props, resume, _it):
    """One Spark task: worker ``partitionId`` of the run (runs until the coordinator says
    stop)."""
    from pyspark import BarrierTaskContext

    ctx = BarrierTaskContext.get()
    k = ctx.partitionId()
    host = ctx.getTaskInfos()[k].address.rpartition(":")[0]
    serve_worker(k, rendezvous, model, symmetry, props, resume, host, ctx.allGather)
    return iter(())


class _BarrierJob:
    """The barrier stage, run by a thread of the driver (``collect`` blocks until it ends)."""

    def __init__(self, sc: Any, n: int, task: Callable) -> None:
        self.sc = sc
        self.group = f"isr-barrier-{uuid.uuid4().hex}"
        self.ended: str | None = None
        self.thread = threading.Thread(
            target=self._run, args=(n, task), daemon=True, name="isr-barrier-job"
        )
        self.thread.start()

    def _run(self, n: int, task: Callable) -> None:
        try:
            self.sc.setJobGroup(self.group, "isr check: the workers", interruptOnCancel=True)
            self.sc.parallelize(range(n), n).barrier().mapPartitions(task).collect()
            self.ended = "the Spark job ended"
        except Exception as e:  # Py4J / PySpark: the stage failed or was cancelled
            self.ended = f"the Spark job failed: {_first_line(e)}"

    def failed(self) -> str | None:
        return self.ended

    def join(self, timeout: float) -> bool:
        self.thread.join(timeout)
        return not self.thread.is_alive()

    def cancel(self) -> None:
        self.sc.cancelJobGroup(self.group)


def spark_pool_factory(sc: Any) -> Callable[..., NetPool]:
    """A ``pool_factory`` for :class:`LevelRun` whose workers are the tasks of one barrier
    stage on ``sc``."""
    conf = sc.getConf()
    host = conf.get("spark.driver.host", "127.0.0.1")
    bind = conf.get("spark.driver.bindAddress", host)

    def factory(n: int, model: Model, symmetry: bool, props: list, resume: Any) -> NetPool:
        def start(rendezvous: Rendezvous) -> _BarrierJob:
            def task(it, rendezvous=rendezvous):
                return _barrier_task(rendezvous, model, symmetry, props, resume, it)

            return _BarrierJob(sc, n, task)

        return NetPool(n, start, bind, host, session_options().budget)

    return factory


@takes_options
def check_spark_barrier(model: Model, options: Options) -> CheckResult:
    """Explore every reachable state of ``model`` with ``options.tasks`` Spark tasks as the
    parallel engine's workers; same answers as ``check_bfs`` (see the module's docstring).
    ``options``: checker.engines.Options (or its fields as keywords); ``store``/``store_dir``: as :func:`checker.parallel.check_parallel`'s (a disk store's
    directory is a path on every executor's host: each task keeps its own files there, and
    removes them at the end unless it is a checkpoint's).

    ``master``: Spark master URL (default: the running SparkContext, else ``local[*]``).
    ``tasks``: workers (default: Spark's default parallelism, at least 1)."""
    directory = one_directory(options.checkpoint, options.resume)
    if options.tasks is not None and options.tasks < 1:
        raise ValueError("tasks must be at least 1")
    with spark_context(options.master, f"isr check {model.name}", model) as sc:
        n = options.tasks or max(1, sc.defaultParallelism)
        run = LevelRun(
            model,
            replace(options, workers=n),
            pool_factory=spark_pool_factory(sc),
            engine="spark",
        )
        run.extra = {"spark": {"mode": "barrier", "master": sc.master, "tasks": n}}
        return run.execute(directory, options.resume is not None)
