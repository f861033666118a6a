"""Trace validation: does the spec allow what an implementation recorded? (issue 6, VALIDATION.md)

The validator keeps the set of spec states consistent with the trace so far (the *candidates*)
and advances it event by event. For each event it runs only the spec action the event names (not
the whole Next relation), keeps the successors whose arguments fit the event and whose acting
replica equals what the event observed, and drops the rest. Variables the trace does not observe
(requests in flight, other replicas' views) are whatever the spec's own nondeterminism makes them.
When no candidate explains an event, the hidden steps the implementation does not log (a
LeaderAndIsr lost in the network or dropped with its dead destination, a deferred crash, a
crashed leader's last ISR write, a paused broker's session expiring or being renewed) are
inserted, a bounded closure, and the event is tried again;
if it still fails, the trace is rejected at that event with the candidate states and the actions
enabled there. A ``BrokerCrash`` is deferred: until the broker's session expires the rest of the
cluster sees a live broker taking no steps, so the spec's crash is inserted when an event needs
it, at the latest before the broker's next event (VALIDATION.md, mapping decision 8). A
``BrokerPause`` changes nothing (a paused broker takes no steps); the spec's session expiry and
renewal of that broker are hidden steps, and the renewal happens at the latest before the
broker's next event (mapping decision 12).

Cost per event is proportional to the candidate set (usually one state) and to what the event
changed: histories the spec only keeps for its properties (acked, shown, refused) are moved out
of the candidates, logs are checked by their deltas.

This module is the public API and the whole-trace driver: verdicts, parsing, the split of a
trace into partitions, ``validate_events``/``validate_text``/``validate_paths`` and the
``OnlineValidator``. The rest lives in ``candidates.py`` (the candidate representation and
``Rejection``), ``wellformed.py`` (each event checked against its header first: bad input,
never a step), ``partition.py`` (``PartitionValidator``: one partition's candidate set, the
hidden-step closure, deferred crashes, session steps) and ``handlers/`` (one module per actor:
the handler of each event's action).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from isr.checker.nogc import gc_paused
from isr.spec import IsrSpec
from isr.spec.state import Replica

from .. import format as tformat
from .candidates import MAX_CANDIDATES, Cand, Rejection, fmt_args
from .mapping import (
    Event,
    PartitionMap,
    TraceInputError,
    Unsupported,
    derive_config,
    part_key,
    partition_layout,
)
from .partition import PartitionValidator
from .wellformed import EventChecker

__all__ = [
    "ACCEPTED",
    "BAD_INPUT",
    "EXIT",
    "IGNORED_IMPL",
    "INCOMPLETE",
    "MAX_CANDIDATES",
    "REJECTED",
    "UNSUPPORTED",
    "UNSUPPORTED_IMPL",
    "OnlineValidator",
    "PartitionValidator",
    "Rejection",
    "Verdict",
    "derive_assignments",
    "parse_text",
    "read_trace_texts",
    "replica_of",
    "split_partitions",
    "validate_events",
    "validate_paths",
    "validate_text",
]

ACCEPTED, REJECTED, UNSUPPORTED, INCOMPLETE, BAD_INPUT = (
    "accepted",
    "rejected",
    "unsupported",
    "incomplete",
    "bad-input",
)
EXIT = {ACCEPTED: 0, REJECTED: 1, UNSUPPORTED: 2, BAD_INPUT: 2, INCOMPLETE: 3}
IGNORED_IMPL = {"IsrUpdateConflict", "StopReplica"}
# impl events of a fault the spec cannot express (none at the moment; see VALIDATION.md)
UNSUPPORTED_IMPL: dict[str, str] = {}


@dataclass
class Verdict:
    name: str
    verdict: str
    events: int = 0
    partitions: int = 0
    reason: str = ""
    index: int | None = None  # position of the first unexplained event in the merged order
    event: Event | None = None
    candidates: list[dict[str, Any]] = field(default_factory=list)
    enabled: list[list[str]] = field(default_factory=list)
    mismatches: list[str] = field(default_factory=list)
    max_candidates: int = 0
    seconds: float = 0.0
    fired: set[str] = field(default_factory=set)
    transitions: set[tuple[str, str]] = field(default_factory=set)

    @property
    def exit(self) -> int:
        return EXIT[self.verdict]

    def to_json(self) -> dict[str, Any]:
        d = {
            "trace": self.name,
            "verdict": self.verdict,
            "events": self.events,
            "partitions": self.partitions,
            "max_candidates": self.max_candidates,
            "seconds": round(self.seconds, 4),
        }
        if self.verdict != ACCEPTED:
            d.update(
                reason=self.reason,
                index=self.index,
                event=self.event,
                candidates=self.candidates,
                enabled=self.enabled,
                mismatches=self.mismatches,
            )
        return d


# ---- whole traces -------------------------------------------------------------------------
def derive_assignments(events: list[Event]) -> dict[str, list[int]]:
    """Per-broker cluster files carry no assignment: rebuild it by R1 placement (replica j of
    partition i on broker (i + j) mod n over the sorted brokers), the replication factor being
    the largest ISR recorded for the partition (every replica starts in the ISR)."""
    brokers = sorted({int(e["node"]) for e in events if isinstance(e.get("node"), int)})
    width: dict[str, int] = {}
    for e in events:
        k = part_key(e)
        if k is None:
            continue
        st = e.get("state") or {}
        isr = (st.get("coord") or {}).get("isr", st.get("isr", []))
        width[k] = max(width.get(k, 0), len(isr))
    out = {}
    for k, rf in width.items():
        i = int(k.rsplit("-", 1)[1])
        out[k] = [brokers[(i + j) % len(brokers)] for j in range(rf)]
    return out


def _hosts(reps: list[Any], ev: Event) -> bool:
    """Whether a broker-wide event (no topic: ``BrokerCrash``, ``BrokerPause``) concerns a
    partition with replicas ``reps``: only if its broker holds one of them. With replication
    below the broker count, a crash of a broker outside the partition is not an event of it."""
    if ev.get("action") == "ControllerActivate":
        return True  # the controller's, for every partition wherever it runs
    b = (ev.get("args") or {}).get("replica", ev.get("node"))
    return not isinstance(b, int) or b in {int(x) for x in reps}


def split_partitions(
    header: dict[str, Any], events: list[Event], layout: dict[str, list[int]] | None = None
) -> dict[str, list[Event]]:
    """The events of each partition: its own, and the broker-wide ones of its brokers
    (``layout``: the brokers each partition's spec replicas stand for, its spare included when
    it is reassigned; the header's assignments by default)."""
    assignments = (header.get("cluster") or {}).get("assignments") or {}
    if layout is not None:
        assignments = {**assignments, **layout}
    parts: dict[str, list[Event]] = {k: [] for k in assignments}
    for ev in events:
        k = part_key(ev)
        if k is None:
            for key, lst in parts.items():
                if _hosts(assignments[key], ev):
                    lst.append(ev)
        else:
            if k not in parts:
                raise TraceInputError(f"event for partition {k} not in the header's assignments")
            parts[k].append(ev)
    return parts


@gc_paused
def spec_for(cfg: Any, version: Any) -> IsrSpec:
    """The spec at the bounds a trace needs, or Unsupported when the spec cannot combine the
    trace's mechanisms (its ConfigError: e.g. kraft's reassignments with the idempotent
    producer, not modelled together): a verdict of its own (exit 2), never a traceback."""
    from isr.spec import ConfigError

    try:
        return IsrSpec(cfg, version)
    except ConfigError as e:
        raise Unsupported("spec-config", detail=str(e)) from None


def validate_events(
    header: dict[str, Any],
    events: list[Event],
    name: str = "trace",
    on_step: Callable | None = None,
    protocol: Any = None,
) -> Verdict:
    """Validate one merged trace (header + events in merge order), with the cyclic garbage
    collector paused: its full collections walk every live state and made long traces
    super-linear (see checker.nogc). ``protocol``: the version object to validate against
    instead of the built-in one the header names (a user's, ``isr validate --protocol-file``)."""
    import time

    t0 = time.perf_counter()
    v = Verdict(name, ACCEPTED, events=len(events))
    try:
        if not (header.get("cluster") or {}).get("assignments"):
            header = {**header, "cluster": {"assignments": derive_assignments(events)}}
        if protocol is not None:
            header = {**header, "protocol": protocol.name}
        _check_header(header, protocol)
        version = protocol_variant(header, protocol)
        chk = EventChecker(header)
        for idx, ev in enumerate(events):
            chk.check(idx, ev)
            mode = UNSUPPORTED_IMPL.get(ev.get("action", ""))
            if mode:
                raise Unsupported(mode, idx)
        assignments = header["cluster"]["assignments"]
        # KIP-455: a reassigned partition's spec replicas include its spare broker
        layout = {
            k: partition_layout(k, [int(b) for b in reps], events)
            for k, reps in assignments.items()
        }
        parts = split_partitions(header, events, layout)
        v.partitions = len(parts)
        index_of = {id(ev): k for k, ev in enumerate(events)}
        for key, evs in sorted(parts.items()):
            pm = PartitionMap(key, layout[key])
            cfg = derive_config(header, evs, len(pm.brokers))
            pv = PartitionValidator(pm, spec_for(cfg, version))
            for ev in evs:
                if ev.get("impl") and ev["action"] in IGNORED_IMPL:
                    continue
                try:
                    pv.advance(ev)
                except Rejection as rj:
                    v.verdict = REJECTED
                    v.reason = f"{key}: {rj.reason}"
                    v.index = index_of[id(ev)]
                    v.event = {k: x for k, x in ev.items() if not k.startswith("_")}
                    v.mismatches = list(dict.fromkeys(rj.mismatches))[:8]
                    v.candidates, v.enabled = _describe(pv, rj.cands)
                    v.max_candidates = max(v.max_candidates, pv.max_cands)
                    return v
                except (Unsupported, TraceInputError) as e:
                    if isinstance(e, Unsupported) and e.index is None:
                        e.index = index_of[id(ev)]
                    raise
                except OverflowError as e:
                    v.verdict = INCOMPLETE
                    v.reason = f"{key}: candidate set exceeded {MAX_CANDIDATES} ({e})"
                    v.index = index_of[id(ev)]
                    return v
                except (KeyError, TypeError, ValueError, IndexError) as e:
                    raise TraceInputError(
                        f"event {index_of[id(ev)]} ({ev.get('action')}): malformed: {e!r}"
                    ) from None
                if on_step is not None:
                    on_step(key, ev, pv)
            v.max_candidates = max(v.max_candidates, pv.max_cands)
            v.fired |= pv.fired
            v.transitions |= pv.transitions
    except Unsupported as e:
        v.verdict = UNSUPPORTED
        v.reason = f"unsupported: {e.mode}" + (f" ({e.detail})" if e.detail else "")
        v.index = e.index
        if e.index is not None:
            v.event = events[e.index]
    except TraceInputError as e:
        v.verdict = BAD_INPUT
        v.reason = str(e)
    finally:
        v.seconds = time.perf_counter() - t0
    return v


def _check_header(header: dict[str, Any], protocol: Any = None) -> None:
    from isr.spec.protocols import PROTOCOLS

    if protocol is None and header.get("protocol") not in PROTOCOLS:
        raise TraceInputError(f"unknown protocol {header.get('protocol')!r} in the header")
    protocol_variant(header, protocol)  # a bad ``protocol_flags`` is bad input before any event
    cl = header.get("cluster") or {}
    if not cl.get("assignments"):
        raise TraceInputError("the header has no cluster.assignments")
    for k, reps in cl["assignments"].items():
        if not 2 <= len(reps) <= 5:
            raise Unsupported(
                "replication-factor", detail=f"{k} has {len(reps)} replicas; the spec models 2..5"
            )


def protocol_variant(header: dict[str, Any], protocol: Any = None) -> Any:
    """The version a trace is checked against: ``protocol`` (a user's version object) or the
    built-in one the header names, with the header's ``protocol_flags`` set
    (``ProtocolVersion.variant``), for an implementation that runs a version with a documented
    difference (the reference implementation's kraft derives its leader-epoch cache from its
    log: ``{"epoch_cache": false}``). Without flags, ``protocol`` (None for the built-in one).
    Unknown flags or non-boolean values are bad input (TraceInputError, exit 2)."""
    from isr.spec.protocols import PROTOCOLS

    flags = header.get("protocol_flags")
    if not flags:
        return protocol
    if not isinstance(flags, dict) or not all(
        isinstance(k, str) and isinstance(v, bool) for k, v in flags.items()
    ):
        raise TraceInputError("protocol_flags must map flag names to true or false")
    try:
        return (protocol or PROTOCOLS[header["protocol"]]).variant(**flags)
    except AttributeError as e:
        raise TraceInputError(f"protocol_flags: {e}") from None


def _describe(pv: PartitionValidator, cands: list[Cand]) -> tuple[list, list]:
    spec = pv.spec
    states, enabled = [], []
    for s, _p, _a in cands[:3]:
        states.append(spec.state_to_json(s))
        names = []
        for (kind, args), _t in spec.successors(s):
            d = spec.describe_action((kind, args))
            names.append(f"{d['action']}({fmt_args(d['args'])})")
        enabled.append(names)
    return states, enabled


def read_trace_texts(paths: Iterable[str | Path]) -> tuple[dict[str, Any], list[Event]]:
    """Read one or more files of one run and merge them by Lamport clock (FORMAT.md)."""
    heads, events = tformat.merge_files(paths)
    return _run_header(heads), events


def _run_header(heads: list[dict[str, Any]]) -> dict[str, Any]:
    """The header of a run of several files: the one with the cluster layout."""
    head = next((h for h in heads if h.get("cluster")), heads[0])
    protos = {h.get("protocol") for h in heads}
    if len(protos) > 1:
        raise TraceInputError(
            f"files of one run disagree on the protocol: {sorted(protos)} (a folder is one "
            "run's per-process files; to validate separate runs, pass their files)"
        )
    return head


def _parse_stream(text: str, name: str) -> tuple[dict[str, Any], list[Event]]:
    """One file's text, every line checked by the trace reader (traces/format.py)."""
    try:
        return tformat.parse_text(text, name)
    except tformat.TraceFormatError as e:
        raise TraceInputError(str(e)) from None


def parse_text(text: str | list[str], name: str = "trace") -> tuple[dict[str, Any], list[Event]]:
    """One run from the text of its file, or of its per-process files (merged by clock)."""
    parsed = [_parse_stream(t, name) for t in ([text] if isinstance(text, str) else text)]
    if not parsed:
        raise TraceInputError(f"{name}: no trace files")
    events = tformat.merge([e for _h, e in parsed])
    if not events:
        raise TraceInputError(f"{name}: no events after the header")
    return _run_header([h for h, _e in parsed]), events


def validate_text(text: str | list[str], name: str = "trace", protocol: Any = None) -> Verdict:
    """``protocol``: as for :func:`validate_paths`."""
    try:
        head, events = parse_text(text, name)
    except TraceInputError as e:
        return Verdict(name, BAD_INPUT, reason=str(e))
    return validate_events(head, events, name, protocol=protocol)


def validate_paths(
    paths: list[str | Path],
    name: str | None = None,
    on_step: Callable | None = None,
    protocol: Any = None,
) -> Verdict:
    """``protocol``: validate against this version object instead of the built-in one the
    header names (a user's, ``isr validate --protocol-file``)."""
    nm = name or ",".join(str(p) for p in paths)
    try:
        head, events = read_trace_texts(paths)
    except (OSError, ValueError) as e:
        return Verdict(nm, BAD_INPUT, reason=str(e).splitlines()[0])
    return validate_events(head, events, nm, on_step, protocol)


def replica_of(pv: PartitionValidator, broker: int) -> Replica:
    return pv.cands[0][0].replicas[pv.pm.rep(broker)]


class OnlineValidator:
    """Checks events as they happen (issue 6, item 5): the bounds cannot come from a trace that
    is not written yet, so they are generous (they only cap what the spec may do)."""

    def __init__(self, header: dict[str, Any], records: int = 10_000, epochs: int = 1_000):
        from isr.spec import Config

        _check_header(header)
        self.parts: dict[str, PartitionValidator] = {}
        cfg = header.get("config") or {}
        for key, reps in header["cluster"]["assignments"].items():
            pm = PartitionMap(key, [int(b) for b in reps])
            n = len(pm.brokers)
            spec = IsrSpec(
                Config(
                    replicas=n,
                    records=records,
                    epochs=epochs,
                    crashes=10_000,
                    acks="all",
                    min_isr=max(1, min(int(cfg.get("min_insync_replicas", 1)), n)),
                    protocol=header["protocol"],
                    session_expiries=10_000,
                ),
                protocol_variant(header),
            )
            self.parts[key] = PartitionValidator(pm, spec)
        self.seen = 0
        self.checker = EventChecker(header)

    def feed(self, events: list[Event]) -> None:
        """Advance by ``events``; raises Rejection or Unsupported at the first bad one, and
        TraceInputError at a malformed one (``wellformed.py``)."""
        for ev in events:
            self.seen += 1
            self.checker.check(self.seen - 1, ev)  # TraceInputError: bad input, not a step
            mode = UNSUPPORTED_IMPL.get(ev.get("action", ""))
            if mode:
                raise Unsupported(mode, self.seen - 1)
            if ev.get("impl") and ev["action"] in IGNORED_IMPL:
                continue
            k = part_key(ev)
            if k is None:
                targets = [pv for pv in self.parts.values() if _hosts(pv.pm.brokers, ev)]
            else:
                targets = [self.parts[k]]
            for pv in targets:
                pv.advance(ev)
