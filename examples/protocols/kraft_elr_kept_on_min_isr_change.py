"""kraft with one fix removed: a change of min.insync.replicas leaves the ELR as it was
(KAFKA-16540, fixed in Kafka 4.0.0 by apache/kafka#17952, backported to the 4.0 branch by
#18745: ``ConfigurationControlManager.incrementalAlterConfigs`` writes a ClearElrRecord beside
the ConfigRecord of min.insync.replicas).

    isr check --protocol-file examples/protocols/kraft_elr_kept_on_min_isr_change.py \
        --replicas 2 --records 1 --epochs 2 --crashes 0 --min-isr 2 --min-isr-changes 1 \
        --invariant ElrHoldsCommitted

At min.insync.replicas 2 the follower leaves the ISR (its controlled shutdown) and, the ISR
being below min ISR, joins the ELR: eligible for a clean election, since the HW cannot advance
without it. The operator lowers min.insync.replicas to 1; the ELR stays. The leader alone now
has min ISR, takes record 1 and commits it: an eligible leader replica lacks a committed
record (ElrHoldsCommitted, 4 steps). Were the leader lost next, the controller would elect
that replica and the record would be gone (NoCommittedLoss; tests/spec/test_kraft_recovery.py
tells it in 7 steps). The built-in ``kraft`` (4.0+) clears the ELR with the change and holds
every safety property at these bounds. Before the fix the bug was on trunk only: 3.7 to 3.9
ship KIP-966's ELR code behind metadata version 4.0-IV1, which no release of theirs enables.
"""

from isr.spec.protocols.kraft import Kraft


class KraftElrKeptOnMinIsrChange(Kraft):
    name = "kraft-elr-kept-on-min-isr-change"
    description = "kraft, but a change of min.insync.replicas does not clear the ELR"
    clear_elr_on_min_isr_change = False


PROTOCOL = KraftElrKeptOnMinIsrChange()
