"""`isr check`: exhaustive model checking of the ISR spec."""

from __future__ import annotations

import argparse
import json
import sys

from isr.checker import engines
from isr.checker.engines import Limits, Options
from isr.checker.errors import ReplayError
from isr.checker.progress import stderr_reporter
from isr.spec.config import did_you_mean
from isr.spec.protocols import protocol_source

from . import growth, junit, reports, traceout
from .errors import INCOMPLETE, UsageError, refuse_unwritable
from .models import (
    add_model_args,
    add_property_args,
    model_from_args,
    positive_int,
    positive_seconds,
)
from .render import config_words, render_counterexample, render_result
from .sparkopts import (
    AUTO_WORKERS_MIN_STATES,
    DISK_STORE_MIN_STATES,
    add_engine_args,
    run_engine,
)


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
        "--store",
        choices=["memory", "disk"],
        default=None,
        help="--engine local: where the search keeps its queue of states and its parent links "
        "(the visited set's 8-byte fingerprints stay in memory): memory, or disk for models "
        "too large for memory (about a tenth of the memory, 10-20%% slower; default: disk "
        "for a model estimated above "
        f"{DISK_STORE_MIN_STATES:,} states, else memory)",
    )
    p.add_argument(
        "--store-dir",
        metavar="DIR",
        default=None,
        help="--store disk: the directory for the queue and trace files (default: the "
        "--checkpoint directory, else a temporary directory removed at the end)",
    )
    p.add_argument(
        "--reduction",
        choices=["dead-state", "por", "dead-state,por"],
        default=None,
        help="merge states no step can tell apart: dead-state forgets, once the crash budget "
        "is spent, what only a crash reads (the HW checkpoint, the flushed prefix, the "
        "leader-epoch checkpoint of live replicas). Same verdicts and counterexample lengths; "
        "fewer states; fewer states generated and terminal states counted differently. "
        "por: a partial-order reduction (stubborn sets from the actions' declared footprints, "
        "spec/por.py): the same verdicts for the properties checked, counterexamples that are "
        "real behaviours but not always shortest, no liveness. dead-state,por: both "
        "(docs/reduction.md)",
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
    p.add_argument("--sarif", metavar="FILE", help="also write the verdicts as SARIF 2.1.0")
    p.add_argument(
        "--html-report",
        metavar="FILE",
        help="also write the run as one HTML page: its figures, a plot of the distinct states "
        "first reached at each BFS depth, and the verdicts",
    )
    add_engine_args(
        p,
        "check",
        workers="--engine local: worker processes (default: every core, or 1 for a model "
        f"estimated below {AUTO_WORKERS_MIN_STATES:,} states; exit 5 if one dies)",
    )
    p.add_argument(
        "--spark-mode",
        choices=["barrier", "levels"],
        default=None,
        help="--engine spark: barrier (default): the parallel engine's workers run as the tasks "
        "of one Spark barrier stage, one per core of the cluster, and talk over TCP (fastest; "
        "a lost task fails the run, exit 5; --checkpoint DIR on storage every machine shares "
        "is how a long run survives); levels: one Spark job per BFS level, the visited set in "
        "Spark (lost tasks are recomputed; slower)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.set_defaults(run=run)


def replay_failed(e: ReplayError) -> int:
    """An engine could not rebuild a path it found (the engines turn this into a note on the
    property; this is the last resort): one line, no traceback, exit 3 (no verdict)."""
    print(f"isr: error: a counterexample path could not be rebuilt: {e}", file=sys.stderr)
    return INCOMPLETE


def header_line(cfg, version=None) -> str:
    return (
        f"isr check: {config_words(cfg, version)}"
        + (f", fault modes {' '.join(cfg.fault_modes)}" if cfg.fault_modes else "")
        + (f", retries {cfg.retries}" if cfg.retries > 1 else "")
        + (", idempotence" if cfg.idempotence else "")
    )


def run(args: argparse.Namespace) -> int:
    model = model_from_args(args)
    if getattr(model, "por", None) is not None:
        por_properties(model, args.properties)
    unknown, known = engines.unknown_properties(model, args.properties)
    if unknown:
        raise UsageError(
            f"unknown property {unknown[0]!r}{did_you_mean(unknown[0], known)}; "
            f"the spec has: {', '.join(known)}"
        )
    if args.max_states is not None and args.max_states <= 0:
        raise UsageError("--max-states must be positive")
    if args.html_report:
        refuse_unwritable(args.html_report, "--html-report")
    if args.max_seconds is not None and args.max_seconds <= 0:
        raise UsageError("--max-seconds must be positive")
    if not args.quiet and not args.resume:
        note = size_note(model.config, args.max_states, args.max_seconds, model.protocol)
        if note:
            print(note, file=sys.stderr)
    options = Options(
        properties=args.properties,
        symmetry=args.symmetry,
        limits=Limits(args.max_states, args.max_seconds),
        progress=None if args.quiet else stderr_reporter(),
        stop_at_first_violation=args.stop_at_first_violation,
        checkpoint=args.checkpoint,
        resume=args.resume,
        config=model.config.to_json(),
    )
    try:
        res = run_engine(args, "check", model, options)
    except ReplayError as e:
        return replay_failed(e)
    if isinstance(res, int):
        return res
    if args.trace_out:
        traceout.write_trace(args.trace_out, args.trace_format, model, res)
    if args.junit or args.sarif:
        reports.write_reports(
            args,
            [
                junit.check_suite(
                    res, header_line(model.config, model.protocol), render_counterexample
                )
            ],
        )
    if args.html_report:
        growth.write(args.html_report, res, header_line(model.config, model.protocol))
    if args.format == "json":
        out = res.to_json()
        if getattr(model, "por", None) is not None:
            out["reduction"] = model.reduction
            out["counterexamples_shortest"] = False
        out["protocol"] = model.config.protocol
        out.update(protocol_source(model.protocol))
        json.dump(out, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        kept = getattr(args, "checkpoint", None) or getattr(args, "resume", None)
        if kept and not res.complete:
            res.extra.setdefault("checkpoint_dir", kept)
        print(render_result(res, header_line(model.config, model.protocol)))
        if getattr(model, "por", None) is not None:
            print(f"note: {POR_NOTE}")
        why = unreachable_by_bounds(res, model.config)
        if why:
            print(f"note: {why}")
    return res.exit_code()


POR_NOTE = (
    "partial-order reduction (--reduction por): the counts are of the reduced graph; every "
    "counterexample is a real behaviour of the spec (isr replay confirms it) but not "
    "necessarily a shortest one; liveness is not checked (docs/reduction.md)"
)


def por_properties(model, names: list[str] | None) -> None:
    """Under --reduction por: refuse a liveness property (exit 2, one line), and tell the
    reduction which properties are checked (fewer properties, fewer visible steps)."""
    live = [n for n in names or () if n in model.liveness_names]
    if live:
        raise UsageError(
            f"{live[0]} is a liveness (eventually) property: the partial-order reduction "
            "keeps safety verdicts only; check it without --reduction por (isr liveness)"
        )
    known = {p.name for p in model.properties}
    if names is not None and all(n in known for n in names):
        model.por_properties(list(names))


def unreachable_by_bounds(res, config) -> str:
    """Why a "sometimes" property the bounds themselves rule out was never reached, or "": with
    --records 0 no record is ever written, so SometimesCommitted cannot hold (a verdict of the
    bounds, not of the protocol)."""
    never = [p.name for p in res.properties if p.kind == "sometimes" and p.holds is False]
    if config.records == 0 and "SometimesCommitted" in never:
        return (
            "SometimesCommitted cannot be reached with --records 0 (no record is ever written): "
            "use --records 1 or more, or check only what you need (--invariant NAME)"
        )
    return ""


# Above this estimated size a run takes hours on one machine: say so before it starts.
# Announce a run the estimate puts above this: 2e7 distinct states is half an hour or more at
# the ~10,000 distinct states/s two workers reach here on the ZooKeeper-era models (issue 30:
# at 1e8 the note never fired for kip-320 at 3/2/3/1, 10^7.7 by the estimate, an hour's run).
LARGE_MODEL_STATES = 2e7
NOMINAL_RATE = 10_000  # distinct states/s, for the note's duration only


def _magnitude(log10: float) -> str:
    """10^7.7 as "5 x 10^7"."""
    import math

    e = math.floor(log10)
    m = round(10 ** (log10 - e))
    if m >= 10:
        m, e = 1, e + 1
    return f"10^{e}" if m == 1 else f"{m} x 10^{e}"


def size_note(cfg, max_states: int | None, max_seconds: float | None, version=None) -> str | None:
    """One line on stderr before a search the estimate puts above LARGE_MODEL_STATES (and no
    limit asked for): how large, about how long, and what to do instead. Not an error: the
    estimate is rough (right within a factor of 10 or so) and the run may be what the user
    wants."""
    import math

    from isr.spec.size import estimate_log10_states

    if max_states is not None or max_seconds is not None:
        return None
    est = estimate_log10_states(cfg, version)
    if est < math.log10(LARGE_MODEL_STATES):
        return None
    hours = 10**est / NOMINAL_RATE / 3600
    took = f"about {hours:,.0f} hours" if hours >= 1.5 else "about an hour"
    if hours > 24 * 14:
        took = "weeks"
    return (
        f"isr: note: this model has roughly {_magnitude(est)} distinct states (a rough estimate): "
        f"{took} at {NOMINAL_RATE:,} states/s. Smaller bounds, --reduction dead-state, "
        "--stop-at-first-violation, --max-seconds S, --checkpoint DIR or `isr simulate` "
        "answer sooner."
    )
