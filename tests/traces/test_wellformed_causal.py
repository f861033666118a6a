"""No false accepts (issue 17, item 1): an event that contradicts itself or its header is bad
input, a leader cannot serve an offset the follower's own events have not reached, and each
relaxation of traces/VALIDATION.md not covered by test_conform_overaccept.py (decisions 1, 5,
7, 9, 12, 13, the hidden restart, what a restart compares) has a crafted trace it must reject."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from isr.traces.validator.validate import (
    ACCEPTED,
    BAD_INPUT,
    REJECTED,
    UNSUPPORTED,
    validate_events,
)

SAMPLES = Path(__file__).resolve().parents[2] / "traces" / "samples" / "accepted"
Event = dict[str, Any]


def _load(name: str) -> tuple[dict[str, Any], list[Event]]:
    lines = (SAMPLES / f"{name}.ndjson").read_text().splitlines()
    objs = [json.loads(ln) for ln in lines if ln.strip()]
    return objs[0], objs[1:]


def _verdict(head: dict[str, Any], events: list[Event]):
    return validate_events(copy.deepcopy(head), copy.deepcopy(events), "crafted")


def _rejected_at(head: dict[str, Any], events: list[Event], k: int) -> str:
    v = _verdict(head, events)
    assert v.verdict == REJECTED, (v.verdict, v.reason, events[k])
    assert v.index == k, (v.index, k, v.reason, v.mismatches)
    return " ".join([v.reason, *v.mismatches])


def _find(events: list[Event], **want: Any) -> int:
    for i, e in enumerate(events):
        a = e.get("args") or {}
        if all(e.get(k) == x or a.get(k) == x for k, x in want.items()):
            return i
    raise AssertionError(f"no event {want}")


def test_samples_still_accepted() -> None:
    """Every golden sample, the per-process files of a real cluster's run included."""
    from isr.traces.validator.validate import validate_paths

    runs = sorted(SAMPLES.glob("*.ndjson")) + sorted(p for p in SAMPLES.iterdir() if p.is_dir())
    assert len(runs) >= 10
    for p in runs:
        files = sorted(p.glob("*.ndjson")) if p.is_dir() else [p]
        v = validate_paths(files)
        assert v.verdict == ACCEPTED, (p.name, v.reason, v.mismatches)


# ---- causal order of fetches --------------------------------------------------------------------
def test_leader_cannot_count_a_fetch_the_follower_has_not_made() -> None:
    """The review's false accept: the leader serves both followers at offset 1 (and acknowledges
    the record, min.insync 2) before either follower's apply that brings it to offset 1."""
    head, evs = _load("sim-kip320-leader-crash")
    send = _find(evs, action="ProducerSend")
    applies = [send + 1, send + 2]
    assert all(evs[i]["args"].get("phase") == "apply" for i in applies)
    serves_and_ack = evs[send + 3 : send + 6]
    assert [e["action"] for e in serves_and_ack][-1] == "ProduceAcked"
    crafted = evs[: send + 1] + serves_and_ack + [evs[i] for i in applies] + evs[send + 6 :]
    why = _rejected_at(head, crafted, send + 1)
    assert "never reached" in why


def test_serve_at_an_epoch_the_follower_never_learned() -> None:
    head, evs = _load("sim-kip320-leader-crash")
    k = _find(evs, action="FollowerFetch", phase="serve", offset=1)
    evs[k]["args"]["epoch"] = 3
    _rejected_at(head, evs, k)


# ---- well-formed events --------------------------------------------------------------------------
def _apply_k(evs: list[Event]) -> int:
    return _find(evs, action="FollowerFetch", phase="apply", count=1)


EDITS = {
    "omits hw": lambda e: e["state"].pop("hw"),
    "omits leo": lambda e: e["state"].pop("leo"),
    "omits role": lambda e: e["state"].pop("role"),
    "omits leader_epoch": lambda e: e["state"].pop("leader_epoch"),
    "omits alive": lambda e: e["state"].pop("alive"),
    "omits hw_checkpoint": lambda e: e["state"].pop("hw_checkpoint"),
    "omits log (delta+full)": lambda e: e["state"].pop("log"),
    "node empty string": lambda e: e.update(node=""),
    "node list": lambda e: e.update(node=[1]),
    "node -1": lambda e: e.update(node=-1),
    "node 1.5": lambda e: e.update(node=1.5),
    "node true": lambda e: e.update(node=True),
    "node not a broker": lambda e: e.update(node=7),
    "log_start moves": lambda e: e["state"].update(log_start=1),
    "hw negative": lambda e: e["state"].update(hw=-1),
    "hw a string": lambda e: e["state"].update(hw="0"),
    "leo a float": lambda e: e["state"].update(leo=1.0),
    "role unknown": lambda e: e["state"].update(role="boss"),
    "isr not a list": lambda e: e["state"].update(isr="0,1,2"),
    "isr unknown broker": lambda e: e["state"].update(isr=[0, 1, 9]),
    "isr duplicate": lambda e: e["state"].update(isr=[0, 1, 1]),
    "alive a string": lambda e: e["state"].update(alive="yes"),
    "log_append malformed": lambda e: e["state"].update(log_append=[["r0"]]),
    "count negative": lambda e: e["args"].update(count=-1),
    "apply by another node": lambda e: e["args"].update(follower=1 - e["node"] + 2),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_malformed_event_is_bad_input(edit: str) -> None:
    head, evs = _load("sim-kip320-leader-crash")
    k = _apply_k(evs)
    EDITS[edit](evs[k])
    v = _verdict(head, evs)
    assert v.verdict == BAD_INPUT, (edit, v.verdict, v.reason)
    assert f"event {k}" in v.reason


def test_producer_leader_must_be_its_node() -> None:
    head, evs = _load("sim-kip320-leader-crash")
    k = _find(evs, action="ProducerSend")
    evs[k]["args"]["leader"] = 1
    v = _verdict(head, evs)
    assert v.verdict == BAD_INPUT and "args.leader" in v.reason


def test_leader_omitting_remote_leo_and_controller_omitting_coord() -> None:
    head, evs = _load("sim-kip320-leader-crash")
    k = _find(evs, action="ProducerSend")
    evs[k]["state"].pop("remote_leo")
    assert _verdict(head, evs).verdict == BAD_INPUT
    head, evs = _load("sim-kip320-leader-crash")
    evs[k]["state"].pop("isr")
    assert _verdict(head, evs).verdict == BAD_INPUT
    head, evs = _load("sim-kip320-leader-crash")
    k = _find(evs, action="ControllerElectLeader")
    evs[k]["state"].pop("coord")
    assert _verdict(head, evs).verdict == BAD_INPUT


# ---- relaxations of VALIDATION.md ----------------------------------------------------------------
def test_decision1_record_ids_are_compared() -> None:
    """Decision 1 names records by sending order; their ids are still compared."""
    head, evs = _load("sim-kip320-leader-crash")
    k = _apply_k(evs)
    evs[k]["state"]["log_append"][0][0] = "other"
    evs[k]["state"]["log"][0][0] = "other"
    _rejected_at(head, evs, k)


def test_decision5_leader_isr_is_compared() -> None:
    """Decision 5 leaves a follower's ISR view uncompared, never a leader's."""
    head, evs = _load("sim-kip320-leader-crash")
    k = _find(evs, action="BrokerBecomeLeader")
    evs[k]["state"]["isr"] = [0, 1]
    _rejected_at(head, evs, k)


def test_decision7_mixed_acks_unsupported() -> None:
    head, evs = _load("sim-kip320-leader-crash")
    evs[_find(evs, action="ProducerSend")]["args"]["acks"] = "1"
    assert _verdict(head, evs).verdict == UNSUPPORTED


def test_decision9_offline_write_needs_a_lost_leader() -> None:
    """Decision 9: a leader -1 write is a stutter only when the spec's leader is lost."""
    head, evs = _load("sim-kip320-leader-crash")
    k = _find(evs, action="ControllerElectLeader") + 1
    off = copy.deepcopy(evs[k - 1])
    off["args"]["leader"] = -1
    off["state"]["coord"] = {"leader": -1, "leader_epoch": 1, "isr": [0, 1, 2], "version": 1}
    evs.insert(k, off)
    _rejected_at(head, evs, k)


def test_decision12_zombie_cannot_acknowledge() -> None:
    """Decision 12: a paused leader's own events are a live broker's steps; it may append at
    its old epoch, but its followers moved on, so it cannot acknowledge what it appends."""
    head, evs = _load("sim-pause-zombie")
    k = _find(evs, action="IsrUpdateConflict")
    last = next(e for e in reversed(evs[:k]) if e["action"] == "ProduceAcked")
    send = copy.deepcopy(next(e for e in reversed(evs[:k]) if e["action"] == "ProducerSend"))
    leo = last["state"]["leo"]
    send["args"].update(records=["z"], base_offset=leo)
    base = next(e for e in reversed(evs[:k]) if e["node"] == 0 and "hw" in (e.get("state") or {}))
    st = send["state"] = copy.deepcopy(base["state"])
    st.update(leo=leo + 1, hw=leo, log=last["state"]["log"] + [["z", 0]], log_append=[["z", 0]])
    ack = copy.deepcopy(last)
    ack["args"].update(records=["z"], base_offset=leo)
    ack["state"] = {**st, "hw": leo + 1}
    ack["state"].pop("log_append")
    evs[k:k] = [send, ack]
    _rejected_at(head, evs, k + 1)


def test_decision13_move_keeps_the_isr() -> None:
    """Decision 13: a move is the spec's ControllerMoveLeader, whose write keeps the ISR."""
    head, evs = _load("sim-kip320-leader-moves")
    k = _find(evs, action="ControllerMoveLeader")
    evs[k]["state"]["coord"]["isr"] = [1]
    _rejected_at(head, evs, k)


def test_hidden_restart_only_for_an_empty_replica() -> None:
    """A restart without an event is inserted only for a broker holding nothing on disk."""
    head, evs = _load("sim-kip320-leader-crash")
    k = _find(evs, action="BrokerRestart", replica=0)
    del evs[k]
    v = _verdict(head, evs)
    assert v.verdict == REJECTED and v.index is not None and v.index >= k - 1, v.reason


def test_restart_still_compares_its_log_and_hw() -> None:
    """A restart's leader, epoch, role and ISR are not compared; its HW is."""
    head, evs = _load("sim-kip320-leader-crash")
    k = _find(evs, action="BrokerRestart", replica=0)
    evs[k]["state"]["hw"] += 1
    _rejected_at(head, evs, k)
