"""The public TLA+ specification of Kafka's ISR replication, as models of our checker.

Our own transcription, for benchmarking the checker against TLC on the same state space, of
https://github.com/hachikuji/kafka-specification (Apache-2.0; the original TLA+ is by Jason
Gustafson, with later edits by Guozhang Wang). It follows the TLA+ module hierarchy:

* :mod:`.finite_log`        — FiniteReplicatedLog (logs as interned ids, operators as tables);
* :mod:`.replication`       — KafkaReplication (variables, Init, shared actions, IdSequence
  bounds, the invariants TypeOk, LeaderInIsr, WeakIsr, StrongIsr);
* :mod:`.truncate_to_hw`    — KafkaTruncateToHighWatermark;
* :mod:`.kip101`, :mod:`.kip279`, :mod:`.kip320_first_try`, :mod:`.kip320` — the KIP modules
  (Kip320FirstTry and Kip320 extend Kip279, as in TLA+).

Constants (the TLC configuration):

* ``replicas``         — |Replicas|, named r1..rn (the spec's None is not a replica);
* ``log_size``         — LogSize: each log holds at most this many records (offsets 0..LogSize-1);
* ``max_records``      — MaxRecords: record ids 0..MaxRecords-1, i.e. at most this many writes in
  a behaviour (RecordSeq);
* ``max_leader_epoch`` — MaxLeaderEpoch: leader epochs 0..MaxLeaderEpoch (LeaderEpochSeq). The
  spec starts with no leader (epoch Nil = -1), so this allows MaxLeaderEpoch + 1 quorum changes
  (elections and controller ISR shrinks each take an epoch).

No symmetry: ``canonicalize`` is the identity, as TLC runs without a SYMMETRY clause, so the
distinct-state counts are TLC's. The .tla files are not part of this project.
"""

from __future__ import annotations

from .kip101 import Kip101
from .kip279 import Kip279
from .kip320 import Kip320
from .kip320_first_try import Kip320FirstTry
from .replication import KafkaReplication
from .truncate_to_hw import KafkaTruncateToHighWatermark

MODULES: dict[str, type[KafkaReplication]] = {
    "KafkaTruncateToHighWatermark": KafkaTruncateToHighWatermark,
    "Kip101": Kip101,
    "Kip279": Kip279,
    "Kip320FirstTry": Kip320FirstTry,
    "Kip320": Kip320,
}


def make_model(
    module: str,
    replicas: int = 2,
    log_size: int = 2,
    max_records: int = 2,
    max_leader_epoch: int = 2,
) -> KafkaReplication:
    """The model of one TLA+ module under one TLC configuration."""
    return MODULES[module](replicas, log_size, max_records, max_leader_epoch)


__all__ = [
    "MODULES",
    "KafkaReplication",
    "KafkaTruncateToHighWatermark",
    "Kip101",
    "Kip279",
    "Kip320",
    "Kip320FirstTry",
    "make_model",
]
