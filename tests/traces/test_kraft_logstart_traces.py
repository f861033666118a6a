"""kraft's log start offset in traces (issue 28 item 3, R4, R12): the reference
implementation's runs with DeleteRecords, retention and a follower's reset validate against
the spec (``derive_config`` turns the trace's deletions into --retention / --delete-records);
a trace that deletes above the HW, moves the log start without saying how, or resets a
follower with its HW below the new log start is rejected naming the step; the conformance
kit's ``logstart:*`` scenarios accept the reference adapter and kill the mutants of KAFKA-5634
and KAFKA-9491; a non-kraft adapter answers the new commands unsupported."""

from __future__ import annotations

import copy
import random

import pytest
from isr.impl.adapter import Session
from isr.impl.mutants import KRAFT_MUTANTS
from isr.impl.sim.world import World, sim_config
from isr.traces.conformance.runner import InProcess, default_scenarios, run_scenario_full
from isr.traces.conformance.scenarios import NoAdapterCommand, logstart_scenarios, step_ops
from isr.traces.validator.mapping import derive_config
from isr.traces.validator.validate import validate_events

from bench.kraft_logstart_random import run

from .test_known_gaps import accepted

TP = ("t", 0)


def _reset_run() -> World:
    w = World(3, 1, 3, sim_config("kraft", min_insync_replicas=2), seed=1)
    w.run_until(100)
    for i in range(3):
        w.produce(TP, f"m{i}")
        w.run_until(w.now + 10)
    w.run_until(w.now + 300)
    w.crash(2)
    w.run_until(w.now + 900)
    for i in range(3, 8):
        w.produce(TP, f"m{i}")
        w.run_until(w.now + 10)
    w.run_until(w.now + 300)
    assert w.delete_records(TP, -1) == "NONE"
    w.delete_old_segments(1)
    w.restart(2)
    w.run_until(w.now + 1500)
    return w


# seeds with each of the three steps (measured: 100 seeds, all accepted)
@pytest.mark.parametrize("seed", [1, 4, 5, 12, 15])
def test_random_runs_with_deletes_are_accepted(seed: int) -> None:
    w = run(seed)  # bench/kraft_logstart_random.py's random run, deletes on
    names = {e["action"] for e in w.trace}
    assert {"BrokerDeleteOldSegment", "FollowerHandleOffsetOutOfRange"} <= names
    assert w.lost_acked() == []
    accepted(w)


def test_a_follower_reset_validates_and_derives_the_modes() -> None:
    w = _reset_run()
    head, evs = w.trace_header(), list(w.trace)
    cfg = derive_config(head, evs, 3)
    assert cfg.retention and cfg.delete_records == 1
    assert any(e["action"] == "FollowerHandleOffsetOutOfRange" for e in evs)
    accepted(w)


def _verdict(w: World, evs: list[dict]):
    return validate_events(w.trace_header(), evs)


def _lagging_run(mutant: str = "") -> World:
    """Record m0 committed, m1 and m2 not (a dead ISR member holds the HW at 1)."""
    kw = {"broker_cls": KRAFT_MUTANTS[mutant].broker_cls} if mutant else {}
    w = World(3, 1, 3, sim_config("kraft", min_insync_replicas=2), seed=1, **kw)
    w.run_until(100)
    w.produce(TP, "m0")
    w.run_until(w.now + 300)
    w.crash(2)
    w.produce(TP, "m1")
    w.produce(TP, "m2")
    w.run_until(w.now + 5)
    log = w.broker(w.leader_of(TP)).partitions[TP].log
    assert (log.hw, log.leo) == (1, 3)
    return w


def test_a_delete_above_the_hw_is_rejected() -> None:
    """A LeaderDeleteRecords past the leader's HW (the event's offset and state raised, as an
    implementation without Kafka's OFFSET_OUT_OF_RANGE check would log it)."""
    w = _lagging_run()
    assert w.delete_records(TP, 1) == "NONE"
    evs = copy.deepcopy(list(w.trace))
    k = next(i for i, e in enumerate(evs) if e["action"] == "LeaderDeleteRecords")
    ev = evs[k]
    assert "impl" not in ev  # a spec action (impl/core/trace.py)
    ev["args"]["offset"] = ev["state"]["hw"] + 1
    ev["state"]["log_start"] = ev["state"]["hw"] + 1
    ev["state"]["log"] = ev["state"]["log"][1:]
    v = _verdict(w, evs)
    assert v.verdict == "rejected" and v.event["clock"] == evs[k]["clock"]
    assert "LeaderDeleteRecords(0, 2) is not enabled" in v.mismatches


def test_a_segment_deleted_above_the_hw_is_rejected_naming_the_property() -> None:
    """The run of KAFKA-5634's bug (the mutant retention-beyond-hw): retention deletes the
    segments up to the log end, past the HW."""
    w = _lagging_run("retention-beyond-hw")
    w.delete_old_segments(w.leader_of(TP))
    ends = [e["args"]["offset"] for e in w.trace if e["action"] == "BrokerDeleteOldSegment"]
    assert ends == [2, 3]
    v = _verdict(w, list(w.trace))
    assert v.verdict == "rejected" and v.event["action"] == "BrokerDeleteOldSegment"
    assert any("LogStartAtMostHw" in x for x in v.mismatches), v.mismatches


def test_a_log_start_moved_without_a_deletion_is_rejected() -> None:
    w = _reset_run()
    evs = [e for e in copy.deepcopy(list(w.trace)) if e["action"] != "LeaderDeleteRecords"]
    v = _verdict(w, evs)
    assert v.verdict == "rejected"
    # the leader's first event after it: its log start 8 answered OFFSET_OUT_OF_RANGE, which
    # the spec's leader (log start 0) does not
    assert v.event["action"] == "LeaderHandleFetch" and v.event["args"]["log_start"] == 8


def test_a_reset_keeping_the_hw_below_the_log_start_is_rejected() -> None:
    w = _reset_run()
    evs = copy.deepcopy(list(w.trace))
    k = next(i for i, e in enumerate(evs) if e["action"] == "FollowerHandleOffsetOutOfRange")
    evs[k]["state"]["hw"] = 0
    v = _verdict(w, evs)
    assert v.verdict == "rejected" and v.event["action"] == "FollowerHandleOffsetOutOfRange"
    assert any("LogStartAtMostHw" in x for x in v.mismatches), v.mismatches


def test_kit_logstart_scenarios_accept_the_reference_and_kill_the_mutants() -> None:
    scs = logstart_scenarios()
    assert set(scs) <= set(default_scenarios("kraft")) and len(scs) == 5
    assert not set(scs) & set(default_scenarios("kip-320"))
    for name, sc in scs.items():
        v, _out = run_scenario_full(InProcess(Session(None)), sc, name, 0, "kraft")
        assert v.verdict == "accepted", (name, v.reason)
    killers = {
        "retention-beyond-hw": "logstart:retention-while-hw-lags",
        "hw-below-log-start-on-reset": "logstart:follower-reset-to-log-start",
    }
    for mu, name in killers.items():
        v, _out = run_scenario_full(InProcess(Session(mu)), scs[name], name, 0, "kraft")
        assert v.verdict == "rejected", (mu, v.reason)


def test_adapter_commands_and_their_spec_steps() -> None:
    s = Session(None)
    s.handle({"op": "start", "protocol": "kraft"})
    s.handle({"op": "produce", "count": 3})
    s.handle({"op": "run", "ms": 300})
    got = s.handle({"op": "delete_records", "offset": 100})
    assert got == {"ok": True, "results": {"t-0": "OFFSET_OUT_OF_RANGE"}}
    assert s.handle({"op": "delete_records", "offset": -1})["results"] == {"t-0": "NONE"}
    assert s.handle({"op": "retention", "broker": 1}) == {"ok": True}
    old = Session(None)
    old.handle({"op": "start", "protocol": "kip-320"})
    assert old.handle({"op": "delete_records", "offset": -1})["unsupported"] is True
    assert old.handle({"op": "retention", "broker": 0})["unsupported"] is True
    assert step_ops("LeaderDeleteRecords", {"leader": 0, "offset": 2}) == [
        {"op": "delete_records", "broker": 0, "offset": 2}
    ]
    got = step_ops("BrokerDeleteOldSegment", {"replica": 1}, kraft=True)
    assert got == [{"op": "retention", "broker": 1}]
    with pytest.raises(NoAdapterCommand):  # the ZooKeeper-era adapters have no retention
        step_ops("BrokerDeleteOldSegment", {"replica": 1})


def test_the_specs_derived_cache_is_the_implementations_after_deletes() -> None:
    """With ``epoch_cache=False`` the spec derives the cache from the retained records
    (spec/actions/fetch.py ``derived_cache``), as the implementation's PartitionLog.epochs:
    compared on random logs and log starts, with the leader's current epoch appended as both
    do (impl/core/truncation.py ``_end_offset_for``)."""
    from isr.impl.core.log import PartitionLog
    from isr.spec.actions.fetch import derived_cache

    rng = random.Random(7)
    for _ in range(500):
        epochs = sorted(rng.choices(range(1, 5), k=rng.randint(0, 8)))
        start = rng.randint(0, len(epochs))
        log = PartitionLog([(e, f"r{i}", "") for i, e in enumerate(epochs)])
        log.delete_before(start)
        spec_log = tuple((i + 1, e) for i, e in enumerate(epochs))  # (record, epoch) entries
        current = rng.choice([None, 4, 5])
        mine = log.epochs()
        if current is not None and (not mine or mine[-1][0] < current):
            mine.append((current, log.leo))
        assert derived_cache(spec_log, start, current) == mine, (epochs, start, current)


def test_at_rest_checks_read_each_replica_from_its_log_start() -> None:
    """Grey-box at rest (R12): Kafka's segment files keep records below the log start (a
    segment goes once wholly below it) while the epoch checkpoint is truncated from the start,
    and a follower's files may start later than the leader's: neither is a violation from the
    log start on; a differing record above it still is."""
    from isr.traces.validator.at_rest import check_at_rest

    def rest(b: int, log: list, ckpt: list, start: int) -> dict:
        return {"kind": "at_rest", "broker": b, "partition": 0, "log": log,
                "log_end": log[-1][0] + 1 if log else 0, "leader_epoch_checkpoint": ckpt,
                "hw_checkpoint": 3, "log_start": start}  # fmt: skip

    isr = {"kind": "metadata", "record": "PartitionChange", "partition": 0, "isr": [0, 1]}
    hw = {"kind": "observe", "partition": 0, "hw": 3}
    lead = [[0, 0, "a"], [1, 0, "b"], [2, 1, "c"]]
    follower = [[2, 1, "c"]]  # reset to the leader's log start 2
    ok = check_at_rest([isr, hw, rest(0, lead, [[1, 2]], 2), rest(1, follower, [[1, 2]], 2)])
    assert ok.ok, ok.violations
    bad = check_at_rest([isr, hw, rest(0, lead, [[1, 2]], 0), rest(1, follower, [[1, 2]], 0)])
    assert bad.violations and bad.violations[0].startswith("EpochCheckpointMatchesLog")
    other = [[2, 1, "X"]]
    bad = check_at_rest([isr, hw, rest(0, lead, [[1, 2]], 2), rest(1, other, [[1, 2]], 2)])
    assert bad.violations == [
        "AgreeBelowHw: partition 0 offset 2 (HW 3) differs across the ISR: {0: 'c', 1: 'X'}"
    ]


def test_a_log_start_story_replays_on_the_reference_and_kills_its_mutant(tmp_path) -> None:
    """The checker's counterexample of kraft without KAFKA-5634 (examples/protocols/
    kraft_retention_beyond_hw.py: retention deletes the leader's record before it is
    committed, DeletedOnlyCommitted) as an adapter schedule (``retention``, by ``step_ops``):
    the reference accepts it, the mutant that brings the bug back is rejected."""
    import sys

    from isr.cli.main import main

    cx = tmp_path / "cx.ndjson"
    code = main(
        ["check", "--protocol-file", "examples/protocols/kraft_retention_beyond_hw.py",
         "--replicas", "2", "--records", "1", "--epochs", "2", "--crashes", "0",
         "--retention", "--invariant", "DeletedOnlyCommitted", "--quiet", "--workers", "1",
         "--trace-out", str(cx)]
    )  # fmt: skip
    assert code == 1 and "BrokerDeleteOldSegment" in cx.read_text()
    base = ["conform", "--protocol", "kraft", "--from-counterexample", str(cx)]
    assert main(base) == 0
    mutant = f"{sys.executable} -m isr.impl.adapter --mutant retention-beyond-hw"
    assert main([*base, "--adapter", mutant]) == 1
