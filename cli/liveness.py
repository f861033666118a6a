"""`isr liveness`: the liveness properties of docs/PROTOCOL.md under the spec's fairness, checked on
the reachable state graph by strongly connected components (checker.liveness)."""

from __future__ import annotations

import argparse
import json
import sys

from isr.checker import engines
from isr.checker.engines import Limits, Options
from isr.checker.graph import WithoutActions
from isr.checker.result import CheckResult
from isr.spec.protocols import protocol_source

from .errors import UsageError
from .models import add_model_args, model_from_args, positive_int
from .render import config_words, render_result
from .sparkopts import EngineChoice
from .traceout import add_trace_args, write_trace


def register(sub) -> None:
    p = sub.add_parser(
        "liveness",
        help="check the liveness properties under the spec's fairness (lassos on violation)",
        description="Builds the whole reachable state graph (keep the bounds small) and checks "
        "every `eventually` property of the spec under its per-action fairness, as TLC does, by "
        "strongly connected components. A violation is a lasso: a prefix, then a cycle repeated "
        "forever (or stuttering). Exit 0: all hold; 1: a property is violated; 2: bad input; "
        "3: the graph exceeded --max-states.",
    )
    add_model_args(p)
    p.add_argument(
        "--property",
        dest="properties",
        action="append",
        metavar="NAME",
        help="check only this liveness property (repeatable; default: all)",
    )
    p.add_argument(
        "--without",
        action="append",
        default=[],
        metavar="ACTION",
        help="what-if: the named action never happens (e.g. NetworkLoseLeaderAndIsr); repeatable",
    )
    p.add_argument(
        "--with-moves",
        action="store_true",
        help="keep the leader moves (ControllerMoveLeader, ControllerShutdownBroker); left out by "
        "default, because under the --epochs bound they can use up the epochs the controller "
        "needs for a recovery election, which would show as a liveness violation of the bound",
    )
    p.add_argument(
        "--max-states",
        type=positive_int,
        default=2_000_000,
        metavar="N",
        help="give up (exit 3) beyond N states (default 2,000,000)",
    )
    p.add_argument("--format", choices=["text", "json"], default="text")
    add_trace_args(p, "lasso (its loop_start marks the cycle)")
    p.set_defaults(run=run)


# Leader moves off a live leader (R9) are safety-relevant and on in `isr check`; a liveness check
# leaves them out by default: each move spends a leader epoch, and once --epochs is spent the
# controller cannot elect a replacement for a leader that is lost later, a "stuck" partition that
# is an artifact of the bound, not of the protocol.
MOVES = ("ControllerMoveLeader", "ControllerShutdownBroker")


def header_line(cfg, without: list[str], version=None) -> str:
    extra = f", without {', '.join(without)}" if without else ""
    return f"isr liveness: {config_words(cfg, version)}{extra}"


def run(args: argparse.Namespace) -> int:
    spec = model_from_args(args)
    unknown, live = engines.unknown_properties(spec, args.properties, kinds=("eventually",))
    if unknown:
        raise UsageError(
            f"unknown liveness property {unknown[0]!r}; the spec has: {', '.join(live)}"
        )
    if args.max_states <= 0:
        raise UsageError("--max-states must be positive")
    model = spec
    if not args.with_moves:
        args.without = [
            *args.without,
            *(m for m in MOVES if m not in args.without and m in spec.action_names),
        ]
    if args.without:
        try:
            model = WithoutActions(spec, args.without)
        except ValueError as e:
            raise UsageError(f"{e}; actions: {', '.join(spec.action_names)}") from None
    # the one liveness engine of the registry (checker.engines: "scc")
    options = Options(
        properties=args.properties,
        limits=Limits(max_states=args.max_states),
        config=spec.config.to_json(),
    )
    res = EngineChoice("liveness", "local", "scc").run(model, options)
    assert not isinstance(res, int)  # no workers to lose
    if args.trace_out:
        write_lasso(args.trace_out, spec, res, args.trace_format)
    if args.format == "json":
        out = res.to_json()
        out["protocol"] = spec.config.protocol
        out.update(protocol_source(spec.protocol))
        out["without"] = args.without
        json.dump(out, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(render(res, header_line(spec.config, args.without, spec.protocol)))
    return res.exit_code()


def render(res: CheckResult, header: str) -> str:
    text = render_result(res, header)
    g = res.extra.get("graph")
    lines = []
    if g:
        lines.append(
            f"state graph: {g['states']:,} states, {g['edges']:,} edges, {g['sccs']:,} SCCs "
            f"({g['nontrivial_sccs']:,} non-trivial, largest {g['largest_scc']:,}), diameter "
            f"{g['diameter']}, {g['deadlocks']:,} deadlocks"
        )
    fair = res.extra.get("fairness")
    if fair is not None:
        lines.append(f"fairness: {len(fair)} constraints (weak unless marked SF)")
    for p in res.properties:
        if p.holds is False and p.note:
            lines.append(f"{p.name}: violated {p.note}")
    return text + ("\n" + "\n".join(lines) if lines else "")


def write_lasso(path: str, spec, res: CheckResult, fmt: str = "ndjson") -> None:
    write_trace(path, fmt, spec, res, what="lasso")
