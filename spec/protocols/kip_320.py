"""kip-320: Kafka 2.1, "Allow fetchers to detect and handle log truncation" (KIP-320), with
KAFKA-7128 shipped beside it. The default version (``DEFAULT_PROTOCOL``).

What it changes from kip-279:
* fetches and OffsetsForLeaderEpoch carry the follower's current leader epoch; a leader at another
  epoch answers FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH and serves nothing (``fenced_fetch``,
  read by the ``fetch_fenced`` hook). A follower acting on an old LeaderAndIsr (a zombie, or one
  that missed a request, R8) so cannot be counted by a leader it does not follow in that epoch;
* KAFKA-7128: a follower rejoins the ISR only once it reached the start offset of the leader's
  epoch, not just the leader's HW (``isr_join_needs_epoch_start``, read by ``isr_join_floor``): a
  new leader's HW may lag records the previous leader committed, and a follower admitted on that
  lagging HW could become leader without them.
* KAFKA-7415 (2.1.0): the leader answers an epoch below every one it has with that epoch and the
  start of its first (``answers_below_first_epoch``), where 2.0 answered UNDEFINED.
The truncation rule is otherwise kip-279's.
"""

from __future__ import annotations

from .kip_279 import Kip279


class Kip320(Kip279):
    name = "kip-320"
    description = (
        "Kafka 2.1: KIP-279 plus fetches fenced by the current leader epoch (and KAFKA-7128)"
    )
    fenced_fetch = True
    isr_join_needs_epoch_start = True
    answers_below_first_epoch = True  # KAFKA-7415 (2.1.0): see Kip279


KIP_320 = Kip320()
