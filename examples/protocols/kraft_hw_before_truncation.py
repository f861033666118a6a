"""kraft with one fix removed: a follower takes a diverging fetch response's HW before it
truncates (KAFKA-14704, fixed in Kafka 3.5.0 by apache/kafka#13230, backported to 3.2.4, 3.3.3
and 3.4.1).

    isr check --protocol-file examples/protocols/kraft_hw_before_truncation.py \
        --replicas 2 --records 2 --epochs 2 --crashes 0 --invariant NoPhantomRead

A deposed leader keeps the record it took as leader; when it fetches from the new leader, the
answer names the divergence and carries the new leader's HW. Before the fix the fetcher thread
processed the partition data first: the follower's HW became min(its LEO, the leader's HW),
covering the record it was about to drop, and a consumer reading from that follower (KIP-392)
in that moment was shown a record that was never committed. The truncation then removed it:
NoPhantomRead. With the released rule (``truncate_before_hw = True``, the built-in ``kraft``)
NoPhantomRead holds at these bounds.
"""

from isr.spec.protocols.kraft import Kraft


class KraftHwBeforeTruncation(Kraft):
    name = "kraft-hw-before-truncation"
    description = (
        "kraft, but a diverging fetch response moves the follower's HW before it truncates"
    )
    truncate_before_hw = False


PROTOCOL = KraftHwBeforeTruncation()
