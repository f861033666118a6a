"""Checks on the files a run leaves at rest (grey-box mode, VALIDATION.md): what every replica
of a healed cluster must hold, whatever happened before.

* **AgreeBelowHw** (R5, R17; the spec's StrongIsr at rest): every member of the final ISR holds the
  same record at every offset below the partition's final HW (from its own log start: R12's
  DeleteRecords and retention delete below it).
* **EpochCheckpointMatchesLog** (KIP-101, KIP-279): each replica's leader-epoch checkpoint is
  strictly increasing in epoch and non-decreasing in start offset, and every record batch of epoch
  e at offset o has an entry (e, s) with s <= o and no entry of a later epoch starting at or
  before o (a record that a later epoch's start should have truncated); from the replica's log
  start offset (`log_start`, R12: the cache is truncated from the start, the segment files may
  still hold records below it).
* **HwCheckpointWithinLog** (R4, R13): a replica's HW checkpoint is at most its log end.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any


@dataclass
class AtRestReport:
    replicas: int = 0
    violations: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.violations

    def to_json(self) -> dict[str, Any]:
        return {"replicas": self.replicas, "violations": self.violations}


def check_at_rest(events: list[dict[str, Any]]) -> AtRestReport:
    rest = [e for e in events if e.get("kind") == "at_rest"]
    rep = AtRestReport(replicas=len(rest))
    final_isr: dict[int, list[int]] = {}
    final_hw: dict[int, int] = {}
    for e in events:
        if e.get("kind") == "metadata" and e.get("record") in ("Partition", "PartitionChange"):
            final_isr[e["partition"]] = list(e.get("isr", []))
        if e.get("kind") == "observe" and "hw" in e and "partition" in e:
            final_hw[e["partition"]] = int(e["hw"])
    by_part: dict[int, list[dict[str, Any]]] = {}
    for r in rest:
        by_part.setdefault(int(r["partition"]), []).append(r)
        _check_replica(r, rep)
    for p, reps in sorted(by_part.items()):
        hw = final_hw.get(p)
        if hw is None:
            hws = [r["hw_checkpoint"] for r in reps if r.get("hw_checkpoint") is not None]
            hw = max(hws) if hws else 0
        members = [r for r in reps if r["broker"] in final_isr.get(p, [])]
        logs = {r["broker"]: {o: v for o, _e, v in r["log"]} for r in members}
        # R12: below a replica's log start (DeleteRecords, retention: its first record, or its
        # log end if it holds none) its records are deleted, not missing; each replica is
        # compared from there (KIP-107: the followers take the log start up on their own time)
        first = {r["broker"]: max(r.get("log_start", 0),
                                  min((o for o, _e, _v in r["log"]), default=r.get("log_end", 0)))
                 for r in members}  # fmt: skip
        for off in range(hw):
            vals = {b: log.get(off) for b, log in logs.items() if off >= first[b]}
            if len(set(vals.values())) > 1:
                rep.violations.append(
                    f"AgreeBelowHw: partition {p} offset {off} (HW {hw}) differs across the ISR: {vals}"
                )
                break
    return rep


def _check_replica(r: dict[str, Any], rep: AtRestReport) -> None:
    who = f"broker {r['broker']} partition {r['partition']}"
    hw = r.get("hw_checkpoint")
    if hw is not None and hw > r.get("log_end", 0):
        rep.violations.append(
            f"HwCheckpointWithinLog: {who}: HW checkpoint {hw} > log end {r['log_end']}"
        )
    ckpt = r.get("leader_epoch_checkpoint")
    if ckpt is None:
        if r.get("log"):
            rep.violations.append(
                f"EpochCheckpointMatchesLog: {who}: records but no leader-epoch checkpoint"
            )
        return
    for (e1, s1), (e2, s2) in pairwise(ckpt):
        if not (e2 > e1 and s2 >= s1):
            rep.violations.append(f"EpochCheckpointMatchesLog: {who}: entries out of order {ckpt}")
            return
    span: dict[int, list[int]] = {}  # epoch -> [first offset, last offset] of its records
    start = r.get("log_start", 0)  # (R12: the cache is truncated from the log start)
    for off, epoch, _v in r.get("log", []):
        if off < start:
            continue
        span.setdefault(epoch, [off, off])[1] = off
    for epoch, (first, last) in sorted(span.items()):
        mine = [s for e, s in ckpt if e == epoch]
        later = [(e, s) for e, s in ckpt if e > epoch and s <= last]
        if not mine or mine[0] > first:
            rep.violations.append(
                f"EpochCheckpointMatchesLog: {who}: record at {first} of epoch {epoch} has no "
                f"checkpoint entry at or below it ({ckpt})"
            )
            return
        if later:
            rep.violations.append(
                f"EpochCheckpointMatchesLog: {who}: record at {last} of epoch {epoch} lies at or "
                f"after epoch {later[0][0]}'s start {later[0][1]}"
            )
            return
