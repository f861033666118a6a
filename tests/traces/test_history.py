"""The client-history checker (traces/history.py, issue 24 item 5): one hand-written history
per anomaly class with its exact count, a clean one, bad input, the CLI, property tests
(a correct history is valid; one mutation is flagged with its class) and the reference
implementation's adapter history (R5, R6, R17)."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from isr.cli.main import main
from isr.traces.history import CLASSES, HistoryError, check, loads, parse


# ---- builders -----------------------------------------------------------------------------
class H:
    """A history under construction: ``send``/``poll`` append an invoke and its completion."""

    def __init__(self, **header: Any) -> None:
        self.header = {"format": "isr-history", "version": 1, **header}
        self.ops: list[dict[str, Any]] = []

    def _op(self, **kw: Any) -> None:
        self.ops.append({"time": len(self.ops) * 0.01, **kw})

    def send(self, value: Any, offset: int | None = None, p: int = 0, ty: str = "ok", **kw: Any):
        self._op(process="w", type="invoke", f="send", partition=p, value=value, **kw)
        done: dict[str, Any] = {"process": "w", "type": ty, "f": "send", "partition": p}
        done["value"] = value
        if ty == "ok":
            done["offset"] = offset
        elif ty in ("fail", "info"):
            done["error"] = "NOT_ENOUGH_REPLICAS" if ty == "fail" else "timeout"
        if ty != "open":
            self._op(**done, **kw)
        return self

    def poll(self, records: list[list[Any]], p: int = 0, proc: Any = "r", **kw: Any):
        self._op(process=proc, type="invoke", f="poll", partition=p)
        self._op(process=proc, type="ok", f="poll", partition=p, records=records, **kw)
        return self

    def check(self):
        return check(parse(self.header, self.ops, "t"))


def only(res, **counts: int) -> None:
    """Exactly these anomaly counts, every other class zero."""
    want = {k: 0 for k in CLASSES} | counts
    assert {k: a.count for k, a in res.anomalies.items()} == want


# ---- hand-written histories ---------------------------------------------------------------
def test_clean_history_is_valid() -> None:
    h = H(acks="all", idempotent=True, monotonic_reads=True)
    h.send("a", 0).send("b", 1).send("c", 0, p=1).send("d", ty="fail").send("e", ty="info")
    h.poll([[0, "a"], [1, "b"]], from_offset=0, hw=2).poll([[0, "c"]], p=1, hw=1)
    h.poll([[1, "b"]], from_offset=1, hw=2)
    r = h.check()
    only(r)
    assert r.valid and r.violations == {}
    s = r.stats
    assert (s["sends_invoked"], s["sends_ok"], s["sends_fail"], s["sends_info"]) == (5, 3, 1, 1)
    assert (s["acks_all_ok"], s["records_read"], s["distinct_values_read"]) == (3, 4, 3)
    assert s["highest_offset"] == {0: 1, 1: 0}
    assert (s["info_read"], s["info_unread"]) == (0, 1)
    assert "VALID" in r.summary() and "no anomaly" in r.summary()


def test_lost_write() -> None:
    # b acknowledged at 1; a later poll read past it (offset 2) without b at 1
    r = H().send("a", 0).send("b", 1).send("c", 2).poll([[0, "a"], [2, "c"]], from_offset=0).check()
    only(r, lost=1)  # not a gap: nobody read offset 1
    ex = r.anomalies["lost"].examples[0]
    assert (ex["value"], ex["offset"], ex["op"], ex["highest_read_after"]) == ("b", 1, 3, 2)
    assert r.violations == {"lost": 1} and not r.valid


def test_lost_write_replaced_by_another_record() -> None:
    r = H().send("a", 0).send("b", 1).send("x", 1).poll([[0, "a"], [1, "x"]]).check()
    only(r, lost=1)
    assert r.anomalies["lost"].examples[0]["read_instead"] == ["x"]


def test_not_lost_when_no_later_poll_reached_it() -> None:
    # the poll began before the ack; a poll from offset 2 does not cover offset 1
    h = H()
    h._op(process="r", type="invoke", f="poll", partition=0)
    h.send("a", 0).send("b", 1).send("c", 2)
    h._op(process="r", type="ok", f="poll", partition=0, records=[[0, "a"], [2, "c"]])
    h.poll([[2, "c"]], from_offset=2)
    r = h.check()
    assert r.anomalies["lost"].count == 0 and r.stats["acked_unseen"] == 1
    # the first poll's jump over offset 1 is no gap either: nobody read offset 1
    only(r)


def test_acks1_loss_is_reported_not_a_violation() -> None:
    h = H(acks="1").send("a", 0).send("b", 1).send("c", 1, acks="all")
    r = h.poll([[0, "a"], [1, "c"]]).check()
    only(r, acks1_lost=1)
    assert r.valid and r.stats["acks1_ok"] == 2 and r.stats["acks_all_ok"] == 1


def test_loss_after_a_power_failure_is_reported_not_a_violation() -> None:
    """R14: a write acknowledged before a power failure (header fault ``power B``) may be in
    the unflushed tail it took: ``lost_power``, reported; a loss with the power failure before
    the ack, or with only a kill, stays ``lost``."""

    def lost(faults: list[dict[str, Any]]):
        h = H(faults=faults).send("a", 0).send("b", 1).send("c", 2)  # b acked at t=0.03
        return h.poll([[0, "a"], [2, "c"]], from_offset=0).check()

    r = lost([{"time": 0.05, "event": "power 1"}])
    only(r, lost_power=1)
    assert r.valid and r.anomalies["lost_power"].examples[0]["value"] == "b"
    assert r.lost_ops["lost_power"] == [3]
    only(lost([{"time": 0.02, "event": "power 1"}]), lost=1)  # before the ack
    only(lost([{"time": 0.05, "event": "kill 1"}]), lost=1)  # a process crash keeps the tail
    only(lost([]), lost=1)


def test_duplicates_violate_only_when_idempotent() -> None:
    def run(idem: bool):
        h = H(idempotent=idem).send("a", 0).send("b", 1)
        return h.poll([[0, "a"], [1, "b"], [2, "a"]], hw=3).check()

    r = run(False)
    only(r, duplicates=1)
    assert r.valid
    assert r.anomalies["duplicates"].examples[0]["at"] == [[0, 0], [0, 2]]
    r = run(True)
    only(r, duplicates=1)
    assert r.violations == {"duplicates": 1}


def test_inconsistent_offsets() -> None:
    h = H().send("a", 0).send("b", 1, ty="info").send("c", 1, ty="info")
    r = h.poll([[0, "a"], [1, "b"]]).poll([[0, "a"], [1, "c"]], proc="r2").check()
    only(r, inconsistent_offsets=1)
    ex = r.anomalies["inconsistent_offsets"].examples[0]
    assert (ex["offset"], ex["values"]) == (1, ["b", "c"])
    assert (r.stats["info_read"], r.stats["info_unread"]) == (2, 0)


def test_phantom_and_aborted_reads() -> None:
    h = H().send("a", 0).send("f", ty="fail")
    r = h.poll([[0, "a"], [1, "zz"], [2, "f"]]).check()
    only(r, phantom_reads=1, aborted_reads=1)
    assert r.anomalies["phantom_reads"].examples[0]["value"] == "zz"
    assert r.anomalies["aborted_reads"].examples[0]["offset"] == 2
    # a record retried after a definite failure and then acknowledged is no aborted read
    h = H().send("f", ty="fail").send("f", 0)
    only(h.poll([[0, "f"]]).check())


def test_read_above_reported_hw() -> None:
    r = H().send("a", 0).send("b", 1).poll([[0, "a"], [1, "b"]], hw=1).check()
    only(r, above_hw_reads=1)
    assert r.anomalies["above_hw_reads"].examples[0]["offsets"] == [1]


def test_reorder_and_gap_inside_one_poll() -> None:
    h = H().send("a", 0).send("b", 1).send("c", 2)
    r = h.poll([[0, "a"], [2, "c"], [1, "b"]], from_offset=0).check()
    only(r, reorders=1)  # offset 1 comes later in the same poll: no gap
    r = H().send("a", 0).send("b", 1).poll([[0, "a"], [1, "b"], [1, "b"]], from_offset=0).check()
    only(r, reorders=1)  # an offset returned twice is not strictly increasing
    r = H().send("a", 0).send("b", 1).poll([[0, "a"], [1, "b"]], from_offset=1).check()
    only(r, reorders=1)  # a record below the poll's from_offset
    h = H().send("a", 0).send("b", 1).send("c", 2)
    r = h.poll([[0, "a"], [2, "c"]]).poll([[1, "b"]], proc="r2", from_offset=1).check()
    only(r, gaps=1)
    ex = r.anomalies["gaps"].examples[0]
    assert (ex["from"], ex["to"], ex["skipped_read_elsewhere"]) == (1, 2, [1])
    # a poll whose first record is past its from_offset skips what another poll read
    h = H().send("a", 0).send("b", 1)
    r = h.poll([[0, "a"], [1, "b"]]).poll([[1, "b"]], proc="r2", from_offset=0).check()
    only(r, gaps=1)


def test_non_monotonic_reads() -> None:
    def run(mono: bool):
        h = H(monotonic_reads=mono).send("a", 0).send("b", 1)
        h.poll([[0, "a"], [1, "b"]], from_offset=0).poll([[0, "a"]], from_offset=0)
        return h.check()

    r = run(False)
    only(r, non_monotonic=1)
    ex = r.anomalies["non_monotonic"].examples[0]
    assert (ex["kind"], ex["highest"], ex["earlier_highest"]) == ("shrunk", 0, 1)
    assert r.valid
    assert run(True).violations == {"non_monotonic": 1}
    # another process reading less from the same start is not flagged
    h = H(monotonic_reads=True).send("a", 0).send("b", 1)
    only(
        h.poll([[0, "a"], [1, "b"]], from_offset=0).poll([[0, "a"]], proc=2, from_offset=0).check()
    )
    # one process seeing another record at an offset it read before: changed (and inconsistent)
    h = H().send("a", 0, ty="info").send("b", 0, ty="info")
    r = h.poll([[0, "a"]]).poll([[0, "b"]]).check()
    only(r, non_monotonic=1, inconsistent_offsets=1)
    assert r.anomalies["non_monotonic"].examples[0]["kind"] == "changed"


def test_indeterminate_sends_counted_apart() -> None:
    h = H().send("a", ty="info").send("b", ty="info").send("c", ty="open")
    r = h.poll([[0, "a"], [1, "c"]]).check()
    only(r)
    s = r.stats
    assert (s["sends_info"], s["info_read"], s["info_unread"]) == (3, 2, 1)


def test_ids_compared_as_text_and_examples_capped() -> None:
    h = H()
    for k in range(8):
        h.send(k, k)
    r = h.poll([[k, str(k)] for k in range(8)] + [[9, 0]], hw=10).check()
    only(r, duplicates=1)
    h = H()
    for k in range(8):
        h.send(k, k)
    r = h.poll([[9, "x"]], from_offset=0).check()
    only(r, lost=8, phantom_reads=1)
    assert len(r.anomalies["lost"].examples) == 5


# ---- reading ------------------------------------------------------------------------------
def test_formats_ndjson_list_and_document() -> None:
    h = H(idempotent=True).send("a", 0).poll([[0, "a"]])
    nd = "\n".join(json.dumps(x) for x in [h.header, *h.ops])
    for text in (nd, json.dumps(h.ops), json.dumps({**h.header, "ops": h.ops}, indent=2)):
        r = check(loads(text, "x"))
        assert r.valid and r.stats["records_read"] == 1
    assert check(loads(nd)).idempotent and not check(loads(json.dumps(h.ops))).idempotent


@pytest.mark.parametrize(
    ("ops", "msg"),
    [
        ([{"process": 1, "type": "ok", "f": "poll", "partition": 0, "time": 0, "records": []}],
         "ok without an open invoke"),
        ([{"process": 1, "type": "invoke", "f": "send", "partition": 0, "time": 0, "value": "a"},
          {"process": 1, "type": "ok", "f": "send", "partition": 0, "time": 0, "value": "a"}],
         "offset: an ok send carries its offset"),
        ([{"process": 1, "type": "invoke", "f": "send", "partition": 0, "time": 0}],
         "value: a send names"),
        ([{"process": 1, "type": "invoke", "f": "poll", "partition": 0, "time": 0},
          {"process": 1, "type": "ok", "f": "poll", "partition": 0, "time": 0}],
         "records: an ok poll carries"),
        ([{"process": 1, "type": "done", "f": "poll", "partition": 0, "time": 0}], "type:"),
        ([{"process": 1, "type": "invoke", "f": "poll", "partition": 0}], "time: missing"),
        ([{"process": 1, "type": "invoke", "f": "poll", "partition": 0, "time": 0},
          {"process": 1, "type": "ok", "f": "poll", "partition": 0, "time": 0,
           "records": [[0]]}], "records[0]"),
    ],
)  # fmt: skip
def test_bad_input_names_the_op(ops: list[dict[str, Any]], msg: str) -> None:
    with pytest.raises(HistoryError, match=msg.replace("[", r"\[").replace("]", r"\]")) as e:
        parse({}, ops, "h")
    assert "ops[" in str(e.value)


def test_bad_header_and_json() -> None:
    with pytest.raises(HistoryError, match="header: acks"):
        parse({"acks": "0"}, [], "h")
    with pytest.raises(HistoryError, match="h:2: not JSON"):
        loads('{"format": "isr-history"}\n{"process":', "h")


# ---- CLI ----------------------------------------------------------------------------------
def test_cli_exit_codes_json_and_junit(tmp_path, capsys) -> None:
    good, bad, broken = tmp_path / "g.ndjson", tmp_path / "b.json", tmp_path / "x.ndjson"
    h = H().send("a", 0).poll([[0, "a"]])
    good.write_text("\n".join(json.dumps(x) for x in [h.header, *h.ops]) + "\n")
    h = H().send("a", 0).send("b", 1).poll([[1, "b"]], from_offset=0)
    bad.write_text(json.dumps(h.ops))
    broken.write_text('{"process": 1, "type": "ok"}\n')
    assert main(["history", str(good)]) == 0
    assert "VALID" in capsys.readouterr().out
    junit = tmp_path / "j.xml"
    assert main(["history", str(bad), "--format", "json", "--junit", str(junit)]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["violations"] == {"lost": 1} and doc["anomalies"]["lost"]["count"] == 1
    xml = junit.read_text()
    assert f'tests="{len(CLASSES)}" failures="1"' in xml and "lost: 1; first:" in xml
    assert main(["history", str(broken)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "isr: error:" in err and "Traceback" not in err
    assert main(["history", str(tmp_path / "none")]) == 2


# ---- property tests -----------------------------------------------------------------------
@st.composite
def correct_history(draw) -> tuple[dict[str, Any], list[dict[str, Any]], dict[int, list[str]]]:
    """A history of a correct log: each partition's log only grows, sends are acknowledged
    (acks=all) once the HW passed their offset, definite failures append nothing, polls by
    each consumer (a fixed max records) read below a HW that only rises."""
    nparts = draw(st.integers(1, 2))
    logs: dict[int, list[str]] = {p: [] for p in range(nparts)}
    hw = dict.fromkeys(range(nparts), 0)
    ops: list[dict[str, Any]] = []
    pending: list[tuple[int, str, int, str]] = []
    cap = {"c0": 3, "c1": 100}
    t = [0.0]

    def op(**kw: Any) -> None:
        t[0] += 0.001
        ops.append({"time": round(t[0], 3), **kw})

    for vid in range(draw(st.integers(4, 60))):
        kind = draw(st.sampled_from(["send", "send", "complete", "hw", "poll", "poll"]))
        p = draw(st.integers(0, nparts - 1))
        if kind == "send":
            v = f"v{vid}"
            fate = draw(st.sampled_from(["ok", "ok", "ok", "fail", "info+", "info-", "open"]))
            op(process="w", type="invoke", f="send", partition=p, value=v)
            off = -1
            if fate in ("ok", "info+", "open"):
                logs[p].append(v)
                off = len(logs[p]) - 1
            pending.append((p, v, off, fate))
        elif kind == "complete" and pending:
            k = draw(st.integers(0, len(pending) - 1))
            q, v, off, fate = pending[k]
            if fate == "open" or (fate == "ok" and hw[q] <= off):
                continue
            pending.pop(k)
            if fate == "ok":
                op(process="w", type="ok", f="send", partition=q, value=v, offset=off)
            else:
                ty = "fail" if fate == "fail" else "info"
                op(process="w", type=ty, f="send", partition=q, value=v, error="e")
        elif kind == "hw":
            hw[p] = draw(st.integers(hw[p], len(logs[p])))
        else:
            c = draw(st.sampled_from(sorted(cap)))
            start = draw(st.integers(0, hw[p]))
            end = min(hw[p], start + cap[c])
            recs = [[o, logs[p][o]] for o in range(start, end)]
            extra = {"from_offset": start} if start or draw(st.booleans()) else {}
            op(process=c, type="invoke", f="poll", partition=p)
            op(process=c, type="ok", f="poll", partition=p, records=recs, hw=hw[p], **extra)
    header = {
        "format": "isr-history",
        "version": 1,
        "idempotent": draw(st.booleans()),
        "monotonic_reads": draw(st.booleans()),
    }
    return header, ops, logs


SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))


@SETTINGS
@given(correct_history())
def test_correct_history_is_valid(h) -> None:
    header, ops, _logs = h
    r = check(parse(header, ops))
    only(r)
    assert r.valid


def _polls(ops: list[dict[str, Any]]) -> list[int]:
    return [i for i, o in enumerate(ops) if o["f"] == "poll" and o["type"] == "ok"]


@SETTINGS
@given(correct_history(), st.randoms(use_true_random=False))
def test_dropping_an_acked_record_from_every_read_is_a_lost_write(h, rnd: random.Random) -> None:
    header, ops, _logs = h
    # acked records that a poll invoked after the ack read past (from at or below its offset
    # to a higher one, which is still read once the record is gone)
    cands = []
    for i, o in enumerate(ops):
        if o["f"] != "send" or o["type"] != "ok":
            continue
        for j in _polls(ops):
            q = ops[j]
            offs = [r[0] for r in q["records"]]
            if (
                j - 1 > i
                and q["partition"] == o["partition"]
                and offs
                and q.get("from_offset", 0) <= o["offset"] < max(offs)
            ):
                cands.append(o)
                break
    assume(cands)
    victim = rnd.choice(cands)
    key = (victim["partition"], victim["offset"])
    for j in _polls(ops):
        q = ops[j]
        q["records"] = [r for r in q["records"] if (q["partition"], r[0]) != key]
    r = check(parse(header, ops))
    only(r, lost=1)
    assert r.anomalies["lost"].examples[0]["value"] == victim["value"]
    assert r.violations == {"lost": 1}


@SETTINGS
@given(correct_history(), st.randoms(use_true_random=False))
def test_swapping_two_records_in_a_poll_is_a_reorder(h, rnd: random.Random) -> None:
    header, ops, _logs = h
    cands = [j for j in _polls(ops) if len(ops[j]["records"]) >= 2]
    assume(cands)
    q = ops[rnd.choice(cands)]
    k = rnd.randrange(len(q["records"]) - 1)
    recs = q["records"]
    recs[k], recs[k + 1] = recs[k + 1], recs[k]
    r = check(parse(header, ops))
    only(r, reorders=1)
    assert r.violations == {"reorders": 1}


@SETTINGS
@given(correct_history(), st.randoms(use_true_random=False))
def test_changing_one_read_value_is_an_inconsistent_offset(h, rnd: random.Random) -> None:
    header, ops, logs = h
    seen: dict[tuple[int, int], int] = {}
    for j in _polls(ops):
        for r in ops[j]["records"]:
            key = (ops[j]["partition"], r[0])
            seen[key] = seen.get(key, 0) + 1
    cands = [
        (j, k)
        for j in _polls(ops)
        for k, r in enumerate(ops[j]["records"])
        if seen[(ops[j]["partition"], r[0])] > 1 and len(logs[ops[j]["partition"]]) > 1
    ]
    assume(cands)
    j, k = rnd.choice(cands)
    p, rec = ops[j]["partition"], ops[j]["records"][k]
    other = rnd.choice([v for v in logs[p] if v != rec[1]])
    rec[1] = other
    r = check(parse(header, ops))
    assert r.anomalies["inconsistent_offsets"].count == 1
    ex = r.anomalies["inconsistent_offsets"].examples[0]
    assert (ex["partition"], ex["offset"]) == (p, rec[0]) and other in ex["values"]
    assert "inconsistent_offsets" in r.violations
    for cls in ("phantom_reads", "aborted_reads", "reorders", "gaps", "above_hw_reads"):
        assert r.anomalies[cls].count == 0


@SETTINGS
@given(correct_history(), st.randoms(use_true_random=False))
def test_reading_a_never_sent_value_is_a_phantom_read(h, rnd: random.Random) -> None:
    header, ops, _logs = h
    cands = [(j, k) for j in _polls(ops) for k in range(len(ops[j]["records"]))]
    assume(cands)
    j, k = rnd.choice(cands)
    ops[j]["records"][k][1] = "never-sent"
    r = check(parse(header, ops))
    assert r.anomalies["phantom_reads"].count == 1
    assert r.anomalies["phantom_reads"].examples[0]["value"] == "never-sent"
    assert "phantom_reads" in r.violations
    for cls in ("aborted_reads", "reorders", "gaps", "above_hw_reads", "duplicates"):
        assert r.anomalies[cls].count == 0


# ---- the reference implementation ---------------------------------------------------------
def test_reference_adapter_history_is_valid() -> None:
    from isr.impl.adapter import Session

    s = Session(None)
    assert s.handle({"op": "start", "brokers": 3, "partitions": 2, "seed": 3})["ok"]
    for c in [
        {"op": "produce", "count": 6},
        {"op": "consume"},
        {"op": "crash", "broker": 0},
        {"op": "produce", "count": 4},
        {"op": "run", "ms": 1000},
        {"op": "restart", "broker": 0},
        {"op": "run", "ms": 1000},
        {"op": "produce", "count": 2},
        {"op": "run", "ms": 500},
        {"op": "consume"},
        {"op": "consume"},
    ]:
        assert s.handle(c)["ok"], c
    ans = s.handle({"op": "history"})
    assert ans["ok"] and ans["header"]["format"] == "isr-history"
    r = check(parse(ans["header"], ans["ops"], "ref"))
    assert r.valid, r.summary()
    assert r.stats["sends_invoked"] == 12
    assert r.stats["sends_ok"] + r.stats["sends_fail"] + r.stats["sends_info"] == 12
    assert r.stats["sends_ok"] >= 10 and r.stats["polls_ok"] >= 4
    assert r.anomalies["lost"].count == 0
    # every acknowledged record was read at its offset (the last polls reach the end)
    assert r.stats["acked_unseen"] == 0
    assert r.stats["distinct_values_read"] >= r.stats["sends_ok"]


# ---- isr chaos ----------------------------------------------------------------------------
class _FakeClient:
    """A cluster client over one in-memory log (partition 0): the 4th send is refused before
    the append (a definite failure); ``drop`` offsets vanish from what polls return (a lost
    record shifts the ones after it, as a truncated and rewritten log would)."""

    def __init__(self, drop: int | None = None) -> None:
        self.log: list[str] = []
        self.drop = drop
        self.sends = 0

    async def refresh(self) -> None:
        pass

    async def produce(self, tp, recs, acks=-1, retries=30, backoff_s=0.25):
        from isr.impl.cluster.client import ProduceResult

        self.sends += 1
        if self.sends == 4:
            return ProduceResult("NOT_ENOUGH_REPLICAS", -1, 1, 0.0, False)
        base = len(self.log)
        self.log.extend(rid for rid, _v in recs)
        return ProduceResult("NONE", base, 1, 0.0)

    async def consume(self, tp, offset, max_records=500):
        from isr.impl.core import messages as m

        log = [v for k, v in enumerate(self.log) if k != self.drop]
        entries = tuple((0, v, "x") for v in log[offset : offset + 2])
        return m.ConsumeResponse(0, 1, tp[0], tp[1], m.NONE, len(log), offset, entries)


def _chaos_history(drop: int | None):
    import asyncio

    from isr.impl.cluster.workload import Ledger, consume_recorded, history_doc, produce_stream

    client, ledger, tps = _FakeClient(drop), Ledger(), [("t", 0)]

    async def go():
        await produce_stream(client, tps, ledger, asyncio.Event(), prefix="p0", limit=7)
        return await consume_recorded(client, tps, ledger, idle_rounds=1)

    asyncio.run(go())
    doc = history_doc(ledger, idempotent=True)
    return doc, check(parse({k: v for k, v in doc.items() if k != "ops"}, doc["ops"]))


def test_chaos_workload_records_a_valid_history() -> None:
    _doc, r = _chaos_history(None)
    only(r)
    s = r.stats
    assert (s["sends_invoked"], s["sends_ok"], s["sends_fail"], s["records_read"]) == (7, 6, 1, 6)
    assert s["acked_unseen"] == 0 and s["polls_ok"] == 4  # 3 polls of 2 records, 1 empty


def test_chaos_workload_history_flags_a_lost_record(tmp_path, monkeypatch, capsys) -> None:
    doc, r = _chaos_history(2)
    # p0-3 was refused (fail); offsets 2, 3, 4 then hold the next record: p0-2 never read,
    # p0-4 and p0-5 read one offset early (p0-6, acknowledged at 5 while 4 is the highest
    # offset read, is unseen, not lost)
    only(r, lost=3)
    assert [x["value"] for x in r.anomalies["lost"].examples] == ["p0-2", "p0-4", "p0-5"]
    assert r.stats["acked_unseen"] == 1
    # isr chaos: the history is checked, written with --history, and fails the run (exit 1)
    import isr.cli.chaos as chaos_mod
    import isr.impl.cluster.workload as workload

    class Cluster:
        running = True

    async def chaos(*_a, **_k):
        return {
            "acknowledged": 6, "consumed": 5, "lost": 0, "lost_ids": [], "duplicated": 0,
            "failed": 1, "history": json.loads(json.dumps(doc)),
        }  # fmt: skip

    monkeypatch.setattr(chaos_mod, "open_cluster", lambda _p: Cluster())
    monkeypatch.setattr(workload, "chaos", chaos)
    out = tmp_path / "h.ndjson"
    assert main(["chaos", "--duration", "1", "--history", str(out)]) == 1
    text = capsys.readouterr().out
    assert "lost: 3 (VIOLATION)" in text and f"isr history {out}" in text
    assert main(["history", str(out)]) == 1
    capsys.readouterr()
    assert main(["chaos", "--duration", "1", "--json"]) == 1
    rep = json.loads(capsys.readouterr().out)
    assert rep["history_check"]["violations"] == {"lost": 3} and "history" not in rep


# ---- isr conform --------------------------------------------------------------------------
SCENARIO = [
    {"op": "start", "brokers": 3, "partitions": 1, "seed": 0},
    {"op": "produce", "count": 4},
    {"op": "run", "ms": 300},
    {"op": "consume"},
    {"op": "produce", "count": 2},
    {"op": "run", "ms": 300},
    {"op": "consume"},
]


def _session(tamper=None, history: bool | str = True):
    from isr.impl.adapter import Session

    class S(Session):
        def op_history(self, c):
            if history == "refused":
                return {"ok": False, "error": "unknown op 'history'"}
            if not history:
                return {"ok": False, "unsupported": True, "error": "no history"}
            ans = super().op_history(c)
            if tamper is not None:
                tamper(ans)
            return ans

    return S(None)


def _drop_first_read(ans) -> None:
    """Every poll forgets the record at offset 1 (acknowledged, then read past)."""
    for o in ans["ops"]:
        if o["f"] == "poll" and o["type"] == "ok":
            o["records"] = [r for r in o["records"] if r[0] != 1]


def test_conform_checks_each_scenarios_history(tmp_path) -> None:
    from isr.traces.conformance.report import HISTORY, classify, junit_xml, to_json, write_failures
    from isr.traces.conformance.runner import (
        ACCEPTED,
        REJECTED,
        ConformReport,
        InProcess,
        history_json,
        run_scenario_full,
    )

    v, out = run_scenario_full(InProcess(_session()), SCENARIO, "clean")
    assert v.verdict == ACCEPTED and out.history is not None and out.history.valid
    assert out.history.stats["sends_ok"] == 6 and out.history.stats["records_read"] == 6

    v, out = run_scenario_full(InProcess(_session(_drop_first_read)), SCENARIO, "lossy")
    assert v.verdict == REJECTED and v.reason == "client history: lost 1"
    c = classify(v)
    assert c["kind"] == HISTORY and "R17" in c["requirements"]
    assert out.history is not None and out.history.violations == {"lost": 1}

    rep = ConformReport(results=[("lossy", SCENARIO, v)])
    rep.histories["lossy"] = history_json(out.history)
    doc = to_json(rep, "kip-320")
    row = doc["scenarios"][0]
    assert row["failure"]["kind"] == "history" and row["history"]["violations"] == {"lost": 1}
    assert row["history"]["examples"]["lost"][0]["offset"] == 1
    assert doc["histories"] == {"checked": 1, "invalid": 1, "counts": row["history"]["counts"]}
    xml = junit_xml(rep)
    assert 'failure type="history"' in xml and "<system-out>history: INVALID" in xml
    # --out: the failing scenario's history, re-checkable on its own
    rep.outcomes["lossy"] = out
    rows = write_failures(rep, tmp_path)
    assert rows[0]["recheck_history"] == f"isr history {tmp_path / 'lossy.history.ndjson'}"
    assert main(["history", rows[0]["history"]]) == 1


def test_conform_without_history_or_with_a_broken_one() -> None:
    from isr.traces.conformance.runner import ACCEPTED, BAD_INPUT, InProcess, run_scenario_full

    for how in (False, "refused"):
        v, out = run_scenario_full(InProcess(_session(history=how)), SCENARIO, "none")
        assert v.verdict == ACCEPTED and out.history is None  # optional: no coverage gap either
        assert not out.unsupported

    def no_offset(ans) -> None:
        next(o for o in ans["ops"] if o["type"] == "ok" and o["f"] == "send").pop("offset")

    v, _out = run_scenario_full(InProcess(_session(no_offset)), SCENARIO, "broken")
    assert v.verdict == BAD_INPUT and "offset: an ok send carries its offset" in v.reason


def test_reference_histories_are_valid_in_every_scenario(capsys) -> None:
    """`isr conform` on the reference adapter (a process): every scenario's history is
    checked and valid, and the text report says so."""
    assert main(["conform", "--random", "0"]) == 0
    lines = capsys.readouterr().out.splitlines()
    scenarios = [x for x in lines if x.startswith("accepted ")]
    total = next(x for x in lines if x.startswith("client histories:"))
    assert total.startswith(f"client histories: {len(scenarios)} checked, 0 invalid")
    assert not re.search(r"[;,] lost ", total)  # acks1_lost may be there (allowed)


def test_files_name_their_lines(tmp_path) -> None:
    from isr.traces.history import load

    h = H().send("a", 0).poll([[0, "a"]])
    one = tmp_path / "one.json"  # a document on one line
    one.write_text(json.dumps({**h.header, "ops": h.ops}) + "\n")
    r = check(load(one))
    assert r.valid and r.stats["records_read"] == 1 and r.stats["sends_ok"] == 1
    nd = tmp_path / "h.ndjson"  # blank lines do not shift the line numbers of errors
    bad = dict(h.ops[1])
    bad.pop("offset")
    nd.write_text("\n".join([json.dumps(h.header), "", json.dumps(h.ops[0]), json.dumps(bad)]))
    with pytest.raises(HistoryError, match=r"h\.ndjson:4: offset"):
        load(nd)


@pytest.mark.parametrize(("mutant", "lost"), [(None, 0), ("deposed-leader-acks", 2)])
def test_history_alone_finds_a_real_lost_write(mutant, lost) -> None:
    """The history of a real (simulated) implementation, not a hand-made one: a deposed leader
    that acknowledges its waiting acks=all writes (impl/mutants.py) loses two of them after the
    zombie-leader scenario; the reference loses none."""
    from isr.impl.adapter import Session
    from isr.traces.conformance.runner import InProcess, run_scenario_full
    from isr.traces.conformance.scenarios import spec_scenarios

    sc = spec_scenarios(3, "kip-320")["directed:zombie-leader-deposed"]
    _v, out = run_scenario_full(InProcess(Session(mutant)), sc, "zombie")
    assert out.history is not None
    assert out.history.anomalies["lost"].count == lost
    assert out.history.valid == (lost == 0)


def test_the_readers_annotations_cannot_be_forged() -> None:
    h = H().send("a", ty="open")
    h.ops[0]["_done"] = 5  # an unknown field of the file, named like the reader's own
    r = h.check()
    assert r.stats["sends_info"] == 1 and r.stats["sends_ok"] == 0
