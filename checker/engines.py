"""One interface to every engine: common options, per-engine extras and a named registry.

The engines themselves stay where they are (free functions with keyword arguments):

| kind       | name       | function                                  | what it is                  |
|------------|------------|-------------------------------------------|-----------------------------|
| `check`    | `bfs`      | :func:`checker.bfs.check_bfs`             | sequential exhaustive BFS   |
| `check`    | `parallel` | :func:`checker.parallel.check_parallel`   | BFS on local processes      |
| `check`    | `spark`    | :func:`checker.spark.engine.check_spark`  | BFS on Spark, a job a level |
| `check`    | `spark-barrier` | :func:`checker.spark.barrier.check_spark_barrier` | BFS by workers in one Spark barrier stage |
| `simulate` | `seq`      | :func:`checker.simulate.simulate`         | random walks, one process   |
| `simulate` | `spark`    | :func:`checker.spark.simulate.simulate_spark` | random walks on Spark   |
| `liveness` | `scc`      | :func:`checker.liveness.check_liveness`   | SCCs of the state graph     |

Each entry (:class:`EngineSpec`) declares which of the common options (:class:`Options`) it
supports beyond the basics and which per-engine extras it takes (``workers``; Spark's
``master``/``partitions``; a simulation's ``walks``/``depth``/``seed``). Asking an engine for
anything it does not support raises :class:`EngineOptionError` (the CLI turns it into one line on
stderr and exit 2) instead of being silently ignored. :func:`run` is the one call:

    run("check", "bfs", model, Options(limits=Limits(max_states=10_000)))
    run("check", "parallel", model, Options(), workers=4)
    run("simulate", "seq", model, Options(properties=["LeaderCompleteness"]), walks=500)

The property split every engine and the CLI use (invariants, action properties, `sometimes` on
states and on transitions, liveness) is :func:`split_properties`; :class:`Limits` lives here too
(re-exported by :mod:`checker.bfs`). Nothing here imports an engine until it is run, so Spark's
and multiprocessing's imports stay out of a sequential run.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

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


@dataclass
class Options:
    """What every engine is asked the same way. ``None``/default means "not asked for"; an
    engine that does not support an option that is asked for refuses it (EngineOptionError).

    ``properties``: the names to check (all when None). ``symmetry``: reduce by the model's
    symmetry. ``limits``: state and time limits (incomplete when reached). ``progress``: a
    progress callback (checker.progress). ``stop_at_first_violation``: end at the first violation
    of an invariant or action property. ``checkpoint``/``resume``: a directory to checkpoint the
    search to / to resume it from. ``config``: the model's configuration, copied into the
    result. ``store``: where a breadth-first search keeps its queue and parent links, "memory"
    or "disk" (:mod:`checker.store`); ``store_dir``: the disk store's directory (default: the
    checkpoint directory, else a temporary one)."""

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

    def asked(self) -> set[str]:
        """The options set away from their defaults."""
        out = set()
        for f in fields(self):
            value = getattr(self, f.name)
            if value != f.default:
                out.add(f.name)
        if self.limits.max_states is not None:
            out.add("max_states")
        if self.limits.max_seconds is not None:
            out.add("max_seconds")
        out.discard("limits")
        return out


class EngineOptionError(ValueError):
    """An engine was asked for an option it does not support, or an unknown engine."""


# Options every engine accepts (a check result names its properties and configuration; a
# progress callback may simply never be called).
BASIC = frozenset({"properties", "config", "progress"})


@dataclass(frozen=True)
class EngineSpec:
    """An engine of the registry: ``target`` is ``module:function``; ``supports`` the
    :class:`Options` fields (and ``max_states``/``max_seconds``) it honours; ``extras`` its own
    keyword arguments, with ``defaults`` for the ones it always gets."""

    kind: str
    name: str
    target: str
    description: str
    supports: frozenset[str]
    extras: frozenset[str] = frozenset()
    defaults: Mapping[str, Any] = field(default_factory=dict)

    def load(self) -> Callable[..., CheckResult]:
        module, fn = self.target.split(":")
        try:
            return getattr(importlib.import_module(module), fn)
        except ImportError as e:
            raise EngineOptionError(f"engine {self.name!r} is not available: {e}") from None

    def check_options(self, options: Options, extras: Mapping[str, Any]) -> None:
        """Refuse what this engine does not support (one sentence, naming the option)."""
        for name in sorted(options.asked() - self.supports - BASIC):
            raise EngineOptionError(
                f"{self.kind} engine {self.name!r} does not support "
                f"{name.replace('_', '-')} (engines that do: "
                f"{', '.join(supporting(self.kind, name)) or 'none'})"
            )
        for name in sorted(set(extras) - self.extras):
            raise EngineOptionError(
                f"{self.kind} engine {self.name!r} does not take {name.replace('_', '-')} "
                f"(it takes: {', '.join(sorted(self.extras)) or 'nothing more'})"
            )

    def kwargs(
        self, options: Options, extras: Mapping[str, Any], model: Any = None
    ) -> dict[str, Any]:
        """The engine function's keyword arguments for ``options`` and ``extras`` (and
        ``model``, whose optional ``symmetric`` may turn symmetry off)."""
        kw: dict[str, Any] = {
            "properties": options.properties,
            "progress": options.progress,
            "config": options.config,
        }
        if "symmetry" in self.supports:
            # a model may have no symmetry (checker.model: the optional ``symmetric``)
            kw["symmetry"] = options.symmetry and getattr(model, "symmetric", True)
        if "limits" in self.supports:
            kw["limits"] = options.limits
        elif "max_states" in self.supports:
            kw["max_states"] = options.limits.max_states
        if options.stop_at_first_violation:
            kw["stop_at_first_violation"] = True
        if "checkpoint" in self.supports:
            kw["checkpoint"] = options.checkpoint
        if "resume" in self.supports:
            kw["resume"] = options.resume
        if "store" in self.supports:
            kw["store"] = options.store
            kw["store_dir"] = options.store_dir
        if "progress" not in self.supports:
            kw.pop("progress")
        return {**kw, **self.defaults, **extras}


_SEARCH = frozenset({"symmetry", "limits", "max_states", "max_seconds"})

ENGINES: dict[tuple[str, str], EngineSpec] = {
    (e.kind, e.name): e
    for e in (
        EngineSpec(
            "check",
            "bfs",
            "isr.checker.bfs:check_bfs",
            "exhaustive breadth-first search in this process",
            _SEARCH | {"progress", "stop_at_first_violation", "store", "store_dir"},
        ),
        EngineSpec(
            "check",
            "parallel",
            "isr.checker.parallel:check_parallel",
            "exhaustive breadth-first search on local worker processes",
            _SEARCH
            | {"progress", "stop_at_first_violation", "checkpoint", "resume", "store", "store_dir"},
            extras=frozenset({"workers"}),
            defaults={"workers": 1},
        ),
        EngineSpec(
            "check",
            "spark",
            "isr.checker.spark.engine:check_spark",
            "exhaustive breadth-first search on Spark",
            _SEARCH | {"progress", "checkpoint", "resume"},
            extras=frozenset({"master", "partitions", "cut_every"}),
        ),
        EngineSpec(
            "check",
            "spark-barrier",
            "isr.checker.spark.barrier:check_spark_barrier",
            "exhaustive breadth-first search by the parallel engine's workers as the tasks of one"
            " Spark barrier stage",
            _SEARCH
            | {"progress", "stop_at_first_violation", "checkpoint", "resume", "store", "store_dir"},
            extras=frozenset({"master", "tasks"}),
        ),
        EngineSpec(
            "simulate",
            "seq",
            "isr.checker.simulate:simulate",
            "seeded random walks in this process",
            frozenset({"symmetry", "progress"}),
            extras=frozenset({"walks", "depth", "seed"}),
        ),
        EngineSpec(
            "simulate",
            "spark",
            "isr.checker.spark.simulate:simulate_spark",
            "seeded random walks spread over Spark tasks",
            frozenset({"symmetry", "progress"}),
            extras=frozenset({"walks", "depth", "seed", "master", "tasks"}),
        ),
        EngineSpec(
            "liveness",
            "scc",
            "isr.checker.liveness:check_liveness",
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
    kind: str, name: str, model: Model, options: Options | None = None, **extras: Any
) -> CheckResult:
    """Run engine ``name`` of ``kind`` on ``model``. Raises EngineOptionError for an option the
    engine does not support (before anything runs); the engine's own errors pass through."""
    spec = engine(kind, name)
    options = options or Options()
    spec.check_options(options, extras)
    return spec.load()(model, **spec.kwargs(options, extras, model))


def check(model: Model, engine_name: str = "bfs", options: Options | None = None, **extras: Any):
    """Exhaustive check of ``model`` with a `check` engine (default: sequential BFS)."""
    return run("check", engine_name, model, options, **extras)


def simulate(model: Model, engine_name: str = "seq", options: Options | None = None, **extras: Any):
    """Random walks of ``model`` with a `simulate` engine (default: sequential)."""
    return run("simulate", engine_name, model, options, **extras)


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


# --- the CLI's vocabulary -------------------------------------------------------------------

# `--engine local|spark` on every command. `local` is this machine: for `check`, the sequential
# BFS, or the parallel one when there are workers or a checkpoint to write or resume; for
# `simulate`, the sequential walks. Older spellings are accepted as deprecated aliases.
FAMILIES = ("local", "spark")
DEPRECATED = {
    "check": {"bfs": "local"},
    "simulate": {"seq": "local"},
    "validate": {"sequential": "local"},
}


def local_check_engine(workers: int = 1, checkpoint: bool = False) -> str:
    """The `check` engine `--engine local` stands for."""
    return "parallel" if workers > 1 or checkpoint else "bfs"


def registry_name(
    command: str,
    family: str,
    *,
    workers: int = 1,
    checkpoint: bool = False,
    spark_mode: str = "barrier",
) -> str:
    """The registry engine behind `isr COMMAND --engine FAMILY` (and, for `check` on Spark,
    ``--spark-mode``: ``barrier`` is "spark-barrier", ``levels`` is "spark")."""
    if family == "spark":
        return "spark-barrier" if command == "check" and spark_mode == "barrier" else "spark"
    if command == "check":
        return local_check_engine(workers, checkpoint)
    if command == "simulate":
        return "seq"
    return family


__all__ = [
    "DEPRECATED",
    "ENGINES",
    "FAMILIES",
    "NO_LIMITS",
    "EngineOptionError",
    "EngineSpec",
    "Limits",
    "Options",
    "PropertySplit",
    "check",
    "engine",
    "load_manifest",
    "local_check_engine",
    "names",
    "open_properties",
    "registry_name",
    "run",
    "select_properties",
    "simulate",
    "split_properties",
    "unknown_properties",
]
