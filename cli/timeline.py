"""`isr history FILE --html OUT.html` and `isr chaos --timeline OUT.html`: a client history as a
timeline, Jepsen style, one self-contained HTML page.

One lane per client process (the producers, the consumer), each operation a bar from its
invoke to its completion, coloured by how it completed (ok, fail: definitely not done, info:
indeterminate or never completed); the acknowledged writes the history checker
(traces/history.py) found lost are red, with a red triangle above them so a 1-pixel bar still
shows; polls the checker flagged (phantom, aborted, above-HW reads, gaps, reorderings) are
outlined. The run's faults, when the history carries them (the header's optional ``faults``,
which `isr chaos` writes: traces/FORMAT.md, "Client history"), are a lane of their own: a band
from a broker's kill or shutdown to its restart, a tick for every other event, and a faint
line through every lane at each event's time.

Why a picture: a lost write next to the kill that caused it, and the stall of the producers
while a broker is down, are what a person looks for in a chaos run; in the NDJSON they are
thousands of lines apart. Inline CSS and SVG only: no script, nothing loaded. The bars carry
hover titles with the operation's details.
"""

from __future__ import annotations

import html
import math
import re
from pathlib import Path
from typing import Any

from isr.traces.history import History, HistoryResult

from .errors import write_output

PLOT_W = 1100  # the time axis, pixels
LEFT = 120  # the lanes' labels
ROW_H, BAR_H, LANE_GAP, TOP = 12, 9, 10, 34
DOWN = re.compile(r"^(kill|power|shutdown|pause) (\d+)")
UP = re.compile(r"^(restart|resume) (\d+)")
MARKED = ("phantom_reads", "aborted_reads", "above_hw_reads", "reorders", "gaps", "non_monotonic")


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def time_ticks(lo: float, hi: float, count: int = 10) -> list[float]:
    """Round times between ``lo`` and ``hi`` for the axis."""
    span = hi - lo
    if span <= 0:
        return [lo]
    raw = span / count
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step) * step
    n = int((hi - first) / step + 1e-9)
    return [round(first + k * step, 9) for k in range(n + 1)]


def bars(history: History) -> list[dict[str, Any]]:
    """One bar per operation: its invoke's index, its completion's (None: never completed),
    process, ``f``, partition, status (ok, fail, info) and times (a never-completed one runs
    to the end of the history)."""
    ops = history.ops
    end = max((o["time"] for o in ops), default=0.0)
    out = []
    for i, o in enumerate(ops):
        if o["type"] != "invoke":
            continue
        j = o.get("_done")
        done = ops[j] if j is not None else None
        out.append(
            {
                "invoke": i,
                "done": j,
                "process": str(o["process"]),
                "f": o["f"],
                "partition": o["partition"],
                "status": done["type"] if done else "info",
                "t0": float(o["time"]),
                "t1": float(done["time"]) if done else end,
                "op": o,
                "completion": done,
            }
        )
    return out


def _describe(b: dict[str, Any]) -> str:
    o, d = b["op"], b["completion"]
    head = f"{b['process']} {b['f']} p{b['partition']}"
    if b["f"] == "send":
        head += f" {o.get('value')}"
    elif "from_offset" in o:
        head += f" from offset {o['from_offset']}"
    when = f"{b['t0']:.3f} s to {b['t1']:.3f} s"
    if d is None:
        return f"{head}: invoked at {b['t0']:.3f} s, never completed (info)"
    more = ""
    if d["type"] == "ok" and b["f"] == "send":
        more = f", offset {d.get('offset')}"
        if "leader_epoch" in d:
            more += f", leader epoch {d['leader_epoch']}"
    elif d["type"] == "ok":
        recs = d.get("records") or []
        more = f", {len(recs)} records"
        if recs:
            more += f" (offsets {recs[0][0]}..{recs[-1][0]})"
        if "hw" in d:
            more += f", hw {d['hw']}"
    elif "error" in d:
        more = f", {d['error']}"
    return f"{head}: {d['type']} {when}{more}"


def lanes(all_bars: list[dict[str, Any]]) -> list[tuple[str, list[list[dict[str, Any]]]]]:
    """Processes in order of their first operation, each packed into rows so that bars of one
    process that overlap in time (several sends in flight) sit one above the other."""
    by_proc: dict[str, list[dict[str, Any]]] = {}
    for b in all_bars:
        by_proc.setdefault(b["process"], []).append(b)
    out = []
    for proc, bs in by_proc.items():
        rows: list[list[dict[str, Any]]] = []
        ends: list[float] = []
        for b in sorted(bs, key=lambda x: (x["t0"], x["invoke"])):
            for k, e in enumerate(ends):
                if b["t0"] >= e:
                    rows[k].append(b)
                    ends[k] = b["t1"]
                    break
            else:
                rows.append([b])
                ends.append(b["t1"])
        out.append((proc, rows))
    return out


def fault_events(history: History) -> list[tuple[float, str]]:
    """The header's ``faults`` ({time, event}), in time order; none when it has none."""
    faults = history.header.get("faults") or []
    out = []
    for f in faults:
        if isinstance(f, dict) and isinstance(f.get("time"), (int, float)):
            out.append((float(f["time"]), str(f.get("event", "fault"))))
    return sorted(out, key=lambda x: x[0])


def down_bands(events: list[tuple[float, str]], end: float) -> list[tuple[float, float, str]]:
    """(from, to, broker) for every kill, shutdown or pause of a broker until its restart (or
    resume; to the end of the history when it never came back)."""
    down: dict[str, float] = {}
    out = []
    for t, ev in events:
        m = DOWN.match(ev)
        if m and m.group(2) not in down:
            down[m.group(2)] = t
            continue
        m = UP.match(ev)
        if m and m.group(2) in down:
            out.append((down.pop(m.group(2)), t, m.group(2)))
    out += [(t, end, b) for b, t in down.items()]
    return sorted(out)


CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px; color: #1a202c; background: #fff; }
h1 { font-size: 20px; margin: 0 0 4px; }
.summary { color: #2d3748; max-width: 1200px; }
.legend span { display: inline-block; padding: 1px 8px; margin: 0 6px 4px 0; border-radius: 3px;
  font-size: 12px; }
svg.timeline text { font: 11px system-ui, sans-serif; fill: #2d3748; }
svg.timeline .lane-bg { fill: #f7fafc; }
svg.timeline .grid { stroke: #e2e8f0; }
svg.timeline .fault-line { stroke: #805ad5; stroke-dasharray: 3 3; stroke-opacity: 0.5; }
.ok { fill: #48bb78; background: #48bb78; }
.poll.ok { fill: #4299e1; }
.fail { fill: #ed8936; background: #ed8936; }
.info { fill: #a0aec0; background: #a0aec0; }
.lost { fill: #d50000; background: #d50000; color: #fff; }
.acks1-lost { fill: #f687b3; background: #f687b3; }
.anomaly { stroke: #742a2a; stroke-width: 2; }
.down { fill: #d6bcfa; background: #d6bcfa; }
.lost-mark { fill: #d50000; }
.event { fill: #553c9a; }
ul.lost-list { font-family: ui-monospace, monospace; font-size: 12px; }
"""


def render_html(history: History, result: HistoryResult) -> str:
    """The timeline page of ``history`` as the checker judged it (``result``)."""
    all_bars = bars(history)
    lost = set(result.lost_ops.get("lost", []))
    lost1 = set(result.lost_ops.get("acks1_lost", [])) | set(result.lost_ops.get("lost_power", []))
    flagged: dict[int, list[str]] = {}
    for k in MARKED:
        for ex in result.anomalies[k].examples:
            if isinstance(ex.get("op"), int):
                flagged.setdefault(ex["op"], []).append(k)
    events = fault_events(history)
    times = [b["t0"] for b in all_bars] + [b["t1"] for b in all_bars] + [t for t, _ in events]
    lo, hi = (min(0.0, min(times)), max(times)) if times else (0.0, 1.0)  # from 0 s
    span = hi - lo if hi > lo else 1.0

    def x(t: float) -> float:
        return LEFT + (t - lo) / span * PLOT_W

    laid = lanes(all_bars)
    bands = down_bands(events, hi)
    fault_rows = 1 if events else 0
    height = TOP + sum(len(rows) * ROW_H + LANE_GAP for _p, rows in laid)
    height += (2 * ROW_H + LANE_GAP) * fault_rows + 30
    width = LEFT + PLOT_W + 20
    svg = [
        f'<svg class="timeline" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        'aria-label="client operations over time">'
    ]
    for t in time_ticks(lo, hi):
        svg.append(
            f'<line class="grid" x1="{x(t):.1f}" y1="{TOP - 6}" x2="{x(t):.1f}" '
            f'y2="{height - 24}"/><text x="{x(t):.1f}" y="{TOP - 10}" '
            f'text-anchor="middle">{t:g} s</text>'
        )
    y = TOP
    if events:
        h = 2 * ROW_H
        svg.append(
            f'<rect class="lane-bg" x="{LEFT}" y="{y}" width="{PLOT_W}" height="{h}"/>'
            f'<text x="{LEFT - 8}" y="{y + h / 2 + 4}" text-anchor="end">faults</text>'
        )
        for t0, t1, broker in bands:
            svg.append(
                f'<rect class="down" x="{x(t0):.1f}" y="{y + 1}" '
                f'width="{max(x(t1) - x(t0), 2):.1f}" height="{h - 2}"><title>broker {broker} '
                f"down from {t0:.2f} s to {t1:.2f} s</title></rect>"
                f'<text x="{x(t0) + 4:.1f}" y="{y + h - 8}">broker {_e(broker)} down</text>'
            )
        for t, ev in events:
            svg.append(
                f'<rect class="event" x="{x(t) - 1:.1f}" y="{y}" width="2" height="{h}">'
                f"<title>{t:.3f} s: {_e(ev)}</title></rect>"
            )
            if not (DOWN.match(ev) or UP.match(ev)):  # a band names the others
                svg.append(f'<text x="{x(t) + 4:.1f}" y="{y + h - 8}">{_e(ev)}</text>')
        y += h + LANE_GAP
    lanes_top = y
    for proc, rows in laid:
        lane_h = len(rows) * ROW_H
        svg.append(
            f'<rect class="lane-bg" x="{LEFT}" y="{y}" width="{PLOT_W}" height="{lane_h}"/>'
            f'<text x="{LEFT - 8}" y="{y + min(lane_h, ROW_H) / 2 + 4}" '
            f'text-anchor="end">{_e(proc)}</text>'
        )
        for r, row in enumerate(rows):
            by = y + r * ROW_H + (ROW_H - BAR_H) / 2
            for b in row:
                done = b["done"]
                cls = [b["f"], b["status"]]
                if done in lost:
                    cls.append("lost")
                elif done in lost1:
                    cls.append("acks1-lost")
                marks = flagged.get(done, []) if done is not None else []
                if marks:
                    cls.append("anomaly")
                title = _describe(b)
                if done in lost:
                    title += ": LOST (acknowledged acks=all, never read at its offset)"
                elif done in lost1:
                    title += ": lost, acks=1 (allowed when a leader fails)"
                if marks:
                    title += ": " + ", ".join(marks)
                x0 = x(b["t0"])
                w = max(x(b["t1"]) - x0, 1.5)
                svg.append(
                    f'<rect class="{" ".join(cls)}" data-op="{b["invoke"]}" '
                    f'data-done="{"" if done is None else done}" x="{x0:.1f}" y="{by:.1f}" '
                    f'width="{w:.1f}" height="{BAR_H}"><title>{_e(title)}</title></rect>'
                )
                if done in lost:
                    cx = x0 + w / 2
                    svg.append(
                        f'<polygon class="lost-mark" data-done="{done}" '
                        f'points="{cx - 5:.1f},{by - 6:.1f} {cx + 5:.1f},{by - 6:.1f} '
                        f'{cx:.1f},{by:.1f}"><title>{_e(title)}</title></polygon>'
                    )
        y += lane_h + LANE_GAP
    for t, ev in events:
        svg.append(
            f'<line class="fault-line" x1="{x(t):.1f}" y1="{lanes_top}" x2="{x(t):.1f}" '
            f'y2="{y - LANE_GAP}"><title>{_e(ev)}</title></line>'
        )
    svg.append(
        f'<text x="{LEFT + PLOT_W / 2}" y="{height - 6}" text-anchor="middle">seconds (the '
        "history's clock)</text></svg>"
    )
    ops = history.ops
    lost_items = [
        f"<li>op {i}: {_e(ops[i]['process'])} sent {_e(ops[i].get('value'))}, acknowledged at "
        f"partition {ops[i]['partition']} offset {ops[i].get('offset')} at "
        f"{ops[i]['time']:.3f} s</li>"
        for i in sorted(lost)[:100]
    ]
    more = f"<p>and {len(lost) - 100} more.</p>" if len(lost) > 100 else ""
    verdict = "VALID" if result.valid else "INVALID"
    faults_note = (
        f"{len(events)} fault events."
        if events
        else "The history carries no fault events (its header has no <code>faults</code>)."
    )
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f"<title>{_e(history.name)}: {verdict}</title>",
            f"<style>{CSS}</style></head><body>",
            f"<h1>{_e(Path(history.name).name)}: {verdict}</h1>",
            f'<p class="summary">{_e(result.summary())} {faults_note}</p>',
            '<p class="legend"><span class="ok">send ok</span>'
            '<span class="ok" style="background:#4299e1">poll ok</span>'
            '<span class="fail">fail (not done)</span>'
            '<span class="info">info (indeterminate)</span>'
            '<span class="lost">lost acknowledged write</span>'
            '<span class="acks1-lost">acks=1 write lost (allowed)</span>'
            '<span style="outline:2px solid #742a2a">flagged poll</span>'
            '<span class="down">broker down</span></p>',
            "\n".join(svg),
            *(
                [f"<h2>Lost acknowledged writes ({len(lost)})</h2>", '<ul class="lost-list">']
                + lost_items
                + ["</ul>", more]
                if lost
                else []
            ),
            "</body></html>",
            "",
        ]
    )


def write(path: str, history: History, result: HistoryResult, option: str = "--html") -> None:
    """Write the timeline page; an unwritable file is a UsageError naming ``option``."""
    write_output(path, render_html(history, result), option)
