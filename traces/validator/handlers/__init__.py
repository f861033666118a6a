"""The event handlers, one module per actor: ``HANDLERS`` maps an event's action to its
handler, (validator, event, candidate, mismatches) -> next candidates; ``PREPARE`` maps an
action to what is done once per event before its handler runs on each candidate."""

from __future__ import annotations

from collections.abc import Callable

from .broker import leader_answers_first, on_crash, on_flush, on_pause, prepare_crash, view_is
from .clients import (
    on_acked,
    on_bump_epoch,
    on_complete_batch,
    on_consume,
    on_produce,
    prepare_produce,
    prepare_producer_step,
)
from .common import arg_rep, generic_handler
from .controller import (
    controller_handler,
    on_activate,
    on_elect,
    prepare_activate,
    prepare_offline,
    stale_or_lost,
)
from .fetch import on_fetch, on_truncate
from .kraft import (
    on_delete_old_segment,
    on_fetch_response,
    on_handle_alter,
    on_handle_fetch,
    on_offset_out_of_range,
    on_register,
    on_send_alter,
    on_send_fetch,
)
from .leader import on_shrink
from .reassign import on_cancel, on_clear_pending, on_reassign, on_stop_replica

HANDLERS: dict[str, Callable] = {
    "ControllerActivate": on_activate,
    "ControllerElectLeader": on_elect,
    "ControllerShrinkIsr": controller_handler("ControllerShrinkIsr", "replica"),
    # R9, leadership moved away from a live leader (VALIDATION.md, mapping decision 13)
    "ControllerMoveLeader": controller_handler("ControllerMoveLeader", "leader"),
    "ControllerShutdownBroker": controller_handler("ControllerShutdownBroker", "replica", "leader"),
    "BrokerBecomeLeader": leader_answers_first(
        generic_handler(
            "BrokerBecomeLeader",
            lambda v, ev: (v.pm.rep(ev["args"]["replica"]), v.pm.epoch(ev["args"]["epoch"])),
            arg_rep("replica"),
            view_is,
        )
    ),
    "BrokerBecomeFollower": leader_answers_first(
        generic_handler(
            "BrokerBecomeFollower",
            lambda v, ev: (
                v.pm.rep(ev["args"]["replica"]),
                v.pm.rep_or_none(ev["args"]["leader"]),
                v.pm.epoch(ev["args"]["epoch"]),
            ),
            arg_rep("replica"),
            view_is,
        )
    ),
    "BrokerIgnoreStaleRequest": stale_or_lost("BrokerIgnoreStaleRequest"),
    "NetworkLoseLeaderAndIsr": stale_or_lost("NetworkLoseLeaderAndIsr"),
    "ProducerSend": on_produce,
    "FollowerFetch": on_fetch,
    "FollowerTruncate": on_truncate,
    "LeaderShrinkIsr": lambda v, ev, c, mism: on_shrink(v, ev, c, mism),
    "LeaderExpandIsr": generic_handler(
        "LeaderExpandIsr",
        lambda v, ev: (v.pm.rep(ev["args"]["leader"]), v.pm.rep(ev["args"]["follower"])),
        arg_rep("leader"),
    ),
    "ConsumerFetch": on_consume,
    "BrokerCheckpointHw": generic_handler(
        "BrokerCheckpointHw",
        lambda v, ev: (v.pm.rep(ev["args"]["replica"]),),
        arg_rep("replica"),
        lambda v, ev, s, i: True,
    ),
    "BrokerCrash": on_crash,
    "BrokerPause": on_pause,
    "BrokerFlush": on_flush,
    "BrokerRestart": generic_handler(
        "BrokerRestart", lambda v, ev: (v.pm.rep(ev["args"]["replica"]),), arg_rep("replica")
    ),
    "ProduceAcked": on_acked,
    # the idempotent producer's own steps (--idempotence, handlers/clients.py)
    "ProducerCompleteBatch": on_complete_batch,
    "ProducerBumpEpoch": on_bump_epoch,
    # kraft (handlers/kraft.py)
    "FollowerSendFetch": on_send_fetch,
    "LeaderHandleFetch": on_handle_fetch,
    "FollowerHandleFetchResponse": on_fetch_response,
    "LeaderSendAlterPartition": on_send_alter,
    "ControllerHandleAlterPartition": on_handle_alter,
    "BrokerApplyPartitionChange": generic_handler(
        "BrokerApplyPartitionChange",
        lambda v, ev: (v.pm.rep(ev["args"]["replica"]),),
        arg_rep("replica"),
    ),
    "BrokerRegister": on_register,
    # the log start offset (R12; kraft, BrokerDeleteOldSegment also the atomic versions')
    "LeaderDeleteRecords": generic_handler(
        "LeaderDeleteRecords",
        lambda v, ev: (v.pm.rep(ev["args"]["leader"]), int(ev["args"]["offset"])),
        arg_rep("leader"),
    ),
    "BrokerDeleteOldSegment": on_delete_old_segment,
    "FollowerHandleOffsetOutOfRange": on_offset_out_of_range,
    # partition reassignment (KIP-455, kraft: handlers/reassign.py)
    "OperatorReassignPartition": on_reassign,
    "OperatorCancelReassignment": on_cancel,
    "BrokerStopReplica": on_stop_replica,
    "LeaderClearPendingAlterPartition": on_clear_pending,
}
PREPARE: dict[str, Callable] = {
    "ProducerSend": prepare_produce,
    "ProducerCompleteBatch": prepare_producer_step,
    "ProducerBumpEpoch": prepare_producer_step,
    "BrokerCrash": prepare_crash,
    "ControllerElectLeader": prepare_offline,
    "ControllerActivate": prepare_activate,
}
