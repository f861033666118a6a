"""kraft with one guard removed: the leader counts a diverging follower's fetch offset as its LEO
(KAFKA-13141, fixed in Kafka 3.0 by apache/kafka#11136).

    isr check --protocol-file examples/protocols/kraft_count_diverging_fetch.py \
        --replicas 2 --records 2 --epochs 3 --crashes 0 --invariant NoCommittedLoss

A follower whose last fetched epoch disagrees with the leader's log is answered with the
diverging epoch and must truncate before its fetch offset means anything. A leader that counts
that offset anyway advances its HW over an entry the follower does not have; a later leader move
to that follower loses the committed record: 9 steps, no crash (StrongIsr falls in 7 with two
epochs). With the released rule (``count_diverging_fetch = False``, the built-in ``kraft``)
every safety property holds at these bounds.
"""

from isr.spec.protocols.kraft import Kraft


class KraftCountDivergingFetch(Kraft):
    name = "kraft-count-diverging-fetch"
    description = "kraft, but the leader counts a diverging fetch's offset (KAFKA-13141)"
    count_diverging_fetch = True


PROTOCOL = KraftCountDivergingFetch()
