"""How an implementation trace maps onto the spec's variables (see VALIDATION.md).

* partitions: the spec models one partition; a trace is split per ``topic-partition`` and each
  part is validated on its own (broker-wide events such as ``BrokerCrash`` go to every part
  the broker holds a replica of);
* replica ids: broker ``b`` is spec replica ``assignment.index(b)`` (R1 order, so the preferred
  replica is spec replica 0, the spec's initial leader);
* leader epochs: the implementation's first election is epoch 0, the spec's initial state is
  already at epoch 1 with every replica having applied it: spec epoch = trace epoch + 1, minus
  the offline epochs before it (R9: the controller's leader -1 writes, which the spec's
  controller does not make; ``PartitionMap.epoch``);
* records: the spec numbers records 1, 2, ... in the order producers send them; the i-th record of
  the partition's ``ProducerSend`` events is spec record i (a retried record id gets a new number,
  so duplicates are told apart by offset, not by id);
* the bounds (records, epochs, crashes) are derived from the trace itself, so any finite trace fits.
"""

from __future__ import annotations

from bisect import bisect_right, insort
from dataclasses import dataclass, field
from typing import Any

from isr.spec import Config
from isr.spec.state import Replica

Event = dict[str, Any]
PartKey = str  # "topic-partition"


class TraceInputError(ValueError):
    """The trace is malformed (bad input, exit 2)."""


class Unsupported(Exception):
    """The trace uses a fault mode or feature the spec cannot express yet (exit 2)."""

    def __init__(self, mode: str, index: int | None = None, detail: str = "") -> None:
        super().__init__(mode)
        self.mode = mode
        self.index = index
        self.detail = detail


@dataclass
class PartitionMap:
    """Names of one partition's trace mapped onto the spec's."""

    key: PartKey
    brokers: list[int]  # spec replica i is broker brokers[i]
    rid_of: list[str] = field(default_factory=lambda: [""])  # spec record number -> record id
    # --idempotence: record id -> spec record number (a batch keeps its number on every retry)
    num_of: dict[str, int] = field(default_factory=dict)
    # Leader epochs the controller wrote for an offline partition (leader -1, R9): the spec's
    # controller writes nothing then, so later epochs are one lower in the spec per such write.
    offline: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.index = {b: i for i, b in enumerate(self.brokers)}

    def epoch(self, trace_epoch: int) -> int:
        """The spec's leader epoch of a trace epoch: + 1 (the spec starts at 1), minus the
        offline epochs up to it (an offline epoch maps onto the epoch before it)."""
        if trace_epoch < 0:
            return 0
        return trace_epoch + 1 - bisect_right(self.offline, trace_epoch)

    def trace_epoch(self, spec: int) -> int:
        """The trace epoch of a spec epoch (for messages): the one that is not offline."""
        if spec <= 0:
            return -1
        e = spec - 1
        while self.epoch(e) < spec or e in self.offline:
            e += 1
        return e

    def add_offline(self, trace_epoch: int) -> None:
        if trace_epoch not in self.offline:
            insort(self.offline, trace_epoch)

    def rep(self, broker: Any) -> int:
        try:
            return self.index[int(broker)]
        except (KeyError, ValueError, TypeError):
            raise TraceInputError(
                f"{self.key}: broker {broker!r} holds no replica of this partition"
            ) from None

    def rep_or_none(self, broker: Any) -> int:
        """-1 (no leader) stays -1."""
        if broker is None or int(broker) < 0:
            return -1
        return self.rep(broker)

    def mask(self, brokers: list[Any]) -> int:
        m = 0
        for b in brokers:
            m |= 1 << self.rep(b)
        return m

    def broker(self, rep: int) -> int:
        return self.brokers[rep] if rep >= 0 else -1


def spec_epoch(trace_epoch: int) -> int:
    """The spec epoch of a trace epoch with no offline write before it (``PartitionMap.epoch``
    is exact; this is the upper bound the spec's epoch bound is derived from)."""
    return trace_epoch + 1 if trace_epoch >= 0 else 0


def part_key(ev: Event) -> PartKey | None:
    if "topic" not in ev:
        return None
    return f"{ev['topic']}-{ev['partition']}"


# What a leader answered an idempotent producer's batch that appended nothing: skipped by a
# mapping without --idempotence (VALIDATION.md, decision 7: a dropped duplicate needs none)
IDEMPOTENT_ERRORS = frozenset({"OUT_OF_ORDER_SEQUENCE_NUMBER", "INVALID_PRODUCER_EPOCH"})


def producer_answer_only(ev: Event) -> bool:
    """A ProducerSend that only answers an idempotent producer (a duplicate, a sequence or
    epoch error: nothing appended), or one of the producer's own steps: what a mapping without
    --idempotence skips."""
    a = ev.get("args") or {}
    if ev.get("action") in ("ProducerCompleteBatch", "ProducerBumpEpoch"):
        return True
    return ev.get("action") == "ProducerSend" and (
        bool(a.get("duplicate")) or a.get("error") in IDEMPOTENT_ERRORS
    )


def idempotent_trace(header: dict[str, Any], events: list[Event]) -> bool:
    """Whether the trace is mapped with the spec's --idempotence (VALIDATION.md, decision 7):
    the header observes the producer (``observed`` has ``producer``: its own steps are in the
    trace) and its sends carry a batch header (``producer_id``). Any other trace, e.g. an
    idempotent producer whose steps are not traced (the reference cluster's), is mapped as
    before: a dropped duplicate skipped, a retry the leader does not hold a new send."""
    if "producer" not in (header.get("observed") or []):
        return False
    return any(
        ev.get("action") == "ProducerSend"
        and isinstance((ev.get("args") or {}).get("producer_id"), int)
        and ev["args"]["producer_id"] >= 0
        for ev in events
    )


def derive_config(header: dict[str, Any], events: list[Event], n: int) -> Config:
    """The smallest spec bounds that fit the trace (records written, highest epoch, crashes),
    and the fault modes it needs (unclean election from the header, lose-unflushed from a power
    failure, ``BrokerCrash`` with ``lose_unflushed``, session expiries from ``BrokerPause``,
    --idempotence with its retries from an idempotent producer's trace, ``idempotent_trace``)."""
    idem = idempotent_trace(header, events)
    sent: set[str] = set()
    producers: set[int] = set()
    retries = 0
    records = 0
    epoch = 1
    crashes = 0
    pauses = 0
    power_failure = False
    retention = False
    delete_records = 0
    reassignments = 0
    acks: set[str] = set()
    for ev in events:
        a = ev["action"]
        args = ev.get("args", {})
        if a == "BrokerDeleteOldSegment":
            retention = True
        elif a == "LeaderDeleteRecords":
            delete_records += 1
        elif a in REASSIGN_ACTIONS:
            reassignments += 1
        elif a == "ProducerSend" and idem:
            recs = [str(r) for r in args.get("records", [])]
            if len(recs) != 1:
                raise Unsupported(
                    "idempotent-batches",
                    detail="the spec's idempotent producer sends one record per batch; this"
                    f" trace has a batch of {len(recs)}",
                )
            producers.add(args.get("producer_id", -1))
            if recs[0] in sent:
                retries += 1  # the spec's ProducerRetry
            else:
                sent.add(recs[0])
                records += 1
            acks.add(str(args.get("acks", "all")))
        elif a == "ProducerSend" and not producer_answer_only(ev):
            records += len(args.get("records", []))
            acks.add(str(args.get("acks", "all")))
        elif a == "BrokerCrash":
            crashes += 1
            power_failure = power_failure or bool(args.get("lose_unflushed"))
        elif a == "BrokerPause":
            pauses += 1
        for k in ("epoch",):
            if isinstance(args.get(k), int):
                epoch = max(epoch, spec_epoch(args[k]))
        st = ev.get("state") or {}
        if isinstance(st.get("leader_epoch"), int):
            epoch = max(epoch, spec_epoch(st["leader_epoch"]))
        co = st.get("coord")
        if isinstance(co, dict) and isinstance(co.get("leader_epoch"), int):
            epoch = max(epoch, spec_epoch(co["leader_epoch"]))
    spec_acks = {"0": "1", "1": "1", "all": "all", "-1": "all"}
    mapped = {spec_acks.get(a, a) for a in acks}
    if len(mapped) > 1:
        raise Unsupported("mixed-acks", detail="one trace mixes acks=all with acks=0/1 producers")
    ack = mapped.pop() if mapped else "all"
    if ack not in ("all", "1"):
        raise TraceInputError(f"unknown acks setting {ack!r}")
    if len(producers) > 1:
        raise Unsupported("idempotent-producers", detail="the spec models one idempotent producer")
    if idem and ack != "all":
        raise TraceInputError("an idempotent producer uses acks=all (the spec's --idempotence)")
    cfg = header.get("config") or {}
    min_isr = int(cfg.get("min_insync_replicas", cfg.get("min_isr", 1)))
    if header["protocol"] == "kraft":
        # kraft: a pause that outlasts the session is the spec's ControllerFenceBroker, which
        # counts as one of the crashes (the broker then crashes and restarts: its own event)
        crashes += pauses
        pauses = 0
    return Config(
        replicas=n,
        records=records,
        epochs=epoch,
        crashes=crashes,
        acks=ack,
        min_isr=max(1, min(min_isr, n)),
        protocol=header["protocol"],
        unclean=bool(cfg.get("unclean_leader_election")),
        # R14: a power failure (a crash losing the unflushed tail) needs the spec's mode; without
        # one it stays off and BrokerFlush events change nothing
        lose_unflushed=power_failure,
        # R7/R18: a pause may outlast the broker's session: one expiry per pause at most (the
        # spec's expiry and renewal are hidden steps, VALIDATION.md mapping decision 12)
        session_expiries=pauses,
        # R12: a log start offset that moves (--retention, kraft also --delete-records), from the
        # trace's own BrokerDeleteOldSegment and LeaderDeleteRecords events
        retention=retention,
        delete_records=delete_records if header["protocol"] == "kraft" else 0,
        # R6/R15 --idempotence: the producer's epoch and sequences checked against each
        # leader's producer state; the retries are the trace's (at least one, which the mode
        # needs)
        idempotence=idem,
        retries=max(1, retries) if idem else 0,
        # KIP-455 (kraft): the operator's reassignments and cancels, from the trace's own
        # OperatorReassignPartition / OperatorCancelReassignment events; the spec then lays out
        # the partition on brokers 0..n-2 with broker n-1 the spare (``partition_layout``)
        reassignments=reassignments if header["protocol"] == "kraft" else 0,
    )


REASSIGN_ACTIONS = ("OperatorReassignPartition", "OperatorCancelReassignment")


def partition_layout(key: PartKey, assignment: list[int], events: list[Event]) -> list[int]:
    """The brokers a partition's spec replicas stand for, spec replica i being broker
    ``layout[i]``: the header's assignment (R1 order), and, when the partition's trace
    reassigns it (KIP-455, kraft), the one spare the spec adds as replica n-1 (``spec.state
    .spare_assignment``): the broker its targets name outside the assignment. A reassignment
    that reaches more than one broker outside the initial replica set, or changes the
    replication factor, is beyond the spec (Unsupported)."""
    extra: list[int] = []
    for ev in events:
        if ev.get("action") != "OperatorReassignPartition" or part_key(ev) != key:
            continue
        target = [int(b) for b in (ev.get("args") or {}).get("replicas", [])]
        if len(target) != len(assignment):
            raise Unsupported(
                "replication-factor-change",
                detail=f"{key}: a reassignment to {target} changes the replication factor"
                f" {len(assignment)} (the spec keeps it)",
            )
        for b in target:
            if b not in assignment and b not in extra:
                extra.append(b)
    if len(extra) > 1:
        raise Unsupported(
            "reassignment-spares",
            detail=f"{key}: reassignments reach brokers {extra} outside {assignment}; the spec"
            " has one spare broker",
        )
    has = any(ev.get("action") in REASSIGN_ACTIONS and part_key(ev) == key for ev in events)
    if has and not extra:
        # (only cancels, or targets within the replica set: the spec still lays out a spare)
        raise Unsupported(
            "reassignment-without-spare",
            detail=f"{key}: the trace reassigns it but names no broker outside {assignment}",
        )
    return [*assignment, *extra]


# ---- observation: the acting replica's local state against a spec replica -------------------
def observe_mismatch(
    pm: PartitionMap,
    i: int,
    r: Replica,
    st: dict[str, Any],
    log_tail: list | None,
    leo_only: bool,
    log_start: int = 0,
) -> str | None:
    """Why the spec replica ``r`` (spec replica ``i``) is not what the event observed, or None.

    ``log_tail``: the entries the event says were appended, checked at their offsets (earlier
    offsets were checked by earlier events of the same replica: cost per event is proportional to
    what changed, not to the log's length). ``leo_only`` skips the tail (impl-only events).
    ``log_start``: the spec replica's log start offset (R12; 0 where none is tracked); a full
    ``log`` observed is the log from there (the entries below it are deleted)."""
    if "alive" in st and st["alive"] != r.alive:
        return f"alive={st['alive']} but the spec has alive={r.alive}"
    if not r.alive:
        return None
    if "leo" in st and st["leo"] != len(r.log):
        return f"LEO={st['leo']} but the spec has LEO={len(r.log)}"
    if "log_start" in st and st["log_start"] != log_start:
        return f"log start={st['log_start']} but the spec has {log_start}"
    if "hw" in st and st["hw"] != r.hw:
        why = ""
        if isinstance(st.get("log_start"), int) and st["hw"] < st["log_start"]:
            why = " (LogStartAtMostHw: the HW below the log start, R12; KAFKA-9491's bug)"
        return f"HW={st['hw']} but the spec has HW={r.hw}{why}"
    if "hw_checkpoint" in st and st["hw_checkpoint"] != r.hw_ckpt:
        return f"HW checkpoint={st['hw_checkpoint']} but the spec has {r.hw_ckpt}"
    if "leader_epoch" in st and pm.epoch(st["leader_epoch"]) != r.epoch:
        return f"leader epoch={st['leader_epoch']} but the spec has {pm.trace_epoch(r.epoch)}"
    if "leader" in st and r.epoch and pm.rep_or_none(st["leader"]) != r.leader:
        return f"leader={st['leader']} but the spec has {pm.broker(r.leader)}"
    if "role" in st:
        role = "leader" if r.leader == i else ("follower" if r.leader >= 0 else "none")
        if st["role"] != role and not (st["role"] == "none" and r.leader < 0):
            return f"role={st['role']} but the spec has {role}"
    if "isr" in st and r.leader == i and pm.mask(st["isr"]) != r.isr:
        return f"ISR={st['isr']} but the spec has {[pm.broker(j) for j in _bits(r.isr)]}"
    if "remote_leo" in st and r.leader == i:
        for b, v in st["remote_leo"].items():
            j = pm.rep(b)
            if j != i and r.remote_leo[j] != v:
                return f"remote LEO of {b}={v} but the spec has {r.remote_leo[j]}"
    if not leo_only:
        if "log" in st:
            log = st["log"]
            if len(log) != len(r.log) - log_start:
                return f"log length {len(log)} but the spec has {len(r.log) - log_start}"
            bad = _entries_mismatch(pm, r, log_start, log)
            if bad:
                return bad
        elif log_tail:
            start = len(r.log) - len(log_tail)
            if start < 0:
                return "appended more entries than the spec's log holds"
            bad = _entries_mismatch(pm, r, start, log_tail)
            if bad:
                return bad
    return None


def _entries_mismatch(pm: PartitionMap, r: Replica, start: int, entries: list) -> str | None:
    rid_of = pm.rid_of
    log = r.log
    for k, entry in enumerate(entries):
        rid, ep = entry[0], entry[1]
        se = log[start + k]
        num, sep = se[0], se[1]
        # record ids are compared as strings: 1 and "1" are the same id (ADAPTER.md)
        if sep != pm.epoch(ep) or rid_of[num] != str(rid):
            return (
                f"offset {start + k} holds {rid}@epoch {ep} but the spec has "
                f"{rid_of[num]}@epoch {pm.trace_epoch(sep)}"
            )
        # --idempotence: the batch header (producer epoch, sequence) the entry carries
        if len(se) == 4 and len(entry) >= 4 and (entry[2], entry[3]) != (se[2], se[3]):
            return (
                f"offset {start + k} holds {rid} with producer epoch {entry[2]}, sequence "
                f"{entry[3]}, but the spec's entry has producer epoch {se[2]}, sequence {se[3]}"
            )
    return None


def _bits(mask: int) -> list[int]:
    return [j for j in range(mask.bit_length()) if mask >> j & 1]
