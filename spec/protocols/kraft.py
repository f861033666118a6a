"""kraft: Kafka 3.7+/4.x replication with the KRaft controller, as far as issue 18's steps 1 to 3
go (docs/design/kraft.md).

What it changes from kip-966 (whose election rules it keeps: ELR, the HW needs min ISR, an
unclean shutdown makes a replica ineligible, broker epochs fence a previous incarnation):
* the fetch is a request and a delayed response (FollowerSendFetch, LeaderHandleFetch,
  FollowerHandleFetchResponse, spec/actions/fetch.py), at most one in flight per follower; the
  response carries the HW the leader read with the records, before it applied this fetch
  (KAFKA-7104);
* no truncation phase: the leader answers a fetch whose last fetched epoch disagrees with its log
  with a DivergingEpoch, and the follower truncates by KIP-279's rule on receipt (Kafka 2.7+);
* ISR changes are asynchronous AlterPartition requests (LeaderSendAlterPartition,
  ControllerHandleAlterPartition, spec/actions/alter_partition.py): while one is in flight the
  leader's HW counts the maximal ISR (the current one with the proposed additions), and the
  controller checks the added follower's broker epoch (KIP-903);
* the partition epoch is apart from the leader epoch (KAFKA-15021): an ISR change (an accepted
  AlterPartition, the controller's shrink of a gone follower, a controlled shutdown of a
  follower, an unclean registration) bumps only the partition epoch and is told to the leader
  (BrokerApplyPartitionChange), which keeps its followers' fetch state; fetches, fenced by the
  leader epoch only, go on across it; an AlterPartition built on an older partition epoch is
  refused (INVALID_UPDATE_VERSION);
* KIP-841: a crashed broker is fenced when its session times out (ControllerFenceBroker, as a
  running one whose heartbeats stop, which counts as a crash; ``fence_at_crash``), its new
  process registers fenced (BrokerRestart) and is unfenced later (BrokerRegister: new broker
  epoch), a controlled shutdown marks the broker shutting down; fenced and shutting-down brokers
  are neither elected nor let back into the ISR (INELIGIBLE_REPLICA). A clean exit and a kill
  are told apart at the next registration (Kafka 4.0.2/4.4.0 ``registerBroker``:
  ``previousBrokerEpoch``): with ELR, only an unclean one loses the broker's ELR seat.
* KIP-392: the one consumer reads at its position from the leader or a follower, below that
  replica's HW (ConsumerFetch(replica)); an out-of-range position at the leader resets it
  (ConsumerResetOffset), which MonotonicReads reports.
* Kafka 4.x as read in its source (issue 25; apache/kafka trunk 1eb7644, 4.0.0-SNAPSHOT,
  with later commits named): the fence is one batch with the ISR removal and the election
  (``atomic_fence``), a paused broker is unfenced with its old broker epoch
  (``unfence_on_heartbeat``), every registration of a new incarnation is handled as an unclean
  shutdown (``unclean_shutdown_on_register``), with ELR the last known leader is elected when
  ISR and ELR are empty (``elect_last_known_leader``), the controlled shutdown of a leader no
  other ISR member can replace leaves leader -1, and the HW needs min ISR apart from the ELR
  flag (``hw_needs_min_isr``). Release presets: ``kraft`` is the newest (4.1+: ELR on for new
  clusters), ``kraft-4.0`` (ELR off) and ``kraft-3.7`` (ELR off, no unclean-shutdown handling,
  the epoch checkpoint written with the truncation): spec/protocols/kraft_4_0.py, kraft_3_7.py.
* With ``--controller-failovers N`` (issue 28 item 2): a KRaft controller failover and the
  AlterPartition answers it loses (spec/actions/controller_failover.py): a change the old
  controller committed whose answer never came (NetworkLoseAlterPartitionResponse: the
  renounce's NOT_CONTROLLER, or a dropped connection; the channel manager re-sends the request,
  which the new controller refuses as stale, INVALID_UPDATE_VERSION), the leader keeping its
  pending change after such a refusal until newer metadata overrides it
  (``keep_pending_on_refusal``), and a deposed controller's answer to a request ahead of its
  state (``not_controller_if_ahead``, KAFKA-14154).
* KIP-704 (3.2+), behind ``leader_recovery_state`` (off: no behaviour of this partition
  changes with it): an unclean election marks the partition RECOVERING until the leader's
  AlterPartition reports RECOVERED; the controller refuses a RECOVERING ISR of more than the
  leader. KAFKA-16540 (4.0): a change of min.insync.replicas (OperatorSetMinIsr, only with
  --min-isr-changes) clears the ELR (``clear_elr_on_min_isr_change``). The join rule's halves
  are flags: the HW (``isr_join_needs_hw``) and the epoch start (``isr_join_needs_epoch_start``).
* The log start offset (issue 28 item 3), with --retention or --delete-records N (R12): a
  leader applies an operator's DeleteRecords up to its HW (LeaderDeleteRecords), retention
  deletes a replica's oldest segment below its HW (BrokerDeleteOldSegment,
  ``retention_below_hw``: KAFKA-5634), the leader-epoch cache is truncated from the start, a
  follower takes up the log start its leader's fetch responses carry, and a fetch below the
  leader's log start (or past its end) is OFFSET_OUT_OF_RANGE, upon which the follower asks the
  leader for its offsets and truncates fully to its log start (FollowerHandleOffsetOutOfRange,
  ``hw_at_log_start_on_reset``: KAFKA-9491).
* KIP-455 partition reassignment (issue 28 item 1), with --reassignments N: the partition
  starts on brokers 0..R-2 with broker R-1 a spare; the operator asks for a new replica set
  (OperatorReassignPartition) or cancels (OperatorCancelReassignment), the controller adds the
  new replicas without a new leader epoch, they fetch from empty logs, and the AlterPartition
  that brings the ISR to the target completes it (``reassignment_needs_full_isr``:
  KAFKA-15665) with a new leader epoch; a removed broker deletes its replica
  (BrokerStopReplica). spec/actions/reassignment.py.
Not yet: lost fetches, DelayedFetch and the fetch timeout, KAFKA-14275 (a standby controller
that failed to apply a record taking office with incomplete state: no record fails to apply
here), the leader's own recovery work after an unclean election (KIP-704 names transaction
state: the spec has no producer state) and the follower fetches a recovering leader would
refuse (KAFKA-13754, open).

Each guard is a flag, so a test can put a known bug back with ``KRAFT.variant(flag=...)``.
"""

from __future__ import annotations

from .kip_966 import Kip966


class Kraft(Kip966):
    name = "kraft"
    description = (
        "Kafka 4.1+ (the newest release defaults; kraft-4.0 and kraft-3.7 are the older ones):"
        " the fetch split into request and delayed response, DivergingEpoch truncation, broker"
        " epochs, asynchronous AlterPartition with the maximal ISR, the partition epoch apart"
        " from the leader epoch, KIP-841 (fence and ISR removal in one batch, pauses unfenced),"
        " every new incarnation handled as an unclean shutdown, ELR on, the HW needs min ISR,"
        " the asynchronous epoch-checkpoint write, KIP-392 follower reads"
    )
    split_fetch = True
    response_guard = True  # a response is applied only if the follower's fetch offset and
    # leader epoch did not change while it was in flight (AbstractFetcherThread; KAFKA-18991)
    fresh_hw_in_response = False  # True: the response carries the HW after the leader applied
    # the fetch (before KAFKA-7104) instead of the one read with the records
    count_diverging_fetch = False  # True: the leader counts a diverging fetch's offset as the
    # follower's LEO (KAFKA-13141's bug) instead of ignoring it
    fence_stale_fetch = True  # a fetch whose broker epoch is older than the one the leader last
    # counted for that follower is rejected, STALE_BROKER_EPOCH (KAFKA-15221)
    broker_epoch_check = True  # KIP-903: the controller accepts an ISR expansion only if the
    # broker epoch of the fetch that justified it is the follower's registered one
    partition_epoch_check = True  # the controller refuses an AlterPartition built on an older
    # partition epoch (INVALID_UPDATE_VERSION); False: it checks the leader epoch only
    ineligible_replica_check = True  # KIP-841: the controller refuses an AlterPartition whose
    # new ISR holds a fenced or shutting-down broker (INELIGIBLE_REPLICA)
    maximal_isr = True  # the HW counts the ISR with the proposed additions while an
    # AlterPartition is in flight; False: the proposed ISR alone
    follower_reads = True  # KIP-392: the consumer may read from a follower; False: only from
    # a replica that presumes to lead (before Kafka 2.4)
    follower_reads_below_hw = True  # a follower serves consumers only below its HW; False:
    # up to its LEO (the bug: it shows records that are not committed)
    truncate_before_hw = True  # a diverging fetch response truncates the follower's log before
    # its HW moves (KAFKA-14704, apache/kafka#13230: Kafka 3.5.0, backported to 3.2.4, 3.3.3 and
    # 3.4.1); False: ``AbstractFetcherThread`` first processes the partition data, which sets
    # the follower's HW from the leader's (capped by its own LEO, divergent records included),
    # and truncates after: a consumer reading from that follower in between (KIP-392) is shown
    # records that were never committed (ConsumerFetchDuringTruncation, spec/actions/fetch.py)
    epoch_cache = True  # the leader-epoch cache is its own state with a checkpoint file
    # (spec.epoch_cache; epochs without records are kept); False: derived from the log
    # (spec/log.py's epoch_starts, as the older versions do)
    sync_truncation_ckpt = False  # False (Kafka 3.8+, KAFKA-16541's fix #15993:
    # ``LeaderEpochFileCache.truncateFromEndAsyncFlush``): the checkpoint is written after a
    # truncation of the cache, by BrokerCheckpointEpochCache (a crash in between restores
    # epochs the truncation had removed); True: with the truncation (Kafka 3.7 and before)
    atomic_fence = True  # KIP-841 as Kafka does it (``ReplicationControlManager.
    # handleBrokerFenced``): the fence, the broker's removal from the ISR and, if it led, the
    # election of another leader (or leader -1) are one batch of records, one step here
    # (``controller.fence_batch``); False: the fence alone, ControllerShrinkIsr and
    # ControllerElectLeader later (the spec before Kafka 4.x was read)
    unfence_on_heartbeat = True  # a fenced broker whose process ran on (a pause past the
    # session timeout) is unfenced by its heartbeats with its old broker epoch (BrokerUnfence,
    # ``handleBrokerUnfenced``); False: it must stop, restart and register
    elect_last_known_leader = True  # with ELR, a partition whose ISR and ELR are empty
    # elects its last known leader once it is live again, even after an unclean shutdown
    # (``PartitionChangeBuilder.canElectLastKnownLeader``: ``useLastKnownLeaderInBalancedRecovery``
    # is true unless set otherwise, ``lastKnownElr`` set by ``maybeUpdateLastKnownLeader`` when
    # the ISR first empties; Kafka's "Eligible Leader Replicas" page: "Select the last known
    # leader if it is unfenced"); False: kip-966's rule, such a replica is never elected cleanly
    fence_at_crash = False  # False (Kafka): the controller learns of a crash only when the
    # broker's session times out (``BrokerHeartbeatManager``: broker.session.timeout.ms with no
    # heartbeat, then ``ReplicationControlManager.maybeFenceOneStaleBroker`` →
    # ``handleBrokerFenced``): until then the crashed broker is live to the controller (it may
    # stay leader, be elected or stay in the ISR), and it is fenced by ControllerFenceBroker,
    # not counted as a crash a second time. Its new process registers only after that (a
    # registration while the old session is valid fails, ``ClusterControlManager.
    # registerBroker``: DuplicateBrokerRegistrationException): BrokerRestart is that
    # registration (fenced, the unclean-shutdown handling in its batch) and BrokerRegister the
    # unfencing once it has caught up. True: BrokerCrash fences at once and BrokerRegister does
    # both (the spec before real Kafka runs were validated; the reference implementation's
    # controller, which reads the crash from its coordination session, declares it)
    unclean_shutdown_on_register = True  # every new incarnation's registration is handled as
    # an unclean shutdown (``ClusterControlManager.registerBroker`` → ``ReplicationControlManager
    # .handleBrokerUncleanShutdown``: out of the ISR, unless the last member, and of the ELR;
    # with ELR never elected cleanly until back in the ISR), Kafka 3.9+ at metadata version
    # 4.0-IV1 and later (KAFKA-15586, KAFKA-16952, KAFKA-18106); False: only with
    # --lose-unflushed and ELR (kip-966's rule, the broker reporting its own unclean shutdown)
    keep_pending_on_refusal = True  # --controller-failovers only. A leader whose AlterPartition
    # is refused as stale (INVALID_UPDATE_VERSION, FENCED_LEADER_EPOCH) keeps the change pending
    # (counted in its maximal ISR) until it applies newer partition state: Kafka 2.7.0+
    # (KAFKA-8836, KIP-497: ``Partition.handleAlterIsrResponse``; today
    # ``Partition.handleAlterPartitionError`` returns false, "awaiting new the latest
    # metadata"), because after a retry it cannot know whether the controller applied the
    # change. False: the leader drops it at the refusal and falls back to its ISR, which is
    # what the spec does without lost answers (there it loses nothing: no change the leader has
    # not adopted is recorded); with a lost answer the recorded ISR may then hold a follower the
    # leader no longer counts for its HW
    not_controller_if_ahead = True  # --controller-failovers only. A controller that sees an
    # AlterPartition whose leader epoch is ahead of its own state answers NOT_CONTROLLER (it
    # has likely lost office), so the leader's channel manager finds the new controller and
    # re-sends (``ReplicationControlManager.validateAlterPartitionData``: KAFKA-14154, #12514,
    # Kafka 3.3.0; the ZooKeeper controller's twin #12506). False (the KRaft controller of
    # 3.0 to 3.2: ``leaderEpoch() != partition.leaderEpoch``): FENCED_LEADER_EPOCH, which the leader
    # takes as final: its change stays pending with no newer state to override it, the
    # follower never rejoins (a persistent under-replicated partition) and no other ISR change
    # is proposed (PendingAlterPartitionResolvable)
    isr_join_needs_hw = True  # R7, the join rule: a follower rejoins the ISR only once a
    # counted fetch reached the leader's HW (``Partition.isFollowerInSync``: ``followerEndOffset
    # >= leaderLog.highWatermark``, with ``isr_join_needs_epoch_start``, KAFKA-7128, the start
    # of the leader's epoch too: ``leaderEpochStartOffsetOpt``); False: any counted fetch lets
    # it join, a member without records the HW covers. How long a follower may lag before it is
    # dropped (replica.lag.time.max.ms from its last fetch that reached the LEO, KAFKA-4485,
    # 0.10.2's ``lastCaughtUpTimeMs``) is not a flag: time is not modelled, so a member whose
    # last fetch did not reach the LEO may be dropped at any step, which covers every timing
    leader_recovery_state = False  # KIP-704 (Kafka 3.2.0+, KAFKA-13587, apache/kafka#11733):
    # an unclean election, and the last-known-leader election, which Kafka counts as unclean,
    # mark the partition RECOVERING (``PartitionChangeBuilder.tryElection``, metadata version
    # 3.2-IV0+), kept across later elections until the leader's AlterPartition says RECOVERED
    # (``ReplicationControlManager.handleAlterPartition`` → ``setTargetLeaderRecoveryState``).
    # Off by default: with Kafka's leader (``leader_recovers_at_once``) the state changes no
    # behaviour of this partition, only adds states (docs/design/kraft.md, KIP-704), and the
    # pinned counts stay; ``KRAFT.variant(leader_recovery_state=True)`` tracks it
    leader_recovers_at_once = True  # KIP-704 as released: ``Partition.makeLeader`` marks the
    # partition RECOVERED on becoming leader (log recovery is not implemented), so its next
    # AlterPartition carries RECOVERED; False: the KIP's design, the leader reports RECOVERED
    # only after its own recovery step (LeaderCompleteRecovery), and until then every
    # AlterPartition it sends carries RECOVERING
    recovering_isr_check = True  # KIP-704: the controller refuses an AlterPartition that says
    # RECOVERING with more than the leader in its ISR, and one that goes from RECOVERED back to
    # RECOVERING (INVALID_REQUEST, ``ReplicationControlManager.validateAlterPartitionData``);
    # False: accepted (the ISR grows while the leader has not recovered)
    clear_elr_on_min_isr_change = True  # KAFKA-16540 (Kafka 4.0.0, apache/kafka#17952,
    # backported to 4.0 by #18745): a change of min.insync.replicas clears the ELR in the same
    # batch (``ConfigurationControlManager.incrementalAlterConfigs`` →
    # ``createClearElrRecordsAsNeeded``: a ClearElrRecord per ConfigRecord of
    # min.insync.replicas); False: the ELR kept (trunk before the fix; 3.7's to 3.9's ELR code
    # behind an unreleased metadata version), so a replica elected from it may lack records the
    # lowered min ISR let the leader commit without it. Only with --min-isr-changes
    retention_below_hw = True  # KAFKA-5634 (Kafka 0.11.0.1 and 1.0.0, "Do not allow segment
    # deletion beyond high watermark"): retention deletes only segments wholly below
    # the replica's HW (``UnifiedLog.deletableSegments``: ``highWatermark >= upperBoundOffset``,
    # "to ensure that the log start offset can never exceed it"); False: up to the log end
    # (0.11.0.0's ``takeWhile(predicate)``, any segment but an empty active one), so the log
    # start passes the HW, the leader deletes records not yet committed, and a follower's
    # ``maybeIncrementLogStartOffset`` of the leader's log start above its own HW throws
    # OFFSET_OUT_OF_RANGE. Only with --retention
    hw_at_log_start_on_reset = True  # KAFKA-9491 (Kafka 2.4.1 and 2.5.0, apache/kafka#8037): a
    # follower that truncates fully and starts at its leader's log start moves its HW there too
    # (``UnifiedLog.truncateFullyAndStartAt`` → ``updateHighWatermark(logEndOffsetMetadata)``;
    # ``updateLogStartOffset``); False: only the log start moves (``updateLogEndOffset`` lowers a
    # HW above the new end, never raises one below), the HW stays below the log start, and a
    # fast election during a reassignment makes that follower a leader with it (the JIRA: out
    # of range errors in DelayedFetch). Only with --retention or --delete-records
    reassignment_needs_full_isr = True  # KAFKA-15665 (Kafka 3.8.0, apache/kafka#15359): the
    # controller completes a reassignment only once the ISR holds every target replica
    # (``PartitionReassignmentReplicas.maybeCompleteReassignment``: ``newTargetIsr.containsAll(
    # newTargetReplicas)``); False (Kafka 3.3 to 3.7): once it holds every adding replica, so a
    # completion may leave target replicas out of the ISR, which then shrinks below min ISR and,
    # with ELR, puts the removed replicas in the ELR. Only with --reassignments
    isr_within_replicas_check = True  # the KRaft controller refuses an AlterPartition whose ISR
    # holds a broker outside the replica set (``validateAlterPartitionData``:
    # ``Replicas.validateIsr``, INVALID_REQUEST; the KRaft twin of KAFKA-9672's ZooKeeper-era
    # ISR superset); False: no such check (the leader's own assignment and the partition epoch
    # still guard it). Only with --reassignments


KRAFT = Kraft()
