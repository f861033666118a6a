"""kraft with one fix removed: retention deletes segments beyond the high watermark
(KAFKA-5634, commit "Do not allow segment deletion beyond high watermark", Kafka 0.11.0.1 and
1.0.0: ``Log.deletableSegments`` takes a segment only if the HW is at or past its
end, "to ensure that the log start offset can never exceed it"; Kafka 4.x
``UnifiedLog.deletableSegments``).

    isr check --protocol-file examples/protocols/kraft_retention_beyond_hw.py \
        --replicas 2 --records 1 --epochs 2 --crashes 0 --retention \
        --invariant DeletedOnlyCommitted

The leader takes record 1 and, before any follower has fetched it, retention deletes its
segment: the leader's log start (1) passes its HW (0), and a record is deleted before it is
committed (DeletedOnlyCommitted and LogStartAtMostHw, 2 steps). The follower's next fetch, at
offset 0, is below the leader's log start: it is reset to offset 1, the HW passes offset 0 and
an acks=all producer is told record 1 is committed, while no replica ever held it. In Kafka
0.11.0.0 the follower's fetcher thread died instead, on the leader's log start above its own
HW (``maybeIncrementLogStartOffset``: OFFSET_OUT_OF_RANGE, the JIRA's story). The built-in
``kraft`` deletes only below the HW and holds every safety property at these bounds.
"""

from isr.spec.protocols.kraft import Kraft


class KraftRetentionBeyondHw(Kraft):
    name = "kraft-retention-beyond-hw"
    description = "kraft, but retention deletes segments beyond the HW (before KAFKA-5634)"
    retention_below_hw = False


PROTOCOL = KraftRetentionBeyondHw()
