"""Kip279: the follower truncates to one past the last offset whose record matches the
leader's (FirstNonMatchingOffsetFromTail). Holds with two replicas; with three, fast leader
changes let a follower truncate against a leader that never took over (StrongIsr fails)."""

from __future__ import annotations

from typing import ClassVar

from .replication import KafkaReplication, Out


class Kip279(KafkaReplication):
    MODULE = "Kip279"
    NEXT = (
        "ControllerElectLeader",
        "ControllerShrinkIsr",
        "BecomeLeader",
        "LeaderExpandIsr",
        "LeaderShrinkIsr",
        "LeaderWrite",
        "LeaderIncHighWatermark",
        "BecomeFollowerTruncateKip279",
        "FollowerReplicate",
    )
    PARAMS: ClassVar[dict[str, tuple[str, ...]]] = {
        **KafkaReplication.PARAMS,
        "BecomeFollowerTruncateKip279": ("leader", "replica", "disjunct", "leaderAndIsrRequest"),
    }

    def FirstNonMatchingOffsetFromTail(self, s: tuple, leader: int, follower: int) -> int:
        return self.log.first_non_matching_from_tail(s[leader], s[follower])

    def BecomeFollowerTruncateKip279(self, s: tuple, kind: int, out: Out) -> None:
        """Two disjuncts, both kept: an empty follower truncates to 0, and any follower truncates
        to FirstNonMatchingOffsetFromTail (also 0 when it is empty, so an empty follower yields
        each successor twice, as TLC generates it twice)."""
        for leader in self.replicas:
            for replica in self.replicas:
                if s[replica] == 0:  # ReplicaLog!IsEmpty(replica)
                    self.BecomeFollowerAndTruncateTo(
                        s, leader, replica, 0, kind, (leader, replica, 1), out
                    )
                offset = self.FirstNonMatchingOffsetFromTail(s, leader, replica)
                self.BecomeFollowerAndTruncateTo(
                    s, leader, replica, offset, kind, (leader, replica, 2), out
                )
