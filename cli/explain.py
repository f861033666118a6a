"""`isr explain TRACE --html OUT.html`: a self-contained page showing a counterexample.

One lane per replica with its log (each entry ``record@epoch``; committed offsets, those below
the replica's HW, shaded), its LEO and HW, liveness and role at each step; the coordination state
(leader, leader epoch, ISR, LeaderAndIsr requests in flight); the client-visible history; the
action of each step. The step where the property breaks is highlighted: the last state for an
invariant, the last step for an action property, and the whole cycle of a liveness lasso. No
network access: the CSS and the few lines of JS (step selection with the arrow keys) are inline.
"""

from __future__ import annotations

import argparse
import html
import json
from typing import Any

from traces import counterexample as cxfile
from traces import itf

from .errors import UsageError

CSS = """
body{font:13px/1.35 system-ui,sans-serif;margin:16px;color:#222;background:#fff}
h1{font-size:18px;margin:0 0 4px}.meta{color:#555;margin-bottom:12px}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 6px;vertical-align:top}
th{background:#f3f3f3;text-align:left;position:sticky;left:0}
.step.sel{outline:3px solid #1565c0;outline-offset:-3px}
.step.broken{background:#ffebee}.step.loop{background:#fff8e1}
.act{font-weight:600;color:#0d47a1}.args{color:#555;font-size:11px}
.log{display:flex;gap:2px;flex-wrap:nowrap}
.e{border:1px solid #888;border-radius:3px;padding:1px 3px;font:11px monospace;background:#fff}
.e.c{background:#c8e6c9;border-color:#2e7d32}.e.new{box-shadow:0 0 0 2px #ff9800}
.empty{color:#999;font:11px monospace}.kv{font:11px monospace;color:#333}
.dead{opacity:.45}.lead{color:#b71c1c;font-weight:700}.bad{color:#b71c1c;font-weight:700}
.legend span{margin-right:14px}
"""

JS = """
(function(){
  var steps=[].slice.call(document.querySelectorAll('[data-step]'));
  var n=0; steps.forEach(function(c){n=Math.max(n,+c.dataset.step)});
  var cur=n;
  function sel(i){cur=Math.max(0,Math.min(n,i));
    steps.forEach(function(c){c.classList.toggle('sel',+c.dataset.step===cur)});
    document.getElementById('cur').textContent=cur;}
  steps.forEach(function(c){c.addEventListener('click',function(){sel(+c.dataset.step)})});
  document.addEventListener('keydown',function(e){
    if(e.key==='ArrowRight')sel(cur+1); if(e.key==='ArrowLeft')sel(cur-1);});
  sel(cur);
})();
"""


def register(sub) -> None:
    p = sub.add_parser(
        "explain",
        help="render a counterexample file as a self-contained HTML page",
        description="Reads an NDJSON counterexample written by `isr check --trace-out` or "
        "`isr liveness --trace-out` and writes one HTML page (no network needed to view it).",
    )
    p.add_argument("trace", metavar="TRACE")
    p.add_argument("--html", required=True, metavar="OUT.html")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        trace = itf.read_any(args.trace)  # NDJSON or ITF, by content
    except cxfile.TraceFileError as e:
        raise UsageError(str(e)) from None
    if "log" not in trace.initial or "coordination" not in trace.initial:
        raise UsageError(
            f"{args.trace}: not a counterexample of the ISR spec (no log/coordination)"
        )
    page = render_html(trace)
    try:
        with open(args.html, "w", encoding="utf-8") as f:
            f.write(page)
    except OSError as e:
        raise UsageError(f"cannot write {args.html}: {e.strerror}") from None
    print(f"isr explain: {len(trace.steps)} steps written to {args.html}")
    return 0


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _args(args: Any) -> str:
    if isinstance(args, dict):
        return ", ".join(f"{k}={v}" for k, v in args.items())
    return ", ".join(str(a) for a in args or [])


def _replica_cell(state: dict, prev: dict | None, r: str) -> str:
    log = state["log"][r]
    hw = state["hw"][r]
    plog = prev["log"][r] if prev else log
    alive = state["alive"][r]
    leader = state["leader_view"][r]
    me = int(r[1:])
    entries = []
    for o, (rec, ep) in enumerate(log):
        cls = "e"
        if o < hw:
            cls += " c"
        if prev is not None and (o >= len(plog) or plog[o] != [rec, ep]):
            cls += " new"
        entries.append(f'<span class="{cls}" title="offset {o}">{_e(rec)}@{_e(ep)}</span>')
    logs = "".join(entries) or '<span class="empty">empty</span>'
    role = "leader" if leader == me else (f"follows r{leader}" if leader >= 0 else "no leader")
    role_html = f'<span class="lead">{role}</span>' if leader == me else _e(role)
    extra = []
    if state.get("truncating", {}).get(r):
        extra.append("truncating")
    pend = state.get("pending_acks", {}).get(r)
    if pend:
        extra.append(f"pending {pend}")
    cls = "" if alive else "dead"
    return (
        f'<div class="{cls}"><div class="log">{logs}</div>'
        f'<div class="kv">LEO {len(log)} · HW {_e(hw)} · ckpt {_e(state["hw_checkpoint"][r])}</div>'
        f'<div class="kv">{"alive" if alive else "<b>CRASHED</b>"} · {role_html} · '
        f"epoch {_e(state['epoch_view'][r])} · ISR {_e(state['isr_view'][r])}</div>"
        + (f'<div class="kv">{_e(", ".join(extra))}</div>' if extra else "")
        + "</div>"
    )


def _coord_cell(state: dict) -> str:
    c = state["coordination"]
    reqs = state.get("leader_and_isr_in_flight", [])
    req = "".join(
        f'<div class="kv">→r{q["to"]}: leader r{q["leader"]} epoch {q["epoch"]} ISR {q["isr"]}'
        f"{'' if q.get('version_current') else ' (stale zkVersion)'}</div>"
        for q in reqs
    )
    return (
        f'<div class="kv">leader r{_e(c["leader"])} · epoch {_e(c["leader_epoch"])} · '
        f"ISR {_e(c['isr'])}</div>" + (req or '<div class="empty">no request in flight</div>')
    )


def _client_cell(state: dict) -> str:
    parts = [
        f"acked(all) {state.get('acked_all', [])}",
        f"acked(1) {state.get('acked_1', [])}",
        f"refused {state.get('refused', [])}",
        f"shown {state.get('shown_to_consumers', [])}",
    ]
    return "".join(f'<div class="kv">{_e(p)}</div>' for p in parts)


def render_html(trace: cxfile.CounterexampleTrace) -> str:
    h = trace.header
    states = [trace.initial] + [s["state"] for s in trace.steps]
    actions = [("Init", {})] + [(s["action"], s.get("args", {})) for s in trace.steps]
    n = len(states) - 1
    loop_start = h.get("loop_start")
    kind = h.get("kind", "always")
    broken: set[int] = set()
    loop: set[int] = set()
    if loop_start is not None:
        loop = set(range(loop_start, n + 1))
    elif n >= 0:
        broken = {n}
    replicas = sorted(trace.initial["log"], key=lambda r: int(r[1:]))

    def cls(i: int) -> str:
        c = "step"
        if i in broken:
            c += " broken"
        if i in loop:
            c += " loop"
        return c

    head = "".join(
        f'<th class="{cls(i)}" id="step-{i}" data-step="{i}">step {i}</th>' for i in range(n + 1)
    )
    rows = [f"<tr><th>step</th>{head}</tr>"]
    acts = "".join(
        f'<td class="{cls(i)}" data-step="{i}"><div class="act">{_e(a)}</div>'
        f'<div class="args">{_e(_args(args))}</div></td>'
        for i, (a, args) in enumerate(actions)
    )
    rows.append(f"<tr><th>action</th>{acts}</tr>")
    for r in replicas:
        cells = "".join(
            f'<td class="{cls(i)}" data-step="{i}">'
            f"{_replica_cell(s, states[i - 1] if i else None, r)}</td>"
            for i, s in enumerate(states)
        )
        rows.append(f'<tr class="lane" id="lane-{_e(r)}"><th>replica {_e(r)}</th>{cells}</tr>')
    coord = "".join(
        f'<td class="{cls(i)}" data-step="{i}">{_coord_cell(s)}</td>' for i, s in enumerate(states)
    )
    rows.append(f"<tr><th>coordination</th>{coord}</tr>")
    clients = "".join(
        f'<td class="{cls(i)}" data-step="{i}">{_client_cell(s)}</td>' for i, s in enumerate(states)
    )
    rows.append(f"<tr><th>clients</th>{clients}</tr>")
    prop = h.get("property", "?")
    if loop_start is not None:
        verdict = (
            f"liveness lasso: steps {loop_start}..{n} repeat forever (a Stutter step "
            f"repeats the last state); {prop} never holds again"
        )
    elif kind == "action":
        verdict = f"{prop} is violated by step {n}"
    else:
        verdict = f"{prop} is violated in the state after step {n}"
    cfg = json.dumps(h.get("config", {}))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>{_e(prop)}: counterexample</title>
<style>{CSS}</style></head>
<body>
<h1>Counterexample to {_e(prop)} ({_e(kind)})</h1>
<div class="meta">{_e(h.get("model", ""))} · {_e(cfg)} · {n} steps ·
<span class="bad">{_e(verdict)}</span> · selected step <b id="cur">{n}</b> (arrow keys)</div>
<div class="meta legend"><span><span class="e c">rec@epoch</span> committed (below HW)</span>
<span><span class="e new">new</span> changed by this step</span>
<span style="background:#ffebee">property broken</span>
<span style="background:#fff8e1">lasso cycle</span></div>
<table id="trace">{"".join(rows)}</table>
<script>{JS}</script>
</body></html>
"""
