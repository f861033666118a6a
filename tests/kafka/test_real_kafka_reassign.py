"""Apache Kafka's partition reassignment under the kit, for real (issue 28 item 1, KIP-455):
the adapter's ``reassign`` command is Admin alterPartitionReassignments, awaited with
listPartitionReassignments. Replicas [0, 1] of three brokers move to [1, 2]: the spare follows,
catches up and joins the ISR, which completes the move (the leader, removed, is replaced and the
leader epoch bumped); broker 0 deletes its replica. The run is accepted by the grey-box
validator (the metadata log's replica sets are the spec's, OperatorReassignPartition inside
the request's window, the completion in ControllerHandleAlterPartition's record), the at-rest
checks and the history checker."""

from __future__ import annotations

import sys

import pytest
from isr.traces.conformance.apache_kafka.install import NEWEST, KafkaSetupError, ensure
from isr.traces.conformance.apache_kafka.scenarios import kafka_scenarios
from isr.traces.conformance.runner import Adapter, run_scenario_full
from isr.traces.validator.greybox import validate_greybox

ADAPTER = f"{sys.executable} -m isr.traces.conformance.apache_kafka.adapter --version {NEWEST}"


@pytest.fixture(scope="module")
def kafka():
    try:
        return ensure(NEWEST)
    except KafkaSetupError as e:
        pytest.fail(str(e))


def test_kafka_reassignment_is_accepted(kafka, tmp_path):
    sc = kafka_scenarios()["kafka:reassign"]
    ad = Adapter(ADAPTER, tmp_path / "adapter.stderr", timeout=240)
    try:
        v, out = run_scenario_full(ad, sc, "kafka:reassign", protocol="kraft")
    finally:
        ad.close()
    assert v.verdict == "accepted", v.reason
    evs = out.events or []
    moves = [e for e in evs if e["kind"] == "fault" and e["op"] == "reassign"]
    assert [(m["replicas"], m["results"], m["done"]) for m in moves] == [
        ([1, 2], {"0": "ok"}, True)
    ]
    meta = [e for e in evs if e["kind"] == "metadata" and e.get("partition") == 0]
    reps = [sorted(e["replicas"]) for e in meta]
    # the move's record (target + current), then the completion's (the target)
    assert [0, 1, 2] in reps and reps[-1] == [1, 2]
    done = next(e for e in meta if sorted(e["replicas"]) == [1, 2])
    assert done["leader"] in (1, 2) and done["leader_epoch"] == 1 and sorted(done["isr"]) == [1, 2]
    rest = {e["broker"] for e in evs if e["kind"] == "at_rest" and e["partition"] == 0}
    assert rest == {1, 2}  # broker 0 deleted its replica
    assert "OperatorReassignPartition" in v.fired
    # the same log with the move completed while the spare was still out of the ISR (ISR
    # [1] alone at the completion, as a controller that does not wait for the new replica):
    # no spec run explains it
    bad = [dict(e) for e in evs]
    for e in bad:
        if e["kind"] == "metadata" and e.get("partition") == 0 and sorted(e["replicas"]) == [1, 2]:
            e["isr"] = [1]
            e["leader"] = 1
    w = validate_greybox(out.header or {}, bad, "tampered")
    assert w.verdict == "rejected", w.reason
