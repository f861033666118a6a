"""kraft with one fix removed: the leader advances its HW while the ISR has fewer than
min.insync.replicas members (KAFKA-15583, Kafka 3.7: ``Partition.maybeIncrementLeaderHW``
checks ``isUnderMinIsr`` whatever the ELR flag; KIP-966's "the HW needs min ISR").

    isr check --protocol-file examples/protocols/kraft_hw_without_min_isr.py \
        --replicas 2 --records 1 --epochs 2 --crashes 1 --min-isr 2 --invariant StrongIsr

Why Kafka has the rule: with ELR the controller keeps, beside the ISR, the replicas removed
while the ISR fell below min.insync.replicas (they stay eligible for a clean election), so a
record committed by a smaller ISR is one an eligible replica lacks. A follower crashes and its
fence's batch shrinks the ISR to the leader alone (below min ISR 2: the follower moves to the
ELR); a leader that still advanced its HW over a record only it has would commit it without
the eligible replica: StrongIsr in 4 steps at these bounds (NoPhantomRead in 6, once a
consumer reads it). With the released rule (``hw_needs_min_isr = True``, the built-in
``kraft``) no safety property falls at these bounds.
"""

from isr.spec.protocols.kraft import Kraft


class KraftHwWithoutMinIsr(Kraft):
    name = "kraft-hw-without-min-isr"
    description = "kraft, but the HW advances while the ISR is below min.insync.replicas"
    hw_needs_min_isr = False


PROTOCOL = KraftHwWithoutMinIsr()
