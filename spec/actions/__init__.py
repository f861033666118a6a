"""The actions of the ISR spec, named Actor+Verb, one module per actor. Each action is a function
``(ctx, state, kind, out)`` that appends ``((kind, args), next_state)`` to ``out`` for every way it
is enabled in ``state``, in a deterministic order (appending to one list is markedly cheaper than
chaining generators, and successor generation is the checker's hot path)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..config import Config
from ..protocols import ProtocolVersion
from ..state import State
from .alter_partition import (
    controller_handle_alter_partition,
    leader_clear_pending_alter_partition,
    leader_send_alter_partition,
    network_lose_alter_partition_response,
)
from .broker import (
    broker_apply_partition_change,
    broker_become_follower,
    broker_become_leader,
    broker_checkpoint_hw,
    broker_crash,
    broker_flush,
    broker_ignore_stale_request,
    broker_register,
    broker_restart,
    network_lose_leader_and_isr,
)
from .common import Ctx
from .consumer import consumer_fetch, consumer_fetch_from_replica, consumer_reset_offset
from .controller import (
    broker_unfence,
    controller_elect_leader,
    controller_fence_broker,
    controller_move_leader,
    controller_shrink_isr,
    controller_shutdown_broker,
)
from .controller_failover import (
    controller_failover,
    deposed_controller_handle_alter_partition,
    kraft_controller_failover,
)
from .fetch import (
    broker_checkpoint_epoch_cache,
    consumer_fetch_during_truncation,
    follower_handle_fetch_response,
    follower_handle_offset_out_of_range,
    follower_send_fetch,
    leader_handle_fetch,
)
from .follower import follower_fetch, follower_truncate
from .leader import leader_complete_recovery, leader_expand_isr, leader_shrink_isr
from .operator import leader_delete_records, operator_set_min_isr
from .producer import (
    producer_bump_epoch,
    producer_complete_batch,
    producer_retry,
    producer_retry_idempotent,
    producer_send,
    producer_send_choosing_acks,
    producer_send_idempotent,
)
from .reassignment import (
    broker_stop_replica,
    operator_cancel_reassignment,
    operator_reassign_partition,
)
from .retention import (
    broker_delete_old_segment,
    broker_delete_old_segment_kraft,
    follower_reset_to_log_start,
)
from .session import broker_renew_session, coordination_expire_session
from .zk_reassignment import (
    controller_complete_reassignment,
    zk_broker_stop_replica,
    zk_operator_reassign_partition,
)

ActionFn = Callable[[Ctx, State, int, list], None]


@dataclass(frozen=True)
class ActionDef:
    name: str
    params: tuple[str, ...]
    fn: ActionFn
    requirement: str
    # exists only in the models where this holds, read on the bounds and on the version object
    # the model runs (so that a test's ``KRAFT.variant(flag=...)`` gets an action its flag
    # brings, as a registered --protocol-file does)
    when: Callable[[Config, ProtocolVersion], bool] | None = None

    def exists_in(self, config: Config, protocol: ProtocolVersion) -> bool:
        return self.when is None or self.when(config, protocol)


def _has_isr(c: Config, p: ProtocolVersion) -> bool:
    return not p.majority_quorum


def _split_fetch(c: Config, p: ProtocolVersion) -> bool:
    return p.split_fetch


def _atomic_fetch(c: Config, p: ProtocolVersion) -> bool:
    return not p.split_fetch


def _truncates_by_asking(c: Config, p: ProtocolVersion) -> bool:
    """The atomic fetch's separate truncation step: kip-101 and later ask the leader."""
    return not p.split_fetch and p.truncates_by_asking_leader


def _hw_before_truncation(c: Config, p: ProtocolVersion) -> bool:
    """KAFKA-14704's window exists (a kraft variant with ``truncate_before_hw=False``)."""
    return p.split_fetch and not getattr(p, "truncate_before_hw", True)


def _atomic_isr(c: Config, p: ProtocolVersion) -> bool:
    return not p.majority_quorum and not p.split_fetch


def _kraft_failovers(c: Config, p: ProtocolVersion) -> bool:
    """kraft with --controller-failovers: lost AlterPartition answers (issue 28 item 2)."""
    return p.split_fetch and c.controller_failovers > 0


def _deposed_controller(c: Config, p: ProtocolVersion) -> bool:
    """A deposed KRaft controller's answers matter: before KAFKA-14154's fix only."""
    return _kraft_failovers(c, p) and not getattr(p, "not_controller_if_ahead", True)


def _stepwise_recovery(c: Config, p: ProtocolVersion) -> bool:
    """KIP-704's leader recovery as its own step (a kraft variant with ``leader_recovery_state``
    and ``leader_recovers_at_once=False``)."""
    return (
        p.split_fetch
        and getattr(p, "leader_recovery_state", False)
        and not getattr(p, "leader_recovers_at_once", True)
    )


def _min_isr_changes(c: Config, p: ProtocolVersion) -> bool:
    return p.split_fetch and c.min_isr_changes > 0


def _atomic_retention(c: Config, p: ProtocolVersion) -> bool:
    return c.retention and not p.split_fetch


def _kraft_retention(c: Config, p: ProtocolVersion) -> bool:
    return c.retention and p.split_fetch


def _kraft_log_start(c: Config, p: ProtocolVersion) -> bool:
    """kraft with a log start offset that moves (R12): retention or DeleteRecords."""
    return p.split_fetch and (c.retention or c.delete_records > 0)


def _delete_records(c: Config, p: ProtocolVersion) -> bool:
    return p.split_fetch and c.delete_records > 0


def _reassignments(c: Config, p: ProtocolVersion) -> bool:
    """kraft with --reassignments: KIP-455 (issue 28 item 1)."""
    return p.split_fetch and c.reassignments > 0


def _zk_reassignments(c: Config, p: ProtocolVersion) -> bool:
    """A ZooKeeper-era ISR version with --reassignments (issue 28 item 1, ZooKeeper side)."""
    return not p.split_fetch and not p.majority_quorum and c.reassignments > 0


ACTIONS: tuple[ActionDef, ...] = (
    ActionDef("ControllerElectLeader", ("leader",), controller_elect_leader, "R9"),
    ActionDef("ControllerShrinkIsr", ("replica",), controller_shrink_isr, "R9", when=_has_isr),
    ActionDef("ControllerMoveLeader", ("leader",), controller_move_leader, "R9", when=_has_isr),
    ActionDef(
        "ControllerShutdownBroker",
        ("replica", "leader"),
        controller_shutdown_broker,
        "R9",
        when=_has_isr,
    ),
    ActionDef(
        "ControllerFailover",
        (),
        controller_failover,
        "R9, R18",
        when=lambda c, p: c.controller_failovers > 0 and not p.split_fetch,
    ),
    ActionDef(
        "ControllerFailover", (), kraft_controller_failover, "R9, R18", when=_deposed_controller
    ),
    ActionDef(
        "DeposedControllerHandleAlterPartition",
        ("leader",),
        deposed_controller_handle_alter_partition,
        "R7, R9",
        when=_deposed_controller,
    ),
    ActionDef("BrokerBecomeLeader", ("replica", "epoch"), broker_become_leader, "R11"),
    ActionDef(
        "BrokerBecomeFollower", ("replica", "leader", "epoch"), broker_become_follower, "R10"
    ),
    ActionDef(
        "BrokerApplyPartitionChange",
        ("replica",),
        broker_apply_partition_change,
        "R9, R11",
        when=_split_fetch,
    ),
    ActionDef("BrokerIgnoreStaleRequest", ("replica", "epoch"), broker_ignore_stale_request, "R9"),
    ActionDef("NetworkLoseLeaderAndIsr", ("replica", "epoch"), network_lose_leader_and_isr, "R8"),
    ActionDef(
        "ProducerSend",
        ("leader", "record"),
        producer_send,
        "R6",
        when=lambda c, p: c.acks != "mixed" and not c.idempotence,
    ),
    ActionDef(
        "ProducerSend",
        ("leader", "record"),
        producer_send_idempotent,
        "R6",
        when=lambda c, p: c.idempotence,
    ),
    ActionDef(
        "ProducerSendChoosingAcks",
        ("leader", "record", "acks"),
        producer_send_choosing_acks,
        "R6",
        when=lambda c, p: c.acks == "mixed",
    ),
    ActionDef(
        "ProducerRetry",
        ("leader", "record"),
        producer_retry,
        "R6, R15",
        when=lambda c, p: c.retries > 0 and not c.idempotence,
    ),
    ActionDef(
        "ProducerRetry",
        ("leader", "record"),
        producer_retry_idempotent,
        "R6, R15",
        when=lambda c, p: c.idempotence,
    ),
    ActionDef(
        "ProducerCompleteBatch",
        ("record",),
        producer_complete_batch,
        "R6",
        when=lambda c, p: c.idempotence,
    ),
    ActionDef(
        "ProducerBumpEpoch",
        ("record",),
        producer_bump_epoch,
        "R6, R15",
        when=lambda c, p: c.idempotence,
    ),
    ActionDef(
        "FollowerFetch", ("follower", "leader"), follower_fetch, "R2-R4, R12", when=_atomic_fetch
    ),
    ActionDef(
        "FollowerTruncate",
        ("follower", "leader"),
        follower_truncate,
        "R10",
        when=_truncates_by_asking,
    ),
    ActionDef(
        "FollowerSendFetch", ("follower", "leader"), follower_send_fetch, "R2", when=_split_fetch
    ),
    ActionDef(
        "LeaderHandleFetch",
        ("leader", "follower"),
        leader_handle_fetch,
        "R3, R4, R12",
        when=_split_fetch,
    ),
    ActionDef(
        "FollowerHandleFetchResponse",
        ("follower", "leader"),
        follower_handle_fetch_response,
        "R2, R4, R10, R12",
        when=_split_fetch,
    ),
    ActionDef(
        "FollowerResetToLogStart",
        ("follower", "leader"),
        follower_reset_to_log_start,
        "R12",
        when=_atomic_retention,
    ),
    ActionDef(
        "FollowerHandleOffsetOutOfRange",
        ("follower", "leader"),
        follower_handle_offset_out_of_range,
        "R10, R12",
        when=_kraft_log_start,
    ),
    ActionDef("LeaderShrinkIsr", ("leader", "follower"), leader_shrink_isr, "R7", when=_atomic_isr),
    ActionDef("LeaderExpandIsr", ("leader", "follower"), leader_expand_isr, "R7", when=_atomic_isr),
    ActionDef(
        "LeaderSendAlterPartition",
        ("leader", "follower"),
        leader_send_alter_partition,
        "R7",
        when=_split_fetch,
    ),
    ActionDef(
        "ControllerHandleAlterPartition",
        ("leader",),
        controller_handle_alter_partition,
        "R7, R9, R18",
        when=_split_fetch,
    ),
    ActionDef(
        "NetworkLoseAlterPartitionResponse",
        ("leader",),
        network_lose_alter_partition_response,
        "R7, R8, R9",
        when=_kraft_failovers,
    ),
    ActionDef(
        "LeaderClearPendingAlterPartition",
        ("leader",),
        leader_clear_pending_alter_partition,
        "R7, R9",
        when=lambda c, p: _kraft_failovers(c, p) or _reassignments(c, p),
    ),
    ActionDef("ConsumerFetch", ("leader",), consumer_fetch, "R5", when=_atomic_fetch),
    ActionDef("ConsumerFetch", ("replica",), consumer_fetch_from_replica, "R5", when=_split_fetch),
    ActionDef("ConsumerResetOffset", ("leader",), consumer_reset_offset, "R5", when=_split_fetch),
    ActionDef(
        "ConsumerFetchDuringTruncation",
        ("follower", "leader"),
        consumer_fetch_during_truncation,
        "R5, R10",
        when=_hw_before_truncation,
    ),
    ActionDef("BrokerCheckpointHw", ("replica",), broker_checkpoint_hw, "R13"),
    ActionDef(
        "BrokerCheckpointEpochCache",
        ("replica",),
        broker_checkpoint_epoch_cache,
        "R13",
        when=_split_fetch,
    ),
    ActionDef("BrokerFlush", ("replica",), broker_flush, "R14", when=lambda c, p: c.lose_unflushed),
    ActionDef(
        "BrokerDeleteOldSegment",
        ("replica",),
        broker_delete_old_segment,
        "R12",
        when=_atomic_retention,
    ),
    ActionDef(
        "BrokerDeleteOldSegment",
        ("replica",),
        broker_delete_old_segment_kraft,
        "R4, R12",
        when=_kraft_retention,
    ),
    ActionDef("BrokerCrash", ("replica",), broker_crash, "R8"),
    ActionDef("BrokerRestart", ("replica",), broker_restart, "R13"),
    ActionDef("BrokerRegister", ("replica",), broker_register, "R9, R13", when=_split_fetch),
    ActionDef(
        "ControllerFenceBroker", ("replica",), controller_fence_broker, "R8, R9", when=_split_fetch
    ),
    ActionDef("BrokerUnfence", ("replica",), broker_unfence, "R8, R9", when=_split_fetch),
    ActionDef(
        "CoordinationExpireSession",
        ("replica",),
        coordination_expire_session,
        "R7, R8, R18",
        when=lambda c, p: c.session_expiries > 0,
    ),
    ActionDef(
        "BrokerRenewSession",
        ("replica",),
        broker_renew_session,
        "R9, R18",
        when=lambda c, p: c.session_expiries > 0,
    ),
    ActionDef(
        "LeaderCompleteRecovery",
        ("leader",),
        leader_complete_recovery,
        "R7, R9",
        when=_stepwise_recovery,
    ),
    ActionDef(
        "OperatorSetMinIsr",
        ("min_isr",),
        operator_set_min_isr,
        "R6, R9",
        when=_min_isr_changes,
    ),
    ActionDef(
        "LeaderDeleteRecords",
        ("leader", "offset"),
        leader_delete_records,
        "R4, R12",
        when=_delete_records,
    ),
    ActionDef(
        "OperatorReassignPartition",
        ("target",),
        operator_reassign_partition,
        "R1, R9",
        when=_reassignments,
    ),
    ActionDef(
        "OperatorCancelReassignment",
        (),
        operator_cancel_reassignment,
        "R1, R9",
        when=_reassignments,
    ),
    ActionDef(
        "BrokerStopReplica",
        ("replica",),
        broker_stop_replica,
        "R1, R11",
        when=_reassignments,
    ),
    ActionDef(
        "OperatorReassignPartition",
        ("target",),
        zk_operator_reassign_partition,
        "R1, R9",
        when=_zk_reassignments,
    ),
    ActionDef(
        "ControllerCompleteReassignment",
        (),
        controller_complete_reassignment,
        "R1, R7, R9",
        when=_zk_reassignments,
    ),
    ActionDef(
        "BrokerStopReplica",
        ("replica",),
        zk_broker_stop_replica,
        "R1, R11",
        when=_zk_reassignments,
    ),
)

__all__ = ["ACTIONS", "ActionDef", "Ctx"]
