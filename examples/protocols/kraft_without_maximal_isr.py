"""kraft with one guard removed: the leader's HW counts only the ISR it proposed, not the maximal
ISR, while its AlterPartition is in flight (docs/design/kraft.md §5).

    isr check --protocol-file examples/protocols/kraft_without_maximal_isr.py \
        --replicas 2 --records 1 --epochs 2 --crashes 0

Why Kafka has the rule (KIP-497's AlterIsr, kept by AlterPartition): until the controller has
accepted a shrink, the controller's ISR still holds the member being dropped, and the controller
may elect it. A leader that advanced its HW over the proposed (smaller) ISR would commit a record
that member lacks; if the member is then elected, the committed record is gone. The checker finds
that in 4 steps with no crash (NoCommittedLoss; StrongIsr falls in 2). With the released rule
(``maximal_isr = True``, the built-in ``kraft``) every safety property holds at these bounds.

Every guard of the ``kraft`` version is a flag like this one (spec/protocols/kraft.py):
``response_guard``, ``fresh_hw_in_response``, ``count_diverging_fetch``, ``fence_stale_fetch``,
``broker_epoch_check``, ``partition_epoch_check``, ``ineligible_replica_check``, ``maximal_isr``,
``follower_reads``, ``follower_reads_below_hw``, ``epoch_cache``, ``sync_truncation_ckpt``.
"""

from isr.spec.protocols.kraft import Kraft


class KraftWithoutMaximalIsr(Kraft):
    name = "kraft-no-maximal-isr"
    description = (
        "kraft, but the HW counts only the proposed ISR while an AlterPartition is in flight"
    )
    maximal_isr = False


PROTOCOL = KraftWithoutMaximalIsr()
