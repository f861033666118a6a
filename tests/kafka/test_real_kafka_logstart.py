"""Apache Kafka's DeleteRecords under the kit, for real (issue 28 item 3, R12): the adapter's
``delete_records`` command is Admin deleteRecords; a run that deletes up to the HW, is refused
past it, and brings back a follower that was down meanwhile (below the leader's log start) is
accepted by the grey-box validator, the at-rest checks and the history checker, and the
answers are Kafka's (the low watermark; OFFSET_OUT_OF_RANGE above the HW)."""

from __future__ import annotations

import sys

import pytest
from isr.traces.conformance.apache_kafka.install import NEWEST, KafkaSetupError, ensure
from isr.traces.conformance.apache_kafka.scenarios import kafka_scenarios
from isr.traces.conformance.runner import Adapter, run_scenario_full

ADAPTER = f"{sys.executable} -m isr.traces.conformance.apache_kafka.adapter --version {NEWEST}"


@pytest.fixture(scope="module")
def kafka():
    try:
        return ensure(NEWEST)
    except KafkaSetupError as e:
        pytest.fail(str(e))


def test_kafka_delete_records_is_accepted(kafka, tmp_path):
    sc = kafka_scenarios()["kafka:delete-records"]
    ad = Adapter(ADAPTER, tmp_path / "adapter.stderr", timeout=240)
    try:
        v, out = run_scenario_full(ad, sc, "kafka:delete-records", protocol="kraft")
    finally:
        ad.close()
    assert v.verdict == "accepted", v.reason
    evs = out.events or []
    dels = [e for e in evs if e["kind"] == "fault" and e["op"] == "delete_records"]
    assert [d["results"] for d in dels] == [
        {"0": 2},  # the low watermark: every replica's log start reached 2
        {"0": 7},  # -1: the HW (7 records, the follower down: the ISR without it)
        {"0": "OffsetOutOfRangeException"},  # above the HW: refused
    ]
    polls = [e for e in evs if e["kind"] == "client" and e["f"] == "poll" and e["type"] == "ok"]
    assert polls and polls[-1]["from_offset"] == 7  # read from the log start
    assert [r[0] for r in polls[-1]["records"]] == [7, 8]
