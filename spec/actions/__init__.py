"""The actions of the ISR spec, named Actor+Verb, one module per actor. Each action is a function
``(ctx, state, kind, out)`` that appends ``((kind, args), next_state)`` to ``out`` for every way it
is enabled in ``state``, in a deterministic order (appending to one list is markedly cheaper than
chaining generators, and successor generation is the checker's hot path)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..state import State
from .broker import (
    broker_become_follower,
    broker_become_leader,
    broker_checkpoint_hw,
    broker_crash,
    broker_ignore_stale_request,
    broker_restart,
    network_lose_leader_and_isr,
)
from .common import Ctx
from .consumer import consumer_fetch
from .controller import controller_elect_leader, controller_shrink_isr
from .follower import follower_fetch, follower_truncate
from .leader import leader_expand_isr, leader_shrink_isr
from .producer import producer_send

ActionFn = Callable[[Ctx, State, int, list], None]


@dataclass(frozen=True)
class ActionDef:
    name: str
    params: tuple[str, ...]
    fn: ActionFn
    requirement: str
    epoch_truncation_only: bool = False  # exists only in the kip-101 and later versions


ACTIONS: tuple[ActionDef, ...] = (
    ActionDef("ControllerElectLeader", ("leader",), controller_elect_leader, "R9"),
    ActionDef("ControllerShrinkIsr", ("replica",), controller_shrink_isr, "R9"),
    ActionDef("BrokerBecomeLeader", ("replica", "epoch"), broker_become_leader, "R11"),
    ActionDef(
        "BrokerBecomeFollower", ("replica", "leader", "epoch"), broker_become_follower, "R10"
    ),
    ActionDef("BrokerIgnoreStaleRequest", ("replica", "epoch"), broker_ignore_stale_request, "R9"),
    ActionDef("NetworkLoseLeaderAndIsr", ("replica", "epoch"), network_lose_leader_and_isr, "R8"),
    ActionDef("ProducerSend", ("leader", "record"), producer_send, "R6"),
    ActionDef("FollowerFetch", ("follower", "leader"), follower_fetch, "R2-R4, R12"),
    ActionDef(
        "FollowerTruncate",
        ("follower", "leader"),
        follower_truncate,
        "R10",
        epoch_truncation_only=True,
    ),
    ActionDef("LeaderShrinkIsr", ("leader", "follower"), leader_shrink_isr, "R7"),
    ActionDef("LeaderExpandIsr", ("leader", "follower"), leader_expand_isr, "R7"),
    ActionDef("ConsumerFetch", ("leader",), consumer_fetch, "R5"),
    ActionDef("BrokerCheckpointHw", ("replica",), broker_checkpoint_hw, "R13"),
    ActionDef("BrokerCrash", ("replica",), broker_crash, "R8"),
    ActionDef("BrokerRestart", ("replica",), broker_restart, "R13"),
)

__all__ = ["ACTIONS", "ActionDef", "Ctx"]
