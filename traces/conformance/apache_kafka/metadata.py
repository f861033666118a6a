"""The controller's decisions, read from the KRaft metadata log (`__cluster_metadata`).

Kafka's own log dumper decodes the segments (`DumpLogSegments --cluster-metadata-decoder`); this
module turns its output into the grey-box trace's `metadata` events, one per record that matters
to replication, in the log's total order (its offsets), with the record's CreateTime (the
controller's clock, milliseconds). A PartitionChangeRecord carries only what changed; the full
partition state after it is computed as Kafka's `PartitionRegistration.merge` does (a leader
field other than NO_LEADER_CHANGE = -2 bumps the leader epoch; every change bumps the partition
epoch).
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

NO_LEADER_CHANGE = -2  # PartitionChangeRecord.leader default: the leader is unchanged

_LINE = re.compile(r"^\| offset: (\d+) CreateTime: (\d+) .*? payload: (\{.*\})\s*$")


class MetadataError(Exception):
    """The metadata log could not be read or decoded (a corrupted log, a broken install)."""


def dump(
    java: str,
    classpath: str,
    metadata_dir: Path,
    log4j: Path | None = None,
    main: str = "org.apache.kafka.tools.DumpLogSegments",
) -> str:
    """Run Kafka's log dumper on every segment of the metadata log; its text output."""
    segs = sorted(metadata_dir.glob("*.log"))
    if not segs:
        raise MetadataError(f"no metadata log segments in {metadata_dir}")
    cmd = [java, "-Xmx128m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto"]
    if log4j:
        cmd.append(f"-Dlog4j2.configurationFile={log4j}")
    cmd += ["-cp", classpath, main]
    cmd += ["--cluster-metadata-decoder", "--files", ",".join(str(s) for s in segs)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise MetadataError(f"the log dumper failed ({r.returncode}): {r.stderr.strip()[-300:]}")
    return r.stdout


_BATCH = re.compile(r"^baseOffset: (\d+) lastOffset: (\d+) ")


def parse_records(text: str) -> list[tuple[int, int, dict[str, Any]]]:
    """(offset, create_time_ms, payload) of every decoded record, in log order; each payload also
    gets ``_batch``, the base offset of its batch (one atomic append of the controller). A line
    that looks like a record but does not decode is a MetadataError (a corrupted log), never
    skipped."""
    out = []
    batch = -1
    for ln in text.splitlines():
        m = _BATCH.match(ln)
        if m:
            batch = int(m.group(1))
            continue
        if not ln.startswith("| offset:") or "payload:" not in ln:
            continue
        m = _LINE.match(ln)
        if not m:
            raise MetadataError(f"undecodable metadata record line: {ln[:200]}")
        try:
            payload = json.loads(m.group(3))
        except ValueError as e:
            raise MetadataError(
                f"undecodable metadata payload at offset {m.group(1)}: {e}"
            ) from None
        if isinstance(payload, dict):
            payload["_batch"] = batch
        out.append((int(m.group(1)), int(m.group(2)), payload))
    return out


@dataclass
class PartitionState:
    replicas: list[int]
    isr: list[int]
    leader: int
    leader_epoch: int
    partition_epoch: int
    elr: list[int] = field(default_factory=list)
    last_known_elr: list[int] = field(default_factory=list)
    recovery: int = 0  # leaderRecoveryState: 0 recovered, 1 recovering (KIP-704)

    def merge(self, d: dict[str, Any]) -> PartitionState:
        """Kafka's PartitionRegistration.merge(PartitionChangeRecord)."""
        lead = d.get("leader", NO_LEADER_CHANGE)
        changed = lead != NO_LEADER_CHANGE
        return PartitionState(
            replicas=d["replicas"] if d.get("replicas") is not None else self.replicas,
            isr=d["isr"] if d.get("isr") is not None else self.isr,
            leader=lead if changed else self.leader,
            leader_epoch=self.leader_epoch + 1 if changed else self.leader_epoch,
            partition_epoch=self.partition_epoch + 1,
            elr=d["eligibleLeaderReplicas"]
            if d.get("eligibleLeaderReplicas") is not None
            else self.elr,
            last_known_elr=d["lastKnownElr"]
            if d.get("lastKnownElr") is not None
            else self.last_known_elr,
            recovery=d.get("leaderRecoveryState", -1)
            if d.get("leaderRecoveryState", -1) != -1
            else self.recovery,
        )


def events(records: list[tuple[int, int, dict[str, Any]]], topic: str) -> list[dict[str, Any]]:
    """The grey-box trace's metadata events (traces/FORMAT.md, "Grey-box traces") for `topic`:
    registrations, fencing and controlled-shutdown changes of brokers, and every partition state
    (the full state after the record, plus what the record itself set)."""
    topic_id = None
    parts: dict[int, PartitionState] = {}
    out: list[dict[str, Any]] = []
    features: dict[str, int] = {}
    for off, ts, p in records:
        kind, d = p.get("type"), p.get("data", {})
        base = {"kind": "metadata", "offset": off, "batch": p.get("_batch", off), "time_ms": ts}
        if kind == "FEATURE_LEVEL_RECORD":
            features[d["name"]] = d["featureLevel"]
            out.append(
                {**base, "record": "FeatureLevel", "name": d["name"], "level": d["featureLevel"]}
            )
        elif kind == "REGISTER_BROKER_RECORD":
            out.append(
                {
                    **base,
                    "record": "RegisterBroker",
                    "broker": d["brokerId"],
                    "broker_epoch": d["brokerEpoch"],
                    "fenced": bool(d.get("fenced", True)),
                    "in_controlled_shutdown": bool(d.get("inControlledShutdown", False)),
                    "incarnation": d.get("incarnationId"),
                }
            )
        elif kind == "UNREGISTER_BROKER_RECORD":
            out.append(
                {
                    **base,
                    "record": "UnregisterBroker",
                    "broker": d["brokerId"],
                    "broker_epoch": d["brokerEpoch"],
                }
            )
        elif kind in (
            "BROKER_REGISTRATION_CHANGE_RECORD",
            "FENCE_BROKER_RECORD",
            "UNFENCE_BROKER_RECORD",
        ):
            ev = {
                **base,
                "record": "BrokerChange",
                "broker": d["id"] if "id" in d else d["brokerId"],
            }
            ev["broker_epoch"] = d.get("brokerEpoch", d.get("epoch"))
            if kind == "FENCE_BROKER_RECORD":
                ev["fenced"] = True
            elif kind == "UNFENCE_BROKER_RECORD":
                ev["fenced"] = False
            elif d.get("fenced", 0) != 0:  # BrokerRegistrationFencingChange: 1 fence, -1 unfence
                ev["fenced"] = d["fenced"] == 1
            if d.get("inControlledShutdown", 0) == 1:
                ev["in_controlled_shutdown"] = True
            if "fenced" in ev or "in_controlled_shutdown" in ev:
                out.append(ev)
        elif kind == "TOPIC_RECORD":
            if d["name"] == topic:
                topic_id = d["topicId"]
        elif kind == "PARTITION_RECORD" and d.get("topicId") == topic_id and topic_id:
            st = PartitionState(
                replicas=d["replicas"],
                isr=d["isr"],
                leader=d["leader"],
                leader_epoch=d["leaderEpoch"],
                partition_epoch=d["partitionEpoch"],
                elr=d.get("eligibleLeaderReplicas") or [],
                last_known_elr=d.get("lastKnownElr") or [],
                recovery=d.get("leaderRecoveryState", 0),
            )
            parts[d["partitionId"]] = st
            out.append({**base, "record": "Partition", "partition": d["partitionId"], **_view(st)})
        elif kind == "PARTITION_CHANGE_RECORD" and d.get("topicId") == topic_id and topic_id:
            pid = d["partitionId"]
            if pid not in parts:
                raise MetadataError(
                    f"PartitionChangeRecord at offset {off} for an unknown partition {pid}"
                )
            st = parts[pid] = parts[pid].merge(d)
            changed = sorted(k for k in d if k not in ("topicId", "partitionId"))
            out.append(
                {
                    **base,
                    "record": "PartitionChange",
                    "partition": pid,
                    "changed": changed,
                    **_view(st),
                }
            )
    return out


def _view(st: PartitionState) -> dict[str, Any]:
    return {
        "leader": st.leader,
        "leader_epoch": st.leader_epoch,
        "partition_epoch": st.partition_epoch,
        "isr": list(st.isr),
        "elr": list(st.elr),
        "last_known_elr": list(st.last_known_elr),
        "replicas": list(st.replicas),
        "recovery": st.recovery,
    }
