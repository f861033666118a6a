"""`isr simulate`: many seeded random walks of the ISR spec, sequentially or on Spark."""

from __future__ import annotations

import argparse
import json
import sys

from isr.checker import engines
from isr.checker.engines import Options
from isr.checker.progress import stderr_reporter
from isr.spec.config import did_you_mean
from isr.spec.protocols import protocol_source

from .errors import OK, VIOLATION, UsageError
from .models import (
    add_model_args,
    add_property_args,
    model_from_args,
    positive_int,
    seed_int,
)
from .render import config_words, render_result
from .sparkopts import add_engine_args, choose_engine
from .traceout import add_trace_args, write_trace

# Walks x depth: the sequential engine takes ~1e4 steps/s, so 1e10 steps is about two weeks.
MAX_STEPS = 10**10


def register(sub) -> None:
    p = sub.add_parser(
        "simulate",
        help="run many seeded random walks of the spec and report violations found",
        description="Random walks for configurations too big to exhaust. A simulation never "
        "proves a property. Exit 0: no violation was found; 1: a property is violated (with a "
        "real, shrunk counterexample); 2: bad input.",
    )
    add_model_args(p)
    add_property_args(p)
    p.add_argument(
        "--walks", type=positive_int, default=1000, metavar="N", help="walks (default 1000)"
    )
    p.add_argument(
        "--depth",
        type=positive_int,
        default=100,
        metavar="N",
        help="steps per walk at most (default 100)",
    )
    p.add_argument("--seed", type=seed_int, default=0, metavar="N", help="random seed (default 0)")
    p.add_argument(
        "--no-symmetry",
        dest="symmetry",
        action="store_false",
        help="count distinct states without symmetry reduction",
    )
    p.add_argument("--format", choices=["text", "json"], default="text")
    add_trace_args(p)
    add_engine_args(p, "simulate")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.set_defaults(run=run)


def header_line(cfg, args: argparse.Namespace, version=None) -> str:
    return (
        f"isr simulate: {config_words(cfg, version)}; {args.walks} walks of at most {args.depth} steps, "
        f"seed {args.seed}"
    )


def run(args: argparse.Namespace) -> int:
    model = model_from_args(args, exhaustive=False)
    engine = choose_engine(args, "simulate")
    family = engine.family
    unknown, known = engines.unknown_properties(model, args.properties)
    if unknown:
        raise UsageError(
            f"unknown property {unknown[0]!r}{did_you_mean(unknown[0], known)}; "
            f"the spec has: {', '.join(known)}"
        )
    limit = MAX_STEPS * (100 if family == "spark" else 1)
    if args.walks * args.depth > limit:
        raise UsageError(
            f"--walks {args.walks} x --depth {args.depth} = {args.walks * args.depth:.1e} steps, "
            f"beyond what a simulation can finish (limit {limit:.0e}); use fewer walks"
            + ("" if family == "spark" else " or --engine spark")
        )
    options = Options(
        properties=args.properties,
        symmetry=args.symmetry,
        progress=None if args.quiet else stderr_reporter(),
        config=model.config.to_json(),
        walks=args.walks,
        depth=args.depth,
        seed=args.seed,
        master=args.spark_master,
    )
    res = engine.run(model, options)
    assert not isinstance(res, int)  # a simulation has no workers to lose
    if engine.name == "spark":
        note = simulate_note(res)
        if note:
            print(note, file=sys.stderr)
    if args.trace_out:
        write_trace(args.trace_out, args.trace_format, model, res)
    if args.format == "json":
        out = res.to_json()
        out["violation_found"] = any(
            p.holds is False and p.kind in ("always", "action") for p in res.properties
        )
        out["protocol"] = model.config.protocol
        out.update(protocol_source(model.protocol))
        json.dump(out, sys.stdout, indent=2)
        sys.stdout.write("\n")
    found = any(p.holds is False and p.kind in ("always", "action") for p in res.properties)
    code = VIOLATION if found else OK
    if args.format != "json":
        lines = render_result(res, header_line(model.config, args, model.protocol)).splitlines()
        if lines and lines[-1].startswith("verdict:"):
            lines.pop()
        word = "VIOLATED" if found else f"no violation found in {args.walks} walks"
        lines.append(f"verdict: {word} (exit {code})")
        lines.append("(a simulation never proves a property: 'undecided' means not violated here)")
        print("\n".join(lines))
    return code


# Measured on this project's 2-core machine (load about 7): the sequential engine walks about
# 11,000 steps/s (200 walks of 20 steps, hw-truncation, 2 replicas: 2,253 steps in 0.2 s), and
# the same walks on Spark local[*] take 32 s, nearly all of it start-up. With 2 cores Spark can at
# best halve the per-step time, so it only pays off once the walks take the sequential engine
# longer than Spark's start-up twice over: about 300,000 steps.
SIMULATE_BREAK_EVEN_STEPS = 300_000


def simulate_note(res) -> str | None:
    """A note when the walks were too few for Spark to pay off."""
    if res.states_generated >= SIMULATE_BREAK_EVEN_STEPS:
        return None
    return (
        f"note: {res.states_generated:,} steps took {res.seconds:.1f} s on Spark; below about "
        f"{SIMULATE_BREAK_EVEN_STEPS:,} steps its start-up outweighs its parallelism "
        "(--engine local is faster here)"
    )
