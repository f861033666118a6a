"""kraft with one rule removed: a follower rejoins the ISR before its fetches reach the leader's
HW (R7's join rule; Kafka's ``Partition.isFollowerInSync``: ``followerEndOffset >=
leaderLog.highWatermark``, in every release since 0.8, with KAFKA-7128's epoch-start bound since
2.1). The shrink side, KAFKA-4485's time-based lag (0.10.2), needs no flag: time is not modelled,
so a member whose last fetch did not reach the LEO may be dropped at any step.

    isr check --protocol-file examples/protocols/kraft_join_below_hw.py \
        --replicas 2 --records 1 --epochs 2 --crashes 0 --invariant NoCommittedLoss

The leader takes record 1; the follower's fetch from offset 0 is counted (LEO 0) before the
record reaches it, and the leader drops it (it lags) and, alone in the ISR, commits the record.
Then it proposes the follower back: its counted LEO 0 is below the HW 1, which the released rule
refuses; here the controller accepts. The ISR now holds a replica without a committed record
(StrongIsr, 7 steps), and a preferred-replica election makes it leader: the record is gone
(NoCommittedLoss, 9 steps, no crash). The built-in ``kraft`` holds every safety property at
these bounds (27,139 states; tests/spec/test_kraft.py). The yardstick's TLA+ spec finds the same
hole with its ``isr-hwm`` guard dropped (bench/kraft_tla, 8 steps).
"""

from isr.spec.protocols.kraft import Kraft


class KraftJoinBelowHw(Kraft):
    name = "kraft-join-below-hw"
    description = "kraft, but a follower rejoins the ISR before its fetches reach the leader's HW"
    isr_join_needs_hw = False


PROTOCOL = KraftJoinBelowHw()
