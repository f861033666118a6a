"""`isr explain TRACE --html OUT.html` / `--format text`: a counterexample told as a story.

The reader's questions, in order, and where the page answers them:
- *what breaks, where?* A sentence at the top names the replica, offset and record
  (:func:`cli.why.violation`), under a one-line reading of the configuration;
- *how did we get there?* One lane per replica (log entries ``record@epoch``, committed ones
  shaded; LEO, HW, checkpoint; alive; role; epoch and ISR as the replica sees them), the
  coordination state (leader, epoch, ISR, LeaderAndIsr requests in flight) and what clients were
  told, at every step. Every field a step changed is highlighted, not only new log entries;
- *which step?* The breaking step is outlined in red: the last state for an invariant, the last
  step for an action property, the cycle of a liveness lasso. Long traces are laid out one step
  per row, and the page opens scrolled to the breaking step (the header stays in view).
The page is self-contained (inline CSS and a few lines of JS: arrow keys select a step). The
text form prints the same story in a terminal: each step with what it changed.
Input: an NDJSON or ITF counterexample (`isr check|simulate|liveness --trace-out`).
"""

from __future__ import annotations

import argparse
import html
import sys
from typing import Any

from isr.traces import counterexample as cxfile
from isr.traces import itf

from .errors import UsageError
from .why import violation

VERTICAL_FROM = 8  # steps: from this length on, one step per row (a wide table hides the end)

CSS = """
html,body{height:100%}
body{font:13px/1.35 system-ui,sans-serif;margin:0;color:#222;background:#fff;
  display:flex;flex-direction:column}
header{flex:none;padding:12px 16px 8px;border-bottom:1px solid #ddd}
main{flex:1;min-height:0;overflow:auto;padding:8px 16px 16px}
table.vertical tr:first-child th{position:sticky;top:-8px;z-index:1}
h1{font-size:18px;margin:0 0 4px}.meta{color:#555;margin:2px 0}
.why{margin:6px 0;padding:6px 10px;border-left:5px solid #c62828;background:#ffebee;
  font-size:15px;font-weight:600;color:#8e0000}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 6px;vertical-align:top}
th{background:#f3f3f3;text-align:left}
.step.sel{outline:2px dashed #1565c0;outline-offset:-6px}
.step.broken{background:#ffebee;box-shadow:inset 0 0 0 3px #d50000}
.step.loop{background:#fff8e1}
.act{font-weight:600;color:#0d47a1}.args{color:#555;font-size:11px}
.log{display:flex;gap:2px;flex-wrap:wrap;max-width:260px}
.e{border:1px solid #888;border-radius:3px;padding:1px 3px;font:11px monospace;background:#fff}
.e.c{background:#c8e6c9;border-color:#2e7d32}.e.new{box-shadow:0 0 0 2px #ff9800}
.empty{color:#999;font:11px monospace}.kv{font:11px monospace;color:#333}
.chg{background:#ffe082;border-radius:2px;outline:1px solid #ff9800}
.dead{opacity:.5}.lead{color:#b71c1c;font-weight:700}.bad{color:#b71c1c;font-weight:700}
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
    if(e.key==='ArrowRight'||e.key==='ArrowDown')sel(cur+1);
    if(e.key==='ArrowLeft'||e.key==='ArrowUp')sel(cur-1);});
  sel(cur);
  // open at the breaking step: scroll the trace (not the window) until it is in view
  var m=document.querySelector('main');
  var b=document.querySelector('.broken')||document.getElementById('step-'+n);
  if(m&&b){var mb=m.getBoundingClientRect(), bb=b.getBoundingClientRect();
    if(bb.bottom>mb.bottom)m.scrollTop+=bb.bottom-mb.bottom+8;
    if(bb.right>mb.right)m.scrollLeft+=bb.right-mb.right+8;}
})();
"""


def register(sub) -> None:
    p = sub.add_parser(
        "explain",
        help="tell a counterexample as a story: an HTML page or text",
        description="Reads a counterexample (NDJSON or ITF) written by `isr check`, `isr "
        "simulate` or `isr liveness --trace-out`. With --html, writes one self-contained page "
        "(no network needed to view it); with --format text, prints the story. "
        "Exit 0: the page was written (or the story printed); 2: bad input.",
    )
    p.add_argument("trace", metavar="TRACE")
    p.add_argument("--html", metavar="OUT.html", help="write the page here")
    p.add_argument(
        "--format",
        choices=["html", "text"],
        default=None,
        help="html (with --html; the default then) or text (printed)",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    fmt = args.format or ("html" if args.html else "text")
    if fmt == "html" and not args.html:
        raise UsageError("--format html needs --html OUT.html")
    try:
        trace = itf.read_any(args.trace)  # NDJSON or ITF, by content
    except cxfile.TraceFileError as e:
        raise UsageError(str(e)) from None
    for var in ("log", "coordination", "hw", "alive", "leader_view", "epoch_view", "isr_view"):
        if var not in trace.initial:
            raise UsageError(f"{args.trace}: not a counterexample of the ISR spec (no {var})")
    if fmt == "text":
        sys.stdout.write(render_text(trace))
        if not args.html:
            return 0
    page = render_html(trace)
    try:
        with open(args.html, "w", encoding="utf-8") as f:
            f.write(page)
    except OSError as e:
        raise UsageError(f"cannot write {args.html}: {e.strerror}") from None
    if fmt == "html":
        print(f"isr explain: {len(trace.steps)} steps written to {args.html}")
    return 0


# ---------------------------------------------------------------------------- the story


def config_line(header: dict[str, Any]) -> str:
    """The configuration as people say it: `kip-320 · 3 replicas · 2 records · ...`."""
    c = header.get("config") or {}
    if not c:
        return header.get("model", "")

    def n(k: str, word: str) -> str:
        v = c.get(k)
        return f"{v} {word}{'' if v == 1 else 's'}"

    parts = [
        c.get("protocol", header.get("model", "?")),
        n("replicas", "replica"),
        n("records", "record"),
        n("epochs", "epoch"),
        n("crashes", "crash").replace("crashs", "crashes"),
        f"acks={c.get('acks', 'all')}",
        f"min.insync.replicas={c.get('min_isr', 1)}",
    ]
    flags = [
        k.replace("_", "-")
        for k in ("unclean", "lose_unflushed", "idempotence", "retention", "availability")
        if c.get(k)
    ]
    for k, word in (
        ("retries", "retries"),
        ("controller_failovers", "controller failovers"),
        ("session_expiries", "session expiries"),
    ):
        if c.get(k):
            flags.append(f"{c[k]} {word}")
    parts.append("fault modes: " + (", ".join(flags) if flags else "none"))
    return " · ".join(str(p) for p in parts)


def _describe(header: dict[str, Any]) -> str:
    """The property's one-line description and requirement, from the spec (if it loads)."""
    try:
        from isr.spec import Config, IsrSpec

        model = IsrSpec(Config(**header.get("config", {})).validate())
        p = next(p for p in model.properties if p.name == header.get("property"))
    except Exception:  # a description is a nicety; the page works without
        return ""
    req = getattr(p, "requirement", "")
    return f"{p.description}" + (f" ({req})" if req else "")


def verdict_line(header: dict[str, Any], n: int) -> str:
    prop, kind = header.get("property", "?"), header.get("kind", "always")
    loop = header.get("loop_start")
    if loop is not None:
        return f"{prop} fails forever: steps {loop}..{n} repeat (a lasso)"
    if kind == "action":
        return f"{prop} is violated by step {n}"
    return f"{prop} is violated in the state after step {n}"


def _states(trace: cxfile.CounterexampleTrace) -> list[dict]:
    return [trace.initial] + [s["state"] for s in trace.steps]


def _args(args: Any) -> str:
    if isinstance(args, dict):
        return ", ".join(f"{k}={v}" for k, v in args.items())
    return ", ".join(str(a) for a in args or [])


def _role(state: dict, me: int) -> str:
    leader = state["leader_view"][f"r{me}"]
    return "leader" if leader == me else (f"follows {leader}" if leader >= 0 else "no leader")


def replica_fields(state: dict, prev: dict | None, r: str) -> list[tuple[str, str, bool]]:
    """(label, value, changed by this step) for a replica's scalar fields."""
    me = int(r[1:])

    def get(s: dict, key: str) -> Any:
        return s.get(key, {}).get(r)

    rows = [
        ("LEO", lambda s: len(s["log"][r])),
        ("HW", lambda s: get(s, "hw")),
        ("ckpt", lambda s: get(s, "hw_checkpoint")),
        ("", lambda s: "alive" if get(s, "alive") else "CRASHED"),
        ("", lambda s: _role(s, me)),
        ("epoch", lambda s: get(s, "epoch_view")),
        ("ISR", lambda s: get(s, "isr_view")),
    ]
    if "truncating" in state:
        rows.append(("", lambda s: "truncating" if get(s, "truncating") else ""))
    if "pending_acks" in state:
        rows.append(("pending", lambda s: get(s, "pending_acks") or ""))
    if "flushed" in state:
        rows.append(("flushed", lambda s: get(s, "flushed")))
    if "log_start" in state:
        rows.append(("log start", lambda s: get(s, "log_start")))
    out = []
    for label, f in rows:
        v = f(state)
        changed = prev is not None and f(prev) != v
        if v == "" and not changed:
            continue
        out.append((label, "—" if v == "" else str(v), changed))
    return out


def coord_fields(state: dict, prev: dict | None) -> list[tuple[str, str, bool]]:
    c, pc = state["coordination"], (prev or {}).get("coordination")
    out = []
    for label, key in (("leader", "leader"), ("epoch", "leader_epoch"), ("ISR", "isr")):
        out.append((label, str(c[key]), pc is not None and pc.get(key) != c[key]))
    for k in ("controller_epoch", "elr", "session_expired", "unclean_shutdown"):
        if k in state:
            out.append(
                (k.replace("_", " "), str(state[k]), prev is not None and prev.get(k) != state[k])
            )
    return out


def request_lines(state: dict, prev: dict | None) -> list[tuple[str, bool]]:
    before = (prev or {}).get("leader_and_isr_in_flight", [])
    out = []
    for q in state.get("leader_and_isr_in_flight", []):
        text = (
            f"LeaderAndIsr → {q['to']}: leader {q['leader']}, epoch {q['epoch']}, ISR {q['isr']}"
            + ("" if q.get("version_current") else " (stale zkVersion)")
        )
        out.append((text, prev is not None and q not in before))
    return out


CLIENT_FIELDS = (
    ("acked (acks=all)", "acked_all"),
    ("acked (acks=1)", "acked_1"),
    ("refused", "refused"),
    ("shown to consumers", "shown_to_consumers"),
    ("unanswered", "unanswered_records"),
)


def client_fields(state: dict, prev: dict | None) -> list[tuple[str, str, bool]]:
    out = []
    for label, key in CLIENT_FIELDS:
        if key not in state:
            continue
        v = state[key]
        out.append((label, str(v), prev is not None and prev.get(key) != v))
    return out


# ---------------------------------------------------------------------------- text


def _mark(label: str, value: str, changed: bool) -> str:
    text = f"{label} {value}".strip()
    return f"*{text}*" if changed else text


def _log_text(state: dict, prev: dict | None, r: str) -> str:
    log, hw = state["log"][r], state["hw"][r]
    plog = prev["log"][r] if prev else log
    out = []
    for o, (rec, ep) in enumerate(log):
        e = f"{rec}@{ep}" + ("'" if o < hw else "")
        if prev is not None and (o >= len(plog) or plog[o] != [rec, ep]):
            e = f"*{e}*"
        out.append(e)
    trunc = prev is not None and len(log) < len(plog)
    return "[" + " ".join(out) + "]" + (" *truncated*" if trunc else "")


def render_text(trace: cxfile.CounterexampleTrace) -> str:
    """The story for a terminal: the verdict and why first, then every step with what it
    changed (marked *like this*; committed entries marked ')."""
    h = trace.header
    states = _states(trace)
    n = len(states) - 1
    loop = h.get("loop_start")
    why = violation(h.get("property", "?"), states, loop)
    desc = _describe(h)
    lines = [
        f"Counterexample to {h.get('property', '?')} ({h.get('kind', 'always')})"
        + (f": {desc}" if desc else ""),
        f"  {config_line(h)}",
        f"  {verdict_line(h, n)}",
        f"  WHY: {why}",
        "",
        "  (*x* = changed by the step; rec@epoch' = committed, below the replica's HW)",
    ]
    replicas = sorted(trace.initial["log"], key=lambda r: int(r[1:]))
    for i, st in enumerate(states):
        prev = states[i - 1] if i else None
        if i == 0:
            title = "Init"
        else:
            s = trace.steps[i - 1]
            title = f"{s['action']}({_args(s.get('args'))})"
        mark = ""
        if loop is not None and i == loop:
            mark = "   <-- the cycle starts here"
        elif loop is None and i == n:
            mark = f"   <-- {h.get('property', '?')} breaks here"
        lines.append("")
        lines.append(f"step {i}. {title}{mark}")
        full = i == 0 or i == n
        for r in replicas:
            fields = replica_fields(st, prev, r)
            log_changed = prev is not None and prev["log"][r] != st["log"][r]
            if not full and not log_changed and not any(c for _l, _v, c in fields):
                continue
            kv = " · ".join(_mark(lbl, v, c) for lbl, v, c in fields)
            lines.append(f"  replica {r[1:]}: log {_log_text(st, prev, r)} · {kv}")
        cf = coord_fields(st, prev)
        reqs = request_lines(st, prev)
        req_changed = prev is not None and st.get("leader_and_isr_in_flight") != prev.get(
            "leader_and_isr_in_flight"
        )
        if full or any(c for _l, _v, c in cf) or req_changed:
            kv = " · ".join(_mark(lbl, v, c) for lbl, v, c in cf)
            lines.append(f"  coordination: {kv}")
            for text, c in reqs:
                lines.append(f"    {_mark('', text, c)}")
            if req_changed and not reqs:
                lines.append("    *no request in flight*")
        cl = client_fields(st, prev)
        if full or any(c for _l, _v, c in cl):
            lines.append("  clients: " + " · ".join(_mark(lbl, v, c) for lbl, v, c in cl))
    lines += ["", f"WHY: {why}", ""]
    return "\n".join(lines)


# ---------------------------------------------------------------------------- HTML


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _kv(fields: list[tuple[str, str, bool]]) -> str:
    return " · ".join(
        f'<span class="{"f chg" if c else "f"}"'
        + (' title="changed by this step"' if c else "")
        + f">{_e(f'{lbl} {v}'.strip())}</span>"
        for lbl, v, c in fields
    )


def _replica_cell(state: dict, prev: dict | None, r: str) -> str:
    log = state["log"][r]
    hw = state["hw"][r]
    plog = prev["log"][r] if prev else log
    alive = state["alive"][r]
    me = int(r[1:])
    entries = []
    for o, (rec, ep) in enumerate(log):
        cls = "e"
        if o < hw:
            cls += " c"
        if prev is not None and (o >= len(plog) or plog[o] != [rec, ep]):
            cls += " new"
        entries.append(f'<span class="{cls}" title="offset {o}">{_e(rec)}@{_e(ep)}</span>')
    if prev is not None and len(log) < len(plog):
        entries.append(f'<span class="chg kv">truncated from {len(plog)}</span>')
    logs = "".join(entries) or '<span class="empty">empty</span>'
    fields = replica_fields(state, prev, r)
    head = [f for f in fields if f[0] in ("LEO", "HW", "ckpt")]
    rest = [f for f in fields if f[0] not in ("LEO", "HW", "ckpt")]
    lead = state["leader_view"][r] == me
    return (
        f'<div class="{"" if alive else "dead"}"><div class="log">{logs}</div>'
        f'<div class="kv">{_kv(head)}</div>'
        f'<div class="kv{" lead" if lead else ""}">{_kv(rest)}</div></div>'
    )


def _coord_cell(state: dict, prev: dict | None) -> str:
    reqs = "".join(
        f'<div class="kv"><span class="{"f chg" if c else "f"}">{_e(t)}</span></div>'
        for t, c in request_lines(state, prev)
    )
    gone = prev is not None and len(prev.get("leader_and_isr_in_flight", [])) > len(
        state.get("leader_and_isr_in_flight", [])
    )
    return (
        f'<div class="kv">{_kv(coord_fields(state, prev))}</div>'
        + (reqs or '<div class="empty">no request in flight</div>')
        + (
            '<div class="kv"><span class="f chg">a request was consumed</span></div>'
            if gone
            else ""
        )
    )


def _client_cell(state: dict, prev: dict | None) -> str:
    return "".join(f'<div class="kv">{_kv([f])}</div>' for f in client_fields(state, prev))


def render_html(trace: cxfile.CounterexampleTrace) -> str:
    h = trace.header
    states = _states(trace)
    actions = [("Init", {})] + [(s["action"], s.get("args", {})) for s in trace.steps]
    n = len(states) - 1
    loop_start = h.get("loop_start")
    broken: set[int] = set()
    loop: set[int] = set()
    if loop_start is not None:
        loop = set(range(loop_start, n + 1))
    elif n >= 0:
        broken = {n}
    replicas = sorted(trace.initial["log"], key=lambda r: int(r[1:]))
    vertical = n >= VERTICAL_FROM

    def cls(i: int) -> str:
        return "step" + (" broken" if i in broken else "") + (" loop" if i in loop else "")

    def act_cell(i: int) -> str:
        a, args = actions[i]
        return f'<div class="act">{_e(a)}</div><div class="args">{_e(_args(args))}</div>'

    lanes: list[tuple[str, str, Any]] = [("action", "action", None)]
    lanes += [(f"replica {r[1:]}", f"lane-{r}", r) for r in replicas]
    lanes += [("coordination", "coordination", None), ("clients", "clients", None)]

    def cell(lane: str, i: int) -> str:
        s, prev = states[i], states[i - 1] if i else None
        if lane == "action":
            return act_cell(i)
        if lane == "coordination":
            return _coord_cell(s, prev)
        if lane == "clients":
            return _client_cell(s, prev)
        return _replica_cell(s, prev, lane)

    rows = []
    if vertical:
        heads = "".join(f'<th id="{_e(key)}">{_e(title)}</th>' for title, key, _r in lanes)
        rows.append(f"<tr><th>step</th>{heads}</tr>")
        for i in range(n + 1):
            tds = "".join(
                f'<td class="{cls(i)}" data-step="{i}">{cell(r or key, i)}</td>'
                for _title, key, r in lanes
            )
            rows.append(
                f'<tr><th class="{cls(i)}" id="step-{i}" data-step="{i}">step {i}</th>{tds}</tr>'
            )
    else:
        head = "".join(
            f'<th class="{cls(i)}" id="step-{i}" data-step="{i}">step {i}</th>'
            for i in range(n + 1)
        )
        rows.append(f"<tr><th>step</th>{head}</tr>")
        for title, key, r in lanes:
            tds = "".join(
                f'<td class="{cls(i)}" data-step="{i}">{cell(r or key, i)}</td>'
                for i in range(n + 1)
            )
            rows.append(f'<tr class="lane" id="{_e(key)}"><th>{_e(title)}</th>{tds}</tr>')
    prop = h.get("property", "?")
    kind = h.get("kind", "always")
    why = violation(prop, states, loop_start)
    desc = _describe(h)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>{_e(prop)}: counterexample</title>
<style>{CSS}</style></head>
<body>
<header>
<h1>Counterexample to {_e(prop)} ({_e(kind)}){": " + _e(desc) if desc else ""}</h1>
<div class="why" id="why">{_e(why)}</div>
<div class="meta" id="config">{_e(config_line(h))}</div>
<div class="meta">{n} steps · <span class="bad">{_e(verdict_line(h, n))}</span> ·
selected step <b id="cur">{n}</b> (arrow keys) ·
<span class="legend"><span><span class="e c">rec@epoch</span> committed (below HW)</span>
<span><span class="chg">changed</span> by the step</span>
<span style="box-shadow:inset 0 0 0 2px #d50000;padding:0 3px">property broken</span>
<span style="background:#fff8e1">lasso cycle</span></span></div>
</header>
<main><table id="trace" class="{"vertical" if vertical else "horizontal"}">{"".join(rows)}</table></main>
<script>{JS}</script>
</body></html>
"""
