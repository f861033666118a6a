"""`isr matrix`: the verdict table. Every protocol version against every fault mode on the same
bounds: which version, under which fault mode and settings, keeps which guarantee.

Each cell is one bounded `check_bfs` run (shortest counterexamples), run in parallel across the
machine's cores with a per-cell time limit, so the table always finishes: a cell that hits the
limit before deciding a property prints `incomplete` for it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import textwrap
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import replace
from pathlib import Path
from typing import Any

from isr.checker.bfs import Limits, check_bfs
from isr.checker.result import Counterexample, Step
from isr.spec import PROTOCOL_NAMES, Config, ConfigError, IsrSpec
from isr.spec.config import FAULT_MODE_NAMES, FAULT_MODES
from isr.spec.protocols import PROTOCOLS, ProtocolVersion, protocol_source

from . import junit, matrix_html, reports
from .errors import INCOMPLETE, OK, UsageError, refuse_unwritable
from .models import (
    MODEL_COUNT,
    add_protocol_file_arg,
    int_in,
    positive_int,
    positive_seconds,
    protocol_from_args,
    refuse_hopeless,
)
from .render import render_counterexample

# kraft (issue 18, step 1) is not a default row yet: its split fetch multiplies the space by
# about 50 at three replicas, beyond the matrix's budget, and it refuses the session-expiry
# mode. Ask for it by name (--protocols kraft --modes none,...).
MATRIX_PROTOCOLS = tuple(p for p in PROTOCOL_NAMES if not PROTOCOLS[p].split_fetch)
NO_FAULT = "none"
MATRIX_FORMAT_VERSION = 1
# The table's columns, in this order; a property a version does not state prints `n/a`.
COLUMNS = (
    "TypeOK",
    "HwAtMostLeo",
    "LeaderInIsr",
    "IsrWithinAssigned",
    "StrongIsr",
    "WeakIsr",
    "NoCommittedLoss",
    "NoAckedLoss",
    "NoPhantomRead",
    "LogMatching",
    "HwMonotonic",
    "NoDuplicates",
    "Available",
)
DEFAULT_BOUNDS = dict(replicas=[2], records=1, epochs=2, min_isr=1)


def register(sub) -> None:
    p = sub.add_parser(
        "matrix",
        help="the verdict table: every protocol version against every fault mode",
        description="Run every protocol version against every fault mode on the given bounds "
        "and print which properties hold. Cells run in parallel; each is bounded by "
        "--max-seconds. Violations are the table's content, not an error. Exit 0: every cell "
        "completed; 2: bad input; 3: some cell is incomplete.",
    )
    p.add_argument(
        "--replicas",
        type=MODEL_COUNT,
        nargs="+",
        default=DEFAULT_BOUNDS["replicas"],
        metavar="N",
        help="replica counts, one block of rows each (default 2)",
    )
    p.add_argument("--records", type=MODEL_COUNT, default=DEFAULT_BOUNDS["records"], metavar="N")
    p.add_argument("--epochs", type=MODEL_COUNT, default=DEFAULT_BOUNDS["epochs"], metavar="N")
    p.add_argument(
        "--crashes",
        type=MODEL_COUNT,
        nargs="+",
        default=None,
        metavar="N",
        help="crash budgets f, one block of rows each (default: replicas, so every member may fail)",
    )
    p.add_argument("--min-isr", type=MODEL_COUNT, default=DEFAULT_BOUNDS["min_isr"], metavar="N")
    p.add_argument(
        "--protocols",
        default=",".join(MATRIX_PROTOCOLS),
        metavar="A,B",
        help="protocol versions, comma-separated (default: all but kraft)",
    )
    add_protocol_file_arg(
        p,
        "a Python file defining your own protocol version (see examples/protocols/my_kip.py): "
        "its rows follow those of --protocols",
    )
    p.add_argument(
        "--modes",
        default=",".join((NO_FAULT, *FAULT_MODE_NAMES)),
        metavar="A,B",
        help=f"fault modes, comma-separated: {NO_FAULT}, {', '.join(FAULT_MODE_NAMES)} "
        "(default: all)",
    )
    p.add_argument(
        "--max-seconds",
        type=positive_seconds,
        default=60.0,
        metavar="S",
        help="time limit per cell (default 60)",
    )
    p.add_argument(
        "--max-states", type=positive_int, default=None, metavar="N", help="state limit per cell"
    )
    p.add_argument(
        "--jobs",
        type=int_in(1, 1024),
        default=None,
        metavar="N",
        help="parallel cells (default: all cores)",
    )
    p.add_argument("--out", metavar="DIR", help="write matrix.json and matrix.md there")
    p.add_argument("--format", choices=["text", "json", "markdown"], default="text")
    p.add_argument(
        "--html",
        metavar="FILE",
        help="also write the table as a heat map (a row per version, a column per fault mode), "
        "each violated property linked to its counterexample, written beside FILE in "
        "FILE's name + '-cx/' (trace file and `isr explain --html` page)",
    )
    p.add_argument(
        "--junit",
        metavar="FILE",
        help="also write JUnit XML: a suite per cell, a case per property",
    )
    p.add_argument(
        "--sarif",
        metavar="FILE",
        help="also write SARIF 2.1.0: a rule per property, a result per violated cell",
    )
    p.set_defaults(run=run)


def _names(text: str, known: tuple[str, ...], what: str) -> list[str]:
    names = [x.strip() for x in text.split(",") if x.strip()]
    for n in names:
        if n not in known:
            raise UsageError(f"unknown {what} {n!r}; known: {', '.join(known)}")
    if not names:
        raise UsageError(f"no {what} given")
    return names


def mode_config(base: Config, mode: str) -> Config:
    if mode == NO_FAULT:
        return base
    return next(m for m in FAULT_MODES if m.name == mode).apply(base)


def plan(args: argparse.Namespace, mine: ProtocolVersion | None = None) -> list[dict[str, Any]]:
    """The cells: one per (replicas, crashes, protocol, fault mode), with its Config; ``mine``:
    the user's version (--protocol-file), a row of its own."""
    protocols = _names(args.protocols, PROTOCOL_NAMES, "protocol")
    if mine is not None and mine.name not in protocols:
        protocols.append(mine.name)
    modes = _names(args.modes, (NO_FAULT, *FAULT_MODE_NAMES), "fault mode")
    if args.max_seconds <= 0:
        raise UsageError("--max-seconds must be positive")
    if args.max_states is not None and args.max_states <= 0:
        raise UsageError("--max-states must be positive")
    if args.jobs is not None and args.jobs <= 0:
        raise UsageError("--jobs must be positive")
    cells = []
    for n in args.replicas:
        for crashes in args.crashes or [n]:
            base = Config(
                replicas=n,
                records=args.records,
                epochs=args.epochs,
                crashes=crashes,
                min_isr=args.min_isr,
                availability=True,
            )
            for protocol in protocols:
                for mode in modes:
                    version = cell_version(protocol, mine)
                    cfg = mode_config(replace(base, protocol=protocol), mode)
                    try:
                        cfg.validate(version)
                    except ConfigError as e:
                        raise UsageError(e.cli) from None
                    refuse_hopeless(cfg, per_cell=True, version=version)
                    cells.append(
                        {
                            "replicas": n,
                            "crashes": crashes,
                            "protocol": protocol,
                            "mode": mode,
                            "config": cfg.to_json(),
                            **protocol_source(version),
                        }
                    )
    return cells


def cell_version(protocol: str, mine: ProtocolVersion | None) -> ProtocolVersion | None:
    """The version object of a cell's protocol: the user's (``mine``) or None (a built-in)."""
    return mine if mine is not None and protocol == mine.name else None


def run_cell(
    cell: dict[str, Any],
    max_seconds: float,
    max_states: int | None,
    version: ProtocolVersion | None = None,
) -> dict[str, Any]:
    """One cell: a bounded BFS of the model (in a worker process, ``version`` pickled to it by
    value). Returns its JSON."""
    cfg = Config(**cell["config"])
    model = IsrSpec(cfg, version)
    res = check_bfs(model, limits=Limits(max_states, max_seconds), config=cfg.to_json())
    props = {}
    for p in res.properties:
        entry: dict[str, Any] = {"kind": p.kind, "holds": p.holds}
        if p.counterexample is not None:
            entry["length"] = p.counterexample.length
            entry["counterexample"] = p.counterexample.to_json()
        props[p.name] = entry
    return {
        **cell,
        "complete": res.complete,
        "stop_reason": res.stop_reason,
        "distinct_states": res.distinct_states,
        "seconds": round(res.seconds, 2),
        "properties": props,
    }


def cell_text(cell: dict[str, Any], name: str) -> str:
    p = cell["properties"].get(name)
    if p is None:
        return "n/a"
    if p["holds"] is True:
        return "holds"
    if p["holds"] is False and "length" in p:
        return f"violated ({p['length']} steps)"
    if p["holds"] is False:
        return "never reached"
    return "incomplete"


def _row_label(cell: dict[str, Any], multi: bool) -> list[str]:
    label = [cell["protocol"], cell["mode"]]
    if multi:
        label = [f"R={cell['replicas']} f={cell['crashes']}", *label]
    return label


def _is_multi(cells: list[dict[str, Any]]) -> bool:
    return len({(c["replicas"], c["crashes"]) for c in cells}) > 1


TEXT_WIDTH = 100  # the terminal table's widest line (issue 30: it was 240 columns wide)
HEAD_WORDS = 7  # a column head wraps between its CamelCase words past this width


def short_text(cell: dict[str, Any], name: str) -> str:
    """A cell of the terminal table: ``cell_text`` with a violation as ``v(N)`` (N steps, the
    legend under the table says so)."""
    text = cell_text(cell, name)
    if text.startswith("violated ("):
        return f"v({text[len('violated (') :].split()[0]})"
    return text


def head_lines(name: str, width: int = HEAD_WORDS) -> list[str]:
    """A property's name as the lines of its column head: CamelCase words packed greedily into
    lines of at most ``width`` characters (a longer word keeps a line of its own)."""
    words = re.findall(r"[A-Z][a-z]*|[a-z]+|\d+", name) or [name]
    if "".join(words) != name:
        return [name]
    lines = [words[0]]
    for w in words[1:]:
        if len(lines[-1]) + len(w) <= width:
            lines[-1] += w
        else:
            lines.append(w)
    return lines


def _table(heads: list[list[str]], rows: list[list[str] | str]) -> list[str]:
    """Columns two spaces apart, each as wide as its widest head line or cell; heads bottom
    aligned over their columns. A row that is a string (a block's heading) is printed as it is
    and widens no column."""
    cells = [r for r in rows if not isinstance(r, str)]
    widths = [max([*(len(x) for x in h), *(len(r[i]) for r in cells)]) for i, h in enumerate(heads)]
    depth = max(len(h) for h in heads)
    out = []
    for k in range(depth):
        line = [
            (h[k - (depth - len(h))] if k >= depth - len(h) else "").ljust(w)
            for h, w in zip(heads, widths, strict=True)
        ]
        out.append("  ".join(line).rstrip())
    for r in rows:
        if isinstance(r, str):
            out.append(r)
        else:
            out.append("  ".join(x.ljust(w) for x, w in zip(r, widths, strict=True)).rstrip())
    return out


def _block(cell: dict[str, Any], multi: bool) -> str:
    """The heading of a block of rows: the protocol version (and the bounds, when the table has
    several)."""
    if multi:
        return f"{cell['protocol']} (replicas {cell['replicas']}, crashes {cell['crashes']})"
    return cell["protocol"]


def render_text(cells: list[dict[str, Any]], header: str, width: int = TEXT_WIDTH) -> str:
    """The terminal table, at most ``width`` columns wide: a block of rows per protocol version
    (and bounds), a row per fault mode. A property that holds in every cell (or is n/a) tells
    nothing per cell: it is named under the table instead of taking a column. A violation reads
    ``v(N)``; column heads wrap between their words; when the properties still do not fit, the
    table is split into several, each repeating the row labels. Nothing is lost: the full table
    is the Markdown and JSON that --out writes."""
    multi = _is_multi(cells)
    same = [n for n in COLUMNS if all(cell_text(c, n) in ("holds", "n/a") for c in cells)]
    shown = [n for n in COLUMNS if n not in same] if cells else list(COLUMNS)
    label_w = max([len("fault mode"), *(len(c["mode"]) + 2 for c in cells)]) + 2
    groups: list[list[str]] = [[]]
    used = label_w
    for n in shown:
        w = max([*(len(x) for x in head_lines(n)), *(len(short_text(c, n)) for c in cells)]) + 2
        if groups[-1] and used + w - 2 > width:
            groups.append([])
            used = label_w
        groups[-1].append(n)
        used += w
    out = [*textwrap.wrap(header, width, subsequent_indent="  "), ""]
    for k, group in enumerate(groups):
        if k:
            out.append("")
        heads = [["fault mode"], *(head_lines(n) for n in group)]
        rows: list[list[str] | str] = []
        last = None
        for c in cells:
            block = _block(c, multi)
            if block != last:
                rows.append(block)
                last = block
            rows.append([f"  {c['mode']}", *(short_text(c, n) for n in group)])
        out.extend(_table(heads, rows))
    out.append("")
    out.append("v(N): violated, with a shortest counterexample of N steps")
    if cells and same:
        out.extend(textwrap.wrap(f"hold in every cell (or n/a): {', '.join(same)}", width))
    return "\n".join(out)


def _cx(entry: dict[str, Any]) -> Counterexample:
    d = entry["counterexample"]
    steps = [Step(s["index"], s["action"], s["args"], s["changed"]) for s in d["steps"]]
    return Counterexample(d["initial"], steps, d.get("loop_start"))


def render_markdown(cells: list[dict[str, Any]], header: str) -> str:
    multi = _is_multi(cells)
    heads = (["bounds"] if multi else []) + ["protocol", "fault mode", *COLUMNS]
    out = ["# Verdict table", "", header, ""]
    out.append("| " + " | ".join(heads) + " |")
    out.append("|" + "---|" * len(heads))
    for c in cells:
        row = [*_row_label(c, multi)]
        for n in COLUMNS:
            text = cell_text(c, n)
            if text.startswith("violated"):
                text = f"[{text}](#{_anchor(c, n)})"
            row.append(text)
        out.append("| " + " | ".join(row) + " |")
    out += ["", "## Counterexamples (shortest)", ""]
    for c in cells:
        for n in COLUMNS:
            p = c["properties"].get(n)
            if not p or "counterexample" not in p:
                continue
            cx = _cx(p)
            out.append(f'<a id="{_anchor(c, n)}"></a>')
            out.append(f"### {' / '.join(_row_label(c, True))}: {n} ({cx.length} steps)")
            out.append("")
            out.append(" → ".join(f"{s.action}({_args(s.args)})" for s in cx.steps))
            out.append("")
            out.append("<details><summary>states</summary>")
            out.append("")
            out.append("```")
            out.extend(render_counterexample(cx))
            out.append("```")
            out.append("</details>")
            out.append("")
    return "\n".join(out)


def _args(args: dict[str, Any]) -> str:
    return ", ".join(str(v) for v in args.values())


def _anchor(c: dict[str, Any], prop: str) -> str:
    return f"r{c['replicas']}-f{c['crashes']}-{c['protocol']}-{c['mode']}-{prop}".lower()


def run_matrix(
    cells: list[dict[str, Any]],
    max_seconds: float,
    max_states: int | None,
    jobs: int | None,
    mine: ProtocolVersion | None = None,
) -> list[dict[str, Any]]:
    """Run the cells, in parallel when more than one worker is asked for; results in plan order.
    Fingerprints are process-independent, so a cell's verdicts do not depend on where it ran."""
    workers = jobs or os.cpu_count() or 1
    workers = min(workers, len(cells)) or 1
    t0 = time.perf_counter()
    if workers == 1:
        done = []
        for c in cells:
            done.append(run_cell(c, max_seconds, max_states, cell_version(c["protocol"], mine)))
            _progress(done[-1], len(done), len(cells), t0)
        return done
    # longest cells first keeps the cores busy to the end
    order = sorted(range(len(cells)), key=lambda i: -cells[i]["replicas"])
    results: list[dict[str, Any] | None] = [None] * len(cells)
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = {
            pool.submit(
                run_cell,
                cells[i],
                max_seconds,
                max_states,
                cell_version(cells[i]["protocol"], mine),
            ): i
            for i in order
        }
        for n, fut in enumerate(as_completed(futures), 1):
            results[futures[fut]] = fut.result()
            _progress(fut.result(), n, len(cells), t0)
    return [r for r in results if r is not None]


def _progress(cell: dict[str, Any], n: int, total: int, t0: float) -> None:
    """One stderr line per finished cell, so a long table shows how far it is."""
    status = "complete" if cell["complete"] else f"incomplete ({cell['stop_reason']})"
    print(
        f"isr matrix: [{n}/{total}] {time.perf_counter() - t0:.0f} s: "
        f"R={cell['replicas']} f={cell['crashes']} {cell['protocol']} {cell['mode']}: "
        f"{cell['distinct_states']:,} states in {cell['seconds']:.1f} s, {status}",
        file=sys.stderr,
        flush=True,
    )


def header_line(args: argparse.Namespace) -> str:
    crashes = " ".join(map(str, args.crashes)) if args.crashes else "= replicas"
    return (
        f"isr matrix: replicas {' '.join(map(str, args.replicas))}, records {args.records}, "
        f"epochs {args.epochs}, crashes {crashes}, min.insync.replicas {args.min_isr}, "
        f"acks all unless acks-1, {args.max_seconds:g} s per cell"
    )


def run(args: argparse.Namespace) -> int:
    mine = protocol_from_args(args)
    cells = plan(args, mine)
    if args.html:  # refused before the cells run, not after
        refuse_unwritable(args.html, "--html")
    t0 = time.perf_counter()
    results = run_matrix(cells, args.max_seconds, args.max_states, args.jobs, mine)
    seconds = time.perf_counter() - t0
    header = header_line(args)
    doc = {
        "format_version": MATRIX_FORMAT_VERSION,
        "header": header,
        "columns": list(COLUMNS),
        "seconds": round(seconds, 1),
        "cells": [{**c, "verdicts": {n: cell_text(c, n) for n in COLUMNS}} for c in results],
    }
    if args.out:
        out = Path(args.out)
        try:
            out.mkdir(parents=True, exist_ok=True)
            (out / "matrix.json").write_text(json.dumps(doc, indent=1) + "\n")
            (out / "matrix.md").write_text(render_markdown(results, header) + "\n")
        except OSError as e:
            raise UsageError(f"cannot write to {args.out}: {e.strerror}") from None
    if args.html:
        matrix_html.write(args.html, doc, results, mine)
    if args.junit or args.sarif:
        reports.write_reports(args, junit.matrix_suites(results))
    if args.format == "json":
        json.dump(doc, sys.stdout, indent=1)
        sys.stdout.write("\n")
    elif args.format == "markdown":
        print(render_markdown(results, header))
    else:
        print(render_text(results, header))
        print(f"\n{len(results)} cells in {seconds:.1f} s")
    if not all(c["complete"] or _decided(c) for c in results):
        return INCOMPLETE
    return OK


def _decided(c: dict[str, Any]) -> bool:
    return all(cell_text(c, n) != "incomplete" for n in COLUMNS)
