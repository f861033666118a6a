"""Kip320: the fixed protocol. Followers fetch, and leaders advance the HW and change the ISR,
only when leader and follower are on the same leader epoch (IsFollowingLeaderEpoch); truncation
on becoming follower is fenced the same way. StrongIsr holds."""

from __future__ import annotations

from typing import ClassVar

from .kip279 import Kip279
from .replication import NONE, KafkaReplication, Out


class Kip320(Kip279):
    MODULE = "Kip320"
    NEXT = (
        "ControllerElectLeader",
        "ControllerShrinkIsr",
        "BecomeLeader",
        "FencedLeaderExpandIsr",
        "FencedLeaderShrinkIsr",
        "LeaderWrite",
        "FencedLeaderIncHighWatermark",
        "FencedBecomeFollowerAndTruncate",
        "FencedFollowerFetch",
    )
    PARAMS: ClassVar[dict[str, tuple[str, ...]]] = {
        **KafkaReplication.PARAMS,
        "FencedLeaderExpandIsr": ("leader", "follower"),
        "FencedLeaderShrinkIsr": ("leader", "follower", "disjunct"),
        "FencedLeaderIncHighWatermark": ("leader",),
        "FencedBecomeFollowerAndTruncate": ("leader", "replica", "leaderAndIsrRequest"),
        "FencedFollowerFetch": ("follower", "leader"),
    }

    def IsFollowingLeaderEpoch(self, s: tuple, leader: int, follower: int) -> bool:
        return (
            s[self.LDR + leader] == leader
            and s[self.LDR + follower] == leader
            and s[self.EP + follower] == s[self.EP + leader]
        )

    def FencedFollowerFetch(self, s: tuple, kind: int, out: Out) -> None:
        """\\E follower, leader: the follower's cached leader is the only candidate."""
        LDR, HW = self.LDR, self.HW
        end = self.log.end
        for follower in self.replicas:
            leader = s[LDR + follower]
            if leader == NONE or not self.IsFollowingLeaderEpoch(s, leader, follower):
                continue
            new_log = self.ReplicateTo(s, leader, follower)
            if new_log is None:
                continue
            new_end = end[s[follower]] + 1
            leader_hw = s[HW + leader]
            t = list(s)
            t[follower] = new_log
            t[HW + follower] = leader_hw if leader_hw < new_end else new_end
            out.append(((kind, (follower, leader)), tuple(t)))

    def FencedLeaderIncHighWatermark(self, s: tuple, kind: int, out: Out) -> None:
        """No presumes-leadership conjunct of its own: with an empty cached ISR the \\A is
        vacuous, exactly as in the TLA+."""
        end = self.log.end
        for leader in self.replicas:
            hw = s[self.HW + leader]
            if hw >= end[s[leader]]:  # ReplicaLog!HasOffset(leader, leaderHw)
                continue
            if all(
                self.IsFollowingLeaderEpoch(s, leader, f) and hw < end[s[f]]
                for f in self.members[s[self.ISR + leader]]
            ):
                t = list(s)
                t[self.HW + leader] = hw + 1
                out.append(((kind, (leader,)), tuple(t)))

    def FencedLeaderShrinkIsr(self, s: tuple, kind: int, out: Out) -> None:
        """Either reason suffices, and each disjunct that holds yields the successor: TLC
        branches on a disjunction inside an action, so it generates the state twice when the
        follower is both on another epoch and behind (same distinct states, TLC's generated
        count)."""
        end = self.log.end
        for leader in self.replicas:
            isr = s[self.ISR + leader]
            leader_end = end[s[leader]]
            for follower in self.members[isr & ~(1 << leader)]:
                t = self.QuorumUpdateLeaderAndIsr(s, leader, isr & ~(1 << follower))
                if t is None:
                    continue
                if not self.IsFollowingLeaderEpoch(s, leader, follower):
                    out.append(((kind, (leader, follower, 1)), t))
                if end[s[follower]] < leader_end:
                    out.append(((kind, (leader, follower, 2)), t))

    def HasHighWatermarkReachedCurrentEpoch(self, s: tuple, leader: int) -> bool:
        lg = self.log
        llog = s[leader]
        hw = s[self.HW + leader]
        lend = lg.end[llog]
        if hw == lend:
            return True
        return hw < lend and lg.record_epoch[lg.at[llog][hw]] == s[self.EP + leader]

    def HasFollowerReachedHighWatermark(self, s: tuple, leader: int, follower: int) -> bool:
        hw = s[self.HW + leader]
        return hw == 0 or (hw > 0 and hw - 1 < self.log.end[s[follower]])

    def FencedLeaderExpandIsr(self, s: tuple, kind: int, out: Out) -> None:
        for leader in self.replicas:
            isr = s[self.ISR + leader]
            for follower in self.members[self.all_replicas & ~isr]:
                if not (
                    self.IsFollowingLeaderEpoch(s, leader, follower)
                    and self.HasFollowerReachedHighWatermark(s, leader, follower)
                    and self.HasHighWatermarkReachedCurrentEpoch(s, leader)
                ):
                    continue
                t = self.QuorumUpdateLeaderAndIsr(s, leader, isr | 1 << follower)
                if t is not None:
                    out.append(((kind, (leader, follower)), t))

    def FencedBecomeFollowerAndTruncate(self, s: tuple, kind: int, out: Out) -> None:
        """Truncation is computed against a leader that already presumes leadership in the
        request's epoch. (The ``leader = None`` disjunct is unreachable: leader ranges over
        Replicas.)"""
        n, EP, LDR, HW, REQ = self.n, self.EP, self.LDR, self.HW, self.REQ
        mask = self.all_replicas
        # Requests first: the leader must already presume leadership in the request's epoch,
        # which rules out most (leader, request) pairs before the replica loop. Same bindings.
        for e in range(s[self.NLE]):
            code = s[REQ + e]
            leader = (code >> n) - 1
            if leader == NONE or s[LDR + leader] != leader or s[EP + leader] != e:
                continue
            for replica in self.replicas:
                if replica == leader or not e > s[EP + replica]:
                    continue
                off = self.FirstNonMatchingOffsetFromTail(s, leader, replica)
                new_log = self.log.truncate[s[replica]][off]
                if new_log is None:
                    continue
                hw = s[HW + replica]
                t = list(s)
                t[replica] = new_log
                t[EP + replica] = e
                t[LDR + replica] = leader
                t[self.ISR + replica] = code & mask
                t[HW + replica] = off if off < hw else hw
                out.append(((kind, (leader, replica, e)), tuple(t)))
