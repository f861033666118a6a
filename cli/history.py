"""`isr history FILE`: check a client-operation history the way jepsen.tests.kafka does
(traces/history.py; format: traces/FORMAT.md, "Client history")."""

from __future__ import annotations

import argparse
import json
import sys

from . import junit
from .errors import OK, VIOLATION, UsageError


def register(sub) -> None:
    p = sub.add_parser(
        "history",
        help="check a client history (sends and polls) for lost writes, duplicates, "
        "inconsistent offsets, phantom and aborted reads, gaps and reorderings",
        description="FILE: NDJSON (an optional header line, then one op per line) or one JSON "
        "document (traces/FORMAT.md, 'Client history'). Exit 0: the history is valid; 1: an "
        "anomaly (a lost acks=all write, an inconsistent offset, a phantom or aborted read, a "
        "read above the HW, a gap or reordering inside a poll; duplicates when the header "
        "declares idempotent, non-monotonic reads when it declares monotonic_reads); "
        "2: bad input.",
    )
    p.add_argument("file", metavar="FILE")
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.add_argument("--junit", metavar="FILE", help="also write the checks as JUnit XML")
    p.add_argument(
        "--html",
        metavar="OUT",
        help="also draw the history as a timeline page: a lane per process, a bar per operation "
        "coloured ok/fail/info, lost writes red, the run's faults when the history has them",
    )
    p.set_defaults(run=run)


def suite(res) -> junit.Suite:
    """The checks as one JUnit suite, a case per anomaly class: a violation fails with its count
    and first example; a class that is only reported (acks1_lost, duplicates without
    idempotence) passes."""
    from isr.traces.history import CLASSES

    s = junit.Suite(name="isr history", seconds=res.seconds)
    s.properties = {k: str(v) for k, v in res.stats.items() if not isinstance(v, dict)}
    viol = res.violations
    for k, a in res.anomalies.items():
        case = junit.Case(name=k, classname=f"isr history {res.name}", description=CLASSES[k])
        if k in viol:
            first = json.dumps(a.examples[0], separators=(",", ":")) if a.examples else ""
            case.failure = f"{k}: {a.count}; first: {first}"[:500]
            case.details = "\n".join(json.dumps(x, separators=(",", ":")) for x in a.examples)
        s.cases.append(case)
    return s


def render(res) -> list[str]:
    """The summary paragraph, then each anomaly class with a count and its first examples."""
    lines = [res.summary()]
    viol = res.violations
    for k, a in res.anomalies.items():
        if not a.count:
            continue
        tag = "VIOLATION" if k in viol else "reported"
        lines.append(f"  {k}: {a.count} ({tag})")
        for ex in a.examples:
            lines.append(f"    {json.dumps(ex, separators=(',', ':'))}")
    return lines


def run(args: argparse.Namespace) -> int:
    from isr.traces.history import HistoryError, check, load

    try:
        hist = load(args.file)
        res = check(hist)
    except HistoryError as e:
        raise UsageError(str(e)) from None
    if args.html:
        from . import timeline

        timeline.write(args.html, hist, res)
    if args.junit:
        junit.write(args.junit, [suite(res)])
    if args.format == "json":
        json.dump(res.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print("\n".join(render(res)))
    return OK if res.valid else VIOLATION
