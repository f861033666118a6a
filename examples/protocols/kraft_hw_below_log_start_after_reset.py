"""kraft with one fix removed: a follower that truncates fully to its leader's log start keeps
its HW below it (KAFKA-9491, apache/kafka#8037 "Increment high watermark after full log
truncation", Kafka 2.4.1 and 2.5.0: ``Log.truncateFullyAndStartAt`` moves the HW to the new log
end; Kafka 4.x ``UnifiedLog.truncateFullyAndStartAt`` →
``updateHighWatermark(logEndOffsetMetadata)``).

    isr check --protocol-file examples/protocols/kraft_hw_below_log_start_after_reset.py \
        --replicas 2 --records 1 --epochs 2 --crashes 0 --delete-records 1 \
        --invariant LogStartAtMostHw

The follower leaves the ISR (its controlled shutdown) and the leader commits record 1 alone;
the follower sends a fetch at offset 0; the operator's DeleteRecords moves the leader's log
start to its HW, 1; the fetch is answered OFFSET_OUT_OF_RANGE and the follower truncates fully
and starts at offset 1, its HW left at 0: its log start passes its HW (LogStartAtMostHw, 7
steps). The JIRA's story goes on: elected before its next fetch response (a fast election
during a reassignment), the follower leads with a HW below its log start, and Kafka's
DelayedFetch failed on it with out-of-range errors (tests/spec/test_kraft_logstart.py scripts
the election). The built-in ``kraft`` moves the HW with the log start and holds every safety
property at these bounds.
"""

from isr.spec.protocols.kraft import Kraft


class KraftHwBelowLogStartAfterReset(Kraft):
    name = "kraft-hw-below-log-start-after-reset"
    description = (
        "kraft, but a full truncation to the leader's log start leaves the HW (before KAFKA-9491)"
    )
    hw_at_log_start_on_reset = False


PROTOCOL = KraftHwBelowLogStartAfterReset()
