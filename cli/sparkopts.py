"""The engine options every command shares (`isr check`, `isr simulate`, `isr validate`): the
CLI's vocabulary for engines (`--engine local|spark` and which registry engine each stands
for), and the one place where the engines' errors (checker.errors) become a one-line error with
exit 2 or 5 (never the exit code of a verdict): :class:`EngineChoice`, what
:func:`choose_engine` resolves a command's options to.

    --engine local|spark       where the work runs (default local: this machine)
    --workers N                `isr check` only: local worker processes (default: every core,
                               or 1 for a small model: default_workers)
    --spark-master URL         Spark master for --engine spark (default local[*])
    --spark-conf KEY=VALUE     any Spark setting (repeatable), e.g. spark.executor.memory=2g
    --driver-host HOST         where executors reach the driver (default: loopback for local[*],
                               this machine's address on the route to a spark:// master)
    --driver-bind-address IP   where the driver listens (default: the driver host)
    --no-spark-ui              no web UI (it is on by default; its address is printed)
    --spark-timeout S          start-up budget: Spark must start and give an executor within S
                               seconds (default 60, and never more than --max-seconds)

Older spellings still work, each with a one-line deprecation notice on stderr (printed once the
command has run, left out when it ends in bad input, whose one line is the error):
`check --engine bfs`, `simulate --engine seq`, `validate --engine sequential` (all now
`--engine local`) and `--master URL` (now `--spark-master URL`). Which registry engine
(checker.engines) a command's `--engine` stands for is :func:`registry_name`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from isr.checker import engines
from isr.checker.errors import (
    CheckpointError,
    EngineFailure,
    EngineOptionError,
    SparkError,
)
from isr.checker.result import CheckResult
from isr.spec.size import estimate_log10_states

from .errors import ENGINE_FAILURE, UsageError
from .models import int_in, positive_seconds

# --- the CLI's vocabulary ---------------------------------------------------------------------

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
    """The registry engine (checker.engines) behind `isr COMMAND --engine FAMILY` (and, for
    `check` on Spark, ``--spark-mode``: ``barrier`` is "spark-barrier", ``levels`` is
    "spark")."""
    if family == "spark":
        return "spark-barrier" if command == "check" and spark_mode == "barrier" else "spark"
    if command == "check":
        return local_check_engine(workers, checkpoint)
    if command == "simulate":
        return "seq"
    return family


def engine_words(kind: str, name: str) -> str:
    """The options that chose registry engine ``name``: `--engine local`, `--engine spark
    --spark-mode levels`, ... (for an error naming what the user asked for)."""
    if kind != "check":
        return ""
    family = "spark" if name.startswith("spark") else "local"
    mode = " --spark-mode levels" if name == "spark" else ""
    return f" (--engine {family}{mode})"


@dataclass(frozen=True)
class EngineChoice:
    """What a command's engine options resolve to (:func:`choose_engine`): where it runs
    (``family``: local or spark), the registry engine (checker.engines) that runs it, and for
    `check` the state store. ``run`` is the one place an engine's errors meet the exit codes."""

    command: str
    family: str
    name: str
    store: str | None = None
    store_dir: str | None = None

    def run(self, model, options: engines.Options) -> CheckResult | int:
        """Run the engine: an option it does not support, a checkpoint it cannot resume and
        Spark that cannot start are bad input (UsageError: one line, exit 2); a dead worker is
        an engine failure (one line on stderr; returns exit 5). Whatever the engine, the same
        handling. A Spark check of a model too small to pay off ends with a note."""
        if self.store is not None:
            options.store, options.store_dir = self.store, self.store_dir
        try:
            res = engines.run(self.command, self.name, model, options)
        except EngineOptionError as e:
            raise UsageError(f"{e}{engine_words(self.command, self.name)}") from None
        except CheckpointError as e:
            raise UsageError(str(e)) from None
        except SparkError as e:
            raise UsageError(f"spark: {e}") from None
        except EngineFailure as e:
            print(f"isr: engine failure: {e}", file=sys.stderr)
            return ENGINE_FAILURE
        if self.command == "check" and self.name == "spark":
            note = check_note(res)
            if note:
                print(note, file=sys.stderr)
        return res


def choose_engine(
    args: argparse.Namespace, command: str, model=None, max_seconds: float | None = None
) -> EngineChoice:
    """`--engine`, `--workers`, `--spark-mode`, `--store`/`--store-dir` and the Spark flags of
    `isr COMMAND` resolved, each default decided here (``args.workers`` is set when not given:
    :func:`default_workers`), Spark configured when it runs there; bad combinations:
    UsageError. ``model``: the model `check` searches (its size decides the defaults)."""
    family = engine_family(args, command)
    store = store_dir = None
    if command == "check":
        if args.workers is None:
            args.workers = default_workers(model, family)
        checkpoint = bool(args.checkpoint or args.resume)
        name = registry_name(
            command,
            family,
            workers=args.workers,
            checkpoint=checkpoint,
            spark_mode=args.spark_mode or "barrier",
        )
    else:
        name = registry_name(command, family)
    configure_spark(args, family == "spark", max_seconds)
    if command == "check":
        if args.spark_mode is not None and family != "spark":
            raise UsageError("--spark-mode goes with --engine spark")
        if args.store_dir and checkpoint:
            raise UsageError(
                "--store-dir goes without --checkpoint/--resume: a checkpointed run keeps its "
                "disk store in the checkpoint directory"
            )
        if args.store_dir and args.store == "memory":
            raise UsageError("--store-dir goes with --store disk")
        if name != "spark":  # the level-per-job Spark engine keeps its states in Spark
            store = args.store or default_store(model.config, args.store_dir, model.protocol)
            store_dir = args.store_dir
        elif args.store or args.store_dir:
            raise UsageError(
                "--store and --store-dir go with --engine local or --spark-mode barrier"
            )
        if name == "parallel":
            warn_cores(args.workers)
    return EngineChoice(command, family, name, store, store_dir)


def run_engine(args: argparse.Namespace, command: str, model, options: engines.Options):
    """`isr COMMAND`'s engine options resolved (:func:`choose_engine`) into ``options`` (the
    workers, the store; Spark's level engine reports progress per level) and the engine run:
    the one call a command makes into this module. Returns the result, or the exit code of an
    engine failure."""
    engine = choose_engine(args, command, model, options.limits.max_seconds)
    options.master = getattr(args, "spark_master", None)  # after `--master`, the old spelling
    if command == "check":
        options.workers = args.workers
    if engine.name == "spark" and options.progress is not None:
        from isr.checker.spark.progress import level_reporter

        options.progress = level_reporter()
    return engine.run(model, options)


# Below this estimated size one process is the faster choice: a search of a few CPU seconds,
# where forking workers and a barrier at each of its 20-30 levels cost about what a second core
# saves (docs/engines.md, "Several cores"). The estimate is spec.size.estimate_log10_states (right within
# a factor of 10 or so); a model near the threshold is fast either way.
AUTO_WORKERS_MIN_STATES = 200_000


def default_workers(model, family: str) -> int:
    """--workers when not given (the one place its default is decided): every core for the
    local engine, unless the model is small (AUTO_WORKERS_MIN_STATES) or the engine is Spark
    (it has executors of its own): then 1."""
    import math
    import os

    if family == "spark":
        return 1
    cores = os.cpu_count() or 1
    if cores == 1:
        return 1
    if estimate_log10_states(model.config, model.protocol) < math.log10(AUTO_WORKERS_MIN_STATES):
        return 1
    return cores


# From this estimated size on the local engines keep their queue and parent links on disk
# (checker.store): a tenth of the memory for 10-20% more time. Below it a run needs little
# memory either way and the in-memory store is the faster one.
DISK_STORE_MIN_STATES = 1_000_000


def default_store(cfg, store_dir: str | None = None, version=None) -> str:
    """--store when not given: disk for a model estimated at DISK_STORE_MIN_STATES or more, or
    when --store-dir names a place for it; memory otherwise."""
    import math

    if store_dir is not None:
        return "disk"
    big = estimate_log10_states(cfg, version) >= math.log10(DISK_STORE_MIN_STATES)
    return "disk" if big else "memory"


def warn_cores(workers: int) -> None:
    cores = os.cpu_count() or 1
    if workers > cores:
        print(
            f"isr: warning: --workers {workers} is more than the {cores} cores here",
            file=sys.stderr,
        )


FLAGS = ("spark_master", "spark_conf", "driver_host", "driver_bind_address", "spark_timeout")

ENGINE_HELP = {
    "check": "local: this machine (one process, or --workers N processes); spark: a Spark "
    "cluster (--spark-master)",
    "simulate": "local: this machine; spark: the walks spread over Spark tasks (--spark-master)",
    "validate": "local: one trace after another in this process; spark: the traces spread over "
    "Spark tasks (--spark-master)",
}


def add_engine_args(p: argparse.ArgumentParser, command: str, *, workers: str = "") -> None:
    """`--engine local|spark` (with the command's deprecated spellings), `--workers N` where
    the command has local workers (``workers``: its help, which says its default), and the
    Spark flags."""
    aliases = sorted(DEPRECATED.get(command, {}))
    p.add_argument(
        "--engine",
        choices=[*FAMILIES, *aliases],
        default="local",
        metavar="{local,spark}",
        help=f"{ENGINE_HELP[command]} (default local"
        + (f"; deprecated: {', '.join(aliases)} for local" if aliases else "")
        + ")",
    )
    if workers:
        # not given: None, decided by the command (cli.check.default_workers)
        p.add_argument(
            "--workers",
            type=int_in(1, 256),
            default=None,
            metavar="N",
            help=workers,
        )
    add_spark_args(p)


# Deprecation notices wait here until the command has run: cli.main prints them once it is
# done, and drops them when the command ends in bad input (exit 2 is one line on stderr, the
# error, whatever else went wrong).
_NOTICES: list[str] = []


def deprecated(old: str, new: str) -> None:
    _NOTICES.append(f"isr: warning: {old} is deprecated; use {new}")


def flush_notices(show: bool = True) -> None:
    """Print the pending deprecation notices on stderr (``show``), or drop them."""
    if show:
        for line in _NOTICES:
            print(line, file=sys.stderr)
    _NOTICES.clear()


def engine_family(args: argparse.Namespace, command: str) -> str:
    """``args.engine`` as `local` or `spark`, after a deprecation notice for an old spelling
    (and for `--master`); sets ``args.engine`` to it. Bad combinations: UsageError."""
    alias = DEPRECATED.get(command, {}).get(args.engine)
    if alias is not None:
        deprecated(f"--engine {args.engine}", f"--engine {alias}")
        args.engine = alias
    old_master = getattr(args, "deprecated_master", None)
    if old_master is not None:
        deprecated("--master", "--spark-master")
        if args.spark_master is not None and args.spark_master != old_master:
            raise UsageError("--master and --spark-master name different masters")
        args.spark_master = old_master
    if args.engine == "spark" and getattr(args, "workers", None) not in (None, 1):
        raise UsageError("--workers goes with --engine local")
    return args.engine


def add_spark_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("Spark (with --engine spark)")
    g.add_argument(
        "--spark-master",
        metavar="URL",
        default=None,
        help="Spark master URL, e.g. spark://host:7077 (default local[*])",
    )
    # the old spelling of --spark-master on check and simulate (a deprecation notice)
    g.add_argument("--master", dest="deprecated_master", default=None, help=argparse.SUPPRESS)
    g.add_argument(
        "--spark-conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Spark configuration setting (repeatable), e.g. spark.executor.memory=2g",
    )
    g.add_argument(
        "--driver-host",
        metavar="HOST",
        help="address executors use to reach the driver (default: loopback for local masters, "
        "the address on the route to a spark:// master)",
    )
    g.add_argument("--driver-bind-address", metavar="IP", help="address the driver listens on")
    g.add_argument(
        "--no-spark-ui", dest="spark_ui", action="store_false", help="do not start the web UI"
    )
    g.add_argument(
        "--spark-timeout",
        type=positive_seconds,
        default=None,
        metavar="S",
        help="give up (exit 2) when Spark has not started, or a cluster has had no executor, "
        "for S seconds (default 60, at most --max-seconds)",
    )


def configure_spark(
    args: argparse.Namespace, spark: bool, max_seconds: float | None = None
) -> None:
    """Check the Spark flags and hand them to checker.spark.session (bad input: UsageError).
    ``spark``: whether the command runs on Spark at all (the flags go with --engine spark)."""
    if not spark:
        for name in FLAGS:
            if getattr(args, name, None):
                raise UsageError(f"--{name.replace('_', '-')} goes with --engine spark")
        if getattr(args, "spark_ui", True) is False:
            raise UsageError("--no-spark-ui goes with --engine spark")
        return
    from isr.checker.spark import session

    try:
        conf = session.parse_conf(args.spark_conf)
    except ValueError as e:
        raise UsageError(str(e)) from None
    budget = args.spark_timeout if args.spark_timeout is not None else session.DEFAULT_BUDGET
    if budget <= 0:
        raise UsageError("--spark-timeout must be positive")
    if max_seconds is not None:
        budget = min(budget, max_seconds)
    session.configure(
        conf=conf,
        driver_host=args.driver_host,
        bind_address=args.driver_bind_address,
        ui=args.spark_ui,
        budget=budget,
    )


@contextmanager
def spark_failures() -> Iterator[None]:
    """Spark that cannot start or loses its cluster, outside an engine (`isr validate --engine
    spark`): `isr: error: <one line>`, exit 2."""
    try:
        yield
    except SparkError as e:
        raise UsageError(f"spark: {e}") from None
    except ImportError as e:
        raise UsageError(f"engine 'spark' is not available: {e}") from None


def check_note(res) -> str | None:
    """`isr check --engine spark`: a note when the model was too small for Spark to pay off
    (checker.spark.session.small_model_note), or None."""
    from isr.checker.spark.session import small_model_note

    spark = (getattr(res, "extra", None) or {}).get("spark", {})
    return small_model_note(res.distinct_states, res.seconds, spark.get("default_parallelism", 0))
