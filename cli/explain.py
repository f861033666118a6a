"""`isr explain TRACE --html OUT.html` / `--format text`: a counterexample told as a story.

The reader's questions, in order, and where the page answers them:
- *what must hold, what breaks, where?* The property in one plain sentence
  (:func:`cli.story.meaning`), then, in red, the sentence naming the replica, offset and record
  that break it (:func:`cli.why.violation`), under a one-line reading of the configuration;
- *how did we get there?* One card per step, top to bottom, whatever the trace's length. Each
  opens with a sentence in Kafka's words (:func:`cli.story.sentence`: "Broker 1 restarts and
  reads its HW checkpoint, 0, ..."), then one box per replica (log entries ``record@epoch``,
  committed ones shaded; LEO, HW, checkpoint; role; epoch and ISR as the replica sees it), the
  controller's (leader, epoch, ISR, LeaderAndIsr requests in flight) and what clients were told.
  What the step changed is emphasised; what it did not change is grey. Roles that explain
  anomalies are marked in purple: a deposed leader, a zombie, a stale zkVersion;
- *which step?* The breaking step is outlined in red (the last state for an invariant, the last
  step for an action property), and in it the boxes of the replicas the why sentence names; a
  liveness lasso's repeating steps are framed in red. Red is used for nothing else. The page
  opens scrolled to it (the header stays in view).
The page is self-contained (inline CSS and a few lines of JS: arrow keys select a step). The
text form prints the same story in a terminal: each step's sentence and what it changed.
Input: an NDJSON or ITF counterexample (`isr check|simulate|liveness --trace-out`).
"""

from __future__ import annotations

import argparse
import html
import re
import sys
from dataclasses import dataclass
from typing import Any

from isr.traces import counterexample as cxfile
from isr.traces.counterexample import itf

from . import story
from .errors import UsageError
from .replay import load_trace_protocol
from .why import violation

RED = "#d50000"  # what breaks the property, and nothing else (the viewer tests look for it)

CSS = """
html,body{height:100%}
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#222;background:#fff;
  display:flex;flex-direction:column}
header{flex:none;padding:10px 16px 8px;border-bottom:1px solid #ddd;background:#fafafa}
main{flex:1;min-height:0;overflow:auto;padding:14px 16px 24px}
h1{font-size:18px;margin:0}.means{margin:2px 0 6px;color:#333}
.why{margin:4px 0;padding:5px 10px;border-left:5px solid RED;background:#fff5f5;
  font-size:15px;font-weight:600;color:#8e0000}
.meta{color:#555;margin:3px 0;font-size:12px}.bad{color:#8e0000;font-weight:600}
.legend{display:inline-flex;flex-wrap:wrap;gap:4px 14px}
.steps{display:flex;flex-direction:column;gap:14px;max-width:1400px}
.step{border:1px solid #d0d0d0;border-radius:6px;padding:8px 10px;background:#fff;cursor:pointer;
  outline-offset:3px}
.step.sel{outline:2px solid #1565c0}
.step.broken{border:3px solid RED;padding:6px 8px}
.step.loop{background:#fffaf0}
.cycle{border:3px solid RED;border-radius:8px;padding:10px;display:flex;flex-direction:column;
  gap:14px}
.cycle>.note{color:#8e0000;font-weight:600}
.head{display:flex;gap:10px;align-items:baseline}
.num{flex:none;min-width:26px;height:22px;border-radius:11px;background:#eceff1;color:#37474f;
  text-align:center;font:600 12px/22px system-ui,sans-serif;padding:0 4px}
.say{flex:1;min-width:0;margin:0 0 6px;font-size:14px;overflow-wrap:anywhere}
.act{flex:none;max-width:40%;color:#757575;font:11px monospace;overflow-wrap:anywhere;
  text-align:right}
.tag{color:#8e0000;font-weight:700;white-space:nowrap}
.tag.cyc{color:#6d4c00}
.lanes{display:grid;gap:8px}
.lane{min-width:0;border-top:1px solid #eee;padding-top:4px;overflow-wrap:anywhere}
.lname{font-weight:600;font-size:12px;color:#37474f}
.lane.same,.lane.same .lname{color:#9e9e9e}
.lane.dead{background:repeating-linear-gradient(135deg,#fff,#fff 6px,#f4f4f4 6px,#f4f4f4 12px)}
.log{display:flex;gap:3px;flex-wrap:wrap;margin:3px 0}
.e{border:1px solid #9e9e9e;border-radius:3px;padding:0 4px;font:12px monospace;background:#fff;
  color:#424242}
.e.c{background:#dcedc8;border-color:#7cb342}
.e.new{border-color:#ff8f00;box-shadow:0 0 0 2px #ffca28;color:#000}
.e.gone{text-decoration:line-through;color:#5d4037;background:#ffe082;border-style:dashed;
  border-color:#ff8f00}
.same .e{color:#9e9e9e;border-color:#d6d6d6}.same .e.c{background:#f1f8e9;border-color:#c5e1a5}
.empty{color:#9e9e9e;font:12px monospace}
.kv{font:12px monospace;color:#9e9e9e}
.f{display:inline-block}
.f.chg{color:#000;background:#ffe082;border-radius:2px;padding:0 2px}
.badge{display:inline-block;border:1px solid #b0bec5;border-radius:9px;padding:0 6px;
  margin:1px 2px 1px 0;font:11px system-ui,sans-serif;color:#546e7a}
.badge.warn{border-color:#6a1b9a;color:#6a1b9a;font-weight:600}
.badge.dead{border-color:#616161;color:#fff;background:#616161}
.badge.chg{background:#ffe082;color:#000}
.badge.warn.chg{background:#f3e5f5;color:#4a148c;box-shadow:0 0 0 1px #6a1b9a}
.req{font:12px monospace;color:#9e9e9e}
.req.new{color:#000}.req.gone{color:#000}.req.gone.lost{color:#6a1b9a;font-weight:600}
.req.gone s{color:#757575;font-weight:400}
.lane.culprit{border-top:3px solid RED}.lane.culprit .lname{color:#8e0000}
.legend .e,.legend .badge{margin:0}
""".replace("RED", RED)

JS = """
(function(){
  var steps=[].slice.call(document.querySelectorAll('.step[data-step]'));
  var n=steps.length-1, cur=n, m=document.querySelector('main');
  function sel(i,scroll){cur=Math.max(0,Math.min(n,i));
    steps.forEach(function(c,k){c.classList.toggle('sel',k===cur)});
    document.getElementById('cur').textContent=cur;
    if(scroll)steps[cur].scrollIntoView({block:'nearest'});}
  steps.forEach(function(c,k){c.addEventListener('click',function(){sel(k,false)})});
  document.addEventListener('keydown',function(e){
    if(e.key==='ArrowRight'||e.key==='ArrowDown'||e.key==='j'){sel(cur+1,true);e.preventDefault();}
    if(e.key==='ArrowLeft'||e.key==='ArrowUp'||e.key==='k'){sel(cur-1,true);e.preventDefault();}
    if(e.key==='Home'){sel(0,true);e.preventDefault();}
    if(e.key==='End'){sel(n,true);e.preventDefault();}});
  sel(cur,false);
  // open at what breaks the property: scroll the steps (not the window) until its bottom is in
  // view, or its top if it is taller than the view
  var b=document.querySelector('.broken')||document.querySelector('.cycle')||steps[n];
  if(m&&b){var mb=m.getBoundingClientRect(), bb=b.getBoundingClientRect();
    var d=bb.bottom-mb.bottom+16; if(bb.height>mb.height-24)d=bb.top-mb.top-8;
    if(d>0)m.scrollTop+=d;}
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
        # a counterexample of a --protocol-file version: its file loaded as `isr replay` does
        # (the header's protocol_file, its content checked against the header's hash)
        version = load_trace_protocol(args.trace)
        trace = itf.read_any(args.trace, version)  # NDJSON or ITF, by content
    except cxfile.TraceFileError as e:
        raise UsageError(str(e)) from None
    for var in ("log", "coordination", "hw", "alive", "leader_view", "epoch_view", "isr_view"):
        if var not in trace.initial:
            raise UsageError(f"{args.trace}: not a counterexample of the ISR spec (no {var})")
    if fmt == "text":
        sys.stdout.write(render_text(trace, version))
        if not args.html:
            return 0
    page = render_html(trace, version)
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
        ("min_isr_changes", "min.insync.replicas changes"),
        ("delete_records", "DeleteRecords requests"),
        ("reassignments", "reassignments"),
    ):
        if c.get(k):
            flags.append(f"{c[k]} {word}")
    parts.append("fault modes: " + (", ".join(flags) if flags else "none"))
    return " · ".join(str(p) for p in parts)


def _describe(header: dict[str, Any], version: Any = None) -> str:
    """The property's one-line description and requirement, from the spec (if it loads)."""
    try:
        from isr.spec import Config, IsrSpec

        model = IsrSpec(Config(**header.get("config", {})), version)
        p = next(p for p in model.properties if p.name == header.get("property"))
    except Exception:  # a description is a nicety; the page works without
        return ""
    req = getattr(p, "requirement", "")
    return f"{p.description}" + (f" ({req})" if req else "")


def verdict_line(header: dict[str, Any], n: int) -> str:
    prop, kind = header.get("property", "?"), header.get("kind", "always")
    loop = header.get("loop_start")
    if loop is not None and loop == n:
        return f"{prop} fails forever: from step {n} on, the state never changes (a lasso)"
    if loop is not None:
        return f"{prop} fails forever: steps {loop}..{n} repeat (a lasso)"
    if kind == "action":
        return f"{prop} is violated by step {n}"
    return f"{prop} is violated in the state after step {n}"


def _states(trace: cxfile.CounterexampleTrace) -> list[dict]:
    return [trace.initial] + [s["state"] for s in trace.steps]


def step_sentences(trace: cxfile.CounterexampleTrace) -> list[str]:
    """One sentence per state: the opening one, then each step's."""
    states = _states(trace)
    out = [story.opening(trace.initial)]
    for i, s in enumerate(trace.steps, start=1):
        out.append(story.sentence(s["action"], s.get("args"), states[i - 1], states[i]))
    return out


@dataclass(frozen=True)
class Field:
    """One thing a box shows: its text, whether this step changed it, and its kind: ``role``
    and ``warn`` (a role that explains an anomaly) are badges, ``dead`` a crashed broker."""

    text: str
    changed: bool
    kind: str = ""


def _changed(prev: dict | None, f, state: dict) -> bool:
    return prev is not None and f(prev) != f(state)


def replica_numbers(state: dict, prev: dict | None, r: str) -> list[Field]:
    """LEO, HW, HW checkpoint and the fault modes' offsets of replica ``r``."""

    def get(key: str) -> Any:
        return lambda s: s.get(key, {}).get(r)

    rows = [("LEO", lambda s: len(s["log"][r])), ("HW", get("hw")), ("ckpt", get("hw_checkpoint"))]
    if "flushed" in state:
        rows.append(("flushed", get("flushed")))
    if "log_start" in state:
        rows.append(("log start", get("log_start")))
    return [Field(f"{lbl} {f(state)}", _changed(prev, f, state)) for lbl, f in rows]


def replica_view(state: dict, prev: dict | None, r: str) -> list[Field]:
    """Replica ``r``'s epoch and ISR as it sees them, and its purgatory."""

    def get(key: str) -> Any:
        return lambda s: s.get(key, {}).get(r)

    out = []
    if state["alive"][r]:
        out += [
            Field(f"epoch {state['epoch_view'][r]}", _changed(prev, get("epoch_view"), state)),
            Field(f"ISR {state['isr_view'][r]}", _changed(prev, get("isr_view"), state)),
        ]
    pending = get("pending_acks")
    if pending(state) or _changed(prev, pending, state):
        waiting = ", ".join(f"offset {o}" for o in pending(state) or []) or "none"
        out.append(Field(f"awaiting acks: {waiting}", _changed(prev, pending, state)))
    return out


def replica_roles(state: dict, prev: dict | None, r: str) -> list[Field]:
    i = int(r[1:])
    before = {t for t, _k in story.roles(prev, i)} if prev is not None else None
    return [Field(t, before is not None and t not in before, k) for t, k in story.roles(state, i)]


def coord_fields(state: dict, prev: dict | None) -> list[Field]:
    c, pc = state["coordination"], (prev or {}).get("coordination")
    out = [
        Field(f"{label} {c[key]}", pc is not None and pc.get(key) != c[key])
        for label, key in (("leader", "leader"), ("epoch", "leader_epoch"), ("ISR", "isr"))
    ]
    for k in ("controller_epoch", "elr", "fenced", "session_expired", "unclean_shutdown"):
        if k in state and (state[k] or (prev is not None and prev.get(k) != state[k])):
            label = {"elr": "ELR", "session_expired": "sessions expired"}.get(
                k, k.replace("_", " ")
            )
            changed = prev is not None and prev.get(k) != state[k]
            out.append(Field(f"{label} {state[k]}", changed))
    # KIP-704 and KAFKA-16540 (kraft variants): shown while set, and the step that clears them
    for k, text in (
        ("leader_recovery", lambda v: "RECOVERING" if v else "RECOVERED"),
        ("min_isr", lambda v: f"min.insync.replicas {v}"),
    ):
        if k in state or (prev is not None and k in prev):
            v = state.get(k, 0)
            out.append(Field(text(v), prev is not None and prev.get(k, 0) != v))
    return out


def _request_text(q: dict) -> str:
    return (
        f"LeaderAndIsr → broker {q['to']}: "
        + (f"leader {q['leader']}" if q["leader"] >= 0 else "no leader")
        + f", epoch {q['epoch']}, "
        f"ISR {q['isr']}" + ("" if q.get("version_current", True) else " (stale zkVersion)")
    )


def _request_key(q: dict) -> tuple:
    """A request without its zkVersion's freshness, which a later write changes in flight."""
    return (q["to"], q["leader"], q["epoch"], tuple(q["isr"]), q.get("controller_epoch"))


def request_lines(state: dict, prev: dict | None, action: str = "") -> list[tuple[str, str]]:
    """(text, kind) of the LeaderAndIsr requests: ``new`` (sent by this step, or made stale by
    its write), ``gone`` (taken out of flight by it: lost, applied or ignored, said by the
    step's action) or ''."""
    now = state.get("leader_and_isr_in_flight", [])
    before = {_request_key(q): q for q in (prev or {}).get("leader_and_isr_in_flight", [])}
    out = []
    for q in now:
        old = before.get(_request_key(q))
        kind = "" if prev is None or old == q else "new"
        text = _request_text(q)
        if old is not None and old != q and not q.get("version_current", True):
            text = text.replace("(stale zkVersion)", "(its zkVersion is now stale)")
        out.append((text, kind))
    fate = {
        "NetworkLoseLeaderAndIsr": "lost",
        "BrokerIgnoreStaleRequest": "ignored",
        "BrokerBecomeLeader": "applied",
        "BrokerBecomeFollower": "applied",
        "BrokerApplyPartitionChange": "applied",
    }.get(action, "dropped")
    keys = {_request_key(q) for q in now}
    for k, q in before.items():
        if k not in keys:
            out.append((f"{fate}: {_request_text(q)}", "gone"))
    return out


def _pairs(xs: list) -> str:
    """(offset, record) pairs in words; anything else as it is (a reader is total)."""
    return (
        ", ".join(
            story.record_at(*x) if isinstance(x, list | tuple) and len(x) == 2 else str(x)
            for x in xs
        )
        or "none"
    )


CLIENT_FIELDS = (
    ("acknowledged (acks=all)", "acked_all", _pairs),
    ("acknowledged (acks=1)", "acked_1", _pairs),
    ("refused", "refused", lambda xs: ", ".join(f"record {x}" for x in xs) or "none"),
    ("shown to consumers", "shown_to_consumers", _pairs),
    ("no reply yet", "unanswered_records", lambda xs: ", ".join(f"record {x}" for x in xs)),
    ("idempotent producer", "producer", lambda p: _producer(p)),
)


def _producer(p: dict) -> str:
    """--idempotence: the producer's epoch and its batches in flight with their answers."""
    batches = ", ".join(
        f"record {b['record']} seq {b['sequence']}"
        + ("" if b["answer"] == "none" else f" ({b['answer'].replace('_', ' ')})")
        for b in p["in_flight"]
    )
    return f"epoch {p['epoch']}, last acked seq {p['last_acked_sequence']}, in flight: " + (
        batches or "none"
    )


def client_fields(state: dict, prev: dict | None, full: bool = False) -> list[Field]:
    """What producers and consumers were told; the empty unchanged ones only when ``full``."""
    out = []
    for label, key, fmt in CLIENT_FIELDS:
        if key not in state:
            continue
        v = state[key]
        changed = prev is not None and prev.get(key) != v
        if v or changed or (full and key != "unanswered_records"):
            out.append(Field(f"{label}: {fmt(v) or 'none'}", changed))
    return out


# ---------------------------------------------------------------------------- text


def _mark(f: Field) -> str:
    text = f.text.upper() if f.kind == "warn" else f.text
    return f"*{text}*" if f.changed else text


def _marks(fields: list[Field]) -> str:
    return " · ".join(_mark(f) for f in fields)


def _entry(e: list) -> str:
    """A log entry as ``record@epoch``; an idempotent producer's batch also shows its header,
    ``record@epoch#producer-epoch.sequence``."""
    return f"{e[0]}@{e[1]}" + (f"#{e[2]}.{e[3]}" if len(e) == 4 else "")


def _log_text(state: dict, prev: dict | None, r: str) -> str:
    log, hw = state["log"][r], state["hw"][r]
    plog = prev["log"][r] if prev else log
    out = []
    for o, entry in enumerate(log):
        e = _entry(entry) + ("'" if o < hw else "")
        if prev is not None and (o >= len(plog) or plog[o] != entry):
            e = f"*{e}*"
        out.append(e)
    trunc = prev is not None and len(log) < len(plog)
    return "[" + " ".join(out) + "]" + (" *truncated*" if trunc else "")


def render_text(trace: cxfile.CounterexampleTrace, version: Any = None) -> str:
    """The story for a terminal: the verdict and why first, then every step's sentence and what
    it changed (marked *like this*; committed entries marked '; ROLES in capitals)."""
    h = trace.header
    states = _states(trace)
    n = len(states) - 1
    loop = h.get("loop_start")
    prop = h.get("property", "?")
    why = violation(prop, states, loop)
    desc = _describe(h, version)
    lines = [
        f"Counterexample to {prop} ({h.get('kind', 'always')})" + (f": {desc}" if desc else ""),
        f"  {config_line(h)}",
    ]
    means = story.meaning(prop)
    if means:
        lines.append(f"  {prop}: {means}")
    lines += [
        f"  {verdict_line(h, n)}",
        f"  WHY: {why}",
        "",
        "  (*x* = changed by the step; rec@epoch' = committed, below the replica's HW; "
        "CAPITALS = a role that explains the anomaly)",
    ]
    replicas = sorted(trace.initial["log"], key=lambda r: int(r[1:]))
    sentences = step_sentences(trace)
    for i, st in enumerate(states):
        prev = states[i - 1] if i else None
        action = trace.steps[i - 1]["action"] if i else ""
        title = story.call(action, trace.steps[i - 1].get("args")) if i else "Init"
        mark = ""
        if loop is not None and i == loop:
            mark = "   <-- the cycle starts here"
        elif loop is None and i == n:
            mark = f"   <-- {prop} breaks here"
        lines += ["", f"step {i}. {title}{mark}", f"  {sentences[i]}"]
        full = i == 0 or i == n
        for r in replicas:
            fields = (
                replica_numbers(st, prev, r)
                + replica_roles(st, prev, r)
                + replica_view(st, prev, r)
            )
            log_changed = prev is not None and prev["log"][r] != st["log"][r]
            if not full and not log_changed and not any(f.changed for f in fields):
                continue
            lines.append(f"  replica {r[1:]}: log {_log_text(st, prev, r)} · {_marks(fields)}")
        cf = coord_fields(st, prev)
        reqs = request_lines(st, prev, action)
        if full or any(f.changed for f in cf) or any(k for _t, k in reqs):
            lines.append(f"  controller: {_marks(cf)}")
            for text, kind in reqs:
                lines.append(f"    {'*' + text + '*' if kind else text}")
        cl = client_fields(st, prev, full)
        if cl and (full or any(f.changed for f in cl)):
            lines.append("  clients: " + _marks(cl))
    lines += ["", f"WHY: {why}", ""]
    return "\n".join(lines)


# ---------------------------------------------------------------------------- HTML


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _span(f: Field) -> str:
    if f.kind:
        cls = f"badge {f.kind if f.kind != 'role' else ''}".strip() + (" chg" if f.changed else "")
    else:
        cls = "f chg" if f.changed else "f"
    title = ' title="changed by this step"' if f.changed else ""
    return f'<span class="{cls}"{title}>{_e(f.text)}</span>'


def _kv(fields: list[Field]) -> str:
    if not fields:
        return ""
    return '<div class="kv">' + " · ".join(_span(f) for f in fields) + "</div>"


def _log_html(state: dict, prev: dict | None, r: str) -> str:
    log, hw = state["log"][r], state["hw"][r]
    plog = prev["log"][r] if prev else log
    entries = []
    for o, entry in enumerate(log):
        cls = "e" + (" c" if o < hw else "")
        if prev is not None and (o >= len(plog) or plog[o] != entry):
            cls += " new"
        entries.append(f'<span class="{cls}" title="offset {o}">{_e(_entry(entry))}</span>')
    if prev is not None:  # what a truncation removed, struck through
        for o in range(len(log), len(plog)):
            entries.append(
                f'<span class="e gone" title="offset {o}, removed by this step">'
                f"{_e(_entry(plog[o]))}</span>"
            )
    return '<div class="log">' + ("".join(entries) or '<span class="empty">empty</span>') + "</div>"


def _replica_box(state: dict, prev: dict | None, r: str, culprit: bool = False) -> str:
    nums = replica_numbers(state, prev, r)
    roles = replica_roles(state, prev, r)
    view = replica_view(state, prev, r)
    changed = prev is None or prev["log"][r] != state["log"][r]
    changed = changed or any(f.changed for f in nums + roles + view)
    cls = "lane" + ("" if changed else " same") + ("" if state["alive"][r] else " dead")
    cls += " culprit" if culprit else ""
    return (
        f'<div class="{cls}"><div class="lname">replica {_e(r[1:])} '
        + "".join(_span(f) for f in roles)
        + "</div>"
        + _log_html(state, prev, r)
        + _kv(nums)
        + _kv(view)
        + "</div>"
    )


def _coord_box(state: dict, prev: dict | None, action: str) -> str:
    fields = coord_fields(state, prev)
    reqs = request_lines(state, prev, action)
    changed = prev is None or any(f.changed for f in fields) or any(k for _t, k in reqs)
    lines = "".join(
        f'<div class="req {k}{" " + t.split(":", 1)[0] if k == "gone" else ""}">'
        + (
            f"<b>{_e(t.split(': ', 1)[0])}</b>: <s>{_e(t.split(': ', 1)[1])}</s>"
            if k == "gone"
            else _e(t)
        )
        + "</div>"
        for t, k in reqs
    )
    return (
        f'<div class="lane{"" if changed else " same"}"><div class="lname">controller</div>'
        + _kv(fields)
        + (lines or '<div class="empty">no request in flight</div>')
        + "</div>"
    )


def _client_box(state: dict, prev: dict | None) -> str:
    fields = client_fields(state, prev)
    changed = prev is None or any(f.changed for f in fields)
    body = "".join(_kv([f]) for f in fields) or '<div class="empty">nothing yet</div>'
    return (
        f'<div class="lane{"" if changed else " same"}"><div class="lname">clients</div>'
        f"{body}</div>"
    )


def render_html(trace: cxfile.CounterexampleTrace, version: Any = None) -> str:
    h = trace.header
    states = _states(trace)
    n = len(states) - 1
    loop_start = h.get("loop_start")
    prop = h.get("property", "?")
    kind = h.get("kind", "always")
    broken = n if loop_start is None else None
    replicas = sorted(trace.initial["log"], key=lambda r: int(r[1:]))
    sentences = step_sentences(trace)
    why = violation(prop, states, loop_start)
    # the replicas the why sentence names: their boxes in the breaking step are what breaks it
    culprits = {f"r{x}" for x in re.findall(r"\b(?:replica|leader|follower) (\d+)", why)}
    columns = f"grid-template-columns:repeat({len(replicas) + 2},minmax(0,1fr))"

    def card(i: int) -> str:
        s, prev = states[i], states[i - 1] if i else None
        action = trace.steps[i - 1]["action"] if i else ""
        call = story.call(action, trace.steps[i - 1].get("args")) if i else "Init"
        cls = "step" + (" broken" if i == broken else "")
        cls += " loop" if loop_start is not None and i >= loop_start else ""
        tag = ""
        if i == broken:
            tag = f' <span class="tag">✗ {_e(prop)} breaks here</span>'
        boxes = (
            "".join(_replica_box(s, prev, r, i == broken and r in culprits) for r in replicas)
            + _coord_box(s, prev, action)
            + _client_box(s, prev)
        )
        return (
            f'<section class="{cls}" id="step-{i}" data-step="{i}">'
            f'<div class="head"><span class="num">{i}</span>'
            f'<p class="say">{_e(sentences[i])}{tag}</p><code class="act">{_e(call)}</code></div>'
            f'<div class="lanes" style="{columns}">{boxes}</div></section>'
        )

    cards = [card(i) for i in range(n + 1)]
    if loop_start is not None:
        if loop_start == n:  # a lasso that ends stuttering: one state, for ever
            head = f'<div class="note">↻ From step {n} on, nothing changes: {_e(prop)} never holds</div>'
            back = ""
        else:
            head = (
                f'<div class="note">↻ Steps {loop_start} to {n} repeat for ever: {_e(prop)} '
                "never holds</div>"
            )
            back = f'<div class="note">… and after step {n}, back to step {loop_start}</div>'
        cards = (
            cards[:loop_start]
            + [f'<div class="cycle" id="cycle">{head}']
            + cards[loop_start:]
            + [back, "</div>"]
        )
    desc = _describe(h, version)
    means = story.meaning(prop, desc)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>{_e(prop)}: counterexample</title>
<style>{CSS}</style></head>
<body>
<header>
<h1>Counterexample to {_e(prop)} <small>({_e(kind)}{": " + _e(desc) if desc else ""})</small></h1>
<p class="means" id="means">{_e(means)}</p>
<div class="why" id="why">{_e(why)}</div>
<div class="meta" id="config">{_e(config_line(h))}</div>
<div class="meta">{n} steps · <span class="bad">{_e(verdict_line(h, n))}</span> ·
selected step <b id="cur">{n}</b> (arrow keys) ·
<span class="legend"><span><span class="e c">rec@epoch</span> committed (below HW)</span>
<span><span class="f chg">changed</span> by the step, grey: unchanged</span>
<span><span class="badge warn">deposed leader</span> a role that explains the anomaly</span>
<span style="border:2px solid {RED};padding:0 3px">what breaks {_e(prop)}</span></span></div>
</header>
<main><div class="steps" id="trace">{"".join(cards)}</div></main>
<script>{JS}</script>
</body></html>
"""
