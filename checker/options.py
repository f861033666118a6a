"""What an engine is asked, in one object (:class:`Options`, each default decided there), the
search limits, and the property split every engine and the CLI use. Imported by the engines
themselves; the registry that runs them is :mod:`checker.engines` (which re-exports these)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, fields, replace
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
