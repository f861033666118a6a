"""Building trace events (traces/FORMAT.md): a Lamport clock per node and the local state a node
can see after a step. Logs are traced as deltas (``log_truncate``, ``log_append``) so long runs do not
write the whole log on every event; ``full_log`` adds the complete log for small runs (simulation).

Spec action names (docs/PROTOCOL.md vocabulary) are used where a step is one of them; everything
else is marked ``"impl": true`` so a validator can skip it.
"""

from __future__ import annotations

from typing import Any

SPEC_ACTIONS = frozenset(
    {
        "ControllerElectLeader",
        "ControllerShrinkIsr",
        "BrokerBecomeLeader",
        "BrokerBecomeFollower",
        "BrokerIgnoreStaleRequest",
        "NetworkLoseLeaderAndIsr",
        "ProducerSend",
        # the idempotent producer's own steps (node "producer", R6, R15)
        "ProducerCompleteBatch",
        "ProducerBumpEpoch",
        "FollowerFetch",
        "FollowerTruncate",
        "LeaderShrinkIsr",
        "LeaderExpandIsr",
        "ConsumerFetch",
        "BrokerCheckpointHw",
        "BrokerFlush",
        "BrokerCrash",
        "BrokerRestart",
        # kraft (issue 18): the split fetch, AlterPartition, partition changes, registration
        "FollowerSendFetch",
        "LeaderHandleFetch",
        "FollowerHandleFetchResponse",
        "LeaderSendAlterPartition",
        "ControllerHandleAlterPartition",
        "BrokerApplyPartitionChange",
        "BrokerRegister",
        # kraft's log start offset (issue 28 item 3, R12; core/logstart.py)
        "LeaderDeleteRecords",
        "BrokerDeleteOldSegment",
        "FollowerHandleOffsetOutOfRange",
    }
)


class LamportClock:
    def __init__(self, start: int = 0) -> None:
        self.value = start

    def tick(self) -> int:
        self.value += 1
        return self.value

    def merge(self, other: int) -> int:
        self.value = max(self.value, other) + 1
        return self.value


def event(
    clock: int,
    node: int | str,
    action: str,
    args: dict[str, Any],
    *,
    now_ms: int,
    tp: tuple[str, int] | None = None,
    state: dict[str, Any] | None = None,
) -> dict[str, Any]:
    ev: dict[str, Any] = {"clock": clock, "node": node, "action": action, "args": args}
    if action not in SPEC_ACTIONS:
        ev["impl"] = True
    ev["time_ms"] = now_ms
    if tp is not None:
        ev["topic"], ev["partition"] = tp
    if state is not None:
        ev["state"] = state
    return ev
