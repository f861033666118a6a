"""The classes an independent fuzzing of traces and counterexamples found accepted (issue 27,
item 6), each decided (traces/VALIDATION.md, "Mutated traces, decided"): a false accept now
refused, or an equivalent trace accepted on purpose."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from isr.cli.main import main
from isr.traces.validator.validate import validate_paths

SAMPLE = Path(__file__).parents[2] / "traces/samples/accepted/sim-kip-101-kip101-scenario1.ndjson"


def _lines() -> list[dict]:
    return [json.loads(x) for x in SAMPLE.read_text().splitlines() if x.strip()]


def _write(tmp_path: Path, lines: list[dict]) -> Path:
    p = tmp_path / "t.ndjson"
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return p


def _swap(lines: list[dict], a: str, b: str) -> list[dict]:
    """Swap the first events named ``a`` and ``b`` (by action, or action@node), clocks kept."""

    def find(spec: str) -> int:
        act, _, node = spec.partition("@")
        return next(
            i
            for i, e in enumerate(lines)
            if e.get("action") == act and (not node or e.get("node") == int(node))
        )

    i, j = find(a), find(b)
    out = list(lines)
    out[i], out[j] = out[j], out[i]
    return out


def test_the_sample_is_accepted():
    assert validate_paths([SAMPLE]).exit == 0


@pytest.mark.parametrize(
    "a,b",
    [
        ("BrokerBecomeFollower@1", "FollowerTruncate@1"),
        ("BrokerIgnoreStaleRequest@1", "BrokerCheckpointHw@1"),
    ],
)
def test_one_nodes_events_swapped_with_their_clocks_kept_is_refused(tmp_path, a, b):
    lines = _lines()
    if b == "BrokerCheckpointHw@1":  # the checkpoint after the stale request
        k = next(i for i, e in enumerate(lines) if e.get("action") == "BrokerIgnoreStaleRequest")
        j = next(
            i for i, e in enumerate(lines) if i > k and e.get("action") == "BrokerCheckpointHw"
        )
        lines[k], lines[j] = lines[j], lines[k]
    else:
        lines = _swap(lines, a, b)
    v = validate_paths([_write(tmp_path, lines)])
    assert v.exit == 2, v.to_json()
    assert "out of order" in json.dumps(v.to_json())


def test_two_nodes_events_swapped_with_their_clocks_kept_is_the_same_run(tmp_path):
    # the leader's serve (node 0) and the follower's apply (node 1): the file's order across
    # nodes means nothing, the clocks order the run (FORMAT.md), so this is the sample itself
    lines = _lines()
    phase = [e.get("args", {}).get("phase") for e in lines]
    k = next(
        i
        for i in range(1, len(lines) - 1)
        if {phase[i], phase[i + 1]} == {"serve", "apply"}
        and lines[i]["node"] != lines[i + 1]["node"]
    )
    serve, apply_ = k, k + 1
    lines[serve], lines[apply_] = lines[apply_], lines[serve]
    assert lines[serve]["node"] != lines[apply_]["node"]
    assert validate_paths([_write(tmp_path, lines)]).exit == 0


def test_a_broker_event_without_the_declared_state_is_refused(tmp_path):
    lines = _lines()
    k = next(i for i, e in enumerate(lines) if e.get("action") == "ProducerSend")
    lines[k] = {key: v for key, v in lines[k].items() if key != "state"}
    v = validate_paths([_write(tmp_path, lines)])
    assert v.exit == 2
    assert "no state, but the header declares observed" in json.dumps(v.to_json())


def test_a_counterexample_step_without_args_is_refused_by_replay(tmp_path, capsys):
    f = tmp_path / "cx.ndjson"
    argv = ["check", "--protocol", "hw-truncation", "--replicas", "2", "--records", "1"]
    argv += ["--crashes", "1", "--min-isr", "1", "--invariant", "NoAckedLoss"]
    assert main([*argv, "--trace-out", str(f)]) == 1
    assert main(["replay", str(f)]) == 1  # confirmed: the property is violated
    assert "confirmed" in capsys.readouterr().out
    lines = [json.loads(x) for x in f.read_text().splitlines()]
    step = next(x for x in lines if x.get("type") == "step")
    del step["args"]
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    capsys.readouterr()
    assert main(["replay", str(f)]) == 2
    assert "args: missing" in capsys.readouterr().err


# ---- the same classes as a fuzz over every single-file accepted sample -------------------------
SAMPLES = sorted((SAMPLE.parent).glob("*.ndjson"))


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_fuzz_swaps_and_dropped_states(tmp_path, data):
    """Any two events of one node with different clocks swapped: refused. Any broker partition
    event's state dropped, where the header declares observed state: refused."""
    path = data.draw(st.sampled_from(SAMPLES))
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    head, evs = lines[0], lines[1:]
    if data.draw(st.booleans()):
        pairs = [
            (i, j)
            for i in range(len(evs))
            for j in range(i + 1, len(evs))
            if evs[i]["node"] == evs[j]["node"] and evs[i]["clock"] != evs[j]["clock"]
        ]
        i, j = data.draw(st.sampled_from(pairs))
        evs[i], evs[j] = evs[j], evs[i]
        why = "out of order"
    else:
        if not head.get("observed"):
            return
        ks = [
            k
            for k, e in enumerate(evs)
            if "state" in e and "topic" in e and isinstance(e["node"], int)
        ]
        k = data.draw(st.sampled_from(ks))
        del evs[k]["state"]
        why = "no state"
    p = tmp_path / f"m-{data.draw(st.integers(0, 10**9))}.ndjson"
    p.write_text("".join(json.dumps(x) + "\n" for x in [head, *evs]))
    v = validate_paths([p])
    assert v.exit == 2, (path.name, why)
    assert why in json.dumps(v.to_json())
