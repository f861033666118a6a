"""kip-320: Kafka 2.1, "Allow fetchers to detect and handle log truncation" (KIP-320), with
KAFKA-7128 and KAFKA-7415 shipped beside it. The default version (``DEFAULT_PROTOCOL``).

What it changes from kip-279:
* fetches and OffsetsForLeaderEpoch carry the follower's current leader epoch; a leader at another
  epoch answers FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH and serves nothing (``fenced_fetch``,
  read by the ``fetch_fenced`` hook). A follower acting on an old LeaderAndIsr (a zombie, or one
  that missed a request, R8) so cannot be counted by a leader it does not follow in that epoch;
* KAFKA-7128: a follower rejoins the ISR only once it reached the start offset of the leader's
  epoch, not just the leader's HW (``isr_join_needs_epoch_start``, read by ``isr_join_floor``): a
  new leader's HW may lag records the previous leader committed, and a follower admitted on that
  lagging HW could become leader without them;
* KAFKA-7415 (apache/kafka f2dd6aa2698, "Persist leader epoch and start offset on becoming a
  leader"), both sides of the truncation together:
  - a broker puts its leader epoch into its cache when it becomes leader, at its LEO, before any
    write (``Partition.makeLeader``: ``epochCache.assign(leaderEpoch, leaderEpochStartOffset)``;
    ``leader_epochs``), so a follower holding epochs the leader never had, newer than the
    leader's last batch, is answered with the leader's last epoch instead of UNDEFINED;
  - ``LeaderEpochFileCache.endOffsetFor`` answers an epoch below every cached one with that
    epoch and the first entry's start instead of UNDEFINED (``end_offset_for``:
    ``spec.epoch_cache.end_offset``, the rule kraft uses too). The follower looks the answered
    epoch up in its own cache by the same rule (``ReplicaFetcherThread.endOffsetForEpoch``), so
    a follower whose epochs are all above the answered one now has it "at" its first entry and
    cuts to the smaller start (to 0 here) where 2.0 kept its entries below the leader's end.
  The follower's side is otherwise 2.0's (``AbstractFetcherThread.getOffsetTruncationState``).
The walk back of kip-279 is unchanged.

Not modelled: the follower asks with its cache's latest epoch, which from 2.1 can be an epoch it
led without writing (the derived cache here forgets it and asks with its last batch's epoch).
When the leader then names an epoch between the two, 2.1's follower cuts to its LEO, which
``Log.truncateTo`` ignores, and asks the same again: it never leaves truncation (KAFKA-10706,
fixed in 2.6.1 and 2.7.0 by truncating the cache even at the log end), a liveness hole; the
spec's follower truncates as if that entry were gone (docs/design/kraft.md).
"""

from __future__ import annotations

from ..epoch_cache import end_offset
from ..log import epoch_starts
from ..state import Log
from .kip_279 import Kip279


class Kip320(Kip279):
    name = "kip-320"
    description = (
        "Kafka 2.1: KIP-279 plus fetches fenced by the current leader epoch (and KAFKA-7128,"
        " KAFKA-7415)"
    )
    fenced_fetch = True
    isr_join_needs_epoch_start = True
    # KAFKA-7415: LeaderEpochFileCache.endOffsetFor from 2.1, on the leader and the follower
    end_offset_for = staticmethod(end_offset)

    def leader_epochs(self, llog: Log, lepoch: int) -> list[tuple[int, int]]:
        """KAFKA-7415: the leader's cache holds its current epoch from ``makeLeader`` on, at the
        LEO it had then (a leader never truncates: where its current-epoch entries start)."""
        return epoch_starts(llog, lepoch)


KIP_320 = Kip320()
