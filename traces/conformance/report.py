"""The conformance kit's report (issue 14, item 3): one document for people and CI.

* every scenario's verdict, and for a failing one what kind of failure it is (``classify``): a
  **property** the implementation broke (which one, which record), a **step** the spec does not
  allow (the event, the observed state against the spec's), or an **encoding** mismatch (the
  trace breaks traces/schema or the validator could not read it: wrong types, missing fields);
  an unsupported command is a **coverage gap**, never a pass;
* coverage per spec action and per role transition, and what was never exercised;
* ``write_failures``: each failing trace as NDJSON in ``--out DIR`` with the exact command that
  re-validates it (``isr validate FILE``) and the scenario's commands, and its client history
  (``NAME.history.ndjson``, ``isr history FILE``) when the adapter returned one;
* ``to_json`` (``--format json``) and ``junit_xml`` (``--junit FILE``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from ..validator.validate import ACCEPTED, BAD_INPUT, REJECTED, UNSUPPORTED, Verdict
from .runner import HISTORY_REASON, ConformReport

PROPERTY, STEP, ENCODING, GAP = "property", "step", "encoding", "coverage-gap"
HISTORY = "history"  # the client history has an anomaly (traces/history.py, R5, R6, R17)

# The rejected event's action -> the property (docs/PROTOCOL.md names) a client-visible step breaks.
_PROPERTY_OF = {
    "ProduceAcked": (
        "NoCommittedLoss",
        "R6: an acks=all record acknowledged before every ISR member had it (HW not past it)",
    ),
    "ConsumerFetch": (
        "NoPhantomRead",
        "R5: a consumer was served a record that is not committed at that offset",
    ),
}


# The requirements (docs/PROTOCOL.md) a step of each action is held to, for a "step" failure.
_REQUIREMENTS = {
    "FollowerFetch": "R2-R4 (fetch, LEO, HW), R12, KIP-320 fencing",
    "FollowerTruncate": "R10, R12, KIP-101/KIP-279 truncation",
    "LeaderShrinkIsr": "R4, R7 (ISR changes by compare-and-set)",
    "LeaderExpandIsr": "R7, KAFKA-7128",
    "ControllerElectLeader": "R9 (election from the live ISR)",
    "ControllerShrinkIsr": "R9",
    "BrokerBecomeLeader": "R9, R11",
    "BrokerBecomeFollower": "R9, R10",
    "BrokerRestart": "R13",
    "BrokerCrash": "R8",
    "BrokerCheckpointHw": "R13",
    "BrokerFlush": "R14",
    "ProducerSend": "R2, R6",
}


def classify(v: Verdict) -> dict[str, Any]:
    """What kind of failure a verdict is (see the module docstring); {} for an accepted one."""
    if v.verdict == ACCEPTED:
        return {}
    if v.verdict == BAD_INPUT:
        return {"kind": ENCODING, "detail": v.reason}
    if v.verdict == UNSUPPORTED:
        if v.reason.startswith("adapter does not support"):
            return {"kind": GAP, "detail": v.reason}
        return {"kind": "unsupported", "detail": v.reason}
    if v.verdict == REJECTED and v.event is None and v.reason.startswith(HISTORY_REASON):
        return {
            "kind": HISTORY,
            "detail": v.reason,
            "requirements": "R5, R6, R17 (the client history: traces/history.py)",
        }
    ev = v.event or {}
    action = ev.get("action", "")
    args = ev.get("args") or {}
    out: dict[str, Any] = {"kind": STEP, "action": action, "detail": v.reason}
    if action in _REQUIREMENTS:
        out["requirements"] = _REQUIREMENTS[action]
    if action in _PROPERTY_OF:
        prop, why = _PROPERTY_OF[action]
        out.update(kind=PROPERTY, property=prop, why=why)
        recs = args.get("records") or []
        if recs:
            out["record"] = recs[0]
            out["offset"] = args.get("offset")
        return out
    text = " ".join(v.mismatches)
    m = re.search(r"offset (\d+) holds (\S+)@epoch (-?\d+) but the spec has (\S+)@epoch", text)
    if m:
        # a log entry that differs from the only log the spec allows there: replicas diverge
        out.update(
            kind=PROPERTY,
            property="LogMatching",
            why="a replica holds a record at an offset where the spec's log has another",
            record=m.group(2),
            offset=int(m.group(1)),
        )
        return out
    m = re.search(r"HW=(\d+) but the spec has HW=(\d+)", text)
    leo = (ev.get("state") or {}).get("leo")
    if m and isinstance(leo, int) and int(m.group(1)) > leo:
        out.update(
            kind=PROPERTY,
            property="HwAtMostLeo",
            why="R4: a HW above the replica's own LEO (HW = min(own LEO, leader HW))",
            offset=leo,
        )
        return out
    if m and int(m.group(1)) > int(m.group(2)):
        out.update(
            kind=PROPERTY,
            property="StrongIsr",
            why="R4: a HW above every ISR member's LEO (records counted committed too early)",
            offset=int(m.group(2)),
        )
        return out
    if action == "ControllerElectLeader" and "ISR" in text:
        out.update(property="StrongIsr", why="R9: a leader elected from outside the ISR")
    if v.mismatches:
        out["observed_vs_spec"] = v.mismatches[0]
    return out


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "scenario"


def write_failures(rep: ConformReport, out_dir: str | Path) -> list[dict[str, Any]]:
    """Every failing scenario's trace as ``DIR/NAME.ndjson`` (header + events, as `isr validate`
    reads it) and its commands as ``DIR/NAME.commands.json``; returns, per failure, the files
    and the command that re-validates the trace."""
    d = Path(out_dir)
    d.mkdir(parents=True, exist_ok=True)
    rows = []
    failing = list(rep.rejected) + list(rep.undecided)
    if rep.shortest_failing is not None and all(r[0] != rep.shortest_failing[0] for r in failing):
        failing.append(rep.shortest_failing)
    for name, sc, _v in failing:
        out = rep.outcomes.get(name)
        row: dict[str, Any] = {"name": name}
        base = d / _slug(name)
        cmds = base.with_suffix(".commands.json")
        cmds.write_text(json.dumps(sc, indent=1) + "\n")
        row["commands"] = str(cmds)
        if out is not None and out.header is not None and out.events is not None:
            tr = base.with_suffix(".ndjson")
            with tr.open("w", encoding="utf-8") as f:
                f.write(json.dumps(out.header, separators=(",", ":")) + "\n")
                for ev in out.events:
                    # keys starting with "_" are the validator's own annotations
                    ev = {k: x for k, x in ev.items() if not k.startswith("_")}
                    f.write(json.dumps(ev, separators=(",", ":")) + "\n")
            row["trace"] = str(tr)
            row["revalidate"] = f"isr validate {tr}"
        hd = out.history_doc if out is not None else None
        if hd is not None and isinstance(hd["header"], dict) and isinstance(hd["ops"], list):
            hf = base.with_suffix(".history.ndjson")
            with hf.open("w", encoding="utf-8") as f:
                head = {"format": "isr-history", "version": 1, **hd["header"]}
                f.write(json.dumps(head, separators=(",", ":")) + "\n")
                for op in hd["ops"]:
                    f.write(json.dumps(op, separators=(",", ":")) + "\n")
            row["history"] = str(hf)
            row["recheck_history"] = f"isr history {hf}"
        rows.append(row)
    return rows


def coverage(rep: ConformReport, protocol: Any) -> dict[str, Any]:
    """Spec actions and role transitions the accepted traces exercised, and the missing ones
    (the spec's own role transitions: ``scenarios.spec_transitions``). ``protocol``: a
    built-in version's name or a version object (a user's)."""
    from isr.spec import Config, IsrSpec
    from isr.spec.protocols import version_of

    from .scenarios import spec_transitions
    from .separating import BRANCHES

    version = version_of(protocol)
    names = IsrSpec(Config(protocol=version.name), version).action_names
    want_tr = spec_transitions(protocol)
    got_tr = {f"{a}->{b}" for a, b in rep.transitions}
    return {
        "actions": sorted(set(names) & rep.actions),
        "actions_missing": sorted(set(names) - rep.actions),
        "transitions": sorted(got_tr),
        "transitions_missing": sorted(want_tr - got_tr),
        "unsupported_commands": dict(sorted(rep.gaps.items())),
        **(
            {
                "truncation_branches": sorted(rep.branches),
                "truncation_branches_missing": sorted(set(BRANCHES) - rep.branches),
            }
            if getattr(rep, "walks_back", False)
            else {}
        ),
    }


def to_json(
    rep: ConformReport, protocol: Any, failures: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    files = {f["name"]: f for f in failures or []}
    scen = []
    for n, sc, v in rep.results:
        row: dict[str, Any] = {"name": n, "verdict": v.verdict, "events": v.events}
        if v.verdict != ACCEPTED:
            row["reason"] = v.reason
            row["failure"] = classify(v)
        if v.verdict in (REJECTED, BAD_INPUT):
            row["commands"] = sc
            row["detail"] = v.to_json()
            if n in files:
                row["files"] = files[n]
        if n in rep.histories:
            row["history"] = rep.histories[n]
        scen.append(row)
    sf = rep.shortest_failing
    return {
        "ok": not rep.rejected,
        "counts": rep.counts(),
        "scenarios": scen,
        "coverage": coverage(rep, protocol),
        "shortest_failing": None
        if sf is None
        else {
            "name": sf[0],
            "scenario": sf[1],
            "failure": classify(sf[2]),
            "verdict": sf[2].to_json(),
            "files": files.get(sf[0]),
        },
        "histories": history_totals(rep),
        "adapter_stderr": rep.stderr_path
        if rep.stderr_path and Path(rep.stderr_path).exists()
        else None,
        "seconds": round(rep.seconds, 3),
    }


def history_totals(rep: ConformReport) -> dict[str, Any] | None:
    """The client histories over every scenario: how many were checked, how many invalid, and
    each anomaly class's total (None when the adapter returned no history)."""
    if not rep.histories:
        return None
    totals: dict[str, int] = {}
    for h in rep.histories.values():
        for k, n in h["counts"].items():
            totals[k] = totals.get(k, 0) + n
    return {
        "checked": len(rep.histories),
        "invalid": sum(1 for h in rep.histories.values() if not h["valid"]),
        "counts": totals,
    }


def history_text(h: dict[str, Any]) -> str:
    """A scenario's history check on one line: ``history: valid, 12 sends ok, 30 records
    read; duplicates 2``."""
    nonzero = [f"{k} {n}" for k, n in h["counts"].items() if n]
    head = "valid" if h["valid"] else "INVALID"
    tail = f"; {', '.join(nonzero)}" if nonzero else ""
    return f"history: {head}, {h['sends_ok']} sends ok, {h['records_read']} records read{tail}"


def junit_xml(rep: ConformReport, suite: str = "isr-conform") -> str:
    """JUnit XML: one test case per scenario; a failing one is a <failure> whose type is its
    kind (property/step/encoding), an unsupported command a <skipped> (a coverage gap)."""
    fails = len(rep.rejected)
    skipped = sum(1 for _n, _s, v in rep.results if v.verdict == UNSUPPORTED)
    cases = []
    for n, _sc, v in rep.results:
        attrs = (
            f"classname={quoteattr(suite)} name={quoteattr(n)} time={quoteattr(f'{v.seconds:.3f}')}"
        )
        h = rep.histories.get(n)
        out = f"<system-out>{escape(history_text(h))}</system-out>" if h else ""
        if v.verdict in (REJECTED, BAD_INPUT):
            c = classify(v)
            what = c.get("property") or c.get("kind", "")
            body = "\n".join([v.reason, *v.mismatches])
            cases.append(
                f"  <testcase {attrs}><failure type={quoteattr(c.get('kind', ''))} "
                f"message={quoteattr(f'{what}: {v.reason}'[:500])}>{escape(body)}</failure>"
                f"{out}</testcase>"
            )
        elif v.verdict == UNSUPPORTED:
            cases.append(f"  <testcase {attrs}><skipped message={quoteattr(v.reason)}/></testcase>")
        elif out:
            cases.append(f"  <testcase {attrs}>{out}</testcase>")
        else:
            cases.append(f"  <testcase {attrs}/>")
    head = (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name={quoteattr(suite)} '
        f'tests="{len(rep.results)}" failures="{fails}" errors="0" skipped="{skipped}" '
        f'time="{rep.seconds:.3f}">'
    )
    return "\n".join([head, *cases, "</testsuite>"]) + "\n"
