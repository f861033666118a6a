"""The operator's actions: configuration changes and record deletions made with the admin client
while the cluster runs. kraft only, each behind its own bound (off by default)."""

from __future__ import annotations

from ..state import State
from .common import Ctx, min_isr
from .fetch import move_log_start


def operator_set_min_isr(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """OperatorSetMinIsr(min_isr): the operator changes the topic's min.insync.replicas
    (kafka-configs --alter, IncrementalAlterConfigs) to another value from 1 to the replica
    count (R6, R9; at most --min-isr-changes times). The new value holds at once for the
    controller's ELR rule and the leader's HW and acks=all rules (``common.min_isr``).

    KAFKA-16540 (fixed in Kafka 4.0.0, apache/kafka#17952): the ELR is only right for the value
    it was computed under. The controller now clears it in the change's own batch
    (``ConfigurationControlManager.incrementalAlterConfigs`` → ``createClearElrRecordsAsNeeded``:
    a ClearElrRecord beside the ConfigRecord; ``clear_elr_on_min_isr_change``). Without that,
    a replica left in the ELR by a shrink below the old value stays eligible while a lowered
    value lets the leader commit without it, and it can then be elected with those records
    missing. Not modelled: Kafka's ClearElrRecord also empties the last known ELR, which the
    spec does not store (its last known leader is derived; keeping it adds behaviours only);
    broker-level and cluster-level changes (one topic here)."""
    k = s.kraft
    if k.min_isr_changes >= ctx.config.min_isr_changes:
        return
    now = min_isr(ctx, s)
    clear = ctx.elr and ctx.protocol.clear_elr_on_min_isr_change
    for v in range(1, ctx.n + 1):
        if v == now:
            continue
        t = s._replace(kraft=k._replace(min_isr=v, min_isr_changes=k.min_isr_changes + 1))
        if clear and t.faults.elr:
            t = t._replace(faults=t.faults._replace(elr=0))
        out.append(((kind, (v,)), t))


def leader_delete_records(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """LeaderDeleteRecords(leader, offset): a replica that presumes to lead applies an
    operator's DeleteRecords request (kafka-delete-records, ``Admin.deleteRecords``; KIP-107,
    Kafka 0.11.0.0): its log start offset moves up to ``offset``, its epoch cache truncated from
    the start (R12; at most --delete-records times). Kafka 4.x: ``ReplicaManager.deleteRecords``
    → ``Partition.deleteRecordsOnLeader`` (the broker's own view: ``leaderLogIfLocal``; the
    request carries no leader epoch, so a deposed leader not yet told applies it too) →
    ``UnifiedLog.maybeIncrementLogStartOffset(offset, ClientRecordDeletion)``, which refuses an
    offset above the HW with OFFSET_OUT_OF_RANGE (no change: not listed) and ignores one at or
    below the log start (not listed); the offset -1 stands for the HW (listed as the HW). Every
    offset from the log start + 1 to the HW is a choice of the operator's. The request's way to
    the broker (the admin client's metadata, retries) and the operator's answer (it waits,
    DelayedDeleteRecords, for every replica's log start to follow: the low watermark) change
    nothing in the partition and are not modelled; the followers take the new log start from
    their next fetch responses (FollowerHandleFetchResponse)."""
    k = s.kraft
    if k.delete_records >= ctx.config.delete_records:
        return
    starts = s.faults.log_start
    for i, r in enumerate(s.replicas):
        if not r.alive or r.leader != i:
            continue
        for offset in range(starts[i] + 1, r.hw + 1):
            t = s._replace(kraft=k._replace(delete_records=k.delete_records + 1))
            out.append(((kind, (i, offset)), move_log_start(ctx, t, i, offset)))
