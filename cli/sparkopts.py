"""The engine options every command shares (`isr check`, `isr simulate`, `isr validate`), and
the one place where Spark's failures become a one-line error with exit 2 (never the exit code
of a verdict).

    --engine local|spark       where the work runs (default local: this machine)
    --workers N                `isr check` only: local worker processes (default 1)
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
(checker.engines) a command's `--engine` stands for is :func:`checker.engines.registry_name`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from isr.checker.engines import DEPRECATED, FAMILIES

from .errors import UsageError
from .models import int_in, positive_seconds

FLAGS = ("spark_master", "spark_conf", "driver_host", "driver_bind_address", "spark_timeout")

ENGINE_HELP = {
    "check": "local: this machine (one process, or --workers N processes); spark: a Spark "
    "cluster (--spark-master)",
    "simulate": "local: this machine; spark: the walks spread over Spark tasks (--spark-master)",
    "validate": "local: one trace after another in this process; spark: the traces spread over "
    "Spark tasks (--spark-master)",
}


def add_engine_args(p: argparse.ArgumentParser, command: str, *, workers: bool = False) -> None:
    """`--engine local|spark` (with the command's deprecated spellings), `--workers N` where
    the command has local workers, and the Spark flags."""
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
        p.add_argument(
            "--workers",
            type=int_in(1, 256),
            default=1,
            metavar="N",
            help="--engine local: worker processes, one per core (default 1; exit 5 if one dies)",
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
    if args.engine != "spark" and getattr(args, "workers", 1) is None:
        args.workers = 1
    if args.engine == "spark" and getattr(args, "workers", 1) != 1:
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
    """Spark that cannot start or loses its cluster: `isr: error: <one line>`, exit 2."""
    try:
        from isr.checker.spark.session import SparkError
    except ImportError as e:  # pragma: no cover - the package is ours
        raise UsageError(f"engine 'spark' is not available: {e}") from None
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
