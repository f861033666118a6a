"""kip-279: Kafka 2.0, "Fix log divergence between leader and follower after fast leader fail
over" (KIP-279, KAFKA-6361).

What it changes from kip-101: the truncation point (``truncation_offset``). The leader answers
OffsetsForLeaderEpoch with the largest epoch it has <= the requested one and that epoch's end
offset; the follower truncates to the smaller of that and its own end offset for that epoch, and
asks again until the epochs agree: it walks back epoch by epoch to the true divergence point
(``walks_back``). Known gap (KIP-320): nothing fences a fetch from a follower at an older epoch.
"""

from __future__ import annotations

from ..log import UNDEFINED, end_offset_kip279
from ..state import Log
from .kip_101 import Kip101


class Kip279(Kip101):
    name = "kip-279"
    description = "Kafka 2.0: walk back epoch by epoch until leader and follower agree on an epoch"
    walks_back = True

    def truncation_offset(self, flog: Log, fhw: int, llog: Log, lepoch: int) -> int:
        """KIP-279: the leader answers with the largest epoch it has <= the requested one and
        that epoch's end offset; the follower truncates to the smaller of that and its own end
        offset for that epoch, and asks again until the epochs agree (walk back epoch by epoch)."""
        t = len(flog)
        while t > 0:
            requested = flog[t - 1][1]
            epoch, end = end_offset_kip279(llog, lepoch, requested)
            if epoch == UNDEFINED:
                return min(fhw, t)
            _, own_end = end_offset_kip279(flog[:t], None, epoch)
            new_t = min(t, end, own_end)
            if epoch == requested:
                return new_t
            t = new_t
        return 0


KIP_279 = Kip279()
