"""`isr validate TRACE...`: check recorded runs against the spec (traces/VALIDATION.md)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

from isr.spec.protocols import protocol_source

from . import junit, reports
from .errors import BAD_INPUT, INCOMPLETE, OK, VIOLATION, UsageError, one_line
from .models import add_protocol_file_arg, protocol_from_args
from .sparkopts import add_engine_args, choose_engine, spark_failures


def register(sub) -> None:
    p = sub.add_parser(
        "validate",
        help="check recorded traces against the spec (accepted, or rejected at the first "
        "event no spec step explains)",
        description="Each TRACE is one run: a file, or a directory whose *.ndjson files are the "
        "per-process files of one run (merged by Lamport clock). Exit 0: every trace accepted; "
        "1: a trace rejected; 2: bad input or a fault mode the spec cannot express; "
        "3: incomplete (candidate-state limit).",
    )
    p.add_argument("traces", nargs="+", metavar="TRACE")
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.add_argument("--junit", metavar="FILE", help="also write the verdicts as JUnit XML")
    p.add_argument("--sarif", metavar="FILE", help="also write the verdicts as SARIF 2.1.0")
    add_engine_args(p, "validate")
    add_protocol_file_arg(
        p,
        "a Python file defining your own protocol version (see examples/protocols/my_kip.py): "
        "validate every trace against it instead of the version its header names",
    )
    p.set_defaults(run=run)


def progress(name: str, interval: float = 3.0) -> Callable:
    """An ``on_step`` callback printing events validated and events/s every ``interval`` s
    (counted from the first event: reading and merging the files come before)."""
    seen = [0, 0.0, 0.0]  # events, start, last report

    def step(_key: str, _ev: dict, _pv: object) -> None:
        seen[0] += 1
        if seen[0] == 1:
            seen[1] = seen[2] = time.perf_counter()
        if seen[0] & 1023:
            return
        now = time.perf_counter()
        if now - seen[2] >= interval:
            seen[2] = now
            print(
                f"[progress] {name}: {seen[0]:,} events validated, "
                f"{seen[0] / (now - seen[1]):,.0f} events/s",
                file=sys.stderr,
                flush=True,
            )

    return step


def _runs(paths: list[str]) -> list[tuple[str, list[Path]]]:
    out = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            files = sorted(path.glob("*.ndjson"))
            if not files:
                # a folder of runs (one folder or file per run below it): say how to pass them
                below = sorted({f.parent for f in path.rglob("*.ndjson")})
                hint = (
                    f"; {len(below)} folder(s) below it hold some: pass the runs themselves, "
                    f"each run's file (`isr validate {p.rstrip('/')}/*/*.ndjson`) or each "
                    "run's folder of per-process files"
                    if below
                    else ""
                )
                raise UsageError(f"{p}: directory holds no *.ndjson trace files{hint}")
            out.append((p, files))
        elif path.is_file():
            out.append((p, [path]))
        else:
            raise UsageError(f"{p}: no such file or directory")
    return out


def run(args: argparse.Namespace) -> int:
    from isr.traces.validator.validate import validate_paths

    family = choose_engine(args, "validate").family
    mine = protocol_from_args(args)
    runs = _runs(args.traces)
    if family == "spark":
        from isr.traces.validator.spark_validate import validate_many

        items: list = []
        for name, files in runs:
            try:
                texts = [f.read_text(encoding="utf-8") for f in files]
            except (OSError, UnicodeDecodeError) as e:
                raise UsageError(f"{name}: cannot read: {e}") from None
            items.append((name, texts[0] if len(texts) == 1 else texts))
        if len({name for name, _t in items}) != len(items):
            raise UsageError("a trace is named twice")
        with spark_failures():  # Spark that cannot start: one line, exit 2
            verdicts, summary = validate_many(items, master=args.spark_master, protocol=mine)
    else:
        from isr.traces.validator import greybox

        verdicts = [
            greybox.validate_file(files[0], name)  # Apache Kafka's runs, seen from outside
            if len(files) == 1 and greybox.is_greybox_file(files[0])
            else validate_paths(files, name, None if args.quiet else progress(name), protocol=mine)
            for name, files in runs
        ]
        summary = None
    for v in verdicts:  # exit 2 (bad input, unsupported): one line on stderr, whatever the format
        if v.exit == BAD_INPUT:
            print(f"isr: error: {one_line(_located(v))}", file=sys.stderr)
    if args.junit or args.sarif:
        reports.write_reports(args, [junit.validate_suite(verdicts)])
    if args.format == "json":
        doc = {"traces": [v.to_json() for v in verdicts], **protocol_source(mine)}
        if summary:
            doc["summary"] = summary
        json.dump(doc, sys.stdout, indent=2, default=list)
        sys.stdout.write("\n")
    else:
        for v in verdicts:
            if v.verdict != "bad-input":
                print(render(v))
        if summary:
            print(
                "spark: {traces} traces, {events} events in {seconds:.1f}s "
                "({events_per_s:.0f} events/s): {verdicts}".format(**summary)
            )
        elif len(verdicts) > 1:  # a batch: one line of totals at the end
            counts: dict[str, int] = {}
            for v in verdicts:
                counts[v.verdict] = counts.get(v.verdict, 0) + 1
            totals = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
            print(f"{len(verdicts)} traces: {totals}")
    codes = {v.exit for v in verdicts}
    for code in (BAD_INPUT, VIOLATION, INCOMPLETE):
        if code in codes:
            return code
    return OK


def _located(v) -> str:
    """An exit-2 verdict's reason, naming the trace unless the reason already does."""
    reason = v.reason
    return reason if reason.startswith(v.name) else f"{v.name}: {reason}"


def render(v) -> str:
    head = f"{v.name}: {v.verdict.upper()} ({v.events} events, {v.partitions} partition(s), {v.seconds:.2f}s)"
    if v.verdict == "accepted":
        return head
    lines = [head, f"  {v.reason}"]
    if v.index is not None:
        lines.append(f"  at event #{v.index}: {json.dumps(v.event, separators=(',', ':'))[:400]}")
    for m in v.mismatches:
        lines.append(f"  - {m}")
    for k, (st, en) in enumerate(zip(v.candidates, v.enabled, strict=False)):
        lines.append(f"  candidate spec state {k + 1} of {len(v.candidates)}:")
        for key in (
            "coordination",
            "alive",
            "leader_view",
            "epoch_view",
            "isr_view",
            "hw",
            "hw_checkpoint",
            "remote_leo",
            "leader_and_isr_in_flight",
        ):
            lines.append(f"    {key}: {json.dumps(st[key], separators=(',', ':'))}")
        lines.append(
            "    log: "
            + json.dumps({r: len(x) for r, x in st["log"].items()}, separators=(",", ":"))
            + " (lengths)"
        )
        lines.append(f"    enabled there: {', '.join(en) if en else '(nothing)'}")
    return "\n".join(lines)
