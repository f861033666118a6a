"""kip-101: Kafka 0.11 to 1.1, "Alter Replication Protocol to use Leader Epoch rather than High
Water Mark for Truncation" (KIP-101, KAFKA-1211).

What it changes from hw-truncation:
* a new follower (R10) and a restarted broker (R13) keep their log; the fetcher starts in the
  truncating state and first asks the leader (``truncate_to_hw_on_*`` off, so FollowerTruncate
  exists);
* the question is OffsetsForLeaderEpoch with the follower's latest epoch (``truncation_offset``,
  one round). The leader looks it up in its leader-epoch cache (``leader_epochs``), which in
  these releases holds only the epochs of the batches in its log: an epoch is assigned when a
  batch is appended (``Log.append`` -> ``LeaderEpochFileCache.assign``), never when a broker
  becomes leader, so a leader that has not written in its epoch yet does not know it. The
  answer (``spec.epoch_cache.end_offset_kip101``, ``LeaderEpochFileCache.endOffsetFor`` at
  0.11.0.0 and 1.1.0) is the LEO for the leader's latest cached epoch, the start of the first
  epoch above the asked one, or UNDEFINED when the asked epoch is below every cached one or no
  cached epoch is above it;
* the follower truncates to that offset (never past its LEO), or, on UNDEFINED, to its high
  watermark (0.11 ``ReplicaFetcherThread.maybeTruncate``: ``highWatermark(replica, ...)``;
  1.1: the fetcher's initial offset, which ``ReplicaManager.makeFollowers`` sets to the HW).
Known gap (KIP-279, KAFKA-6361): after fast leader changes one round can stop above the true
divergence point, so logs diverge below the HW.
"""

from __future__ import annotations

from ..epoch_cache import end_offset_kip101
from ..log import UNDEFINED, epoch_starts, last_epoch
from ..state import Log
from .hw_truncation import HwTruncation


class Kip101(HwTruncation):
    name = "kip-101"
    description = (
        "Kafka 0.11-1.1: truncate to the leader's end offset of the follower's last leader epoch"
    )
    truncate_to_hw_on_become_follower = False
    truncate_to_hw_on_restart = False
    startup_needs_failure = True  # (as kafka-0.10: no broker epochs before KIP-380, Kafka 2.2)

    def leader_epochs(self, llog: Log, lepoch: int) -> list[tuple[int, int]]:
        """The leader's leader-epoch cache, [(epoch, start offset)]: before Kafka 2.1 the epochs
        of its log's batches only (assigned on append; none at ``Partition.makeLeader``)."""
        return epoch_starts(llog)

    def truncation_offset(self, flog: Log, fhw: int, llog: Log, lepoch: int) -> int:
        """One OffsetsForLeaderEpoch round with the follower's last epoch; truncate to the
        leader's end offset for it. No answer (UNDEFINED): to the HW, as 0.11-1.1 did."""
        if not flog:
            return 0
        end = end_offset_kip101(self.leader_epochs(llog, lepoch), len(llog), last_epoch(flog))
        if end == UNDEFINED:
            return min(fhw, len(flog))
        return min(end, len(flog))


KIP_101 = Kip101()
