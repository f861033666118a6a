"""kraft-4.0: the ``kraft`` version with Apache Kafka 4.0's release defaults (issue 25).

What it changes from kraft (the newest release, 4.1+):
* eligible leader replicas off (``eligible_leader_replicas``): 4.0 ships KIP-966's ELR behind
  ``eligible.leader.replicas.version``, 0 by default; 4.1 turns it on for new clusters (Kafka's
  "Eligible Leader Replicas" operations page, 4.0 and 4.1). ``ReplicationControlManager``
  reads it in ``isElrEnabled`` and PartitionChangeBuilder in ``setEligibleLeaderReplicasEnabled``;
  without it the ISR of a partition never becomes empty (the builder keeps the last member) and
  an unclean-shutdown registration removes a replica from the ISR only if others remain.

What it keeps from kraft, each a 4.0 default too: the HW needs min ISR (``hw_needs_min_isr``:
``Partition.maybeIncrementLeaderHW`` checks ``isUnderMinIsr`` whatever the ELR flag, since 3.7,
KAFKA-15583); every new incarnation's registration handled as an unclean shutdown
(``unclean_shutdown_on_register``: ``ClusterControlManager.registerBroker`` →
``handleBrokerUncleanShutdown``, gated at the read snapshot by ``MetadataVersion.isElrSupported``,
4.0-IV1, which 4.0's default metadata version passes; whether the 4.0 release gates it by the
ELR feature instead was not verified in code); the truncation's epoch-checkpoint write
asynchronous (``sync_truncation_ckpt=False``, since 3.8.0: KAFKA-16541); the fence's one batch,
unfenced pauses and leader -1 of an unmovable controlled shutdown (the KRaft controller's).
"""

from __future__ import annotations

from .kraft import Kraft


class Kraft40(Kraft):
    name = "kraft-4.0"
    description = (
        "Kafka 4.0 defaults: kraft with ELR off (eligible.leader.replicas.version=0); the HW"
        " still needs min ISR, every new incarnation is handled as an unclean shutdown"
        " (metadata version 4.0-IV1+), the epoch-checkpoint write after a truncation is"
        " asynchronous"
    )
    eligible_leader_replicas = False


KRAFT_4_0 = Kraft40()
