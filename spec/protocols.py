"""Protocol versions. Each replaces only the truncation/fencing rule (R10, R13, KIP-101/279/320),
or, for the three design comparisons, one more rule: the new leader's HW (original-design, R16),
the commit and election rules (majority-quorum, R17), the election's eligible set (kip-966).

A version answers four questions:
* what a replica does to its log on becoming follower (R10) and on restart (R13);
* how a truncating follower picks its truncation point from the leader's answer (KIP-101/279);
* whether fetches carry the follower's leader epoch and are fenced when it differs (KIP-320);
* whether a follower must reach the leader's epoch start offset before rejoining the ISR
  (KAFKA-7128, shipped with KIP-320 in Kafka 2.1: a new leader's lagging HW must not admit a
  follower that lacks records the previous leader already committed).
"""

from __future__ import annotations

from dataclasses import dataclass

from .log import UNDEFINED, end_offset_kip101, end_offset_kip279, last_epoch
from .state import Log


@dataclass(frozen=True)
class ProtocolVersion:
    name: str
    description: str
    truncate_to_hw_on_become_follower: bool  # seeds: R10 "truncate the log to the HW"
    truncate_to_hw_on_restart: bool  # seeds: R13 "truncates its log to [the HW checkpoint]"
    fenced_fetch: bool  # KIP-320: fetch and OffsetsForLeaderEpoch carry the current leader epoch
    isr_join_needs_epoch_start: bool  # KAFKA-7128
    new_leader_hw_is_leo: bool = False  # R16 original design: a new leader sets HW := its LEO
    majority_quorum: bool = False  # R17: commit at a majority, elect the most up-to-date
    eligible_leader_replicas: bool = False  # KIP-966: ELR, HW needs min ISR, unclean shutdowns
    broker_epoch_fencing: bool = False  # KIP-380 (2.2): requests sent to a broker's previous
    # incarnation are rejected after it restarts (KRaft: broker epochs do the same)
    truncate_on_divergence: bool = False  # KIP-320's first design: no truncation phase on
    # becoming follower; a fetch carries the epoch of the follower's last entry and the leader
    # answers LOG_TRUNCATION when its own log disagrees there; the follower then truncates
    split_fetch: bool = False  # kraft: the fetch as request and delayed response (spec.Kraft)

    def truncation_offset(self, flog: Log, fhw: int, llog: Log, lepoch: int) -> int:
        """Where a follower with log ``flog`` and HW ``fhw`` truncates, given the leader's log and
        current epoch (only for the epoch-based versions)."""
        raise NotImplementedError


class HwTruncation(ProtocolVersion):
    def truncation_offset(self, flog, fhw, llog, lepoch):  # never asked: it truncates to HW
        return min(fhw, len(flog))


class Kip101(ProtocolVersion):
    def truncation_offset(self, flog, fhw, llog, lepoch):
        """One OffsetsForLeaderEpoch round with the follower's last epoch; truncate to the
        leader's end offset for it. No answer (UNDEFINED): fall back to the HW, as 0.11 did."""
        if not flog:
            return 0
        end = end_offset_kip101(llog, lepoch, last_epoch(flog))
        if end == UNDEFINED:
            return min(fhw, len(flog))
        return min(end, len(flog))


class Kip279(ProtocolVersion):
    def truncation_offset(self, flog, fhw, llog, lepoch):
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


HW_TRUNCATION = HwTruncation(
    "hw-truncation",
    "the seeds' protocol: a new follower and a restarted broker truncate to their high watermark",
    truncate_to_hw_on_become_follower=True,
    truncate_to_hw_on_restart=True,
    fenced_fetch=False,
    isr_join_needs_epoch_start=False,
)
KIP_101 = Kip101(
    "kip-101",
    "Kafka 0.11: truncate to the leader's end offset of the follower's last leader epoch",
    truncate_to_hw_on_become_follower=False,
    truncate_to_hw_on_restart=False,
    fenced_fetch=False,
    isr_join_needs_epoch_start=False,
)
KIP_279 = Kip279(
    "kip-279",
    "Kafka 2.0: walk back epoch by epoch until leader and follower agree on an epoch",
    truncate_to_hw_on_become_follower=False,
    truncate_to_hw_on_restart=False,
    fenced_fetch=False,
    isr_join_needs_epoch_start=False,
)
KIP_320 = Kip279(
    "kip-320",
    "Kafka 2.1: KIP-279 plus fetches fenced by the current leader epoch (and KAFKA-7128)",
    truncate_to_hw_on_become_follower=False,
    truncate_to_hw_on_restart=False,
    fenced_fetch=True,
    isr_join_needs_epoch_start=True,
)

KIP_320_FIRST_TRY = Kip279(
    "kip-320-first-try",
    "KIP-320's first design (reworked before release): fetches carry the follower's last fetched"
    " epoch, not its current leader epoch; truncation only on a LOG_TRUNCATION answer",
    truncate_to_hw_on_become_follower=False,
    truncate_to_hw_on_restart=False,
    fenced_fetch=False,
    isr_join_needs_epoch_start=True,
    truncate_on_divergence=True,
)
"""KIP-320's first attempt, as its discussion and the public TLA+ module Kip320FirstTry describe
it. The one rule it changes from kip-279: a follower does not truncate when it becomes follower;
it fetches at once, its fetch carrying the epoch of its last entry, and the leader checks that
epoch against its own entry at the offset before the fetch offset. A match proves the logs agree
up to the fetch offset, so the leader counts the fetch (remote LEO, HW, ISR); a mismatch (or a
follower log longer than the leader's) is answered LOG_TRUNCATION and the follower truncates by
KIP-279's walk back. What it misses: nothing checks that the follower is at the leader's
*current* epoch, so a follower still acting on an older LeaderAndIsr is counted by a leader it is
not following in that epoch; when it later applies a LeaderAndIsr naming a would-be leader with a
different log, it truncates records the HW already covered. The released KIP-320 added the
current leader epoch to fetches (``fenced_fetch``) and kept truncation on becoming follower. It
keeps KAFKA-7128's ISR-join rule, as the public module does."""

ORIGINAL_DESIGN = HwTruncation(
    "original-design",
    "seed 004 (R16): the first surviving ISR member to register leads and sets HW := its LEO;"
    " followers truncate to their HW",
    truncate_to_hw_on_become_follower=True,
    truncate_to_hw_on_restart=True,
    fenced_fetch=False,
    isr_join_needs_epoch_start=False,
    new_leader_hw_is_leo=True,
)
KIP_966 = Kip279(
    "kip-966",
    "Kafka 3.7+: kip-320 plus eligible leader replicas (HW needs min ISR; an unclean shutdown"
    " makes a replica ineligible; broker epochs fence requests to a previous incarnation)",
    truncate_to_hw_on_become_follower=False,
    truncate_to_hw_on_restart=False,
    fenced_fetch=True,
    isr_join_needs_epoch_start=True,
    eligible_leader_replicas=True,
    broker_epoch_fencing=True,
)
MAJORITY_QUORUM = Kip279(
    "majority-quorum",
    "R17 for comparison (Raft-like): commit at a majority of all replicas (current-epoch entries),"
    " elect the most up-to-date of a live majority; no ISR",
    truncate_to_hw_on_become_follower=False,
    truncate_to_hw_on_restart=False,
    fenced_fetch=True,
    isr_join_needs_epoch_start=False,
    majority_quorum=True,
)


@dataclass(frozen=True)
class KraftVersion(Kip279):
    """Kafka 3.7+/4.x replication as far as issue 18's step 1 goes (docs/design/kraft.md): the
    fetch split into FollowerSendFetch, LeaderHandleFetch and FollowerHandleFetchResponse
    (spec/actions/fetch.py), DivergingEpoch truncation in the response (no truncation phase),
    broker epochs. Election, ISR changes and the HW rule are kip-966's (ELR, the HW needs min ISR,
    unclean shutdowns make a replica ineligible): the closest of today's rules to KRaft, and the
    one under which a lossy restart is reported to the controller. Step 2 (part): ISR changes are
    asynchronous AlterPartition requests (spec/actions/alter_partition.py) with the maximal ISR
    and KIP-903's broker epochs; every controller write still bumps the leader epoch (the
    partition epoch apart, KAFKA-15021, and KIP-841 are not modelled yet).

    Each guard is a field, so a test can build the version without it (``dataclasses.replace``)."""

    response_guard: bool = True  # a response is applied only if the follower's fetch offset and
    # leader epoch did not change while it was in flight (AbstractFetcherThread; KAFKA-18991)
    fresh_hw_in_response: bool = False  # True: the response carries the HW after the leader
    # applied the fetch (before KAFKA-7104) instead of the one read with the records
    count_diverging_fetch: bool = False  # True: the leader counts a diverging fetch's offset as
    # the follower's LEO (KAFKA-13141's bug) instead of ignoring it
    fence_stale_fetch: bool = True  # a fetch whose broker epoch is older than the one the
    # leader last counted for that follower is rejected, STALE_BROKER_EPOCH (KAFKA-15221)
    broker_epoch_check: bool = True  # KIP-903: the controller accepts an ISR expansion only if
    # the broker epoch of the fetch that justified it is the follower's registered one
    maximal_isr: bool = True  # the HW counts the ISR with the proposed one while an
    # AlterPartition is in flight; False: the proposed ISR alone


KRAFT = KraftVersion(
    "kraft",
    "Kafka 3.7+/4.x (issue 18, steps 1-2 in part): kip-966's election rules with the fetch split"
    " into request and delayed response, DivergingEpoch truncation, broker epochs, and"
    " asynchronous AlterPartition with the maximal ISR",
    truncate_to_hw_on_become_follower=False,
    truncate_to_hw_on_restart=False,
    fenced_fetch=True,
    isr_join_needs_epoch_start=True,
    eligible_leader_replicas=True,
    broker_epoch_fencing=True,
    split_fetch=True,
)

PROTOCOLS: dict[str, ProtocolVersion] = {
    p.name: p
    for p in (
        HW_TRUNCATION,
        ORIGINAL_DESIGN,
        KIP_101,
        KIP_279,
        KIP_320_FIRST_TRY,
        KIP_320,
        KIP_966,
        MAJORITY_QUORUM,
        KRAFT,
    )
}
