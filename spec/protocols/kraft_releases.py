"""Release presets of the ``kraft`` version: Kafka's defaults per release, as small subclasses.
``kraft`` itself is the newest (4.1+). Each differs only in flags, read from Kafka's source and
documentation (issue 25):

* ELR (``eligible_leader_replicas``): KIP-966's eligible leader replicas; off by default in 4.0
  (``eligible.leader.replicas.version=0``), on for new clusters from 4.1 (Kafka's "Eligible
  Leader Replicas" operations page); ``ReplicationControlManager.isElrEnabled``;
* the HW needs min ISR (``hw_needs_min_isr``): unconditional since 3.7 (KAFKA-15583,
  ``Partition.maybeIncrementLeaderHW`` checks ``isUnderMinIsr``), whatever the ELR flag;
* unclean-shutdown handling at registration (``unclean_shutdown_on_register``): KAFKA-15586
  (3.8: a registration whose previous broker epoch differs), KAFKA-16952 (3.9: every new
  incarnation), gated by metadata version 4.0-IV1 (``MetadataVersion.isElrSupported``), so
  from 4.0's default metadata version on; KAFKA-18106 (4.0) makes it a partition change with
  the usual leader and epoch transitions. Not in 3.7;
* the truncation's epoch-checkpoint write (``sync_truncation_ckpt``): synchronous through 3.7.x
  (3.7.0 and 3.7.1 ``LeaderEpochFileCache.truncateFromEnd`` → ``writeToFile(false)``: written,
  not fsynced), asynchronous since 3.8.0 (KAFKA-16541, #15993: ``truncateFromEndAsyncFlush``
  on the scheduler).

The fence as one batch (``atomic_fence``), the unfence of a paused broker
(``unfence_on_heartbeat``) and the leader -1 of an unmovable controlled shutdown are the KRaft
controller's since it became production-ready (3.3) and hold in every preset.
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


class Kraft37(Kraft40):
    name = "kraft-3.7"
    description = (
        "Kafka 3.7 defaults: kraft-4.0 without the unclean-shutdown handling at registration"
        " (added in 3.8/3.9) and with the truncation's epoch-checkpoint write synchronous"
        " (asynchronous from 3.8, KAFKA-16541)"
    )
    unclean_shutdown_on_register = False
    sync_truncation_ckpt = True


KRAFT_4_0 = Kraft40()
KRAFT_3_7 = Kraft37()
