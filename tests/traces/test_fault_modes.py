"""Fault modes the validator maps onto the spec's Config flags."""

from __future__ import annotations

from isr.impl.sim.world import World, sim_config
from isr.traces.format import header
from isr.traces.validator.validate import validate_events

TP0 = ("t", 0)


def unclean_run() -> World:
    """The follower leaves the ISR, the leader commits alone and dies, the follower comes back:
    with unclean election on it is elected out of sync and the acknowledged record is lost."""
    cfg = sim_config("kip-320", min_insync_replicas=1, unclean_leader_election=True)
    w = World(2, 1, 2, cfg, seed=1)
    w.run_until(100)
    leader = w.leader_of(TP0)
    other = 1 - leader
    w.crash(other)
    w.run_until(1_500)
    w.produce(TP0, "x")
    w.run_until(1_600)
    w.crash(leader)
    w.restart(other)
    w.run_until(3_000)
    assert w.leader_of(TP0) == other and [r for r, _t, _o in w.lost_acked()] == ["x"]
    return w


def test_unclean_election_maps_to_the_specs_unclean_mode():
    w = unclean_run()
    cfg = w.config.to_dict()
    assert cfg["unclean_leader_election"] is True
    head = header(
        "kip-320", "sim", config=cfg, cluster={"brokers": w.ids, "assignments": {"t-0": [0, 1]}}
    )
    v = validate_events(head, [dict(e) for e in w.trace])
    assert v.verdict == "accepted", (v.reason, v.event, v.mismatches)
    # the same events under a header that says unclean election is off: the election is not a
    # step of the spec without --unclean
    head_off = {**head, "config": {**cfg, "unclean_leader_election": False}}
    v = validate_events(head_off, [dict(e) for e in w.trace])
    assert v.verdict == "rejected"
    assert v.event["action"] == "ControllerElectLeader"
