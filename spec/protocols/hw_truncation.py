"""hw-truncation: the seeds' protocol (R10, R13), before leader epochs.

What it does: a replica that becomes follower truncates its log to its high watermark at once
(R10, "truncate the log to the HW"), and a restarted broker truncates to its HW checkpoint (R13).
It never asks the leader where the logs diverge. Known to lose acknowledged records: the follower's
HW lags the leader's, so truncating to it drops committed records a leader change then loses
(KIP-101's "Scenario 1", KAFKA-1211); the checker finds it at 2 replicas.
"""

from __future__ import annotations

from ..state import Log
from .base import ProtocolVersion


class HwTruncation(ProtocolVersion):
    name = "hw-truncation"
    description = "the seeds' protocol: a new follower and a restarted broker truncate to their high watermark"
    truncate_to_hw_on_become_follower = True
    truncate_to_hw_on_restart = True

    def truncation_offset(self, flog: Log, fhw: int, llog: Log, lepoch: int) -> int:
        # never asked (no FollowerTruncate): a follower truncates to its HW
        return min(fhw, len(flog))


HW_TRUNCATION = HwTruncation()
