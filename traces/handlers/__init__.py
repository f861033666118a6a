"""The event handlers, one module per actor: ``HANDLERS`` maps an event's action to its
handler, (validator, event, candidate, mismatches) -> next candidates; ``PREPARE`` maps an
action to what is done once per event before its handler runs on each candidate."""

from __future__ import annotations

from collections.abc import Callable

from .broker import _crash, _crash_prepare, _flush, _pause, _view_is
from .clients import _acked, _consume, _produce, _produce_prepare
from .common import _arg_rep, _generic
from .controller import _controller, _elect, _offline_prepare, _stale_or_lost
from .fetch import _fetch, _truncate
from .leader import _shrink

HANDLERS: dict[str, Callable] = {
    "ControllerElectLeader": _elect,
    "ControllerShrinkIsr": _controller("ControllerShrinkIsr", "replica"),
    "BrokerBecomeLeader": _generic(
        "BrokerBecomeLeader",
        lambda v, ev: (v.pm.rep(ev["args"]["replica"]), v.pm.epoch(ev["args"]["epoch"])),
        _arg_rep("replica"),
        _view_is,
    ),
    "BrokerBecomeFollower": _generic(
        "BrokerBecomeFollower",
        lambda v, ev: (
            v.pm.rep(ev["args"]["replica"]),
            v.pm.rep_or_none(ev["args"]["leader"]),
            v.pm.epoch(ev["args"]["epoch"]),
        ),
        _arg_rep("replica"),
        _view_is,
    ),
    "BrokerIgnoreStaleRequest": _stale_or_lost("BrokerIgnoreStaleRequest"),
    "NetworkLoseLeaderAndIsr": _stale_or_lost("NetworkLoseLeaderAndIsr"),
    "ProducerSend": _produce,
    "FollowerFetch": _fetch,
    "FollowerTruncate": _truncate,
    "LeaderShrinkIsr": lambda v, ev, c, mism: _shrink(v, ev, c, mism),
    "LeaderExpandIsr": _generic(
        "LeaderExpandIsr",
        lambda v, ev: (v.pm.rep(ev["args"]["leader"]), v.pm.rep(ev["args"]["follower"])),
        _arg_rep("leader"),
    ),
    "ConsumerFetch": _consume,
    "BrokerCheckpointHw": _generic(
        "BrokerCheckpointHw",
        lambda v, ev: (v.pm.rep(ev["args"]["replica"]),),
        _arg_rep("replica"),
        lambda v, ev, s, i: True,
    ),
    "BrokerCrash": _crash,
    "BrokerPause": _pause,
    "BrokerFlush": _flush,
    "BrokerRestart": _generic(
        "BrokerRestart", lambda v, ev: (v.pm.rep(ev["args"]["replica"]),), _arg_rep("replica")
    ),
    "ProduceAcked": _acked,
}
PREPARE: dict[str, Callable] = {
    "ProducerSend": _produce_prepare,
    "BrokerCrash": _crash_prepare,
    "ControllerElectLeader": _offline_prepare,
}
