"""KafkaTruncateToHighWatermark: before KIP-101 a new follower truncated to its own high
watermark. StrongIsr fails: a follower truncates committed records and is elected."""

from __future__ import annotations

from typing import ClassVar

from .replication import KafkaReplication, Out


class KafkaTruncateToHighWatermark(KafkaReplication):
    MODULE = "KafkaTruncateToHighWatermark"
    NEXT = (
        "ControllerElectLeader",
        "ControllerShrinkIsr",
        "BecomeLeader",
        "LeaderExpandIsr",
        "LeaderShrinkIsr",
        "LeaderWrite",
        "LeaderIncHighWatermark",
        "BecomeFollowerTruncateToHighWatermark",
        "FollowerReplicate",
    )
    PARAMS: ClassVar[dict[str, tuple[str, ...]]] = {
        **KafkaReplication.PARAMS,
        "BecomeFollowerTruncateToHighWatermark": ("leader", "replica", "leaderAndIsrRequest"),
    }

    def BecomeFollowerTruncateToHighWatermark(self, s: tuple, kind: int, out: Out) -> None:
        for leader in self.replicas:
            for replica in self.replicas:
                self.BecomeFollowerAndTruncateTo(
                    s, leader, replica, s[self.HW + replica], kind, (leader, replica), out
                )
