"""kip-101: Kafka 0.11, "Alter Replication Protocol to use Leader Epoch rather than High Watermark
for Truncation" (KIP-101, KAFKA-1211).

What it changes from hw-truncation:
* a new follower (R10) and a restarted broker (R13) keep their log; the fetcher starts in the
  truncating state and first asks the leader (``truncate_to_hw_on_*`` off, so FollowerTruncate
  exists);
* the question is OffsetsForLeaderEpoch with the epoch of the follower's last entry; the leader
  answers with the start offset of the first epoch above it (its LEO for its current epoch), and
  the follower truncates there, once (``truncation_offset``). No answer (UNDEFINED): the HW, as
  0.11 did.
Known gap (KIP-279, KAFKA-6361): after fast leader changes one round can stop above the true
divergence point, so logs diverge below the HW.
"""

from __future__ import annotations

from ..log import UNDEFINED, end_offset_kip101, last_epoch
from ..state import Log
from .hw_truncation import HwTruncation


class Kip101(HwTruncation):
    name = "kip-101"
    description = (
        "Kafka 0.11: truncate to the leader's end offset of the follower's last leader epoch"
    )
    truncate_to_hw_on_become_follower = False
    truncate_to_hw_on_restart = False
    startup_needs_failure = True  # (as kafka-0.10: no broker epochs before KIP-380, Kafka 2.2)

    def truncation_offset(self, flog: Log, fhw: int, llog: Log, lepoch: int) -> int:
        """One OffsetsForLeaderEpoch round with the follower's last epoch; truncate to the
        leader's end offset for it. No answer (UNDEFINED): fall back to the HW, as 0.11 did."""
        if not flog:
            return 0
        end = end_offset_kip101(llog, lepoch, last_epoch(flog))
        if end == UNDEFINED:
            return min(fhw, len(flog))
        return min(end, len(flog))


KIP_101 = Kip101()
