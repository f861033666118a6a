#!/usr/bin/env node
// A toy ISR replication implementation (KIP-320) with its conformance adapter in one file:
// an example for writing your own adapter (traces/ADAPTER.md). `isr conform --adapter "node
// traces/conformance/examples/toy_adapter.js"` accepts it.
//
// The toy is in memory and synchronous: every command runs to quiescence before it answers
// (replication fetches, ISR changes, the controller's reactions). It has no clock, so it has no
// lag-time ISR shrink, no network faults and no pauses: those commands are answered
// {"ok": false, "unsupported": true}, which the kit reports as coverage gaps. Record ids are
// integers (the kit accepts integer and string ids alike). Node >= 12, no dependencies.
"use strict";
const readline = require("readline");

let C = null; // the cluster
let clock = 0;
// Options (for the kit's own tests): --log-idle-fetches (log every fetch, even one that changes
// nothing), --quiet-truncation (log no FollowerTruncate that cuts nothing), --restart-keeps-epoch
// (a restarted broker reports the epoch it had), --bug follower-hw|ack-early (a broken toy).
const OPT = new Set(process.argv.slice(2).filter((a) => a.startsWith("--") && a !== "--bug"));
const BUG = process.argv.includes("--bug") ? process.argv[process.argv.indexOf("--bug") + 1] : "";

function ev(node, action, args, tp, state, impl) {
  const e = { clock: ++clock, node, action, args };
  if (impl) e.impl = true;
  if (tp) { e.topic = tp.topic; e.partition = tp.partition; }
  if (state) e.state = state;
  C.events.push(e);
  return e;
}

// ---- the protocol ------------------------------------------------------------------------
function epochStarts(log, leaderEpoch) {
  const starts = [];
  let prev = null;
  log.forEach(([, epoch], off) => { if (epoch !== prev) { starts.push([epoch, off]); prev = epoch; } });
  if (leaderEpoch !== undefined && (!starts.length || starts[starts.length - 1][0] < leaderEpoch)) {
    starts.push([leaderEpoch, log.length]);
  }
  return starts;
}

// OffsetsForLeaderEpoch (KIP-279): the largest epoch <= requested and its end offset.
function endOffset(log, leaderEpoch, requested) {
  const starts = epochStarts(log, leaderEpoch);
  let found = -1, end = -1;
  starts.forEach(([epoch], i) => {
    if (epoch <= requested) { found = epoch; end = i + 1 < starts.length ? starts[i + 1][1] : log.length; }
  });
  return [found, end];
}

function epochStart(log, epoch) {
  for (const [e, start] of epochStarts(log)) if (e === epoch) return start;
  return log.length;
}

function replica(p, b) { return p.reps[b]; }
function leading(p, b) { const r = replica(p, b); return C.alive[b] && r.leader === b; }

function state(p, b, extra) {
  const r = replica(p, b);
  const st = {
    alive: C.alive[b], role: r.leader === b ? "leader" : r.leader >= 0 ? "follower" : "none",
    leader: r.leader, leader_epoch: r.epoch, hw: r.hw, leo: r.log.length,
  };
  if (r.leader === b) st.isr = [...r.isr].sort((x, y) => x - y);
  return Object.assign(st, extra || {});
}

// R4: the leader's HW = min LEO over the ISR; it never decreases. R6: acks=all answered.
function raiseHw(p, l) {
  const r = replica(p, l);
  let hw = r.log.length;
  for (const f of r.isr) if (f !== l) hw = Math.min(hw, f in r.remote ? r.remote[f] : -1);
  if (hw <= r.hw) return false;
  r.hw = hw;
  return true;
}

function completeAcks(p, l) {
  const r = replica(p, l);
  const done = r.pending.filter((x) => x.offset < r.hw);
  r.pending = r.pending.filter((x) => x.offset >= r.hw);
  for (const x of done) {
    if (r.isr.size >= C.minInsync) {
      ev(l, "ProduceAcked", { leader: l, records: [x.id], base_offset: x.offset, acks: "all" }, p.tp, state(p, l), true);
    }
  }
}

function produce(p, id) {
  const l = p.coord.leader;
  if (l < 0 || !leading(p, l)) return;
  const r = replica(p, l);
  if (C.acks === "all" && r.isr.size < C.minInsync) return; // NotEnoughReplicas
  const offset = r.log.length;
  r.log.push([id, r.epoch]);
  if (C.acks === "all") r.pending.push({ offset, id });
  raiseHw(p, l);
  if (BUG === "ack-early" && C.acks === "all") { // acknowledged on append (acks=1 behaviour)
    r.pending = r.pending.filter((x) => x.offset !== offset);
    ev(l, "ProducerSend", { leader: l, records: [id], acks: C.acks, base_offset: offset }, p.tp,
      state(p, l, { log_append: [[id, r.epoch]] }));
    ev(l, "ProduceAcked", { leader: l, records: [id], base_offset: offset, acks: "all" }, p.tp, state(p, l), true);
    return;
  }
  ev(l, "ProducerSend", { leader: l, records: [id], acks: C.acks, base_offset: offset }, p.tp,
    state(p, l, { log_append: [[id, r.epoch]] }));
  if (C.acks === "1") {
    ev(l, "ProduceAcked", { leader: l, records: [id], base_offset: offset, acks: "1" }, p.tp, state(p, l), true);
  }
  completeAcks(p, l);
}

// One fetch of follower f from its leader (R2-R4, R7, R12, KIP-320 fencing); true if it
// changed anything.
function fetch(p, f) {
  const r = replica(p, f);
  const l = r.leader;
  if (!C.alive[f] || l < 0 || l === f || r.truncating || !leading(p, l)) return false;
  const lr = replica(p, l);
  if (lr.epoch !== r.epoch) return false; // FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH
  const offset = r.log.length;
  if (offset > lr.log.length) { // R12: out of range, truncate to the leader's LEO
    r.log.length = lr.log.length;
    r.hw = Math.min(r.hw, lr.log.length);
    ev(f, "FollowerTruncate", { follower: f, leader: l, offset: lr.log.length }, p.tp,
      state(p, f, { log_truncate: lr.log.length }));
    return true;
  }
  let changed = false;
  if (lr.remote[f] !== offset || OPT.has("--log-idle-fetches")) { // else the leader logs nothing
    changed = lr.remote[f] !== offset;
    lr.remote[f] = offset;
    raiseHw(p, l);
    ev(l, "FollowerFetch", { follower: f, leader: l, phase: "serve", offset, epoch: r.epoch }, p.tp, state(p, l));
    completeAcks(p, l);
    // R7 + KAFKA-7128: rejoin once caught up to the HW and to the leader's epoch start
    if (!lr.isr.has(f) && offset >= lr.hw && offset >= epochStart(lr.log, lr.epoch)) {
      lr.isr.add(f);
      p.coord = { leader: l, leader_epoch: p.coord.leader_epoch, isr: [...lr.isr].sort(), version: p.coord.version + 1 };
      ev(l, "LeaderExpandIsr", { leader: l, follower: f }, p.tp, state(p, l));
    }
  }
  const entries = lr.log.slice(offset);
  const hw = BUG === "follower-hw" ? lr.hw : Math.min(offset + entries.length, lr.hw); // R4
  if (entries.length || hw !== r.hw || OPT.has("--log-idle-fetches")) {
    changed = changed || entries.length > 0 || hw !== r.hw;
    r.log.push(...entries.map((x) => [...x]));
    r.hw = hw;
    const extra = entries.length ? { log_append: entries } : {};
    ev(f, "FollowerFetch", { follower: f, leader: l, phase: "apply", count: entries.length }, p.tp, state(p, f, extra));
  }
  return changed;
}

function replicate() {
  for (let round = 0; round < 10000; round++) {
    let changed = false;
    for (const p of C.parts) for (const f of p.replicas) changed = fetch(p, f) || changed;
    if (!changed) return;
  }
}

// KIP-279 truncation: ask for the end offset of the last epoch, walk back until they agree.
function truncate(p, f) {
  const r = replica(p, f);
  const l = r.leader;
  if (!r.truncating || !leading(p, l) || replica(p, l).epoch !== r.epoch) return;
  const lr = replica(p, l);
  let t = r.log.length;
  let first = null;
  while (t > 0) {
    const requested = r.log[t - 1][1];
    const [epoch, end] = endOffset(lr.log, lr.epoch, requested);
    if (first === null) first = [epoch, end];
    if (epoch < 0) { t = Math.min(r.hw, t); break; }
    const [, ownEnd] = endOffset(r.log.slice(0, t), undefined, epoch);
    const nt = Math.min(t, end, ownEnd);
    t = nt;
    if (epoch === requested) break;
  }
  const cut = t < r.log.length;
  r.log.length = t;
  r.hw = Math.min(r.hw, t);
  r.truncating = false;
  if (!cut && OPT.has("--quiet-truncation")) return;
  ev(f, "FollowerTruncate", { follower: f, leader: l, offset: t, leader_answer: first || [-1, 0] }, p.tp,
    state(p, f, cut ? { log_truncate: t } : {}));
}

// LeaderAndIsr (R9-R11), applied by a live broker at a newer epoch.
function leaderAndIsr(p, b) {
  const r = replica(p, b);
  const c = p.coord;
  if (!C.alive[b] || c.leader_epoch <= r.epoch) return;
  if (c.leader === b) {
    const wasLeader = r.leader === b;
    Object.assign(r, { leader: b, epoch: c.leader_epoch, isr: new Set(c.isr), remote: {}, truncating: false });
    if (!wasLeader) r.pending = [];
    raiseHw(p, b);
    ev(b, "BrokerBecomeLeader", { replica: b, epoch: c.leader_epoch }, p.tp, state(p, b));
    completeAcks(p, b);
  } else {
    Object.assign(r, { leader: c.leader, epoch: c.leader_epoch, isr: new Set(), remote: {}, pending: [], truncating: r.log.length > 0 });
    ev(b, "BrokerBecomeFollower", { replica: b, leader: c.leader, epoch: c.leader_epoch }, p.tp, state(p, b));
  }
}

function send(p) {
  const l = p.coord.leader;
  if (l >= 0) leaderAndIsr(p, l); // the leader first, so that followers can truncate at once
  for (const b of p.replicas) if (b !== l) leaderAndIsr(p, b);
  for (const b of p.replicas) truncate(p, b);
}

// The controller (R9): a lost leader is replaced by a live ISR member (none: offline, nothing
// written); a dead follower leaves the ISR, one write (and one epoch) per follower.
function repair() {
  for (const p of C.parts) {
    for (;;) {
      const c = p.coord;
      const liveIsr = p.replicas.filter((b) => c.isr.includes(b) && C.alive[b]);
      const lr = c.leader >= 0 ? replica(p, c.leader) : null;
      const lost = c.leader < 0 || !C.alive[c.leader] || lr.epoch !== c.leader_epoch;
      if (lost) {
        if (!liveIsr.length) break;
        p.coord = { leader: liveIsr[0], leader_epoch: c.leader_epoch + 1, isr: liveIsr, version: c.version + 1 };
        ev("controller", "ControllerElectLeader", { leader: liveIsr[0] }, p.tp, { coord: p.coord });
      } else {
        const gone = c.isr.find((b) => b !== c.leader && !C.alive[b]);
        if (gone === undefined) break;
        p.coord = { leader: c.leader, leader_epoch: c.leader_epoch + 1, isr: c.isr.filter((b) => b !== gone), version: c.version + 1 };
        ev("controller", "ControllerShrinkIsr", { replica: gone }, p.tp, { coord: p.coord });
      }
      send(p);
    }
    send(p); // a broker back from a restart gets the current state
  }
  replicate();
}

// ---- the adapter protocol (traces/ADAPTER.md) -----------------------------------------------
const unsupported = (op) => ({ ok: false, unsupported: true, error: `the toy has no ${op}` });

const OPS = {
  start(c) {
    const n = c.brokers || 3, rf = c.replication || Math.min(3, n), parts = c.partitions || 1;
    if ((c.protocol || "kip-320") !== "kip-320") return unsupported(`protocol ${c.protocol}`);
    if (!(rf >= 2 && rf <= n && n <= 5)) return { ok: false, error: "need 2 <= replication <= brokers <= 5" };
    clock = 0;
    C = {
      events: [], alive: {}, parts: [], sent: 0, acks: String(c.acks || "all"),
      minInsync: Math.min(c.min_insync || 2, rf),
    };
    const brokers = [...Array(n).keys()];
    for (const b of brokers) C.alive[b] = true;
    const assignments = {};
    for (let i = 0; i < parts; i++) {
      const replicas = [...Array(rf).keys()].map((j) => (i + j) % n); // R1 placement
      const reps = {};
      for (const b of replicas) reps[b] = { log: [], hw: 0, leader: -1, epoch: -1, isr: new Set(), remote: {}, truncating: false, pending: [] };
      const p = { tp: { topic: "t", partition: i }, replicas, reps, coord: { leader: replicas[0], leader_epoch: 0, isr: replicas, version: 0 } };
      C.parts.push(p);
      assignments[`t-${i}`] = replicas;
      ev("controller", "ControllerElectLeader", { leader: replicas[0] }, p.tp, { coord: p.coord });
      send(p);
    }
    replicate();
    return {
      ok: true,
      header: {
        format: "isr-trace", version: 1, protocol: "kip-320", source: "toy",
        observed: ["alive", "role", "leader", "leader_epoch", "isr", "hw", "leo", "log"],
        log_encoding: "delta",
        config: { min_insync_replicas: C.minInsync },
        cluster: { brokers, assignments },
      },
    };
  },
  produce(c) {
    for (let k = 0; k < (c.count || 1); k++) {
      produce(C.parts[C.sent % C.parts.length], C.sent + 1); // integer record ids
      C.sent++;
      replicate();
    }
  },
  consume() {
    for (const p of C.parts) {
      const l = p.coord.leader;
      if (l < 0 || !leading(p, l) || replica(p, l).hw === 0) continue;
      const r = replica(p, l);
      ev(l, "ConsumerFetch", { leader: l, offset: 0, records: r.log.slice(0, r.hw).map((x) => x[0]) }, p.tp, state(p, l));
    }
  },
  crash(c) {
    const b = c.broker;
    if (!C.alive[b]) return;
    C.alive[b] = false; // memory lost, the log kept (SIGKILL)
    ev(b, "BrokerCrash", { replica: b }, null, { alive: false });
    for (const p of C.parts) {
      if (!(b in p.reps)) continue;
      p.reps[b].lastEpoch = p.reps[b].epoch;
      Object.assign(p.reps[b], { hw: 0, leader: -1, epoch: -1, isr: new Set(), remote: {}, truncating: false, pending: [] });
    }
    repair();
  },
  restart(c) {
    const b = c.broker;
    if (C.alive[b]) return;
    C.alive[b] = true; // R13 under KIP-101+: the whole log is kept; the HW checkpoint is 0
    for (const p of C.parts) {
      if (!(b in p.reps)) continue;
      const st = state(p, b);
      if (OPT.has("--restart-keeps-epoch")) st.leader_epoch = p.reps[b].lastEpoch;
      ev(b, "BrokerRestart", { replica: b }, p.tp, st);
    }
    repair();
  },
  run() { replicate(); },
  heal() {},
  trace() { return { ok: true, events: C.events }; },
  stop() { return { ok: true, bye: true }; },
};
for (const op of ["partition", "jitter", "pause", "resume", "power_fail", "partition_coord", "loss", "duplicate",
  "controller_failover", "elect_leader", "controlled_shutdown"]) OPS[op] = () => unsupported(op);

const rl = readline.createInterface({ input: process.stdin });
rl.on("line", (line) => {
  if (!line.trim()) return;
  let resp;
  try {
    const cmd = JSON.parse(line);
    const fn = OPS[cmd.op];
    if (!fn) resp = unsupported(`op ${cmd.op}`);
    else if (cmd.op !== "start" && cmd.op !== "stop" && !C) resp = { ok: false, error: "send start first" };
    else resp = fn(cmd) || { ok: true };
  } catch (e) {
    resp = { ok: false, error: String(e && e.message) };
  }
  process.stdout.write(JSON.stringify(resp) + "\n");
  if (resp.bye) process.exit(0);
});
