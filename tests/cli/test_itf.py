"""ITF (Apalache's Informal Trace Format) and TLC `-dumpTrace json` interop (traces/counterexample/itf.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from isr.cli.main import main
from isr.traces import counterexample as cxfile
from isr.traces.counterexample import itf

SMALL = ["--protocol", "hw-truncation", "--replicas", "2", "--records", "1", "--crashes", "2"]


@pytest.fixture(scope="module")
def ndjson(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("itf") / "cx.ndjson"
    assert main(["check", *SMALL, "--quiet", "--trace-out", str(path)]) == 1
    return path


def _replay(capsys, path: Path) -> tuple[int, dict]:
    code = main(["replay", str(path), "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


def test_ndjson_to_itf_replays_to_the_same_verdict(ndjson, tmp_path, capsys):
    out = tmp_path / "cx.itf.json"
    assert itf.main(["to-itf", str(ndjson), "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["#meta"]["format"] == "ITF" and doc["vars"][0] == "log"
    assert doc["states"][0]["#meta"] == {"index": 0}
    assert doc["states"][0]["isr_view"]["r0"] == {"#set": [0, 1]}
    assert doc["states"][1]["log"]["r0"] == [{"#tup": [1, 1]}]
    capsys.readouterr()
    assert _replay(capsys, ndjson) == _replay(capsys, out)
    code, report = _replay(capsys, out)
    assert code == 1 and report["confirmed_steps"] == len(doc["states"]) - 1


def test_itf_to_itf_is_identical_and_back_to_ndjson_is_the_original(ndjson, tmp_path):
    a, b, back = tmp_path / "a.itf.json", tmp_path / "b.itf.json", tmp_path / "back.ndjson"
    assert itf.main(["to-itf", str(ndjson), "-o", str(a)]) == 0
    assert itf.main(["to-itf", str(a), "-o", str(b)]) == 0
    assert a.read_bytes() == b.read_bytes()
    assert itf.main(["to-ndjson", str(a), "-o", str(back)]) == 0
    assert [json.loads(x) for x in back.read_text().splitlines()] == [
        json.loads(x) for x in ndjson.read_text().splitlines()
    ]


def test_a_tampered_itf_state_is_rejected(ndjson, tmp_path, capsys):
    out = tmp_path / "cx.itf.json"
    itf.main(["to-itf", str(ndjson), "-o", str(out)])
    doc = json.loads(out.read_text())
    doc["states"][2]["hw"]["r1"] = 7
    out.write_text(json.dumps(doc))
    capsys.readouterr()
    code, report = _replay(capsys, out)
    assert code == 4 and report["confirmed_steps"] == 1


def _as_tlc(trace: cxfile.CounterexampleTrace, with_actions: bool) -> dict:
    """What TLC's -dumpTrace json writes for a TLA+ spec with our variables: 1-based state
    indexes, functions of 0..N-1 as objects keyed "0", "1"..., sets and tuples as arrays."""

    def tlc_state(st: dict) -> dict:
        return {
            k: ({r[1:]: x for r, x in v.items()} if k in itf.PER_REPLICA else v)
            for k, v in st.items()
        }

    states = [trace.initial] + [s["state"] for s in trace.steps]
    doc: dict = {"state": [[i + 1, tlc_state(s)] for i, s in enumerate(states)]}
    if with_actions:
        doc["action"] = [
            [
                [i, tlc_state(states[i - 1])],
                {"name": s["action"], "parameter": s["args"], "location": {"module": "Isr"}},
                [i + 1, tlc_state(s["state"])],
            ]
            for i, s in enumerate(trace.steps, start=1)
        ]
    return doc


@pytest.mark.parametrize("with_actions", [True, False])
def test_tlc_dump_imports_and_replays(ndjson, tmp_path, capsys, with_actions):
    trace = cxfile.read(str(ndjson))
    dump = tmp_path / "tlc.json"
    dump.write_text(json.dumps(_as_tlc(trace, with_actions)))
    capsys.readouterr()
    assert main(["replay", str(dump)]) == 2  # detected: a TLC dump needs converting
    assert "from-tlc" in capsys.readouterr().err
    out = tmp_path / "tlc.itf.json"
    rc = itf.main(
        ["from-tlc", str(dump), "--protocol", "hw-truncation", "--property", "StrongIsr"]
        + ["-o", str(out)]
    )
    assert rc == 0
    imported = itf.read_any(str(out))
    assert [s["action"] for s in imported.steps] == [s["action"] for s in trace.steps]
    assert [s["args"] for s in imported.steps] == [s["args"] for s in trace.steps]
    capsys.readouterr()
    code, report = _replay(capsys, out)
    assert code == 1, report["message"]


def test_tlc_dump_with_a_foreign_variable_is_bad_input(ndjson, tmp_path, capsys):
    doc = _as_tlc(cxfile.read(str(ndjson)), False)
    doc["state"][0][1]["pc"] = "start"
    dump = tmp_path / "tlc.json"
    dump.write_text(json.dumps(doc))
    rc = itf.main(
        ["from-tlc", str(dump), "--protocol", "hw-truncation", "--property", "StrongIsr"]
        + ["-o", str(tmp_path / "x.json")]
    )
    assert rc == 2 and "pc" in capsys.readouterr().err


def test_values_decode():
    assert itf.decode({"#bigint": "123456789012345678901"}) == 123456789012345678901
    assert itf.decode({"#set": [2, 0, 1]}) == [0, 1, 2]
    assert itf.decode({"#map": [[0, {"#tup": [1, 2]}]]}) == {"0": [1, 2]}
    assert itf.encode(2**60) == {"#bigint": str(2**60)}
    assert itf.normalise("hw", [3, 4]) == {"r0": 3, "r1": 4}


@pytest.mark.parametrize("fmt", ["itf", "ndjson"])
def test_liveness_and_simulate_write_either_format(tmp_path, capsys, fmt):
    lasso = tmp_path / f"lasso.{fmt}"
    model = ["--protocol", "kip-320", "--replicas", "2", "--records", "1", "--crashes", "1"]
    lost = ["--session-expiries", "1"]  # R8: a live broker's requests are never lost
    rc = main(["liveness", *model, *lost, "--trace-out", str(lasso), "--trace-format", fmt])
    assert rc == 1
    trace = itf.read_any(str(lasso))
    assert trace.header["loop_start"] is not None and trace.header["kind"] == "eventually"
    if fmt == "itf":  # ITF's loop: the index of the state the last state equals
        doc = json.loads(lasso.read_text())
        strip = [{k: v for k, v in st.items() if k != "#meta"} for st in doc["states"]]
        assert doc["loop"] == trace.header["loop_start"] - 1
        assert strip[doc["loop"]] == strip[-1]
    assert main(["explain", str(lasso), "--html", str(tmp_path / "l.html")]) == 0
    sim = tmp_path / f"sim.{fmt}"
    rc = main(
        ["simulate", *SMALL, "--walks", "50", "--depth", "20", "--quiet"]
        + ["--trace-out", str(sim), "--trace-format", fmt]
    )
    assert rc == 1
    assert (itf.detect(sim.read_text()) == "itf") == (fmt == "itf")
    capsys.readouterr()
    assert main(["replay", str(sim)]) == 1


def test_a_key_only_later_states_have_survives_itf():
    """ITF needs every variable in every state; the state JSON writes some keys only once their
    mechanism moved them (a session expiry, KIP-704's RECOVERING). Such a key is neither
    dropped (the earlier export took the variables of the first state only) nor invented:
    the states read back are the states written."""
    trace = cxfile.CounterexampleTrace(
        {"type": "header", "property": "X"},
        {"log": {"r0": []}},
        [
            {
                "type": "step",
                "index": 1,
                "action": "A",
                "args": {},
                "state": {"log": {"r0": []}, "session_expired": [0]},
            },
            {
                "type": "step",
                "index": 2,
                "action": "B",
                "args": {},
                "state": {"log": {"r0": []}, "leader_recovery": "RECOVERING"},
            },
        ],
    )
    doc = itf.to_itf(trace)
    assert doc["vars"] == ["log", "session_expired", "leader_recovery"]
    assert doc["states"][0]["session_expired"] == itf.ABSENT
    assert doc["states"][1]["leader_recovery"] == "RECOVERED"  # what its absence stands for
    back = itf.from_itf(json.loads(json.dumps(doc)))
    assert back.initial == {"log": {"r0": []}, "leader_recovery": "RECOVERED"}
    assert [s["state"] for s in back.steps] == [
        {"log": {"r0": []}, "session_expired": [0], "leader_recovery": "RECOVERED"},
        {"log": {"r0": []}, "leader_recovery": "RECOVERING"},
    ]
