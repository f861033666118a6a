"""kafka-0.10: Kafka 0.8 to 0.10.2 as released, the HW-truncation design before KIP-101.

What it changes from hw-truncation (the seeds' protocol): a restarted broker keeps its log
(``truncate_to_hw_on_restart`` off). The seeds' R13 says a restarting broker "truncates its log to
[its HW checkpoint], becomes a follower"; Kafka 0.10.2 does the truncation only in the second
half, when a LeaderAndIsr makes the broker a follower (``ReplicaManager.makeFollowers`` ->
``LogManager.truncateTo(hw)``). At startup it only reads the checkpoint as the HW
(``Partition.getOrCreateReplica``), and a broker the controller makes leader keeps its whole log
(``Partition.makeLeader``). The two agree whenever the restarted broker becomes a follower first,
which is the common case; they part when it is elected leader straight away (the sole ISR member
coming back), where the seeds' rule loses the records above the checkpoint and Kafka does not.

And the controller sends a restarted broker its partitions only after handling its failure
(``startup_needs_failure``): 0.10.2's ``KafkaController.onBrokerStartup`` runs for the brokers the
BrokerChange listener saw leave, and ``onBrokerFailure`` has taken a follower out of the ISR by
then (ReplicaStateMachine, OfflineReplica). A restarted follower still in the ISR is a bounce the
controller missed: it is sent nothing new (a request queued for the old incarnation may still
reach it: ``RequestSendThread`` retries it, which is KIP-380's case).

Known to lose acknowledged records all the same (KIP-101's "Scenario 1", KAFKA-1211): the
follower's HW lags the leader's, so truncating to it when becoming a follower drops committed
records, which a leader change before it fetches them again loses. The stories are a step or two
longer than hw-truncation's (docs/findings.md).
"""

from __future__ import annotations

from .hw_truncation import HwTruncation


class Kafka010(HwTruncation):
    name = "kafka-0.10"
    description = (
        "Kafka 0.8-0.10.2: a new follower truncates to its HW (makeFollowers); a restart keeps"
        " its log"
    )
    truncate_to_hw_on_restart = False
    startup_needs_failure = True


KAFKA_0_10 = Kafka010()
