"""traces/counterexample/reorder.py on hand-made paths: what counts as a reordered delivery, with and without
KRaft's coalescing (a broker may skip to a later metadata image, never act on an older one)."""

from __future__ import annotations

from isr.traces.counterexample.reorder import find_reorders


def _req(epoch: int, leader: int) -> dict:
    return {
        "to": 1,
        "leader": leader,
        "epoch": epoch,
        "isr": [0, 1],
        "version_current": True,
        "controller_epoch": 1,
    }


def _state(*reqs: dict) -> dict:
    return {"alive": {"r0": True, "r1": True}, "leader_and_isr_in_flight": list(reqs)}


OLD, NEW = _req(2, 0), _req(3, 1)  # sent in this order to broker 1


def _path(last: str) -> tuple[list[dict], list[str]]:
    """Both sent; broker 1 applies the newer one first, then takes the older by ``last``."""
    states = [_state(), _state(OLD), _state(OLD, NEW), _state(OLD), _state()]
    return states, ["ControllerMoveLeader", "ControllerMoveLeader", "BrokerBecomeLeader", last]


def test_an_overtaking_delivery_is_a_reorder_in_the_zookeeper_era():
    for last in ("BrokerBecomeFollower", "BrokerIgnoreStaleRequest", "NetworkLoseLeaderAndIsr"):
        states, actions = _path(last)
        (r,) = find_reorders(states, actions)
        assert (r.step, r.dest, r.delivered["epoch"], r.overtaken["epoch"]) == (3, 1, 3, 2)


def test_with_coalescing_only_an_older_state_acted_on_later_is_a_reorder():
    states, actions = _path("BrokerBecomeFollower")
    (r,) = find_reorders(states, actions, coalescing=True)
    assert (r.delivered["epoch"], r.overtaken["epoch"]) == (3, 2)
    for skipped in ("BrokerIgnoreStaleRequest", "NetworkLoseLeaderAndIsr"):
        states, actions = _path(skipped)
        assert find_reorders(states, actions, coalescing=True) == []


def test_in_order_is_never_a_reorder():
    states = [_state(), _state(OLD), _state(OLD, NEW), _state(NEW), _state()]
    actions = ["ControllerMoveLeader", "ControllerMoveLeader", "BrokerBecomeFollower"]
    actions.append("BrokerBecomeLeader")
    assert find_reorders(states, actions) == find_reorders(states, actions, True) == []
