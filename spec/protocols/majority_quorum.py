"""majority-quorum: R17, a Raft-like design for comparison (not a Kafka release).

What it changes from kip-320: there is no ISR (``majority_quorum``; the ISR actions do not
exist, so KAFKA-7128's ISR-join rule is moot and off). A record commits once a majority of all
assigned replicas holds it, and the HW advances only onto an entry of the leader's own epoch
(Raft's rule); the controller elects the most up-to-date replica of a live majority. Fetch
fencing and KIP-279's truncation are kept.
"""

from __future__ import annotations

from .kip_320 import Kip320


class MajorityQuorum(Kip320):
    name = "majority-quorum"
    description = (
        "R17 for comparison (Raft-like): commit at a majority of all replicas (current-epoch entries),"
        " elect the most up-to-date of a live majority; no ISR"
    )
    majority_quorum = True
    isr_join_needs_epoch_start = False
    startup_needs_failure = False  # (no ISR seat to miss: a restarted replica is sent the state)


MAJORITY_QUORUM = MajorityQuorum()
