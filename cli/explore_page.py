"""The page of `isr explore` (cli/explore.py serves it): one self-contained HTML document, its
style and vanilla JavaScript inline, loading nothing but the server's own JSON API.

The path being looked at lives in the URL's fragment, ``#p=0.3.1`` (an initial state's index,
then the position of each action taken in its state's list of enabled actions), so the
browser's back and forward buttons walk the path and a URL names the same states after a
restart. A test hook: ``?auto=click0`` clicks the first enabled action once the page has shown
its first state (the headless-browser test uses it; ``?auto=click0,click2`` clicks on, one action
per state shown); ``document.body.dataset.ready`` holds the path shown once a state is fully
drawn. ``?q=QUERY`` fills the search box and runs the search once, from the state shown."""

from __future__ import annotations

PAGE = r"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>isr explore</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
  :root { --bad: #c62828; --good: #2e7d32; --line: #d0d4da; --muted: #5f6368; --hi: #fff3c4; }
  * { box-sizing: border-box; }
  body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; color: #1f2328; background: #f6f8fa; }
  header { background: #24292f; color: #fff; padding: 8px 16px; display: flex; flex-wrap: wrap; gap: 8px 24px; align-items: center; }
  header h1 { font-size: 16px; margin: 0; font-weight: 600; }
  header .cfg { color: #c9d1d9; font-size: 12px; }
  code, .mono, td, .crumb, .act-label { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 12.5px; }
  #search { display: flex; gap: 6px; align-items: center; margin-left: auto; }
  #search input { width: 360px; padding: 4px 6px; border-radius: 4px; border: 1px solid #57606a; font-family: ui-monospace, monospace; font-size: 12.5px; }
  #search select, #search button, .nav button { padding: 3px 8px; border-radius: 4px; border: 1px solid #8c959f; background: #f6f8fa; cursor: pointer; }
  #msg { padding: 6px 16px; font-size: 13px; min-height: 0; }
  #msg:empty { display: none; }
  #msg.err { background: #ffebe9; color: var(--bad); }
  #msg.ok { background: #dafbe1; color: #116329; }
  nav.bar { padding: 8px 16px; background: #fff; border-bottom: 1px solid var(--line); display: flex; gap: 8px; align-items: center; flex-wrap: wrap; }
  .crumbs { display: flex; flex-wrap: wrap; gap: 2px 0; align-items: center; }
  .crumb { color: #0969da; text-decoration: none; padding: 1px 4px; border-radius: 3px; }
  .crumb:hover { background: #ddf4ff; }
  .crumb.here { background: #0969da; color: #fff; }
  .crumb.bad { color: var(--bad); }
  .crumb.here.bad { background: var(--bad); color: #fff; }
  .sep { color: var(--muted); padding: 0 2px; }
  main { display: grid; grid-template-columns: minmax(320px, 5fr) 7fr; gap: 12px; padding: 12px 16px; align-items: start; }
  section { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px; min-width: 0; }
  h2 { font-size: 14px; margin: 0 0 8px; }
  h2 .sub { color: var(--muted); font-weight: normal; font-size: 12px; }
  ol.acts { list-style: none; margin: 0; padding: 0; }
  ol.acts li { border-top: 1px solid #eaeef2; padding: 6px 0; }
  ol.acts li:first-child { border-top: 0; }
  button.act { all: unset; cursor: pointer; color: #0969da; font-weight: 600; }
  button.act:hover, button.act:focus { text-decoration: underline; }
  .act-k { color: var(--muted); display: inline-block; min-width: 2.2em; font-family: ui-monospace, monospace; font-size: 12px; }
  table.diff { border-collapse: collapse; margin: 3px 0 0 2.2em; }
  table.diff td { padding: 0 6px 0 0; vertical-align: top; overflow-wrap: anywhere; white-space: pre-wrap; }
  table.diff td.f { color: var(--muted); white-space: nowrap; }
  table.diff td.old, table.diff td.new { min-width: 7em; }
  table.diff td.members div { padding-left: 1.2em; text-indent: -1.2em; }
  td.members .rm { color: #8c959f; }
  td.members .add { color: #1a7f37; }
  td.old { color: #8c959f; }
  td.arrow { color: var(--muted); }
  .badge { display: inline-block; font-size: 11px; padding: 0 6px; border-radius: 8px; margin-left: 6px; font-weight: 600; }
  .badge.bad { background: #ffebe9; color: var(--bad); border: 1px solid #ffcecb; }
  .props { display: flex; flex-wrap: wrap; gap: 4px 6px; margin-bottom: 8px; }
  .prop { font-size: 12px; padding: 1px 7px; border-radius: 10px; border: 1px solid; }
  .prop.ok { color: var(--good); border-color: #aceebb; background: #f0fff4; }
  .prop.bad { color: #fff; border-color: var(--bad); background: var(--bad); font-weight: 600; }
  .prop.met { color: #0550ae; border-color: #b6e3ff; background: #ddf4ff; }
  .muted { color: var(--muted); font-size: 12px; }
  table.state { border-collapse: collapse; width: 100%; }
  table.state th, table.state td { border: 1px solid #eaeef2; padding: 2px 6px; text-align: left; vertical-align: top; overflow-wrap: anywhere; white-space: pre-wrap; }
  table.state th { background: #f6f8fa; font-weight: 600; font-size: 12px; }
  table.state td.name { color: var(--muted); white-space: nowrap; }
  td.changed { background: var(--hi); font-weight: 600; }
  #trace ol { margin: 0; padding-left: 0; list-style: none; }
  #trace a { color: #0969da; text-decoration: none; font-family: ui-monospace, monospace; font-size: 12px; }
  #trace a.here { background: #0969da; color: #fff; border-radius: 3px; padding: 0 3px; }
  #trace li.last a { color: var(--bad); }
  #trace li.last a.here { background: var(--bad); color: #fff; }
  .stack > section + section { margin-top: 12px; }
</style>
</head>
<body>
<header>
  <h1>isr explore</h1>
  <span class="cfg" id="model"></span>
  <form id="search" autocomplete="off">
    <input id="q" name="q" placeholder="search: leader_view[r1] == 1 and hw[r0] &lt; 2   or   not StrongIsr" aria-label="predicate">
    <select id="from" aria-label="search from"><option value="here">from this state</option><option value="init">from the initial state</option></select>
    <button type="submit">Search</button>
  </form>
</header>
<div id="msg" role="status"></div>
<nav class="bar">
  <span class="nav"><button id="back" title="back (browser history)">&larr; Back</button> <button id="fwd" title="forward (browser history)">Forward &rarr;</button></span>
  <span class="crumbs" id="crumbs"></span>
</nav>
<main>
  <div class="stack">
    <section id="trace" hidden></section>
    <section id="actions"><h2>Enabled actions</h2></section>
  </div>
  <section id="state"><h2>State</h2></section>
</main>
<script>
"use strict";
const $ = (id) => document.getElementById(id);
let info = null;
let current = null; // {path, walk, state, successors}
let autoClicks = null; // the test hook's clicks still to make (?auto=click0,click2)

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const kid of kids) if (kid != null) e.append(kid);
  return e;
}
function show(v) {
  if (v === undefined || v === null) return "\u2014";
  // a list of records (requests in flight): one per line
  if (Array.isArray(v) && v.length > 1 && v.every((x) => x && typeof x === "object" && !Array.isArray(x))) return v.map(compact).join(",\n");
  return compact(v);
}
function compact(v) {  // JSON without the keys' quotes: {to:0, leader:2, isr:[0,1]}
  if (v && typeof v === "object" && !Array.isArray(v)) return "{" + Object.entries(v).map(([k, x]) => k + ":" + compact(x)).join(", ") + "}";
  if (Array.isArray(v)) return "[" + v.map(compact).join(",") + "]";
  return JSON.stringify(v);
}
function message(text, kind) { const m = $("msg"); m.textContent = text || ""; m.className = kind || ""; }

async function api(url) {
  const r = await fetch(url, { cache: "no-store" });
  const j = await r.json();
  if (!r.ok) throw new Error(j.error || ("HTTP " + r.status));
  return j;
}

function pathFromHash() {
  const m = /(?:^#|&)p=([0-9.]+)/.exec(location.hash);
  return m ? m[1].split(".").filter((w) => w !== "").map(Number) : [0];
}
function hashOf(path) { return "#p=" + path.join("."); }
function go(path) {
  const h = hashOf(path);
  if (location.hash === h) render(); else location.hash = h;
}

async function render() {
  const path = pathFromHash();
  let walk;
  try {
    walk = await api("/api/walk?path=" + path.join("."));
  } catch (e) {
    message(e.message, "err");
    return;
  }
  const id = walk[walk.length - 1].id;
  const [state, successors] = await Promise.all([api("/api/state/" + id), api("/api/successors/" + id)]);
  current = { path, walk, state, successors };
  drawCrumbs();
  drawActions();
  drawState();
  drawTrace();
  document.title = "isr explore \u2014 state " + id + " (" + (path.length - 1) + " steps)";
  document.body.dataset.ready = path.join(".");
  if (autoClicks === null) {
    const auto = new URLSearchParams(location.search).get("auto") || "";
    autoClicks = /^click\d+(,click\d+)*$/.test(auto) ? auto.split(",").map((w) => Number(w.slice(5))) : [];
  }
  if (autoClicks.length) {
    const b = document.querySelectorAll("button.act")[autoClicks.shift()];
    if (b) b.click();
  }
}

function drawCrumbs() {
  const { path, walk } = current;
  const box = $("crumbs");
  box.replaceChildren();
  walk.forEach((w, i) => {
    if (i > 0) box.append(el("span", { class: "sep", text: "\u203a" }));
    const bad = (w.violates || []).length > 0;
    const a = el("a", {
      class: "crumb" + (i === walk.length - 1 ? " here" : "") + (bad ? " bad" : ""),
      href: hashOf(path.slice(0, i + 1)),
      title: "state " + w.id + (w.changed ? "\n" + w.changed.map((c) => c.field + ": " + show(c.before) + " \u2192 " + show(c.after)).join("\n") : ""),
      text: i === 0 ? "Init s" + w.id : i + ". " + w.label,
    });
    box.append(a);
  });
}

function diffTable(changed) {
  const t = el("table", { class: "diff" });
  for (const c of changed) {
    if (c.removed) {  // a list of records: the members that left and came, across the row
      const cell = el("td", { colspan: "3", class: "members" });
      for (const x of c.removed) cell.append(el("div", { class: "rm", text: "\u2212 " + compact(x) }));
      for (const x of c.added) cell.append(el("div", { class: "add", text: "+ " + compact(x) }));
      if (!c.removed.length && !c.added.length) cell.append(el("div", { class: "muted", text: "the same members, reordered" }));
      t.append(el("tr", {}, el("td", { class: "f", text: c.field }), cell));
      continue;
    }
    t.append(el("tr", {},
      el("td", { class: "f", text: c.field }),
      el("td", { class: "old", text: show(c.before) }),
      el("td", { class: "arrow", text: "\u2192" }),
      el("td", { class: "new", text: show(c.after) })));
  }
  return t;
}

function drawActions() {
  const { path, successors, state } = current;
  const already = new Set(state.invariants.filter((p) => !p.holds).map((p) => p.name));
  const box = $("actions");
  box.replaceChildren(el("h2", {}, "Enabled actions ", el("span", { class: "sub", text: "(" + successors.length + ")" })));
  if (!successors.length) {
    box.append(el("p", { class: "muted", text: "No action is enabled: a terminal state." }));
    return;
  }
  const ol = el("ol", { class: "acts" });
  for (const s of successors) {
    const li = el("li", {},
      el("span", { class: "act-k", text: s.k + "." }),
      el("button", { class: "act act-label", "data-k": String(s.k), title: "go to state " + s.target, onclick: () => go(path.concat([s.k])), text: s.label }));
    for (const v of s.violates) li.append(el("span", { class: "badge bad", text: "step violates " + v }));
    // an invariant the successor violates and this state does not
    for (const v of s.target_violates) if (!already.has(v)) li.append(el("span", { class: "badge bad", text: "\u2192 " + v + " violated" }));
    li.append(s.changed.length ? diffTable(s.changed) : el("div", { class: "muted", style: "margin-left:2.2em", text: "changes nothing (a stuttering step)" }));
    ol.append(li);
  }
  box.append(ol);
}

function drawState() {
  const { state, walk } = current;
  const last = walk[walk.length - 1];
  const changed = new Set((last.changed || []).map((c) => c.field));
  const box = $("state");
  box.replaceChildren(el("h2", {}, "State s" + state.id + " ",
    el("span", { class: "sub", text: (walk.length - 1) + " steps from the initial state \u00b7 canonical fingerprint " + state.fingerprint })));
  const props = el("div", { class: "props" });
  for (const p of state.invariants) {
    props.append(el("span", { class: "prop " + (p.holds ? "ok" : "bad"), title: p.description, text: (p.holds ? "\u2713 " : "\u2717 ") + p.name + (p.holds ? "" : " violated") }));
  }
  for (const p of state.sometimes) if (p.met) props.append(el("span", { class: "prop met", text: "\u25c6 " + p.name + " met" }));
  box.append(props);
  if (walk.length > 1) {
    const v = last.violates || [];
    const names = info.action_properties.map((p) => p.name);
    if (names.length) {
      box.append(el("p", { class: v.length ? "" : "muted" },
        v.length ? el("span", { class: "prop bad", text: "\u2717 the step into this state violates " + v.join(", ") })
          : "The step into this state keeps " + names.join(", ") + "."));
    }
  }
  const json = state.state;
  const reps = Object.keys(json.hw || {});
  const perReplica = [];
  const other = [];
  for (const [k, v] of Object.entries(json)) {
    const isPer = v && typeof v === "object" && !Array.isArray(v) && reps.length && Object.keys(v).length === reps.length && reps.every((r) => r in v);
    (isPer ? perReplica : other).push([k, v]);
  }
  const t = el("table", { class: "state" });
  t.append(el("tr", {}, el("th", { text: "per replica" }), ...reps.map((r) => el("th", { text: r }))));
  for (const [k, v] of perReplica) {
    t.append(el("tr", {}, el("td", { class: "name", text: k }),
      ...reps.map((r) => el("td", { class: changed.has(k + "." + r) ? "changed" : "", text: show(v[r]) }))));
  }
  box.append(t);
  const t2 = el("table", { class: "state", style: "margin-top:8px" });
  for (const [k, v] of other) {
    const hit = [...changed].some((f) => f === k || f.startsWith(k + "."));
    t2.append(el("tr", {}, el("td", { class: "name", text: k }), el("td", { class: hit ? "changed" : "", text: show(v) })));
  }
  box.append(t2);
  box.append(el("p", { class: "muted", text: "Highlighted: what the last step changed. The state is shown as reached (no symmetry applied)." }));
}

function drawTrace() {
  const tr = info.trace;
  const box = $("trace");
  if (!tr) return;
  box.hidden = false;
  const cur = current.path.join(".");
  const n = tr.states.length - 1;
  const loop = tr.loop_start;
  box.replaceChildren(el("h2", {}, "Counterexample ", el("span", { class: "sub", text: tr.file + ": " + (tr.property || "?") + ", " + n + " steps" + (loop != null ? ", a lasso: the steps from " + loop + " on repeat forever" : "") })));
  const ol = el("ol");
  tr.states.forEach((st, i) => {
    const text = i + ". " + st.label + (loop != null && i === loop ? "  \u21bb loop starts" : "");
    const a = el("a", { href: hashOf(st.path), class: st.path.join(".") === cur ? "here" : "", title: "state " + st.id, text });
    ol.append(el("li", { class: i === n ? "last" : "" }, a));
  });
  box.append(ol);
}

async function search(ev) {
  if (ev) ev.preventDefault();
  const q = $("q").value;
  const here = $("from").value === "here" && current;
  const id = here ? current.walk[current.walk.length - 1].id : null;
  message("searching\u2026", "");
  try {
    const r = await api("/api/search?q=" + encodeURIComponent(q) + (id === null ? "" : "&from=" + id));
    if (!r.found) { message(r.message, "err"); return; }
    message(r.message, "ok");
    go((here ? current.path : [0]).concat(r.choices));
  } catch (e) {
    message(e.message, "err");
  }
}

async function start() {
  $("search").addEventListener("submit", search);
  $("back").addEventListener("click", () => history.back());
  $("fwd").addEventListener("click", () => history.forward());
  window.addEventListener("hashchange", render);
  try {
    info = await api("/api/info");
  } catch (e) {
    message(e.message, "err");
    return;
  }
  const cfg = info.config || {};
  $("model").textContent = info.model + " \u00b7 " + ["replicas", "records", "epochs", "crashes"].map((k) => k + " " + cfg[k]).join(", ");
  await render();
  const q = new URLSearchParams(location.search).get("q");
  if (q) {  // a search named in the URL (?q=not%20StrongIsr): run once, from the state shown
    $("q").value = q;
    await search(null);
  }
}
start();
</script>
</body>
</html>
"""
