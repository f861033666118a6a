"""A restarted broker and the controller (issue 25): a ZooKeeper-era restart comes after the old
session's end (Kafka's registration waits for it), a missed bounce (KAFKA-1120) is sent nothing
until the partition's next write, and a bounce handled as a failure keeps the broker out of
the ISR and untold until that write has landed. The periodic re-send only repeats what the
broker's current incarnation was sent."""

from __future__ import annotations

from isr.impl.core import messages as m
from isr.impl.core.config import Config
from isr.impl.core.controller import Controller
from isr.impl.core.messages import PartitionState
from isr.impl.core.trace import LamportClock
from isr.impl.sim.world import World, sim_config

TP0 = ("t", 0)


def _controller() -> Controller:
    """Controller 2 of t-0 on brokers 0, 1, 2: leader 0, every broker in the ISR, each told."""
    c = Controller(2, Config(), 1, LamportClock())
    st = PartitionState(0, 0, (0, 1, 2), 1)
    effs = c.activate(0, {0, 1, 2}, {TP0: (0, 1, 2)}, {TP0: (st, 0)})
    assert sorted(e.dst for e in effs if isinstance(e, m.Send)) == [0, 1, 2]
    return c


def _sent(effs: list) -> dict[int, list[int]]:
    """Broker -> the leader epochs of t-0 it is sent."""
    out: dict[int, list[int]] = {}
    for e in effs:
        if isinstance(e, m.Send) and isinstance(e.msg, m.LeaderAndIsr):
            out.setdefault(e.dst, []).extend(p.leader_epoch for p in e.msg.partitions)
    return out


def _land(c: Controller, effs: list) -> list:
    (w,) = [e for e in effs if isinstance(e, m.CasWrite)]
    return c.on_cas_results(1, [m.CasResult(w.tp, True, w.state, 1)])


def test_a_missed_bounce_of_a_follower_gets_nothing_not_even_a_resend() -> None:
    c = _controller()
    effs = c.on_broker_bounced(1, 1)  # follower 1 restarted; the controller did not see it go
    assert not [e for e in effs if isinstance(e, m.CasWrite)] and _sent(effs) == {}
    resend = c.on_resync(2, dict(c.states))
    assert sorted(_sent(resend)) == [0, 2]  # the others are sent again what they were sent


def test_a_bounce_handled_as_a_failure_removes_the_follower_before_telling_it() -> None:
    c = _controller()
    effs = c.on_broker_bounced(1, 1, as_failure=True)
    (w,) = [e for e in effs if isinstance(e, m.CasWrite)]
    assert w.state.isr == (0, 2) and w.state.leader_epoch == 1  # the ISR removal (R9)
    assert _sent(effs) == {}
    # the live set, read again meanwhile, does not let it back in before the write landed
    assert 1 not in _sent(c.on_brokers_changed(2, {0, 1, 2}))
    assert _sent(_land(c, effs)) == {0: [1], 2: [1], 1: [1]}  # then the startup: told


def test_a_simulated_restart_comes_after_the_controllers_reaction() -> None:
    """kip-320: follower 2 crashes and restarts at once; its ISR removal is traced before its
    BrokerRestart, and it is told the new state; a missed bounce leaves it in the ISR untold."""
    for missed in (False, True):
        w = World(3, 1, 3, sim_config("kip-320", min_insync_replicas=1), seed=3)
        w.run_until(300)
        follower = next(b for b in range(3) if b not in (w.leader_of(TP0), w.coord.controller))
        w.crash(follower)
        w.restart(follower, missed_bounce=missed)
        w.run_until(w.now + 50)
        acts = [
            e["action"]
            for e in w.trace
            if e["action"] in ("ControllerShrinkIsr", "BrokerRestart", "BrokerBecomeFollower")
            and e.get("args", {}).get("replica") == follower
        ]
        if missed:
            assert acts[-1:] == ["BrokerRestart"] and "ControllerShrinkIsr" not in acts
            assert follower in w.coord.states[TP0][0].isr
        else:
            assert acts[-3:] == ["ControllerShrinkIsr", "BrokerRestart", "BrokerBecomeFollower"]
