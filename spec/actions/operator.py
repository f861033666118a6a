"""The operator's actions: configuration changes made with the admin client while the cluster
runs. kraft only, each behind its own bound (off by default)."""

from __future__ import annotations

from ..state import State
from .common import Ctx, min_isr


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
