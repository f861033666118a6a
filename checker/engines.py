"""One interface to every engine: the options, the registry, the property split.

Every engine is a function ``engine(model, options)``: the whole :class:`Options`, never its
fields unpacked. The registry (:data:`ENGINES`) names them, each entry's ``load`` a function
you can follow to the engine's module, imported only when the engine runs (so Spark's and
multiprocessing's imports stay out of a sequential run):

| kind       | name            | loads                                              | what it is                  |
|------------|-----------------|----------------------------------------------------|-----------------------------|
| `check`    | `bfs`           | :func:`checker.bfs.check_bfs`                      | sequential exhaustive BFS   |
| `check`    | `parallel`      | :func:`checker.parallel.check_parallel`            | BFS on local processes      |
| `check`    | `spark`         | :func:`checker.spark.engine.check_spark`           | BFS on Spark, a job a level |
| `check`    | `spark-barrier` | :func:`checker.spark.barrier.check_spark_barrier`  | BFS by workers in one Spark barrier stage |
| `simulate` | `seq`           | :func:`checker.simulate.simulate`                  | random walks, one process   |
| `simulate` | `spark`         | :func:`checker.spark.simulate.simulate_spark`      | random walks on Spark       |
| `liveness` | `scc`           | :func:`checker.liveness.check_liveness`            | SCCs of the state graph     |

Each entry (:class:`EngineSpec`) declares which of the options every engine is asked the same
way it supports beyond the basics, and which engine-specific ones (``workers``; Spark's
``master``/``partitions``/``tasks``; a simulation's ``walks``/``depth``/``seed``) it takes. Each
default is decided once, in :class:`Options`. Asking an engine for anything it does not support
raises :class:`EngineOptionError` (the CLI turns it into one line on stderr and exit 2) instead
of being silently ignored. :func:`run` is the one call:

    run("check", "bfs", model, Options(limits=Limits(max_states=10_000)))
    run("check", "parallel", model, Options(workers=4))
    run("simulate", "seq", model, Options(properties=["LeaderCompleteness"], walks=500))

An engine function may also be called with Options' fields as keywords
(``check_bfs(model, symmetry=False)``, :func:`takes_options`): they build the Options there,
the one place. The engines' errors are in :mod:`checker.errors`. :class:`Options`, :class:`Limits`
and the property split every engine and the CLI use (:func:`split_properties`) live in
:mod:`checker.options`, the checkpoint manifests in :mod:`checker.manifest`: the engines import
those, never this registry, which imports each engine only in its loader (no import cycle).
Both are re-exported here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from .errors import EngineOptionError
from .manifest import load_manifest
from .model import Model
from .options import (
    DEFAULT_CUT_EVERY,
    NO_LIMITS,
    EngineFn,
    Limits,
    Options,
    PropertySplit,
    open_properties,
    select_properties,
    split_properties,
    takes_options,
    unknown_properties,
)
from .result import CheckResult

# Options every engine accepts (a check result names its properties and configuration; a
# progress callback may simply never be called).
BASIC = frozenset({"properties", "config", "progress"})
# The engine-specific options: an engine that does not take one "does not take" it.
EXTRAS = frozenset(
    {"workers", "master", "partitions", "tasks", "cut_every", "walks", "depth", "seed", "graph"}
)


@dataclass(frozen=True)
class EngineSpec:
    """An engine of the registry: ``load`` returns its function (importing its module then);
    ``supports`` the :class:`Options` fields (and ``max_states``/``max_seconds``) it honours;
    ``extras`` the engine-specific ones (:data:`EXTRAS`) it takes."""

    kind: str
    name: str
    load_fn: Callable[[], EngineFn]
    description: str
    supports: frozenset[str]
    extras: frozenset[str] = frozenset()

    def load(self) -> EngineFn:
        try:
            return self.load_fn()
        except ImportError as e:
            raise EngineOptionError(f"engine {self.name!r} is not available: {e}") from None

    def check_options(self, options: Options) -> None:
        """Refuse what this engine does not support (one sentence, naming the option)."""
        asked = options.asked()
        for name in sorted(asked - EXTRAS - self.supports - BASIC):
            raise EngineOptionError(
                f"{self.kind} engine {self.name!r} does not support "
                f"{name.replace('_', '-')} (engines that do: "
                f"{', '.join(supporting(self.kind, name)) or 'none'})"
            )
        for name in sorted((asked & EXTRAS) - self.extras):
            raise EngineOptionError(
                f"{self.kind} engine {self.name!r} does not take {name.replace('_', '-')} "
                f"(it takes: {', '.join(sorted(self.extras)) or 'nothing more'})"
            )


# --- the registry: each entry's loader imports its engine when it runs ---------------------


def _bfs() -> EngineFn:
    from .bfs import check_bfs

    return check_bfs


def _parallel() -> EngineFn:
    from .parallel import check_parallel

    return check_parallel


def _spark() -> EngineFn:
    from .spark.engine import check_spark

    return check_spark


def _spark_barrier() -> EngineFn:
    from .spark.barrier import check_spark_barrier

    return check_spark_barrier


def _simulate() -> EngineFn:
    from .simulate import simulate

    return simulate


def _simulate_spark() -> EngineFn:
    from .spark.simulate import simulate_spark

    return simulate_spark


def _liveness() -> EngineFn:
    from .liveness import check_liveness

    return check_liveness


_SEARCH = frozenset({"symmetry", "limits", "max_states", "max_seconds"})

ENGINES: dict[tuple[str, str], EngineSpec] = {
    (e.kind, e.name): e
    for e in (
        EngineSpec(
            "check",
            "bfs",
            _bfs,
            "exhaustive breadth-first search in this process",
            _SEARCH | {"progress", "stop_at_first_violation", "store", "store_dir"},
        ),
        EngineSpec(
            "check",
            "parallel",
            _parallel,
            "exhaustive breadth-first search on local worker processes",
            _SEARCH
            | {"progress", "stop_at_first_violation", "checkpoint", "resume", "store", "store_dir"},
            extras=frozenset({"workers"}),
        ),
        EngineSpec(
            "check",
            "spark",
            _spark,
            "exhaustive breadth-first search on Spark",
            _SEARCH | {"progress", "checkpoint", "resume"},
            extras=frozenset({"master", "partitions", "cut_every"}),
        ),
        EngineSpec(
            "check",
            "spark-barrier",
            _spark_barrier,
            "exhaustive breadth-first search by the parallel engine's workers as the tasks of one"
            " Spark barrier stage",
            _SEARCH
            | {"progress", "stop_at_first_violation", "checkpoint", "resume", "store", "store_dir"},
            extras=frozenset({"master", "tasks"}),
        ),
        EngineSpec(
            "simulate",
            "seq",
            _simulate,
            "seeded random walks in this process",
            frozenset({"symmetry", "progress"}),
            extras=frozenset({"walks", "depth", "seed"}),
        ),
        EngineSpec(
            "simulate",
            "spark",
            _simulate_spark,
            "seeded random walks spread over Spark tasks",
            frozenset({"symmetry", "progress"}),
            extras=frozenset({"walks", "depth", "seed", "master", "tasks"}),
        ),
        EngineSpec(
            "liveness",
            "scc",
            _liveness,
            "liveness under fairness by strongly connected components of the state graph",
            frozenset({"max_states"}),
            extras=frozenset({"graph"}),
        ),
    )
}


def names(kind: str) -> list[str]:
    """The engine names of a kind (`check`, `simulate`, `liveness`), in registry order."""
    return [n for k, n in ENGINES if k == kind]


def supporting(kind: str, option: str) -> list[str]:
    return [e.name for (k, _), e in ENGINES.items() if k == kind and option in e.supports]


def engine(kind: str, name: str) -> EngineSpec:
    try:
        return ENGINES[kind, name]
    except KeyError:
        raise EngineOptionError(
            f"unknown {kind} engine {name!r}; the engines are: {', '.join(names(kind))}"
        ) from None


def run(
    kind: str, name: str, model: Model, options: Options | None = None, **fields_: Any
) -> CheckResult:
    """Run engine ``name`` of ``kind`` on ``model`` with ``options`` (Options' fields as
    keywords set some of them). Raises EngineOptionError for an option the engine does not
    support (before anything runs); the engine's own errors (:mod:`checker.errors`) pass
    through."""
    spec = engine(kind, name)
    options = Options.of(options, **fields_)
    spec.check_options(options)
    if options.symmetry and not getattr(model, "symmetric", True):
        # a model may have no symmetry (checker.model: the optional ``symmetric``)
        options = replace(options, symmetry=False)
    return spec.load()(model, options)


def check(model: Model, engine_name: str = "bfs", options: Options | None = None, **fields_: Any):
    """Exhaustive check of ``model`` with a `check` engine (default: sequential BFS)."""
    return run("check", engine_name, model, options, **fields_)


def simulate(
    model: Model, engine_name: str = "seq", options: Options | None = None, **fields_: Any
):
    """Random walks of ``model`` with a `simulate` engine (default: sequential)."""
    return run("simulate", engine_name, model, options, **fields_)


__all__ = [
    "DEFAULT_CUT_EVERY",
    "ENGINES",
    "EXTRAS",
    "NO_LIMITS",
    "EngineOptionError",
    "EngineSpec",
    "Limits",
    "Options",
    "PropertySplit",
    "check",
    "engine",
    "load_manifest",
    "names",
    "open_properties",
    "run",
    "select_properties",
    "simulate",
    "split_properties",
    "takes_options",
    "unknown_properties",
]
