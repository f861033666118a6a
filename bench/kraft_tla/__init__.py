"""Jack Vanlightly's public KRaft-era TLA+ specs of Kafka replication, as models of our checker.

Our own transcription, for benchmarking the checker against TLC on the same state space, of
https://github.com/Vanlightly/kafka-tlaplus (kafka_data_replication/kraft, commit
823615e8a0962d0160c11d9affb2576c56b7c054): :mod:`.v3_5` (kafka_replication_v3_5, Kafka 3.5) and
:mod:`.kip966` (kafka_replication_kip_966, KIP-966 eligible leader replicas).
"""

from __future__ import annotations

from .kip966 import Kip966
from .v3_5 import V35

MODULES: dict[str, type[V35]] = {"v3_5": V35, "kip_966": Kip966}

# Named TLC configurations (the constants; Values = {A}, and every limit not named is 0). TLC
# runs them with -deadlock and no VIEW. Two brokers unless named otherwise.
CONFIGS: dict[str, dict] = {
    # LeaderShrinkIsrLimit = 1: one AlterPartition may shrink the ISR
    "shrink1": dict(brokers=2, min_isr=1, shrink=1),
    # FenceBrokerLimit = 1: the controller may fence a broker once
    "fence1": dict(brokers=2, min_isr=1, fence=1),
    # one unclean (disk-losing) shutdown; KIP-966: DataLossShutdownLimit = 1
    "unclean1": dict(brokers=2, min_isr=1, unclean=1),
    # one clean shutdown; KIP-966: NoDataLossShutdownLimit = 1
    "clean1": dict(brokers=2, min_isr=1, clean=1),
    # three brokers, MinISR 2, the ISR starts as {1, 2} (broker 3 out of sync and fenced)
    "three-brokers": dict(brokers=3, min_isr=2, init_isr=2),
    # "last replica standing" with MinISR 1: the ISR starts as {1}, one unclean shutdown
    "lrs-minisr1": dict(brokers=2, min_isr=1, init_isr=1, unclean=1),
    # "last replica standing" with MinISR 2: one fence shrinks the ISR to the leader, then one
    # unclean shutdown (the complete space is millions of states: first violations only)
    "lrs-minisr2": dict(brokers=2, min_isr=2, unclean=1, fence=1),
    # three brokers, replication factor 2, one reassignment
    "reassign1": dict(brokers=3, rf=2, min_isr=1, reassign=1),
}

# The safety invariants of the specs' TLC config (NoCommittedRecordLostGlobally aside: the config
# says to drop it when MinISR equals the number of disk-losing shutdowns).
SAFETY = (
    "LeaderCompletenessProperty",
    "LeaderCandidateCompletenessProperty",
    "ReplicationQuorumSupersetProperty",
    "LogMatchingProperty",
    "MetadataLogMatchingProperty",
    "ConsistentReadProperty",
)


def make_model(module: str, config: str) -> V35:
    """The model of one spec (``v3_5`` or ``kip_966``) under one named TLC configuration."""
    return MODULES[module](**CONFIGS[config])


__all__ = ["CONFIGS", "MODULES", "SAFETY", "V35", "Kip966", "make_model"]
