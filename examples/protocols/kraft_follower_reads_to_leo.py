"""kraft with one guard removed: a follower serves consumers up to its LEO instead of its HW
(KIP-392 follower reads; docs/design/kraft.md §4).

    isr check --protocol-file examples/protocols/kraft_follower_reads_to_leo.py \
        --replicas 2 --records 1 --epochs 2 --crashes 0

Why Kafka bounds a follower's reads by its HW (KIP-392): what a follower holds above its HW may
not be committed, and a truncation can take it away. The checker finds that in 5 steps with no
crash (NoPhantomRead): broker 0, deposed but not yet told, takes record 1 as a zombie leader,
becomes a follower of broker 1 (whose log is empty) and shows the record to the consumer; the
record is not on the leader and never will be. One step more, the consumer, whose position is
now past the leader's log end, is reset (MonotonicReads, 6 steps). With the released rule
(``follower_reads_below_hw = True``, the built-in ``kraft``) both hold at these bounds, and at
2, 2, 2, 0 and 2, 1, 2, 1.
"""

from isr.spec.protocols.kraft import Kraft


class KraftFollowerReadsToLeo(Kraft):
    name = "kraft-follower-reads-to-leo"
    description = "kraft, but a follower serves consumers up to its LEO instead of its HW"
    follower_reads_below_hw = False


PROTOCOL = KraftFollowerReadsToLeo()
