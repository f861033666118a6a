"""`isr check`: exhaustive model checking of the ISR spec."""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import sys
from collections.abc import Callable

from checker.bfs import Limits
from checker.paths import ReplayError
from checker.progress import stderr_reporter
from checker.result import CheckResult

from . import junit, traceout
from .errors import ENGINE_FAILURE, INCOMPLETE, UsageError
from .models import (
    add_model_args,
    add_property_args,
    int_in,
    model_from_args,
    positive_int,
    positive_seconds,
)
from .render import render_counterexample, render_result
from .sparkopts import add_spark_args, check_note, configure_spark, spark_failures

# Engines by name: (module, function). Each takes the model and the same keyword arguments as
# checker.bfs.check_bfs and returns a CheckResult.
ENGINES: dict[str, tuple[str, str]] = {
    "bfs": ("checker.bfs", "check_bfs"),
    "spark": ("checker.spark.engine", "check_spark"),
}


def register(sub) -> None:
    p = sub.add_parser(
        "check",
        help="explore every reachable state of the spec and check its properties",
        description="Exhaustive model checking of the ISR spec. Exit 0: every checked property "
        "holds (the search completed, or stopped early once every checked property was "
        "decided); 1: a property is violated; 2: bad input; 3: incomplete (--max-states, "
        "--max-seconds or Ctrl-C stopped the search before it could decide; the partial "
        "statistics and any violation found so far are printed); 5: engine failure (a worker "
        "process died).",
    )
    add_model_args(p)
    add_property_args(p)
    p.add_argument(
        "--engine", choices=sorted(ENGINES), default="bfs", help="exploration engine (default bfs)"
    )
    p.add_argument(
        "--master", default=None, help="Spark master URL for --engine spark (default local[*])"
    )
    p.add_argument(
        "--checkpoint",
        metavar="DIR",
        default=None,
        help="write the frontier and visited set to DIR after each level",
    )
    p.add_argument(
        "--resume",
        metavar="DIR",
        default=None,
        help="continue the run checkpointed in DIR (and keep checkpointing there)",
    )
    p.add_argument(
        "--workers",
        type=int_in(1, 256),
        default=None,
        metavar="N",
        help="--engine bfs: worker processes (default: every core, or 1 for a model estimated "
        f"below {AUTO_WORKERS_MIN_STATES:,} states; exit 5 if one dies)",
    )
    p.add_argument(
        "--no-symmetry",
        dest="symmetry",
        action="store_false",
        help="turn off symmetry reduction over replica ids",
    )
    p.add_argument(
        "--max-states",
        type=positive_int,
        default=None,
        metavar="N",
        help="stop after N distinct states (the run is then incomplete, exit 3, unless a "
        "property is violated: exit 1)",
    )
    p.add_argument(
        "--max-seconds",
        type=positive_seconds,
        default=None,
        metavar="S",
        help="stop after S seconds (the run is then incomplete, exit 3, unless a property is "
        "violated: exit 1)",
    )
    p.add_argument(
        "--stop-at-first-violation",
        action="store_true",
        help="end the search at the first violation of an invariant or action property (TLC's "
        "default; its -continue is this tool's default of deciding every property). The "
        "counterexample is still a shortest one; the other properties are reported as checked "
        "up to the depth reached",
    )
    p.add_argument("--format", choices=["text", "json"], default="text")
    traceout.add_trace_args(p)
    p.add_argument("--junit", metavar="FILE", help="also write the verdicts as JUnit XML")
    add_spark_args(p)
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.set_defaults(run=run)


def resolve_engine(name: str) -> Callable[..., CheckResult]:
    module, fn = ENGINES[name]
    try:
        return getattr(importlib.import_module(module), fn)
    except ImportError as e:
        raise UsageError(f"engine {name!r} is not available: {e}") from None


def accepts(fn: Callable, kwarg: str) -> bool:
    try:
        return kwarg in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def replay_failed(e: ReplayError) -> int:
    """An engine could not rebuild a path it found (the engines turn this into a note on the
    property; this is the last resort): one line, no traceback, exit 3 (no verdict)."""
    print(f"isr: error: a counterexample path could not be rebuilt: {e}", file=sys.stderr)
    return INCOMPLETE


def header_line(cfg) -> str:
    return (
        f"isr check: protocol {cfg.protocol}, replicas {cfg.replicas}, records {cfg.records}, "
        f"epochs {cfg.epochs}, crashes {cfg.crashes}, acks {cfg.acks}, "
        f"min.insync.replicas {cfg.min_isr}"
        + (f", fault modes {' '.join(cfg.fault_modes)}" if cfg.fault_modes else "")
        + (f", retries {cfg.retries}" if cfg.retries > 1 else "")
        + (", idempotence" if cfg.idempotence else "")
    )


def run(args: argparse.Namespace) -> int:
    model = model_from_args(args)
    names = {p.name for p in model.properties}
    if args.properties:
        unknown = [n for n in args.properties if n not in names]
        if unknown:
            raise UsageError(
                f"unknown property {unknown[0]!r}; the spec has: {', '.join(p.name for p in model.properties)}"
            )
    if args.max_states is not None and args.max_states <= 0:
        raise UsageError("--max-states must be positive")
    if args.max_seconds is not None and args.max_seconds <= 0:
        raise UsageError("--max-seconds must be positive")
    if args.master and args.engine != "spark":
        raise UsageError("--master goes with --engine spark")
    local = parallel_engine(args)
    configure_spark(args, args.engine == "spark", args.max_seconds)
    engine = local or resolve_engine(args.engine)
    if args.stop_at_first_violation and not accepts(engine, "stop_at_first_violation"):
        raise UsageError(f"--stop-at-first-violation does not go with --engine {args.engine}")
    kwargs = dict(
        symmetry=args.symmetry,
        limits=Limits(args.max_states, args.max_seconds),
        properties=args.properties,
        progress=None if args.quiet else stderr_reporter(),
        config=model.config.to_json(),
    )
    if args.stop_at_first_violation:
        kwargs["stop_at_first_violation"] = True
    if args.engine == "spark":
        from checker.spark.checkpoint import CheckpointError
        from checker.spark.progress import level_reporter

        kwargs.update(master=args.master, checkpoint=args.checkpoint, resume=args.resume)
        if not args.quiet:
            kwargs["progress"] = level_reporter()
        try:
            with spark_failures():
                res = engine(model, **kwargs)
        except CheckpointError as e:
            raise UsageError(str(e)) from None
        except ReplayError as e:
            return replay_failed(e)
        note = check_note(res)
        if note:
            print(note, file=sys.stderr)
    elif local is not None:
        try:
            res = run_parallel(engine, model, args, kwargs)
        except ReplayError as e:
            return replay_failed(e)
        if isinstance(res, int):
            return res
    else:
        try:
            res = engine(model, **kwargs)
        except ReplayError as e:
            return replay_failed(e)
    res.config = model.config.to_json()
    if args.trace_out:
        traceout.write_trace(args.trace_out, args.trace_format, model, res)
    if args.junit:
        junit.write(
            args.junit, [junit.check_suite(res, header_line(model.config), render_counterexample)]
        )
    if args.format == "json":
        out = res.to_json()
        out["protocol"] = model.config.protocol
        json.dump(out, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(render_result(res, header_line(model.config)))
    return res.exit_code()


# Below this estimated size one process is the faster choice: forking workers and the barrier
# at every level cost more than the second core gives back on a run of a few seconds (measured:
# see README, "Several cores"). The estimate is cli.models.estimate_log10_states (right within a
# factor of 10 or so); a model near the threshold is fast either way.
AUTO_WORKERS_MIN_STATES = 200_000


def default_workers(args: argparse.Namespace) -> int:
    """--workers when not given: every core for the local engine, unless the model is small
    (AUTO_WORKERS_MIN_STATES) or --engine is not bfs (Spark has its own executors): then 1."""
    import math
    import os

    from .models import config_from_args, estimate_log10_states

    if args.engine != "bfs":
        return 1
    cores = os.cpu_count() or 1
    if cores == 1:
        return 1
    if estimate_log10_states(config_from_args(args)) < math.log10(AUTO_WORKERS_MIN_STATES):
        return 1
    return cores


def parallel_engine(args: argparse.Namespace) -> Callable[..., CheckResult] | None:
    """check_parallel when --workers N > 1, --checkpoint or --resume asks for it with the local
    engine; None for check_bfs or Spark. Warns when N exceeds the cores."""
    import os

    if args.workers is None:
        args.workers = default_workers(args)
    if args.workers < 1:
        raise UsageError("--workers must be at least 1")
    if args.engine != "bfs":
        if args.workers != 1:
            raise UsageError("--workers goes with --engine bfs")
        return None
    if args.workers == 1 and not args.checkpoint and not args.resume:
        return None
    cores = os.cpu_count() or 1
    if args.workers > cores:
        print(
            f"isr: warning: --workers {args.workers} is more than the {cores} cores here",
            file=sys.stderr,
        )
    from checker.parallel import check_parallel

    return check_parallel


def run_parallel(engine, model, args: argparse.Namespace, kwargs: dict) -> CheckResult | int:
    """Run the parallel engine: a bad checkpoint is bad input (exit 2), a dead worker an engine
    failure (exit 5, one line)."""
    from checker.parallel import CheckpointError, EngineFailure

    try:
        return engine(
            model, workers=args.workers, checkpoint=args.checkpoint, resume=args.resume, **kwargs
        )
    except CheckpointError as e:
        raise UsageError(str(e)) from None
    except EngineFailure as e:
        print(f"isr: engine failure: {e}", file=sys.stderr)
        return ENGINE_FAILURE
