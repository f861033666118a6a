"""`isr check --html-report FILE`: the run report as one self-contained HTML page: the run's
figures, a bar plot of the state space's growth (the distinct states first reached at each BFS
depth, the result's ``level_sizes``) and the verdicts table.

Why a picture: how the space grows level by level says at a glance whether a bound is cheap or
about to explode (a plot still rising at the last level is a search the limits cut short), which
the one-line total does not. Inline CSS and SVG only: no script, nothing loaded.
"""

from __future__ import annotations

import html
import math
from typing import Any

from isr.checker.result import CheckResult

from .errors import write_output
from .render import stop_label, verdict_word

PLOT_W, PLOT_H = 760, 260  # the plot area, pixels
LEFT, BOTTOM, TOP = 64, 52, 16  # margins for the axes' labels


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def nice_ticks(top: int, count: int = 5) -> list[int]:
    """Round values for the y axis, from 0 to at least ``top``."""
    if top <= 0:
        return [0, 1]
    raw = top / count
    mag = 10 ** math.floor(math.log10(raw)) if raw >= 1 else 1
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    step = max(int(step), 1)
    n = math.ceil(top / step)
    return [k * step for k in range(n + 1)]


def growth_svg(
    sizes: list[int], partial: bool = False, marks: dict[int, list[str]] | None = None
) -> str:
    """The bar plot: one bar per depth, its height the states first reached there (a hover title
    gives depth, count and the running total). ``partial``: the last bar is a level the search
    stopped inside (drawn hatched). ``marks``: depth -> properties whose shortest
    counterexample ends at that depth (a red triangle above the axis)."""
    if not sizes:
        return '<p class="none">No level counts: the search reached no state.</p>'
    ticks = nice_ticks(max(sizes))
    ymax = ticks[-1]
    n = len(sizes)
    slot = PLOT_W / n
    bar = max(1.0, slot * 0.8)
    w, h = LEFT + PLOT_W + 16, TOP + PLOT_H + BOTTOM
    out = [
        f'<svg class="growth" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
        f'viewBox="0 0 {w} {h}" role="img" aria-label="distinct states per BFS level">',
        '<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
        'patternTransform="rotate(45)"><rect width="6" height="6" fill="#9ecae1"/>'
        '<line x1="0" y1="0" x2="0" y2="6" stroke="#2b6cb0" stroke-width="3"/></pattern></defs>',
    ]
    for t in ticks:
        y = TOP + PLOT_H - PLOT_H * t / ymax
        out.append(
            f'<line class="grid" x1="{LEFT}" y1="{y:.1f}" x2="{LEFT + PLOT_W}" y2="{y:.1f}"/>'
            f'<text class="ytick" x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{t:,}</text>'
        )
    every = max(1, math.ceil(n / 40))  # at most about 40 depth labels
    total = 0
    for d, v in enumerate(sizes):
        total += v
        x = LEFT + d * slot + (slot - bar) / 2
        bh = PLOT_H * v / ymax
        y = TOP + PLOT_H - bh
        last_partial = partial and d == n - 1
        cls = "bar partial" if last_partial else "bar"
        fill = ' fill="url(#hatch)"' if last_partial else ""
        note = " (a level the search stopped inside)" if last_partial else ""
        out.append(
            f'<rect class="{cls}" data-depth="{d}" data-states="{v}" x="{x:.1f}" y="{y:.1f}" '
            f'width="{bar:.1f}" height="{bh:.1f}"{fill}><title>depth {d}: {v:,} new states '
            f"({total:,} in all){note}</title></rect>"
        )
        if marks and d in marks:
            cx, ay = x + bar / 2, TOP + PLOT_H
            out.append(
                f'<polygon class="cx" data-depth="{d}" points="{cx - 6:.1f},{ay + 30} '
                f'{cx + 6:.1f},{ay + 30} {cx:.1f},{ay + 20}"><title>depth {d}: shortest '
                f"counterexample of {_e(', '.join(marks[d]))}</title></polygon>"
            )
        if d % every == 0 or d == n - 1:
            cx = x + bar / 2
            out.append(
                f'<text class="xtick" x="{cx:.1f}" y="{TOP + PLOT_H + 16}" '
                f'text-anchor="middle">{d}</text>'
            )
    out.append(
        f'<line class="axis" x1="{LEFT}" y1="{TOP + PLOT_H}" x2="{LEFT + PLOT_W}" '
        f'y2="{TOP + PLOT_H}"/><line class="axis" x1="{LEFT}" y1="{TOP}" x2="{LEFT}" '
        f'y2="{TOP + PLOT_H}"/>'
        f'<text class="label" x="{LEFT + PLOT_W / 2}" y="{h - 6}" text-anchor="middle">'
        "BFS depth (steps from an initial state)</text>"
        f'<text class="label" x="14" y="{TOP + PLOT_H / 2}" text-anchor="middle" '
        f'transform="rotate(-90 14 {TOP + PLOT_H / 2})">new distinct states</text>'
    )
    out.append("</svg>")
    return "\n".join(out)


def verdict_class(p) -> str:
    """The row's colour class: holds, violated or undecided (not checked, cut short)."""
    if p.holds is True:
        return "holds"
    if p.holds is False:
        return "violated"
    return "undecided"


CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px; color: #1a202c; background: #fff; }
h1 { font-size: 20px; margin: 0 0 4px; }
.header { color: #4a5568; margin: 0 0 12px; }
.figures { display: flex; gap: 12px; flex-wrap: wrap; margin: 12px 0 20px; }
.figure { border: 1px solid #cbd5e0; border-radius: 6px; padding: 8px 12px; background: #f7fafc; }
.figure b { display: block; font-size: 18px; }
svg.growth .bar { fill: #3182ce; }
svg.growth .bar:hover { fill: #1a4f8a; }
svg.growth .grid { stroke: #e2e8f0; }
svg.growth .axis { stroke: #4a5568; }
svg.growth text { font: 11px system-ui, sans-serif; fill: #4a5568; }
svg.growth .label { font-size: 12px; fill: #1a202c; }
svg.growth .cx { fill: #d50000; }
table.verdicts { border-collapse: collapse; margin-top: 8px; }
table.verdicts th, table.verdicts td { border: 1px solid #cbd5e0; padding: 4px 10px;
  text-align: left; }
tr.holds td.v { background: #c6f6d5; }
tr.violated td.v { background: #fed7d7; color: #9b2c2c; font-weight: 600; }
tr.undecided td.v { background: #fefcbf; }
.none { color: #718096; }
"""


def render_html(res: CheckResult, header: str) -> str:
    """The report page of one check result (``header``: the run's header line)."""
    sizes = list(res.extra.get("level_sizes") or [])
    partial = not res.complete and len(sizes) > res.depth + 1
    figures = [
        ("distinct states", f"{res.distinct_states:,}"),
        ("generated", f"{res.states_generated:,}"),
        ("depth", str(res.depth)),
        ("seconds", f"{res.seconds:.1f}"),
        ("engine", res.engine),
        ("search", stop_label(res)),
    ]
    fig = "".join(f'<div class="figure">{_e(k)}<b>{_e(v)}</b></div>' for k, v in figures)
    if sizes:
        peak = max(range(len(sizes)), key=lambda d: sizes[d])
        caption = (
            f"{len(sizes)} levels, widest at depth {peak} ({sizes[peak]:,} new states); "
            f"{sum(sizes):,} distinct states in all"
            + ("; the last level was cut short by the search's stop" if partial else "")
            + "."
        )
        marks: dict[int, list[str]] = {}
        for p in res.properties:
            if p.counterexample is not None and p.counterexample.length < len(sizes):
                marks.setdefault(p.counterexample.length, []).append(p.name)
        if marks:
            caption += (
                " Red triangles: the depths where shortest counterexamples end ("
                + "; ".join(f"{d}: {', '.join(v)}" for d, v in sorted(marks.items()))
                + ")."
            )
        plot = growth_svg(sizes, partial, marks)
    else:
        caption = f"The {res.engine} engine does not count the states of each level."
        plot = ""
    rows = []
    for p in res.properties:
        rows.append(
            f'<tr class="{verdict_class(p)}" data-property="{_e(p.name)}"><td>{_e(p.name)}</td>'
            f'<td>{_e(p.kind)}</td><td class="v">{_e(verdict_word(p, res.distinct_states))}</td>'
            "</tr>"
        )
    code = res.exit_code()
    verdict = {0: "all checked properties hold", 1: "VIOLATED", 3: "INCOMPLETE"}[code]
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f"<title>isr check: {_e(verdict)}</title>",
            f"<style>{CSS}</style></head><body>",
            f"<h1>isr check: {_e(verdict)} (exit {code})</h1>",
            f'<p class="header">{_e(header)}</p>',
            f'<div class="figures">{fig}</div>',
            "<h2>State-space growth</h2>",
            f'<p class="caption">{_e(caption)}</p>',
            plot,
            "<h2>Verdicts</h2>",
            '<table class="verdicts"><thead><tr><th>property</th><th>kind</th><th>verdict</th>'
            f"</tr></thead><tbody>{''.join(rows)}</tbody></table>",
            "</body></html>",
            "",
        ]
    )


def write(path: str, res: CheckResult, header: str) -> None:
    """Write the report page; an unwritable file is a UsageError (one line, exit 2)."""
    write_output(path, render_html(res, header), "--html-report")
