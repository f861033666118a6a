"""Simulation on Spark: the seeded random walks of :mod:`checker.simulate`, in parallel.

Walks are split into contiguous index ranges, one task each; walk ``i`` draws from the same
seeded generator as in the sequential engine, so both find the same violations (the lowest
violating walk index wins per property) and the same distinct-state count. Tasks return small
outcomes; their fingerprints are counted distinct on the cluster, never collected. Shrinking
the counterexamples happens on the driver.
"""

from __future__ import annotations

import time
from array import array
from functools import partial
from typing import Any

from ..model import Model
from ..options import Options, takes_options
from ..result import CheckResult
from ..simulate import Outcome, finish, merge, run_walks
from .session import spark_context


def _run_range(model: Model, kwargs: dict[str, Any], bounds: tuple[int, int]):
    out = run_walks(model, range(*bounds), **kwargs)
    fps = array("q", out.fps)
    out.fps = set()
    return out, fps


def _outcome(pair: tuple[Outcome, array]) -> Outcome:
    return pair[0]


def _fps(pair: tuple[Outcome, array]) -> array:
    return pair[1]


@takes_options
def simulate_spark(model: Model, options: Options) -> CheckResult:
    """Like :func:`checker.simulate.simulate`, with the walks spread over ``options.tasks``
    Spark tasks (default: four per core of the cluster) on ``options.master``."""
    walks, depth, seed = options.walks, options.depth, options.seed
    properties, symmetry, progress = options.properties, options.symmetry, options.progress
    if walks < 0 or depth < 0:
        raise ValueError("walks and depth must be >= 0")
    tasks = options.tasks
    with spark_context(options.master, f"isr simulate {model.name}", model) as sc:
        from pyspark import StorageLevel

        t0 = time.perf_counter()
        n = max(1, min(walks, tasks or 4 * sc.defaultParallelism))
        bounds = [(walks * k // n, walks * (k + 1) // n) for k in range(n)]
        kwargs = dict(depth=depth, seed=seed, properties=properties, symmetry=symmetry)
        rdd = sc.parallelize(bounds, n).map(partial(_run_range, model, kwargs))
        rdd.persist(StorageLevel.MEMORY_AND_DISK)
        try:
            total = Outcome()
            for o in rdd.map(_outcome).collect():
                total = merge(total, o)
            distinct = rdd.flatMap(_fps).distinct().count()
        finally:
            rdd.unpersist()
        seconds = time.perf_counter() - t0
        if progress is not None:
            progress(
                {
                    "seconds": seconds,
                    "generated": total.walks + total.steps,
                    "distinct": distinct,
                    "queue": 0,
                    "depth": total.longest,
                    "rate": distinct / seconds if seconds > 0 else 0.0,
                    "final": True,
                }
            )
        return finish(
            model,
            total,
            options,
            engine="spark-simulate",
            seconds=seconds,
            distinct=distinct,
            extra={"spark": {"master": sc.master, "tasks": n}},
        )


__all__ = ["simulate_spark"]
