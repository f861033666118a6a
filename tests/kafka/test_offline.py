"""The Apache Kafka kit's parts that need no running Kafka: set-up errors, the metadata-log
decoder, the grey-box validator on recorded real runs and their mutations, the at-rest checks."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from isr.traces.conformance.apache_kafka import install
from isr.traces.conformance.apache_kafka.metadata import (
    MetadataError,
    PartitionState,
    events,
    parse_records,
)
from isr.traces.validator.at_rest import check_at_rest
from isr.traces.validator.greybox import read, validate_greybox, validate_run

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "traces" / "samples" / "apache-kafka"


def test_no_maven_is_one_line_and_exit_2(tmp_path):
    """No Maven (and nothing fetched yet): one line saying which, exit 2, no traceback."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "java").symlink_to(subprocess.check_output(["which", "java"], text=True).strip())
    env = {**os.environ, "PATH": str(bin_dir), "ISR_KAFKA_HOME": str(tmp_path / "kh")}
    r = subprocess.run(
        [sys.executable, "-m", "isr.cli.main", "conform", "--adapter", "apache-kafka:4.3.1"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert r.returncode == 2
    assert (
        r.stderr.strip()
        == "isr: error: no Maven (mvn) found: it is needed once to fetch Apache Kafka"
    )
    assert "Traceback" not in r.stderr


def test_bad_release_names_are_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("ISR_KAFKA_HOME", str(tmp_path))
    with pytest.raises(install.KafkaSetupError, match="bad Kafka version"):
        install.ensure("4.4.0; rm -rf /")
    r = subprocess.run(
        [sys.executable, "-m", "isr.cli.main", "conform", "--adapter", "apache-kafka:latest"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2 and "expected apache-kafka or apache-kafka:4.x.y" in r.stderr


DUMP = """\
Dumping /x/__cluster_metadata-0/00000000000000000000.log
baseOffset: 10 lastOffset: 10 count: 1 baseSequence: -1 lastSequence: -1 producerId: -1
| offset: 10 CreateTime: 1000 keySize: -1 valueSize: 9 sequence: -1 headerKeys: [] payload: {"type":"REGISTER_BROKER_RECORD","version":4,"data":{"brokerId":0,"brokerEpoch":10,"fenced":true}}
baseOffset: 11 lastOffset: 12 count: 2 baseSequence: -1 lastSequence: -1 producerId: -1
| offset: 11 CreateTime: 2000 keySize: -1 valueSize: 9 sequence: -1 headerKeys: [] payload: {"type":"TOPIC_RECORD","version":0,"data":{"name":"t","topicId":"T1"}}
| offset: 12 CreateTime: 2000 keySize: -1 valueSize: 9 sequence: -1 headerKeys: [] payload: {"type":"PARTITION_RECORD","version":2,"data":{"partitionId":0,"topicId":"T1","replicas":[0,1,2],"isr":[0,1,2],"leader":0,"leaderEpoch":0,"partitionEpoch":0}}
baseOffset: 13 lastOffset: 14 count: 2 baseSequence: -1 lastSequence: -1 producerId: -1
| offset: 13 CreateTime: 3000 keySize: -1 valueSize: 9 sequence: -1 headerKeys: [] payload: {"type":"PARTITION_CHANGE_RECORD","version":2,"data":{"partitionId":0,"topicId":"T1","isr":[1,2],"leader":1}}
| offset: 14 CreateTime: 3000 keySize: -1 valueSize: 9 sequence: -1 headerKeys: [] payload: {"type":"BROKER_REGISTRATION_CHANGE_RECORD","version":0,"data":{"brokerId":0,"brokerEpoch":10,"fenced":1}}
baseOffset: 15 lastOffset: 15 count: 1 baseSequence: -1 lastSequence: -1 producerId: -1
| offset: 15 CreateTime: 4000 keySize: -1 valueSize: 9 sequence: -1 headerKeys: [] payload: {"type":"PARTITION_CHANGE_RECORD","version":2,"data":{"partitionId":0,"topicId":"T1","isr":[0,1,2]}}
"""


def test_metadata_records_decode_as_kafka_merges_them():
    """PartitionRegistration.merge: a leader field bumps the leader epoch, an ISR-only change
    does not; every change bumps the partition epoch; a batch's records share its base offset."""
    evs = events(parse_records(DUMP), "t")
    parts = [e for e in evs if e["record"] in ("Partition", "PartitionChange")]
    assert [(e["leader"], e["leader_epoch"], e["partition_epoch"], e["isr"]) for e in parts] == [
        (0, 0, 0, [0, 1, 2]),
        (1, 1, 1, [1, 2]),
        (1, 1, 2, [0, 1, 2]),
    ]
    assert [e["batch"] for e in parts] == [11, 13, 15]
    fence = [e for e in evs if e["record"] == "BrokerChange"]
    assert fence == [
        {
            "kind": "metadata",
            "offset": 14,
            "batch": 13,
            "time_ms": 3000,
            "record": "BrokerChange",
            "broker": 0,
            "broker_epoch": 10,
            "fenced": True,
        }
    ]
    assert PartitionState([0], [0], 0, 5, 7).merge({"leader": -2}).leader_epoch == 5


def test_a_corrupted_metadata_line_is_an_error_not_skipped():
    bad = DUMP.replace('"isr":[1,2],"leader":1}}', '"isr":[1,2],"lea')
    with pytest.raises(MetadataError, match=r"undecodable metadata record line: . offset: 13"):
        parse_records(bad)


# ---- the grey-box validator on real runs ---------------------------------------------------


def sample(name: str) -> tuple[dict, list[dict]]:
    return read(SAMPLES / name)


def batch_events(events: list[dict], offset: int) -> list[dict]:
    return [e for e in events if e.get("kind") == "metadata" and e.get("offset") == offset]


KAFKA_MANIFEST = json.loads((SAMPLES / "manifest.json").read_text())


def test_every_kafka_sample_has_a_verdict():
    assert {p.name for p in SAMPLES.glob("*.ndjson")} == set(KAFKA_MANIFEST)


@pytest.mark.parametrize("name", sorted(KAFKA_MANIFEST))
def test_recorded_kafka_runs_keep_their_verdict(name):
    """Each recorded run of Apache Kafka keeps its verdict: accepted, or rejected at the batch
    its manifest names, for the open spec error it states (docs/implementation.md,
    "Apache Kafka under the kit"); when the spec is fixed, its entry becomes accepted."""
    want = KAFKA_MANIFEST[name]
    head, evs = sample(name)
    v = validate_run(head, evs, name)
    assert v.verdict == want["verdict"], v.reason
    assert want.get("reason", "") in v.reason


def _first_change(evs: list[dict], pred) -> dict:
    return next(
        e
        for e in evs
        if e.get("kind") == "metadata" and e.get("record") == "PartitionChange" and pred(e)
    )


def test_an_election_outside_the_isr_is_rejected():
    """Mutation: the controller's election after the leader's crash picks the crashed broker's
    ISR-less peer... here: a broker that is fenced and outside the ISR. No spec step does that."""
    head, evs = sample("kafka-4.4.0-faults.ndjson")
    evs = copy.deepcopy(evs)
    ch = _first_change(evs, lambda e: "leader" in e.get("changed", []))
    ch["leader"] = 0  # the crashed, fenced broker
    v = validate_greybox(head, evs, "mutant")
    assert v.verdict == "rejected"
    assert f"offset {ch['offset']}" in v.reason


def test_an_isr_expansion_with_a_fenced_broker_is_rejected():
    """Mutation: the crashed broker is let back into the ISR while still fenced (KIP-841's
    INELIGIBLE_REPLICA check forbids it)."""
    head, evs = sample("kafka-4.4.0-faults.ndjson")
    evs = copy.deepcopy(evs)
    lead = _first_change(evs, lambda e: "leader" in e.get("changed", []))
    k = evs.index(lead)
    fake = {**lead, "offset": lead["offset"] + 1, "batch": lead["offset"] + 1, "changed": ["isr"]}
    fake["isr"], fake["partition_epoch"] = sorted([*lead["isr"], 0]), lead["partition_epoch"] + 1
    fake["time"] = lead["time"] + 0.001
    evs.insert(k + 2, fake)
    v = validate_greybox(head, evs, "mutant")
    assert v.verdict == "rejected" and f"offset {fake['offset']}" in v.reason


def test_leader_minus_one_without_a_new_leader_epoch_is_rejected():
    """Mutation: the batch that fences the last ISR member (the leader) records leader -1 in the
    same leader epoch. Kafka's PartitionChangeBuilder bumps the epoch with every leader change,
    and so does the spec's fence (``fence_batch``); before it did, the real run was rejected and
    this mutant would have passed."""
    head, evs = sample("kafka-4.0.2-all-crash.ndjson")
    evs = copy.deepcopy(evs)
    ch = _first_change(evs, lambda e: e.get("leader") == -1)
    ch["leader_epoch"] -= 1
    v = validate_greybox(head, evs, "mutant")
    assert v.verdict == "rejected" and f"offset {ch['batch']}" in v.reason, v.reason


def test_with_elr_the_last_member_leaves_for_the_elr():
    """Mutation (ELR on, Kafka 4.4): the controlled shutdown of the last ISR member empties the
    ISR and puts the member in the ELR. A log that shows it dropped from both is no spec step
    (the spec's barred last member is shown as ISR [], ELR [it]); without ELR (4.0.2's run) the
    ISR keeps it, and the same projection rule must not apply there."""
    head, evs = sample("kafka-4.4.0-last-replica-shutdown.ndjson")
    evs = copy.deepcopy(evs)
    ch = _first_change(evs, lambda e: e.get("leader") == -1)
    assert ch["isr"] == [] and ch["elr"]  # what Kafka 4.4 wrote
    ch["elr"] = []
    v = validate_greybox(head, evs, "mutant")
    assert v.verdict == "rejected" and f"offset {ch['batch']}" in v.reason, v.reason
    head, evs = sample("kafka-4.0.2-last-replica-shutdown.ndjson")
    evs = copy.deepcopy(evs)
    ch = _first_change(evs, lambda e: e.get("leader") == -1)
    assert ch["isr"] and not ch["elr"]  # 4.0.2 keeps the ISR
    ch["isr"], ch["elr"] = [], ch["isr"]  # as if ELR were on
    v = validate_greybox(head, evs, "mutant")
    assert v.verdict == "rejected" and f"offset {ch['batch']}" in v.reason, v.reason


def test_a_restart_registers_only_after_the_fence():
    """Mutation: the restarted broker's registration (RegisterBroker) and unfencing are moved
    before the controller fenced its previous incarnation. Kafka refuses a registration while
    the old session is valid (DuplicateBrokerRegistrationException), and the spec's BrokerRestart
    waits for the fence: rejected."""
    head, evs = sample("kafka-4.0.2-all-crash.ndjson")
    evs = copy.deepcopy(evs)
    fence = next(
        e for e in evs if e.get("record") == "BrokerChange" and e.get("fenced") and e["broker"] == 2
    )
    reg = [
        e
        for e in evs
        if e.get("kind") == "metadata"
        and e.get("broker") == 2
        and e.get("record") in ("RegisterBroker", "BrokerChange")
        and e["time"] > fence["time"]
    ][:2]
    for j, e in enumerate(reg):
        evs.remove(e)
        e["time"] = fence["time"] - 0.2 + 0.1 * j
    k = evs.index(fence)
    for j, e in enumerate(reg):
        evs.insert(k + j, e)
    restart = next(e for e in evs if e.get("op") == "restart" and e["broker"] == 2)
    evs.remove(restart)
    restart["time"] = restart["started"] = fence["time"] - 0.3
    evs.insert(k - 1, restart)
    v = validate_greybox(head, evs, "mutant")
    assert v.verdict == "rejected", v.reason


def test_too_many_candidates_is_undecided_never_accepted():
    head, evs = sample("kafka-4.4.0-faults.ndjson")
    v = validate_greybox(head, evs, "tiny-cap", cap=50)
    assert v.verdict == "incomplete" and v.reason.startswith("undecided:")


def test_cli_validates_a_greybox_file_and_exits_1_on_a_mutant(tmp_path):
    head, evs = sample("kafka-4.4.0-faults.ndjson")
    evs = copy.deepcopy(evs)
    _first_change(evs, lambda e: "leader" in e.get("changed", []))["leader"] = 0
    f = tmp_path / "mutant.ndjson"
    f.write_text("\n".join(json.dumps(x) for x in [head, *evs]) + "\n")
    r = subprocess.run(
        [sys.executable, "-m", "isr.cli.main", "validate", str(f)], capture_output=True, text=True
    )
    assert r.returncode == 1 and "REJECTED" in r.stdout, r.stdout + r.stderr
    f.write_text(json.dumps(head) + "\n" + '{"kind": "metadata", "offset": "x"}\n')
    r = subprocess.run(
        [sys.executable, "-m", "isr.cli.main", "validate", str(f)], capture_output=True, text=True
    )
    assert r.returncode == 2 and "offset" in r.stdout + r.stderr


# ---- at rest --------------------------------------------------------------------------------


def rest(broker: int, log: list, ckpt: list | None, hw: int | None = None) -> dict:
    end = log[-1][0] + 1 if log else 0
    return {
        "kind": "at_rest",
        "broker": broker,
        "partition": 0,
        "log": log,
        "log_end": end,
        "leader_epoch_checkpoint": ckpt,
        "hw_checkpoint": hw,
    }


ISR = {"kind": "metadata", "record": "PartitionChange", "partition": 0, "isr": [0, 1]}
HW2 = {"kind": "observe", "partition": 0, "hw": 2}


def test_at_rest_replicas_that_agree_pass():
    log = [[0, 0, "a"], [1, 1, "b"]]
    r = check_at_rest(
        [ISR, HW2, rest(0, log, [[0, 0], [1, 1]], 2), rest(1, log, [[0, 0], [1, 1]], 2)]
    )
    assert r.ok and r.replicas == 2


def test_at_rest_each_violation_is_named():
    a = [[0, 0, "a"], [1, 1, "b"]]
    b = [[0, 0, "a"], [1, 1, "X"]]
    r = check_at_rest([ISR, HW2, rest(0, a, [[0, 0], [1, 1]]), rest(1, b, [[0, 0], [1, 1]])])
    assert r.violations == [
        "AgreeBelowHw: partition 0 offset 1 (HW 2) differs across the ISR: {0: 'b', 1: 'X'}"
    ]
    r = check_at_rest([rest(0, a, [[0, 0], [1, 1]], hw=5)])
    assert r.violations == [
        "HwCheckpointWithinLog: broker 0 partition 0: HW checkpoint 5 > log end 2"
    ]
    r = check_at_rest(
        [rest(0, a, [[0, 0], [1, 0]])]
    )  # epoch 1 starts at 0: record 0 (epoch 0) lies after it
    assert r.violations[0].startswith(
        "EpochCheckpointMatchesLog: broker 0 partition 0: record at 0 of epoch 0"
    )
    r = check_at_rest([rest(0, a, [[0, 0]])])
    assert "record at 1 of epoch 1 has no checkpoint entry" in r.violations[0]


def test_an_elr_election_keeps_no_leader_in_the_elr():
    """Mutation (Kafka 4.4.0, campaign run 7): the election from the ELR at the unfencing
    writes leader 1, ISR [1] and ELR [1]. ELR and ISR are disjoint after every partition change
    (PartitionChangeBuilder.maybePopulateTargetElr); the spec's election used to keep the new
    leader in the ELR, which accepted this mutant and rejected the real run."""
    head, evs = sample("kafka-4.4.0-elr-election-at-unfence.ndjson")
    evs = copy.deepcopy(evs)
    ch = _first_change(evs, lambda e: e.get("leader") == 1 and e.get("leader_epoch") == 5)
    assert ch["isr"] == [1] and ch["elr"] == []  # what Kafka wrote
    ch["elr"] = [1]
    v = validate_greybox(head, evs, "mutant")
    assert v.verdict == "rejected" and f"offset {ch['batch']}" in v.reason, v.reason


def test_a_batch_may_precede_its_cause_by_the_linger_only():
    """Mutation (campaign run 95): the controlled shutdown's batch, stamped 12 ms before the
    SIGTERM (a batch is stamped at its first record and lingers 25 ms), moved to 40 ms before
    it: no batch can hold a record appended that much later than its stamp."""
    head, evs = sample("kafka-4.4.0-batch-linger.ndjson")
    shut = next(e for e in evs if e.get("kind") == "fault" and e["op"] == "controlled_shutdown")
    ch = _first_change(evs, lambda e: e.get("partition") == 0 and "leader" in e["changed"])
    assert 0 < shut["started"] - ch["time"] < 0.025  # the real run: within the linger
    evs = copy.deepcopy(evs)
    for e in evs:
        if e.get("kind") == "metadata" and e.get("batch") == ch["batch"]:
            e["time"] = shut["started"] - 0.040
    v = validate_greybox(head, evs, "mutant")
    assert v.verdict == "rejected", v.reason
    assert "(leader 1 epoch 1 ISR [1] ELR [0]" in v.reason, v.reason  # that batch


def test_a_paused_broker_is_not_unfenced_before_its_timer_is_due():
    """Mutation (campaign run 94): the paused follower's unfencing moved to 100 ms before its
    pause timer was due. The automatic resume without `started` may have been logged late, but
    the SIGCONT cannot precede the timer (the pause's time plus `ms`)."""
    head, evs = sample("kafka-4.4.0-late-auto-resume.ndjson")
    evs = copy.deepcopy(evs)
    pause = next(e for e in evs if e.get("kind") == "fault" and e["op"] == "pause")
    due = pause["time"] + pause["ms"] / 1000
    unf = next(
        e
        for e in evs
        if e.get("record") == "BrokerChange" and e.get("fenced") is False and e["time"] > due - 1
    )
    assert due < unf["time"]  # the real run: after the timer was due
    unf["time"] = due - 0.1
    evs.sort(key=lambda e: e.get("time", 0.0))
    v = validate_greybox(head, evs, "mutant")
    assert v.verdict == "rejected" and f"offset {unf['offset']}" in v.reason, v.reason


def test_kraft_separating_stories_at_kafkas_timescale() -> None:
    """Issue 27, item 4: the kraft stories Apache Kafka's adapter can drive run in its default
    set at Kafka's timescale (a 20 s hold within a 24 s session, past the 6 s a produce may
    wait); each other story is named with the step the adapter cannot cause."""
    from isr.traces.conformance.separating import kafka_separating_scenarios

    run, left = kafka_separating_scenarios()
    assert set(run) == {
        "separating:kraft-no-maximal-isr:StrongIsr",
        "separating:kraft-hw-without-min-isr:StrongIsr",
        "separating:kraft-hw-without-min-isr:NoPhantomRead",
        "separating:kraft-hw-without-min-isr:MonotonicReads",
    }
    sc = run["separating:kraft-no-maximal-isr:StrongIsr"]
    assert sc[0]["session_timeout_ms"] == 24_000 and sc[1] == {
        "op": "pause",
        "broker": 1,
        "ms": 20_000,
    }
    why = {n: w[0] for n, w in left.items()}
    assert "ControllerMoveLeader" in why["separating:kraft-count-diverging-fetch:StrongIsr"]
    assert "ControllerShutdownBroker" in why["separating:kraft-hw-before-truncation:NoPhantomRead"]
    assert "power failure" in why["separating:kraft-no-kip-903:NoAckedLoss"]
    assert len(run) + len(left) == 14


@pytest.mark.parametrize("field", ["record", "broker"])
def test_a_metadata_record_without_its_fields_is_bad_input(field):
    """A RegisterBroker line without its record's name or its broker: bad input at once (the
    replay would skip it and search for a spec run that explains a log with a hole, which took
    40 s to reject: found by tests/cli/test_hostile_input.py)."""
    head, evs = sample("kafka-4.4.0-last-replica-shutdown.ndjson")
    evs = copy.deepcopy(evs)
    reg = next(e for e in evs if e.get("record") == "RegisterBroker")
    del reg[field]
    v = validate_greybox(head, evs, "hole")
    assert v.verdict == "bad-input" and field in v.reason, (v.verdict, v.reason)
    assert f"event {evs.index(reg)}" in v.reason
