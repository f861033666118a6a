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
the one place. The engines' errors are in :mod:`checker.errors`. The property split every
engine and the CLI use is :func:`split_properties`; :class:`Limits` lives here too
(re-exported by :mod:`checker.bfs`).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from .errors import EngineOptionError
from .model import Model, Property
from .progress import ProgressReporter
from .result import CheckResult

# --- limits and the property split ---------------------------------------------------------


@dataclass(frozen=True)
class Limits:
    """Search limits; reaching one ends the run as incomplete (never as a pass)."""

    max_states: int | None = None
    max_seconds: float | None = None


NO_LIMITS = Limits()

PROPERTY_KINDS = ("always", "action", "sometimes", "eventually")


def select_properties(model: Model, names: Collection[str] | None) -> list[Property]:
    """The model's properties named in ``names`` (all of them when None), in the model's order."""
    return [p for p in model.properties if names is None or p.name in names]


@dataclass
class PropertySplit:
    """The selected properties by how an engine checks them. Fresh lists: an engine may drop a
    property from its list once it is decided."""

    selected: list[Property]
    invariants: list[Property]  # `always`: on every reachable state
    action_properties: list[Property]  # `action`: on every transition
    sometimes_states: list[Property]  # `sometimes`, met by a state
    sometimes_transitions: list[Property]  # `sometimes`, met by a transition
    liveness: list[Property]  # `eventually`: only the liveness engine checks them

    @property
    def safety(self) -> list[Property]:
        """What a breadth-first engine decides: everything but liveness."""
        return [p for p in self.selected if p.kind != "eventually"]


def split_properties(model: Model, names: Collection[str] | None = None) -> PropertySplit:
    """Split the selected properties (all when ``names`` is None) by kind (docs/PROTOCOL.md)."""
    props = select_properties(model, names)
    return PropertySplit(
        selected=props,
        invariants=[p for p in props if p.kind == "always"],
        action_properties=[p for p in props if p.kind == "action"],
        sometimes_states=[p for p in props if p.kind == "sometimes" and not p.on_transitions],
        sometimes_transitions=[p for p in props if p.kind == "sometimes" and p.on_transitions],
        liveness=[p for p in props if p.kind == "eventually"],
    )


def open_properties(
    props: Sequence[Property],
    kind: str,
    done: Collection[str],
    on_transitions: bool | None = None,
) -> tuple[str, ...]:
    """The names of the properties of ``kind`` in ``props`` not yet decided (not in ``done``);
    for `sometimes`, only those on transitions (True) or on states (False) when asked. What a
    level-synchronous engine ships to its workers as still open."""
    return tuple(
        p.name
        for p in props
        if p.kind == kind
        and p.name not in done
        and (on_transitions is None or p.on_transitions == on_transitions)
    )


def unknown_properties(
    model: Model, names: Sequence[str] | None, kinds: Collection[str] = PROPERTY_KINDS
) -> tuple[list[str], list[str]]:
    """(names given that are not properties of one of ``kinds``, the names that are): for the
    CLI's "unknown property" error."""
    known = [p.name for p in model.properties if p.kind in kinds]
    return [n for n in names or [] if n not in known], known


# --- options --------------------------------------------------------------------------------

DEFAULT_CUT_EVERY = 8  # spark (levels): cut the RDD lineage every this many levels


@dataclass
class Options:
    """Everything an engine is asked, in one object; each field's default is the one default of
    that option. A field left at its default is "not asked for"; an engine that does not
    support an option that is asked for refuses it (EngineOptionError).

    Every engine is asked the same way: ``properties``: the names to check (all when None).
    ``symmetry``: reduce by the model's symmetry. ``limits``: state and time limits
    (incomplete when reached). ``progress``: a progress callback (checker.progress).
    ``stop_at_first_violation``: end at the first violation of an invariant or action
    property. ``checkpoint``/``resume``: a directory to checkpoint the search to / to resume it
    from. ``config``: the model's configuration, copied into the result. ``store``: where a
    breadth-first search keeps its queue and parent links, "memory" or "disk"
    (:mod:`checker.store`); ``store_dir``: the disk store's directory (default: the checkpoint
    directory, else a temporary one).

    Engine-specific (:data:`EXTRAS`; an entry's ``extras`` says which engine takes which):
    ``workers``: local worker processes (parallel). ``master``: the Spark master URL (None: the
    running SparkContext, else ``local[*]``). ``partitions``: fingerprint partitions of the
    level-per-job Spark engine (None: the default parallelism, at least 2). ``tasks``: Spark
    tasks of the barrier engine and of the Spark walks (None: Spark's default parallelism).
    ``cut_every``: the level-per-job Spark engine cuts its lineage every this many levels.
    ``walks``/``depth``/``seed``: a simulation's walks, their length, the first seed.
    ``graph``: the liveness engine's state graph, when already built."""

    properties: list[str] | None = None
    symmetry: bool = True
    limits: Limits = NO_LIMITS
    progress: ProgressReporter | None = None
    stop_at_first_violation: bool = False
    checkpoint: str | None = None
    resume: str | None = None
    config: dict[str, Any] | None = None
    store: str = "memory"
    store_dir: str | None = None
    workers: int = 1
    master: str | None = None
    partitions: int | None = None
    tasks: int | None = None
    cut_every: int = DEFAULT_CUT_EVERY
    walks: int = 1000
    depth: int = 100
    seed: int = 0
    graph: Any = None

    @classmethod
    def of(cls, options: Options | None = None, **fields_: Any) -> Options:
        """``options`` (default: all defaults) with some fields set; ``max_states`` and
        ``max_seconds`` set the limits. An unknown name is a TypeError, as for a function."""
        out = options or cls()
        if not fields_:
            return out
        limits = {k: fields_.pop(k) for k in ("max_states", "max_seconds") if k in fields_}
        if limits:
            fields_["limits"] = replace(fields_.get("limits", out.limits), **limits)
        return replace(out, **fields_)

    def asked(self) -> set[str]:
        """The options set away from their defaults."""
        out = set()
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not f.default and value != f.default:
                out.add(f.name)
        if self.limits.max_states is not None:
            out.add("max_states")
        if self.limits.max_seconds is not None:
            out.add("max_seconds")
        out.discard("limits")
        return out


EngineFn = Callable[[Model, Options], CheckResult]


def takes_options(fn: EngineFn) -> Callable[..., CheckResult]:
    """An engine function's signature, ``fn(model, options)``, also callable with Options'
    fields as keywords (``check_bfs(model, symmetry=False, max_states=100)``), for scripts and
    tests: the keywords build the Options here (:meth:`Options.of`)."""

    @functools.wraps(fn)
    def engine(model: Model, options: Options | None = None, **fields_: Any) -> CheckResult:
        return fn(model, Options.of(options, **fields_))

    return engine


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


# --- checkpoint/resume -----------------------------------------------------------------------


def load_manifest(directory: str, name: str, error: type[Exception]) -> Any:
    """The JSON manifest ``name`` of the checkpoint in ``directory``, for the engines that
    resume (parallel, spark; each checks its own format and identity); ``error`` (the engine's
    CheckpointError, one line) when it is missing or unreadable."""
    path = Path(directory) / name
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise error(f"no checkpoint to resume in {directory} (no {name})") from None
    except (OSError, ValueError) as e:
        raise error(f"cannot read {path}: {e}") from None


def identity_mismatch(directory: str, saved: dict, mine: dict) -> str:
    """The one-line reason a checkpoint's identity ``saved`` is not this run's ``mine``, naming
    each field that differs with both values (``config.records: 1 in the checkpoint, 2 now``),
    nested one level (the bounds live in ``config``); "" when they are the same."""
    diffs = []
    for k in sorted(set(saved) | set(mine), key=str):
        a, b = saved.get(k), mine.get(k)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            for f in sorted(set(a) | set(b), key=str):
                if a.get(f) != b.get(f):
                    diffs.append(f"{k}.{f}: {a.get(f)!r} in the checkpoint, {b.get(f)!r} now")
        elif isinstance(a, list | tuple) and isinstance(b, list | tuple) and len(a) + len(b) > 8:
            diffs.append(f"{k} ({len(a)} entries in the checkpoint, {len(b)} now)")
        else:
            diffs.append(f"{k}: {a!r} in the checkpoint, {b!r} now")
    if not diffs:
        return ""
    return f"checkpoint in {directory} was made for another check ({'; '.join(diffs)})"


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
