"""`isr matrix --html FILE`: the verdict table as a heat map, one self-contained HTML page.

A table per bounds block (replicas, crashes): a row per protocol version, a column per fault
mode, each cell coloured by its verdict (every property holds, some property violated, some
left undecided by the cell's limits) and naming the violated properties with the length of
their shortest counterexamples. Each violated property links to its counterexample, written
beside the page: the trace file (what `isr check --trace-out` writes; `isr replay` and
`isr explain` read it) and its `isr explain --html` page (cli/explain.py's ``render_html``).

Why a picture: 72 cells of 13 properties are hard to scan as text; which version breaks under
which fault is a pattern of colour, and the step-by-step story is one click away. Inline CSS,
no script, nothing loaded.
"""

from __future__ import annotations

import html
import os
from pathlib import Path
from typing import Any

from isr.spec import Config, IsrSpec
from isr.spec.protocols import protocol_source
from isr.traces.counterexample import itf

from .errors import UsageError

VERDICT_CLASSES = ("holds", "violated", "incomplete")


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def cell_class(cell: dict[str, Any]) -> str:
    """The cell's colour: ``violated`` when some property is violated (a violation found stays
    one, however far the search got), else ``incomplete`` when some property is undecided, else
    ``holds``."""
    props = cell["properties"].values()
    if any(p["holds"] is False for p in props):
        return "violated"
    if any(p["holds"] is None and p.get("kind") != "eventually" for p in props):
        return "incomplete"
    return "holds"


def cx_name(cell: dict[str, Any], prop: str) -> str:
    """The file stem of one cell's counterexample of ``prop`` (unique in the matrix)."""
    return f"r{cell['replicas']}-f{cell['crashes']}-{cell['protocol']}-{cell['mode']}-{prop}"


def write_counterexample(
    cell: dict[str, Any], prop: str, folder: Path, version: Any = None
) -> tuple[Path, Path]:
    """Write the cell's counterexample of ``prop`` as a trace file (the `isr check
    --trace-out` NDJSON) and its `isr explain --html` page into ``folder``; their paths."""
    from isr.checker.result import Counterexample, Step

    from .explain import render_html

    entry = cell["properties"][prop]
    d = entry["counterexample"]
    steps = [Step(s["index"], s["action"], s["args"], s["changed"]) for s in d["steps"]]
    cx = Counterexample(d["initial"], steps, d.get("loop_start"))
    cfg = Config(**cell["config"])
    header = {
        "model": IsrSpec(cfg, version).name,
        "config": cell["config"],
        **protocol_source(version),
        "property": prop,
        "kind": entry["kind"],
    }
    if cx.loop_start is not None:
        header["loop_start"] = cx.loop_start
    trace_path = folder / f"{cx_name(cell, prop)}.ndjson"
    page_path = folder / f"{cx_name(cell, prop)}.html"
    rows = [{"action": s.action, "args": s.args, "changed": s.changed} for s in cx.steps]
    itf.write_as("ndjson", str(trace_path), header, cx.whole_states(), rows)
    page_path.write_text(
        render_html(itf.read_any(str(trace_path), version), version), encoding="utf-8"
    )
    return trace_path, page_path


def _violations(cell: dict[str, Any], columns: list[str]) -> list[tuple[str, int | None]]:
    out = []
    for n in columns:
        p = cell["properties"].get(n)
        if p is not None and p["holds"] is False:
            out.append((n, p.get("length")))
    return out


def _undecided(cell: dict[str, Any], columns: list[str]) -> list[str]:
    return [
        n
        for n in columns
        if (p := cell["properties"].get(n)) is not None
        and p["holds"] is None
        and p.get("kind") != "eventually"
    ]


CSS = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #1a202c; background: #fff; }
h1 { font-size: 20px; margin: 0 0 4px; }
h2 { font-size: 16px; margin: 24px 0 6px; }
.header { color: #4a5568; margin: 0 0 12px; max-width: 1100px; }
.legend span { display: inline-block; padding: 2px 10px; margin-right: 8px; border-radius: 4px; }
table.heat { border-collapse: separate; border-spacing: 3px; }
table.heat th { font-weight: 600; padding: 4px 8px; text-align: left; }
table.heat thead th { writing-mode: horizontal-tb; font-size: 12px; color: #2d3748; }
table.heat td { vertical-align: top; padding: 6px 8px; border-radius: 4px; min-width: 110px;
  font-size: 12px; }
.holds { background: #c6f6d5; color: #22543d; }
.violated { background: #feb2b2; color: #742a2a; }
td.violated.n1 { background: #fed7d7; }
td.violated.n3 { background: #fc8181; }
.incomplete { background: #faf089; color: #5f370e; }
td.violated a { color: #742a2a; text-decoration: underline; display: block; }
td .what { font-weight: 600; display: block; margin-bottom: 2px; }
td .sub { color: #4a5568; display: block; }
"""


def render(
    doc: dict[str, Any], cells: list[dict[str, Any]], links: dict[tuple[int, str], str]
) -> str:
    """The page. ``doc``: the matrix document (header, columns, seconds); ``cells`` in plan
    order; ``links``: (cell index, property) -> the counterexample page's path relative to the
    page."""
    columns = list(doc["columns"])
    blocks: dict[tuple[int, int], list[int]] = {}
    for i, c in enumerate(cells):
        blocks.setdefault((c["replicas"], c["crashes"]), []).append(i)
    counts = {k: 0 for k in VERDICT_CLASSES}
    for c in cells:
        counts[cell_class(c)] += 1
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"><title>isr matrix</title>',
        f"<style>{CSS}</style></head><body>",
        "<h1>isr matrix: the verdict table</h1>",
        f'<p class="header">{_e(doc["header"])}; {len(cells)} cells in {doc["seconds"]} s.</p>',
        '<p class="legend">'
        f'<span class="holds">every property holds ({counts["holds"]})</span>'
        f'<span class="violated">some property violated ({counts["violated"]})</span>'
        f'<span class="incomplete">some property undecided: the cell hit its limit '
        f"({counts['incomplete']})</span></p>",
        "<p>A violated property is followed by its shortest counterexample's length in steps; "
        "click it for the counterexample, step by step.</p>",
    ]
    for (replicas, crashes), idx in blocks.items():
        protocols = list(dict.fromkeys(cells[i]["protocol"] for i in idx))
        modes = list(dict.fromkeys(cells[i]["mode"] for i in idx))
        at = {(cells[i]["protocol"], cells[i]["mode"]): i for i in idx}
        out.append(f"<h2>replicas {replicas}, crashes {crashes}</h2>")
        out.append('<table class="heat"><thead><tr><th>protocol \\ fault mode</th>')
        out.extend(f"<th>{_e(m)}</th>" for m in modes)
        out.append("</tr></thead><tbody>")
        for proto in protocols:
            out.append(f"<tr><th>{_e(proto)}</th>")
            for mode in modes:
                i = at.get((proto, mode))
                if i is None:
                    out.append("<td></td>")
                    continue
                c = cells[i]
                cls = cell_class(c)
                body = []
                viol = _violations(c, columns)
                if viol:
                    body.append(f'<span class="what">{len(viol)} violated</span>')
                    for name, length in viol:
                        text = f"{name} {length}" if length is not None else f"{name} (never)"
                        href = links.get((i, name))
                        body.append(
                            f'<a href="{_e(href)}">{_e(text)}</a>'
                            if href
                            else f'<span class="sub">{_e(text)}</span>'
                        )
                elif cls == "holds":
                    body.append('<span class="what">all hold</span>')
                undecided = _undecided(c, columns)
                if undecided:
                    body.append(
                        f'<span class="sub">undecided ({_e(c["stop_reason"])}): '
                        f"{_e(', '.join(undecided))}</span>"
                    )
                body.append(f'<span class="sub">{c["distinct_states"]:,} states</span>')
                title = f"{proto} under {mode}: {cls}"
                shade = f" n{min(len(viol), 3)}" if viol else ""  # darker: more violated
                out.append(
                    f'<td class="{cls}{shade}" data-protocol="{_e(proto)}" data-mode="{_e(mode)}" '
                    f'title="{_e(title)}">{"".join(body)}</td>'
                )
            out.append("</tr>")
        out.append("</tbody></table>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def write(path: str, doc: dict[str, Any], cells: list[dict[str, Any]], mine: Any = None) -> int:
    """Write the heat map to ``path`` and every violated property's counterexample (trace file
    and explain page) into the folder ``<stem>-cx`` beside it; the number of counterexamples.
    ``mine``: the user's version (--protocol-file), the object of its cells.
    An unwritable place is a UsageError (one line, exit 2)."""
    page = Path(path)
    folder = page.with_name(page.stem + "-cx")
    links: dict[tuple[int, str], str] = {}
    try:
        for i, c in enumerate(cells):
            for name in doc["columns"]:
                p = c["properties"].get(name)
                if p is None or p["holds"] is not False or "counterexample" not in p:
                    continue
                folder.mkdir(parents=True, exist_ok=True)
                version = mine if mine is not None and c["protocol"] == mine.name else None
                _trace, explained = write_counterexample(c, name, folder, version)
                links[(i, name)] = os.path.relpath(explained, page.parent).replace(os.sep, "/")
        page.write_text(render(doc, cells, links), encoding="utf-8")
    except OSError as e:
        raise UsageError(f"cannot write --html {path}: {e.strerror}") from None
    return len(links)
