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

__all__ = ["MODULES", "V35", "Kip966"]
