"""Kip320FirstTry: followers fetch with the epoch of their last record and truncate when the
leader says it does not match (FollowerTruncate); no truncation on becoming follower. The HW
and ISR rules check record epochs, not the follower's current epoch, so StrongIsr fails with
three replicas."""

from __future__ import annotations

from typing import ClassVar

from .finite_log import NIL
from .kip279 import Kip279
from .replication import KafkaReplication, Out


class Kip320FirstTry(Kip279):
    MODULE = "Kip320FirstTry"
    NEXT = (
        "ControllerElectLeader",
        "ControllerShrinkIsr",
        "BecomeLeader",
        "LeaderExpandIsrBetterFencing",
        "LeaderShrinkIsrBetterFencing",
        "LeaderWrite",
        "ImprovedLeaderIncHighWatermark",
        "BecomeFollower",
        "FollowerFetch",
        "FollowerTruncate",
    )
    PARAMS: ClassVar[dict[str, tuple[str, ...]]] = {
        **KafkaReplication.PARAMS,
        "LeaderExpandIsrBetterFencing": ("leader", "replica"),
        "LeaderShrinkIsrBetterFencing": ("leader", "replica"),
        "ImprovedLeaderIncHighWatermark": ("leader",),
        "BecomeFollower": ("leader", "replica", "leaderAndIsrRequest"),
        "FollowerFetch": ("follower", "leader"),
        "FollowerTruncate": ("leader", "follower"),
    }

    def IsFollowerCaughtUpToLeaderEpoch(
        self, s: tuple, leader: int, follower: int, end_offset: int
    ) -> bool:
        """The follower follows the presumed leader and its record just below ``end_offset``
        has the epoch of the leader's record there."""
        if s[self.LDR + leader] != leader or s[self.LDR + follower] != leader:
            return False
        if end_offset == 0:
            return True
        if end_offset < 0:
            return False
        offset = end_offset - 1
        lg = self.log
        llog, flog = s[leader], s[follower]
        if offset >= lg.end[llog] or offset >= lg.end[flog]:
            return False
        return lg.record_epoch[lg.at[flog][offset]] == lg.record_epoch[lg.at[llog][offset]]

    def FollowerNeedsTruncation(self, s: tuple, follower: int, leader: int) -> bool:
        lg = self.log
        flog, llog = s[follower], s[leader]
        fend, lend = lg.end[flog], lg.end[llog]
        if fend > lend:
            return True
        if fend == 0:  # IsLatestEntry needs ~IsEmpty
            return False
        offset = fend - 1  # HasOffset(leader, offset) holds since fend <= lend
        return lg.record_epoch[lg.at[llog][offset]] != lg.record_epoch[lg.at[flog][offset]]

    def FollowerTruncate(self, s: tuple, kind: int, out: Out) -> None:
        LDR, HW = self.LDR, self.HW
        for leader in self.replicas:
            if s[LDR + leader] != leader:
                continue
            for follower in self.replicas:
                if s[LDR + follower] != leader or not self.FollowerNeedsTruncation(
                    s, follower, leader
                ):
                    continue
                off = self.FirstNonMatchingOffsetFromTail(s, leader, follower)
                new_log = self.log.truncate[s[follower]][off]
                if new_log is None:
                    continue
                t = list(s)
                t[follower] = new_log
                hw = s[HW + follower]
                t[HW + follower] = off if off < hw else hw
                out.append(((kind, (leader, follower)), tuple(t)))

    def ImprovedLeaderIncHighWatermark(self, s: tuple, kind: int, out: Out) -> None:
        for leader in self.replicas:
            if s[self.LDR + leader] != leader:
                continue
            hw = s[self.HW + leader]
            if hw >= self.log.end[s[leader]]:  # \E record : HasEntry(leader, record, hw)
                continue
            if all(
                self.IsFollowerCaughtUpToLeaderEpoch(s, leader, f, hw + 1)
                for f in self.members[s[self.ISR + leader]]
            ):
                t = list(s)
                t[self.HW + leader] = hw + 1
                out.append(((kind, (leader,)), tuple(t)))

    def FollowerFetch(self, s: tuple, kind: int, out: Out) -> None:
        HW = self.HW
        end = self.log.end
        for follower in self.replicas:
            fend = end[s[follower]]
            for leader in self.replicas:
                if not self.IsFollowerCaughtUpToLeaderEpoch(s, leader, follower, fend):
                    continue
                new_log = self.ReplicateTo(s, leader, follower)
                if new_log is None:
                    continue
                leader_hw = s[HW + leader]
                t = list(s)
                t[follower] = new_log
                t[HW + follower] = leader_hw if leader_hw < fend + 1 else fend + 1
                out.append(((kind, (follower, leader)), tuple(t)))

    def LeaderShrinkIsrBetterFencing(self, s: tuple, kind: int, out: Out) -> None:
        for leader in self.replicas:
            isr = s[self.ISR + leader]
            end_offset = self.log.end[s[leader]]
            for replica in self.members[isr & ~(1 << leader)]:
                if self.IsFollowerCaughtUpToLeaderEpoch(s, leader, replica, end_offset):
                    continue
                t = self.QuorumUpdateLeaderAndIsr(s, leader, isr & ~(1 << replica))
                if t is not None:
                    out.append(((kind, (leader, replica)), t))

    def HasHighWatermarkReachedCurrentEpoch(self, s: tuple, leader: int) -> bool:
        lg = self.log
        llog = s[leader]
        hw = s[self.HW + leader]
        if hw == lg.end[llog]:
            return True
        if hw > lg.end[llog]:
            return False
        rec = lg.at[llog][hw]
        return rec != NIL and lg.record_epoch[rec] == s[self.EP + leader]

    def LeaderExpandIsrBetterFencing(self, s: tuple, kind: int, out: Out) -> None:
        for leader in self.replicas:
            isr = s[self.ISR + leader]
            leader_hw = s[self.HW + leader]
            for replica in self.members[self.all_replicas & ~isr]:
                if not (
                    self.IsFollowerCaughtUpToLeaderEpoch(s, leader, replica, leader_hw)
                    and self.HasHighWatermarkReachedCurrentEpoch(s, leader)
                ):
                    continue
                t = self.QuorumUpdateLeaderAndIsr(s, leader, isr | 1 << replica)
                if t is not None:
                    out.append(((kind, (leader, replica)), t))

    def BecomeFollower(self, s: tuple, kind: int, out: Out) -> None:
        """No truncation on becoming follower: only the cached leader/epoch/ISR change."""
        n, EP = self.n, self.EP
        for leader in self.replicas:
            for replica in self.replicas:
                if leader == replica:
                    continue
                for e in range(s[EP + replica] + 1, s[self.NLE]):
                    code = s[self.REQ + e]
                    if (code >> n) - 1 != leader:
                        continue
                    t = list(s)
                    t[EP + replica] = e
                    t[self.LDR + replica] = leader
                    t[self.ISR + replica] = code & self.all_replicas
                    out.append(((kind, (leader, replica, e)), tuple(t)))
