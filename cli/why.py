"""What a counterexample shows, in words: which replica, offset and record break the property.

A trace says *that* a property fails; a reader wants *where*: "replica 1 is in the ISR but lacks
offset 0 (record 1), below leader 0's HW 1". :func:`violation` computes that sentence from the
property's name and the last state (the last two for an action property, the cycle for a
liveness lasso), on the JSON states of counterexample files, so it serves `isr explain` (page
and text) and any command that prints counterexamples. Each property's reading follows its
definition in spec/properties.py and spec/liveness.py; a property without a reading here gets
its generic sentence.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

State = dict[str, Any]


def _rid(key: str) -> int:
    return int(key[1:])


def _replicas(s: State) -> list[int]:
    return sorted(_rid(k) for k in s["log"])


def _log(s: State, i: int) -> list:
    return s["log"][f"r{i}"]


def _presumed_leaders(s: State) -> list[int]:
    """Live replicas that believe they lead, with a positive HW (the scope of StrongIsr)."""
    return [
        i
        for i in _replicas(s)
        if s["alive"][f"r{i}"] and s["leader_view"][f"r{i}"] == i and s["hw"][f"r{i}"]
    ]


def _true_leader(s: State) -> int | None:
    c = s["coordination"]
    lead = c["leader"]
    k = f"r{lead}"
    if lead < 0 or k not in s["log"]:
        return None
    if s["alive"][k] and s["leader_view"][k] == lead and s["epoch_view"][k] == c["leader_epoch"]:
        return lead
    return None


def _entry(e: list) -> str:
    return f"record {e[0]} (epoch {e[1]})"


def _isr_gap(s: State, isr_of: Callable[[State, int], list[int]], whose: str) -> str | None:
    for i in _presumed_leaders(s):
        lead_log, hw = _log(s, i), s["hw"][f"r{i}"]
        for j in isr_of(s, i):
            other = _log(s, j)
            for o in range(hw):
                if o >= len(other):
                    return (
                        f"replica {j} is in {whose.format(i=i)} but lacks offset {o} (record "
                        f"{lead_log[o][0]}), below leader {i}'s HW {hw}"
                    )
                if other[o] != lead_log[o]:
                    return (
                        f"replica {j} is in {whose.format(i=i)} but holds {_entry(other[o])} at offset {o}, "
                        f"where leader {i} has {_entry(lead_log[o])}, below its HW {hw}"
                    )
    return None


def _strong_isr(states: list[State]) -> str | None:
    return _isr_gap(states[-1], lambda s, _i: s["coordination"]["isr"], "the ISR")


def _weak_isr(states: list[State]) -> str | None:
    return _isr_gap(
        states[-1], lambda s, i: s["isr_view"][f"r{i}"], "leader {i}'s own view of the ISR"
    )


def _lost(states: list[State], keys: tuple[str, ...], what: str) -> str | None:
    s = states[-1]
    lead = _true_leader(s)
    if lead is None:
        return None
    log = _log(s, lead)
    for key in keys:
        for o, rec in s.get(key, []):
            if o >= len(log):
                end = f"ends at offset {len(log) - 1}" if log else "is empty"
                return f"record {rec} was {what} at offset {o}, but leader {lead}'s log {end}"
            if log[o][0] != rec:
                return (
                    f"record {rec} was {what} at offset {o}, but leader {lead} holds "
                    f"{_entry(log[o])} there"
                )
    return None


def _no_committed_loss(states: list[State]) -> str | None:
    return _lost(states, ("acked_all",), "acknowledged to an acks=all producer")


def _no_acked_loss(states: list[State]) -> str | None:
    return _lost(states, ("acked_all", "acked_1"), "acknowledged to its producer")


def _no_phantom_read(states: list[State]) -> str | None:
    shown = states[-1].get("shown_to_consumers", [])
    first: dict[int, int] = {}
    for o, rec in shown:
        if o in first and first[o] != rec:
            return (
                f"offset {o} was shown to consumers as record {first[o]} and later as record {rec}"
            )
        first.setdefault(o, rec)
    return _lost(states, ("shown_to_consumers",), "shown to a consumer")


def _log_matching(states: list[State]) -> str | None:
    s = states[-1]
    ids = _replicas(s)
    for x, a in enumerate(ids):
        for b in ids[x + 1 :]:
            la, lb = _log(s, a), _log(s, b)
            for o in range(min(len(la), len(lb)) - 1, -1, -1):
                if la[o][1] == lb[o][1]:
                    if la[: o + 1] != lb[: o + 1]:
                        p = next(k for k in range(o + 1) if la[k] != lb[k])
                        return (
                            f"replicas {a} and {b} both hold an entry of epoch {la[o][1]} at "
                            f"offset {o}, yet differ at offset {p}: replica {a} has "
                            f"{_entry(la[p])}, replica {b} {_entry(lb[p])}"
                        )
                    break
    return None


def _hw_at_most_leo(states: list[State]) -> str | None:
    s = states[-1]
    for i in _replicas(s):
        k, leo = f"r{i}", len(_log(s, i))
        if s["hw"][k] > leo:
            return f"replica {i}'s HW {s['hw'][k]} is beyond its LEO {leo}"
        if s["hw_checkpoint"][k] > leo:
            return f"replica {i}'s HW checkpoint {s['hw_checkpoint'][k]} is beyond its LEO {leo}"
    return None


def _leader_in_isr(states: list[State]) -> str | None:
    c = states[-1]["coordination"]
    return f"the recorded leader {c['leader']} is not in the recorded ISR {c['isr']}"


def _isr_within_assigned(states: list[State]) -> str | None:
    s = states[-1]
    isr = s["coordination"]["isr"]
    if not isr:
        return "the recorded ISR is empty"
    ids = set(_replicas(s))
    bad = [x for x in isr if x not in ids]
    return f"the recorded ISR {isr} names replicas {bad} that are not assigned" if bad else None


def _hw_monotonic(states: list[State]) -> str | None:
    if len(states) < 2:
        return None
    a, b = states[-2], states[-1]
    for i in _replicas(b):
        k = f"r{i}"
        led = a["leader_view"][k] == i and b["leader_view"][k] == i
        if led and a["alive"][k] and b["alive"][k] and b["hw"][k] < a["hw"][k]:
            return f"leader {i}'s HW fell from {a['hw'][k]} to {b['hw'][k]} in the last step"
    return None


def _monotonic_reads(states: list[State]) -> str | None:
    if len(states) < 2:
        return None
    a, b = states[-2]["consumer_position"], states[-1]["consumer_position"]
    if b >= a:
        return None
    return (
        f"the consumer's position went back from {a} to {b} in the last step: an offset reset "
        f"(its position was past the leader's log end), so it will read offsets {b}..{a - 1} again"
    )


def _log_start_at_most_hw(states: list[State]) -> str | None:
    s = states[-1]
    for i in _replicas(s):
        k = f"r{i}"
        start = s.get("log_start", {}).get(k, 0)
        if s["alive"][k] and start > s["hw"][k]:
            return (
                f"replica {i}'s log start offset {start} is beyond its HW {s['hw'][k]}: its "
                "HW points below its own log (offsets it deleted are not known committed there)"
            )
    return None


def _deleted_only_committed(states: list[State]) -> str | None:
    if len(states) < 2:
        return None
    a, b = states[-2], states[-1]
    top = max((a["hw"][f"r{i}"] for i in _replicas(a) if a["alive"][f"r{i}"]), default=0)
    for i in _replicas(b):
        k = f"r{i}"
        was, now = a.get("log_start", {}).get(k, 0), b.get("log_start", {}).get(k, 0)
        if now > was and now > top and now > b["hw"][k]:
            return (
                f"replica {i}'s log start moved from {was} to {now} in the last step, past "
                f"every HW ({top}): offsets {top}..{now - 1} are deleted before they are committed"
            )
    return None


def _no_duplicates(states: list[State]) -> str | None:
    s = states[-1]
    for i in _replicas(s):
        seen: dict[int, int] = {}
        for o, e in enumerate(_log(s, i)):
            rec = e[0]
            if rec in seen:
                return f"replica {i} holds record {rec} twice, at offsets {seen[rec]} and {o}"
            seen[rec] = o
    return None


def _available(states: list[State]) -> str | None:
    s = states[-1]
    lead = s["coordination"]["leader"]
    alive = [i for i in _replicas(s) if s["alive"][f"r{i}"]]
    if not alive:
        return f"leader {lead} is down and so is every other replica: the partition is offline"
    return (
        f"leader {lead} is down and no live replica ({', '.join(map(str, alive))}) may be "
        f"elected under this version's rule (ISR {s['coordination']['isr']}): the partition is "
        "offline"
    )


def _acks_all_answered(states: list[State], loop: int) -> str | None:
    s = states[loop]
    lead = s["coordination"]["leader"]
    pending = s.get("pending_acks", {}).get(f"r{lead}", [])
    if not pending:
        return None
    log = _log(s, lead)
    recs = [str(log[o][0]) for o in pending if o < len(log)]
    return (
        f"leader {lead} holds the acks=all write of record {', '.join(recs) or '?'} "
        f"(offset {', '.join(map(str, pending))}) in its purgatory, and from step {loop} on it is "
        "never acknowledged or refused"
    )


def _caught_up_rejoins(states: list[State], loop: int) -> str | None:
    s = states[loop]
    lead = s["coordination"]["leader"]
    lk = f"r{lead}"
    if lk not in s["log"]:
        return None
    for j in _replicas(s):
        k = f"r{j}"
        if j == lead or not s["alive"][k]:
            continue
        out = j not in s["coordination"]["isr"] or j not in s["isr_view"][lk]
        if out and len(_log(s, j)) >= s["hw"][lk]:
            return (
                f"replica {j} has caught up with leader {lead} (LEO {len(_log(s, j))}, leader's "
                f"HW {s['hw'][lk]}) but, from step {loop} on, never rejoins the ISR"
            )
    return None


def _reassignment_keeps_min_isr(states: list[State]) -> str | None:
    if len(states) < 2:
        return None
    b, a = states[-2], states[-1]
    if not b.get("removing_replicas") or a.get("removing_replicas"):
        return None
    return (
        f"the reassignment completes with ISR {a['coordination']['isr']} for the replicas"
        f" {a.get('replicas')}: the ISR was {b['coordination']['isr']}, and the completion left"
        " fewer members than min.insync.replicas (KAFKA-15665)"
    )


SAFETY: dict[str, Callable[[list[State]], str | None]] = {
    "StrongIsr": _strong_isr,
    "WeakIsr": _weak_isr,
    "NoCommittedLoss": _no_committed_loss,
    "NoAckedLoss": _no_acked_loss,
    "NoPhantomRead": _no_phantom_read,
    "LogMatching": _log_matching,
    "HwAtMostLeo": _hw_at_most_leo,
    "LeaderInIsr": _leader_in_isr,
    "IsrWithinAssigned": _isr_within_assigned,
    "HwMonotonic": _hw_monotonic,
    "MonotonicReads": _monotonic_reads,
    "NoDuplicates": _no_duplicates,
    "Available": _available,
    "LogStartAtMostHw": _log_start_at_most_hw,
    "DeletedOnlyCommitted": _deleted_only_committed,
    "ReassignmentKeepsMinIsr": _reassignment_keeps_min_isr,
}
LIVENESS: dict[str, Callable[[list[State], int], str | None]] = {
    "AcksAllAnswered": _acks_all_answered,
    "CaughtUpFollowerRejoinsIsr": _caught_up_rejoins,
}


_ACTION_PROPERTIES = (
    "HwMonotonic",
    "MonotonicReads",
    "DeletedOnlyCommitted",
    "ReassignmentKeepsMinIsr",
)


def violation(prop: str, states: list[State], loop_start: int | None = None) -> str:
    """One sentence: what breaks ``prop`` in the trace ``states`` (initial state first)."""
    n = len(states) - 1
    try:
        if loop_start is not None:
            fn = LIVENESS.get(prop)
            said = fn(states, loop_start) if fn else None
            return said or (f"{prop} never holds again: steps {loop_start}..{n} repeat forever")
        fn2 = SAFETY.get(prop)
        said = fn2(states) if fn2 else None
    except (KeyError, IndexError, TypeError, ValueError):
        said = None  # a state without the variables a reading needs: say it generically
    if said:
        return said
    return f"{prop} is violated {'by step' if prop in _ACTION_PROPERTIES else 'after step'} {n}"


def one_line(prop: str, steps: list[Any], states: list[State] | None = None) -> str:
    """`Prop: violated in N steps (A → B → C): <violation>` for a list of counterexamples."""
    acts = " → ".join((s["action"] if isinstance(s, dict) else s.action) for s in steps)
    why = f": {violation(prop, states)}" if states else ""
    return f"{prop}: violated in {len(steps)} steps ({acts}){why}"


def counterexample_lines(properties: list[Any], render_cx: Callable[[Any], list[str]]) -> list[str]:
    """The counterexample part of `isr check`'s text output: the first counterexample in full,
    with the sentence saying what breaks, then one line for each other violated property (its
    length, its actions and what breaks). ``properties``: PropertyResult objects;
    ``render_cx``: cli.render.render_counterexample."""
    from .traceout import full_states

    violated = [p for p in properties if p.counterexample is not None]
    if not violated:
        return []
    first, rest = violated[0], violated[1:]
    cx = first.counterexample
    states = full_states(cx)
    out = [
        "",
        f"Counterexample for {first.name} ({cx.length} steps):",
        f"  why: {violation(first.name, states, cx.loop_start)}",
        *render_cx(cx),
    ]
    if rest:
        out += ["", f"Other violated properties ({len(rest)}; --invariant NAME shows one in full):"]
        for p in rest:
            out.append(
                "  " + one_line(p.name, p.counterexample.steps, full_states(p.counterexample))
            )
    return out
