"""Kip101: the follower asks the leader for the end offset of its latest record's epoch
(LookupOffsetForEpoch) instead of truncating to its high watermark. StrongIsr still fails."""

from __future__ import annotations

from typing import ClassVar

from .replication import KafkaReplication, Out


class Kip101(KafkaReplication):
    MODULE = "Kip101"
    NEXT = (
        "ControllerElectLeader",
        "ControllerShrinkIsr",
        "BecomeLeader",
        "LeaderExpandIsr",
        "LeaderShrinkIsr",
        "LeaderWrite",
        "LeaderIncHighWatermark",
        "BecomeFollowerTruncateKip101",
        "FollowerReplicate",
    )
    PARAMS: ClassVar[dict[str, tuple[str, ...]]] = {
        **KafkaReplication.PARAMS,
        "BecomeFollowerTruncateKip101": ("leader", "replica", "disjunct", "leaderAndIsrRequest"),
    }

    def LookupOffsetForEpoch(self, s: tuple, leader: int, follower: int, epoch: int) -> int:
        offset = self.log.lookup_offset_for_epoch(s[leader], epoch)
        return s[self.HW + follower] if offset is None else offset

    def BecomeFollowerTruncateKip101(self, s: tuple, kind: int, out: Out) -> None:
        """Two disjuncts: an empty follower truncates to 0; otherwise (\\E record:
        IsLatestRecord) to LookupOffsetForEpoch of its latest record's epoch."""
        latest_epoch = self.log.latest_epoch
        for leader in self.replicas:
            for replica in self.replicas:
                log = s[replica]
                if log == 0:  # ReplicaLog!IsEmpty(replica): id 0 is the empty log
                    self.BecomeFollowerAndTruncateTo(
                        s, leader, replica, 0, kind, (leader, replica, 1), out
                    )
                else:
                    offset = self.LookupOffsetForEpoch(s, leader, replica, latest_epoch[log])
                    self.BecomeFollowerAndTruncateTo(
                        s, leader, replica, offset, kind, (leader, replica, 2), out
                    )
