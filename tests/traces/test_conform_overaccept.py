"""No over-acceptance (issue 14, item 2): each relaxation of traces/VALIDATION.md accepts only
what it was written for. Each test takes a trace of the reference implementation that the
validator accepts, makes one small edit that is a real bug the relaxation must not cover, and
asserts the validator rejects it at the edited event."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from isr.impl.adapter import Session
from isr.traces.conformance.runner import InProcess, run_scenario_full
from isr.traces.conformance.scenarios import directed
from isr.traces.validator.validate import ACCEPTED, REJECTED, validate_events

Event = dict[str, Any]


@pytest.fixture(scope="module")
def traces() -> dict[str, tuple[dict[str, Any], list[Event]]]:
    ad = InProcess(Session(None))
    out = {}
    for name in ("lagging-follower-rejoins", "epoch-walk-back", "five-brokers"):
        v, o = run_scenario_full(ad, directed()[name], name)
        assert v.verdict == ACCEPTED, (name, v.reason, v.mismatches)
        assert o.header is not None and o.events is not None
        evs = [{k: x for k, x in e.items() if not k.startswith("_")} for e in o.events]
        out[name] = (o.header, evs)
    return out


def _edit(
    trace: tuple[dict[str, Any], list[Event]], pick: Callable[[int, Event], bool]
) -> tuple[dict[str, Any], list[Event], int]:
    head, events = trace
    events = copy.deepcopy(events)
    k = next(i for i, e in enumerate(events) if pick(i, e))
    return head, events, k


def _rejected_at(head: dict[str, Any], events: list[Event], k: int) -> str:
    v = validate_events(head, events, "crafted")
    assert v.verdict == REJECTED, f"accepted a crafted bug at event {k}: {events[k]}"
    assert v.index == k, (v.index, k, v.reason)
    return " ".join([v.reason, *v.mismatches])


def test_decision4_removed_follower_does_not_hold_the_hw(traces) -> None:
    """Decision 4 accepts a HW held by a follower whose ISR expansion is in flight; a follower
    the shrink itself removes must not hold it (the over-accepted bug of issue 14: its remote
    LEO equals the observed HW and it is outside the ISR after the step)."""

    def shrink_that_raised_hw(_i: int, e: Event) -> bool:
        st = e.get("state") or {}
        if e["action"] != "LeaderShrinkIsr":
            return False
        rl = st["remote_leo"][str(e["args"]["follower"])]
        return 0 <= rl < st["hw"]

    head, events, k = _edit(traces["lagging-follower-rejoins"], shrink_that_raised_hw)
    st = events[k]["state"]
    st["hw"] = st["remote_leo"][str(events[k]["args"]["follower"])]
    why = _rejected_at(head, events, k)
    assert "HW=" in why


def test_decision4_needs_a_fetch_while_out_of_sync(traces) -> None:
    """A HW held by an out-of-sync follower that has not fetched at that offset since it left
    the ISR (here: crashed, then removed) is rejected: the leader proposes an expansion only
    on such a fetch (R7). A serve raising the HW is edited to stay at its remote LEO."""
    head, events = traces["lagging-follower-rejoins"]
    events = copy.deepcopy(events)
    k = b = None
    for i, e in enumerate(events):
        st = e.get("state") or {}
        if e["action"] != "FollowerFetch" or e["args"].get("phase") != "serve":
            continue
        outs = [
            int(x) for x, leo in st.get("remote_leo", {}).items()
            if int(x) not in st["isr"] and 0 <= leo < st["hw"]
        ]  # fmt: skip
        if outs:
            k, b = i, outs[0]
            break
    assert k is not None and b is not None, "no serve with an out-of-sync follower behind"
    events[k]["state"]["hw"] = events[k]["state"]["remote_leo"][str(b)]
    _rejected_at(head, events, k)


def test_split_fetch_apply_hw_is_bounded_by_the_leader(traces) -> None:
    """Decision 2: an apply's HW may be any the leader had between serve and apply, never
    above the leader's."""

    def apply_below_leo(_i: int, e: Event) -> bool:
        st = e.get("state") or {}
        return e["args"].get("phase") == "apply" and st.get("hw", 0) < st.get("leo", 0)

    head, events, k = _edit(traces["lagging-follower-rejoins"], apply_below_leo)
    events[k]["state"]["hw"] = events[k]["state"]["leo"]
    assert "HW=" in _rejected_at(head, events, k)


def test_apply_without_serve_is_not_a_second_apply(traces) -> None:
    """Decision 2: an apply with no logged serve is a fetch whose leader half changed
    nothing; the same response applied twice (a duplicated answer appended twice) is not."""
    head, events = traces["lagging-follower-rejoins"]
    events = copy.deepcopy(events)
    k = next(
        i for i, e in enumerate(events)
        if e["args"].get("phase") == "apply" and e["args"].get("count", 0) > 0
    )  # fmt: skip
    dup = copy.deepcopy(events[k])
    st = dup["state"]
    n = dup["args"]["count"]
    st["leo"] += n
    st["log_append"] = st.get("log_append", [])[-n:] or [["m0", 0]] * n
    events.insert(k + 1, dup)
    _rejected_at(head, events, k + 1)


def test_noop_truncate_only_when_nothing_to_cut(traces) -> None:
    """Stutter: a no-op FollowerTruncate is accepted only when the spec's log is already
    there; KIP-279's walk back must cut a tail of an epoch the leader never had."""

    def truncating(_i: int, e: Event) -> bool:
        return e["action"] == "FollowerTruncate" and "log_truncate" in (e.get("state") or {})

    head, events, k = _edit(traces["epoch-walk-back"], truncating)
    st = events[k]["state"]
    before = max(
        (
            e["state"]["leo"]
            for e in events[:k]
            if e["node"] == events[k]["node"] and "leo" in (e.get("state") or {})
        ),
        default=0,
    )
    assert before > st["log_truncate"]
    del st["log_truncate"]
    st["leo"] = before
    _rejected_at(head, events, k)


def test_hw_checkpoint_stutter_needs_the_same_value(traces) -> None:
    """Stutter: BrokerCheckpointHw of an unchanged value; a checkpoint of another value than
    the spec's HW is rejected."""

    def ckpt(_i: int, e: Event) -> bool:
        return e["action"] == "BrokerCheckpointHw" and (e.get("state") or {}).get("hw", 0) > 0

    head, events, k = _edit(traces["lagging-follower-rejoins"], ckpt)
    events[k]["state"]["hw_checkpoint"] = events[k]["state"]["hw"] + 1
    _rejected_at(head, events, k)


def test_deferred_crash_broker_takes_no_steps(traces) -> None:
    """Decision 8: a crash is deferred, but the crashed broker takes no steps until its
    restart: an apply of it in between is rejected."""
    for head, evs in traces.values():
        for c, e in enumerate(evs):
            if e["action"] != "BrokerCrash":
                continue
            b = e["args"]["replica"]
            prev = [x for x in evs[:c] if x["node"] == b and x["args"].get("phase") == "apply"]
            if not prev:
                continue
            events = copy.deepcopy(evs)
            ghost = copy.deepcopy(prev[-1])
            ghost["args"]["count"] = 0
            ghost["state"].pop("log_append", None)
            ghost["clock"] = e["clock"] + 1
            events.insert(c + 1, ghost)
            _rejected_at(head, events, c + 1)
            return
    pytest.fail("no crash of a follower that had applied a fetch")


def test_consumer_read_past_hw(traces) -> None:
    """Decision 6: a consumer read is checked against the spec's condition directly (entries
    below the HW of a replica presuming to lead)."""

    def read_to_hw(_i: int, e: Event) -> bool:
        a, st = e.get("args") or {}, e.get("state") or {}
        return e["action"] == "ConsumerFetch" and a["offset"] + len(a["records"]) == st["hw"]

    head, events = traces["five-brokers"]
    events = copy.deepcopy(events)
    # a read that ends at the HW, made to end one record past it
    k = next(i for i, e in enumerate(events) if read_to_hw(i, e))
    events[k]["state"]["hw"] -= 1
    _rejected_at(head, events, k)


def test_unlogged_truncation_only_when_it_cuts_nothing(traces) -> None:
    """ADAPTER.md: a follower need not log a FollowerTruncate that cuts nothing (the
    validator inserts the spec's no-op truncation); one that must cut cannot be left out."""

    def cutting(_i: int, e: Event) -> bool:
        return e["action"] == "FollowerTruncate" and "log_truncate" in (e.get("state") or {})

    head, events, k = _edit(traces["epoch-walk-back"], cutting)
    f = events[k]["args"]["follower"]
    # every round of the walk back (the spec's FollowerTruncate is one step) is left out
    while events[k]["action"] == "FollowerTruncate" or events[k]["node"] != f:
        if events[k]["action"] == "FollowerTruncate" and events[k]["node"] == f:
            del events[k]
        else:
            k += 1
    nxt = next(
        i for i in range(k, len(events))
        if events[i]["action"] == "FollowerFetch" and events[i]["args"]["follower"] == f
    )  # fmt: skip
    v = validate_events(head, events, "crafted")
    assert v.verdict == REJECTED and v.index is not None and v.index >= nxt, v.reason


def test_idle_fetch_is_still_fenced(traces) -> None:
    """ADAPTER.md: an idle fetch (nothing changes) may be logged, but only at the leader's
    epoch (KIP-320): the same serve from a follower at another epoch is rejected."""

    def serve(_i: int, e: Event) -> bool:
        return e["args"].get("phase") == "serve"

    head, events, k = _edit(traces["lagging-follower-rejoins"], serve)
    idle = copy.deepcopy(events[k])
    idle["args"]["epoch"] = idle["args"]["epoch"] + 1
    events.insert(k + 1, idle)
    _rejected_at(head, events, k + 1)
