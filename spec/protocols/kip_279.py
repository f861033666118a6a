"""kip-279: Kafka 2.0, "Fix log divergence between leader and follower after fast leader fail
over" (KIP-279, KAFKA-6361, apache/kafka 9679c44d2b5).

What it changes from kip-101: the truncation point (``truncation_offset``), in rounds. The
leader answers OffsetsForLeaderEpoch with the largest epoch it knows <= the asked one and that
epoch's end offset (``end_offset_for``: ``spec.epoch_cache.end_offset_kip279``,
``LeaderEpochFileCache.endOffsetFor`` at 2.0.0), still from a cache that holds only the epochs of
its log's batches (``leader_epochs``, kip-101's: nothing assigned at ``makeLeader`` before 2.1).
UNDEFINED when the asked epoch is below every cached one or no cached epoch is above it. The
follower applies the answer as ``AbstractFetcherThread.getOffsetTruncationState`` (2.0.0;
``spec.epoch_cache.truncation_state``), looking the answered epoch up in its own cache by the
same 2.0 rule:
* UNDEFINED: to the fetch offset, done (the HW the fetcher started from, or where the previous
  round cut);
* it knows no epoch <= the answered one (its own lookup is UNDEFINED: every epoch it holds is
  above it): to the leader's end offset, done. Its entries below that offset are of epochs the
  leader never had there: 2.0 keeps them (KAFKA-7415's "follower has data from leader epochs
  which the leader itself does not have"; 2.1's lookup answers this case with the follower's
  first start instead, kip_320.py);
* its largest such epoch is below the answered one: to that epoch's end, and it asks again with
  its new latest epoch (``walks_back``: the spec takes every round in one step);
* it has the epoch: to the smaller of the two end offsets, done.
Known gap (KIP-320): nothing fences a fetch from a follower at an older epoch.
"""

from __future__ import annotations

from ..epoch_cache import end_offset_kip279, truncation_state
from ..log import epoch_starts
from ..state import Log
from .kip_101 import Kip101


class Kip279(Kip101):
    name = "kip-279"
    description = "Kafka 2.0: walk back epoch by epoch until leader and follower agree on an epoch"
    walks_back = True
    # LeaderEpochFileCache.endOffsetFor, on the leader and on the follower's own cache (Kafka 2.0)
    end_offset_for = staticmethod(end_offset_kip279)

    def truncation_offset(self, flog: Log, fhw: int, llog: Log, lepoch: int) -> int:
        """KIP-279's walk back: the offset where the rounds of ``truncation_rounds`` end."""
        return self.truncation_rounds(flog, fhw, llog, lepoch)[-1][-2]

    def truncation_rounds(self, flog: Log, fhw: int, llog: Log, lepoch: int) -> list[tuple]:
        """The OffsetsForLeaderEpoch rounds of a truncating follower with log ``flog`` and HW
        ``fhw`` asking a leader with log ``llog`` at epoch ``lepoch``: per round (the epoch asked,
        the leader's answer (epoch, end), the offset cut to, done). Each round asks with the
        latest epoch of the log the previous one left; an empty log asks nothing (Kafka sends
        UNDEFINED or, from 2.1, no request, and truncates to its fetch offset, 0) and ends at 0.
        The fetch offset is the HW in the first round (``ReplicaManager.makeFollowers``), then
        where the previous round cut (``updateFetchOffsetAndMaybeMarkTruncationComplete``)."""
        leader = self.leader_epochs(llog, lepoch)
        lookup = self.end_offset_for
        rounds: list[tuple] = []
        t, fetch_offset = len(flog), fhw
        while t > 0:
            requested = flog[t - 1][1]
            answer = lookup(leader, len(llog), requested)
            t, done = truncation_state(lookup, epoch_starts(flog[:t]), t, fetch_offset, *answer)
            rounds.append((requested, answer, t, done))
            if done:
                return rounds
            fetch_offset = t
        rounds.append((None, None, 0, True))
        return rounds


KIP_279 = Kip279()
