"""kraft-3.7: the ``kraft`` version with Apache Kafka 3.7's release defaults (issue 25).

What it changes from kraft-4.0:
* no unclean-shutdown handling at registration (``unclean_shutdown_on_register=False``): it came
  with KAFKA-15586 (3.8.0, a registration whose previous broker epoch differs, commit 376e9e2),
  KAFKA-16952 (3.9.0, every new incarnation id, 2fd00ce), both gated by metadata version
  4.0-IV1, and KAFKA-18106 (4.0); 3.7's ``ClusterControlManager.registerBroker`` has a TODO in
  its place. Only kip-966's rule with ``--lose-unflushed`` and ELR remains, and ELR is off;
* the truncation's epoch-checkpoint write synchronous (``sync_truncation_ckpt=True``): 3.7.0
  and 3.7.1 ``LeaderEpochFileCache.truncateFromEnd`` call ``writeToFile(false)`` (written
  without fsync: KAFKA-15046; a torn write is not modelled); the asynchronous
  ``truncateFromEndAsyncFlush`` is 3.8.0's (KAFKA-16541, #15993; not in 3.7.1);
* a reassignment completes once the ISR holds every adding replica
  (``reassignment_needs_full_isr=False``): 3.7.0's ``PartitionReassignmentReplicas
  .maybeCompleteReassignment``; every target replica from 3.8.0 (KAFKA-15665, #15359). Only
  with --reassignments.

What it keeps: ELR off (3.7's KIP-966 part has no ELR in production: ``isElrSupported`` needs
metadata version 4.0-IV1), the HW needs min ISR (KAFKA-15583, 3.7), the fence's one batch,
unfenced pauses and leader -1 of an unmovable controlled shutdown.
"""

from __future__ import annotations

from .kraft_4_0 import Kraft40


class Kraft37(Kraft40):
    name = "kraft-3.7"
    description = (
        "Kafka 3.7 defaults: kraft-4.0 without the unclean-shutdown handling at registration"
        " (added in 3.8/3.9) and with the truncation's epoch-checkpoint write synchronous"
        " (asynchronous from 3.8, KAFKA-16541); a reassignment completes once the ISR holds"
        " the adding replicas (every target replica from 3.8, KAFKA-15665)"
    )
    unclean_shutdown_on_register = False
    sync_truncation_ckpt = True
    reassignment_needs_full_isr = False  # KAFKA-15665's fix is Kafka 3.8.0's


KRAFT_3_7 = Kraft37()
