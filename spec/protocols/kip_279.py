"""kip-279: Kafka 2.0, "Fix log divergence between leader and follower after fast leader fail
over" (KIP-279, KAFKA-6361).

What it changes from kip-101: the truncation point (``truncation_offset``). The leader answers
OffsetsForLeaderEpoch with the largest epoch it has <= the requested one and that epoch's end
offset; the follower truncates to the smaller of that and its own end offset for that epoch, and
asks again until the epochs agree: it walks back epoch by epoch to the true divergence point
(``walks_back``). Known gap (KIP-320): nothing fences a fetch from a follower at an older epoch.
"""

from __future__ import annotations

from ..log import UNDEFINED, end_offset_kip279, epoch_starts
from ..state import Log
from .kip_101 import Kip101


class Kip279(Kip101):
    name = "kip-279"
    description = "Kafka 2.0: walk back epoch by epoch until leader and follower agree on an epoch"
    walks_back = True
    answers_below_first_epoch = False  # Kafka 2.0's leader answers an epoch below every one it
    # has with UNDEFINED; since 2.1 (KAFKA-7415, ``LeaderEpochFileCache.endOffsetFor``) with the
    # asked epoch and the start of its first, so the follower truncates to where the leader's
    # epochs begin instead of to its HW (kip-320 sets it)

    def truncation_offset(self, flog: Log, fhw: int, llog: Log, lepoch: int) -> int:
        """KIP-279 as ``AbstractFetcherThread.getOffsetTruncationState`` applies it: the leader
        answers with the largest epoch it has <= the asked one and that epoch's end offset; the
        follower looks that epoch up in its own log: if it has it, it truncates to the smaller
        of the two end offsets and is done; if its largest epoch <= it is a smaller one, it
        truncates to that epoch's end and asks again (the walk back, epoch by epoch); if it has
        none, to the leader's end offset. An answer with no offset (UNDEFINED): to the HW, the
        fetcher's initial offset. Never past its own LEO."""
        t = len(flog)
        while t > 0:
            requested = flog[t - 1][1]
            epoch, end = end_offset_kip279(llog, lepoch, requested)
            if epoch == UNDEFINED and self.answers_below_first_epoch:
                first = epoch_starts(llog, lepoch)
                if first and first[0][0] > requested:
                    epoch, end = requested, first[0][1]
            if epoch == UNDEFINED:
                return min(fhw, t)
            own_epoch, own_end = end_offset_kip279(flog[:t], None, epoch)
            if own_epoch == UNDEFINED:
                return min(t, end)
            if own_epoch != epoch:
                t = min(t, own_end)
                continue
            return min(t, end, own_end)
        return 0


KIP_279 = Kip279()
