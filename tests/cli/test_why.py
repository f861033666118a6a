"""The sentence that says what breaks a property (cli/why.py), and `isr check`'s compact list
of counterexamples built on it."""

from __future__ import annotations

import copy

from isr.checker.bfs import check_bfs
from isr.cli.render import render_counterexample
from isr.cli.traceout import full_states
from isr.cli.why import counterexample_lines, violation
from isr.spec import Config, IsrSpec


def _state(logs: dict[str, list], **over) -> dict:
    n = len(logs)
    s = {
        "log": logs,
        "hw": {r: 0 for r in logs},
        "hw_checkpoint": {r: 0 for r in logs},
        "alive": {r: True for r in logs},
        "leader_view": {r: 0 for r in logs},
        "epoch_view": {r: 1 for r in logs},
        "isr_view": {r: list(range(n)) for r in logs},
        "coordination": {"leader": 0, "leader_epoch": 1, "isr": list(range(n))},
        "acked_all": [],
        "acked_1": [],
        "shown_to_consumers": [],
    }
    s.update(over)
    return s


def test_every_violation_of_the_small_hw_truncation_model_is_named():
    res = check_bfs(IsrSpec(Config(protocol="hw-truncation", replicas=2, records=1, crashes=2)))
    said = {
        p.name: violation(p.name, full_states(p.counterexample))
        for p in res.properties
        if p.counterexample is not None
    }
    assert said["StrongIsr"] == (
        "replica 1 is in the ISR but lacks offset 0 (record 1), below leader 0's HW 1"
    )
    assert said["WeakIsr"].startswith("replica 1 is in leader 0's own view of the ISR")
    assert said["NoCommittedLoss"] == (
        "record 1 was acknowledged to an acks=all producer at offset 0, but leader 0's log is empty"
    )
    assert said["NoPhantomRead"].startswith("record 1 was shown to a consumer at offset 0")
    lines = counterexample_lines(res.properties, render_counterexample)
    assert lines[1] == "Counterexample for StrongIsr (5 steps):"
    assert sum(ln.startswith("  0. Init") for ln in lines) == 1  # only the first in full
    assert any(
        ln.startswith("  NoCommittedLoss: violated in 6 steps (ProducerSend → ") for ln in lines
    )


def test_log_matching_names_the_replicas_and_the_offset():
    s = _state({"r0": [[1, 1], [2, 2]], "r1": [[3, 1], [2, 2]]})
    assert violation("LogMatching", [s]) == (
        "replicas 0 and 1 both hold an entry of epoch 2 at offset 1, yet differ at offset 0: "
        "replica 0 has record 1 (epoch 1), replica 1 record 3 (epoch 1)"
    )


def test_hw_monotonic_and_duplicates():
    a = _state({"r0": [[1, 1]], "r1": []}, hw={"r0": 1, "r1": 0})
    b = copy.deepcopy(a)
    b["hw"]["r0"] = 0
    assert violation("HwMonotonic", [a, b]) == "leader 0's HW fell from 1 to 0 in the last step"
    d = _state({"r0": [[1, 1], [1, 1]], "r1": []})
    assert violation("NoDuplicates", [d]) == "replica 0 holds record 1 twice, at offsets 0 and 1"


def test_monotonic_reads_names_the_reset():
    a = _state({"r0": [], "r1": []}, consumer_position=2)
    b = copy.deepcopy(a)
    b["consumer_position"] = 0
    assert violation("MonotonicReads", [a, b]) == (
        "the consumer's position went back from 2 to 0 in the last step: an offset reset (its "
        "position was past the leader's log end), so it will read offsets 0..1 again"
    )
    assert violation("MonotonicReads", [b, a]) == "MonotonicReads is violated by step 1"


def test_a_state_the_reading_cannot_use_gets_the_generic_sentence():
    assert violation("StrongIsr", [{"log": {}}]) == "StrongIsr is violated after step 0"
    assert violation("Mystery", [{}, {}]) == "Mystery is violated after step 1"
