"""Each action is enabled where the protocol allows it and disabled where it does not."""

from __future__ import annotations

from isr.spec.properties import no_committed_loss, strong_isr

from .helpers import model, moves, run, step


def test_initial_state_enables_produce_first_fetches_shrink_and_crash():
    m = model(replicas=3, records=1, crashes=1)
    s = m.init_states()[0]
    names = sorted({m.action_names[a[0]] for a, _ in m.successors(s)})
    # followers have not fetched yet: their LEO is unknown to the leader, so a first fetch tells
    # it, and until then they may be shrunk (lag time is not modelled, R7)
    # and the controller may move leadership off the live leader (preferred election) or shut a
    # broker down in a controlled way (R9)
    assert names == [
        "BrokerCrash",
        "ControllerMoveLeader",
        "ControllerShutdownBroker",
        "FollowerFetch",
        "LeaderShrinkIsr",
        "ProducerSend",
    ]
    assert [a for a, _ in moves(m, s, "ProducerSend")] == [(0, 1)]  # only the leader takes writes


def test_produce_is_bounded_and_refused_below_min_isr():
    m = model(replicas=2, records=1, min_isr=2)
    s = run(m, ("ProducerSend", 0, 1))
    assert moves(m, s, "ProducerSend") == []  # records exhausted
    m = model(replicas=2, records=2, min_isr=2)
    s = run(m, ("ProducerSend", 0, 1), ("LeaderShrinkIsr", 0, 1))
    assert s.coord.isr == 0b01
    # the shrink let the HW pass record 1 with one replica in the ISR:
    # NotEnoughReplicasAfterAppend, the record stays in the log but is not acknowledged
    assert s.history.refused == (1,) and s.history.acked == () and s.replicas[0].hw == 1
    t = step(m, s, "ProducerSend", 0, 2)
    assert t.history.refused == (1, 2) and len(t.replicas[0].log) == 1  # NotEnoughReplicas


def test_acks_1_acknowledges_on_append():
    m = model(replicas=2, records=1, acks="1")
    s = run(m, ("ProducerSend", 0, 1))
    assert s.history.acked1 == ((0, 1),) and s.history.acked == ()


def test_acks_all_waits_for_the_hw():
    m = model(replicas=2, records=1)
    s = run(m, ("ProducerSend", 0, 1), ("FollowerFetch", 1, 0))
    assert s.history.acked == () and s.replicas[0].hw == 0 and s.replicas[1].log == ((1, 1),)
    s = step(m, s, "FollowerFetch", 1, 0)  # the fetch at offset 1 acknowledges offset 0 (R2)
    assert s.replicas[0].hw == 1 and s.replicas[1].hw == 1
    assert s.history.acked == ((0, 1),)


def test_leader_shrink_needs_a_lagging_follower_and_a_current_version():
    m = model(replicas=2, records=1)
    s = run(m, ("FollowerFetch", 1, 0))
    assert moves(m, s, "LeaderShrinkIsr") == []  # the follower is not behind the leader's LEO
    s = step(m, s, "ProducerSend", 0, 1)
    assert [a for a, _ in moves(m, s, "LeaderShrinkIsr")] == [(0, 1)]
    stale = s._replace(replicas=(s.replicas[0]._replace(zk_fresh=False), s.replicas[1]))
    assert moves(m, stale, "LeaderShrinkIsr") == []  # the CAS would fail


def test_leader_expand_needs_a_caught_up_follower():
    m = model(replicas=2, records=2)
    s = run(m, ("ProducerSend", 0, 1), ("LeaderShrinkIsr", 0, 1))
    assert s.replicas[0].hw == 1  # alone in the ISR, the leader commits at once
    assert moves(m, s, "LeaderExpandIsr") == []  # the follower has not fetched
    s = step(m, s, "FollowerFetch", 1, 0)  # fetch at 0: remote LEO 0 < HW 1
    assert moves(m, s, "LeaderExpandIsr") == []
    s = step(m, s, "FollowerFetch", 1, 0)  # fetch at 1: caught up with the HW
    t = step(m, s, "LeaderExpandIsr", 0, 1)
    assert t.coord.isr == 0b11 and t.replicas[0].isr == 0b11


def test_controller_elects_only_when_the_leader_is_lost():
    m = model(replicas=3, records=1, crashes=1, epochs=2)
    s = m.init_states()[0]
    assert moves(m, s, "ControllerElectLeader") == []
    s = step(m, s, "BrokerCrash", 0)
    elected = moves(m, s, "ControllerElectLeader")
    assert sorted(a for a, _ in elected) == [(1,), (2,)]  # live ISR members only
    t = elected[0][1]
    assert t.coord.epoch == 2 and t.coord.isr == 0b110
    assert {q.dest for q in t.requests} == {1, 2}  # LeaderAndIsr to the live replicas
    m1 = model(replicas=3, records=1, crashes=1, epochs=1)
    assert moves(m1, run(m1, ("BrokerCrash", 0)), "ControllerElectLeader") == []  # epoch bound


def test_controller_removes_a_crashed_follower():
    m = model(replicas=3, records=1, crashes=1, epochs=2)
    s = run(m, ("BrokerCrash", 2))
    assert [a for a, _ in moves(m, s, "ControllerShrinkIsr")] == [(2,)]
    t = step(m, s, "ControllerShrinkIsr", 2)
    assert t.coord.isr == 0b011 and t.coord.leader == 0 and t.coord.epoch == 2
    assert not t.replicas[0].zk_fresh  # the controller's write made the leader's version stale


def test_become_follower_truncates_to_hw_only_in_the_seeds_protocol():
    for proto, truncates in (("hw-truncation", True), ("kip-320", False)):
        m = model(proto, replicas=2, records=1, crashes=1, epochs=2)
        s = run(
            m,
            ("ProducerSend", 0, 1),
            ("FollowerFetch", 1, 0),
            ("BrokerCrash", 1),
            ("ControllerShrinkIsr", 1),  # (the controller saw it go: else, before KIP-380, a
            ("BrokerRestart", 1),  # restarted ISR member is sent nothing, a missed bounce)
        )
        # the restarted follower gets the current state and becomes a follower again
        t = (
            step(m, s, "BrokerBecomeFollower", 1, 0, 2)
            if moves(m, s, "BrokerBecomeFollower")
            else s
        )
        if moves(m, t, "BrokerBecomeLeader"):  # the leader takes up epoch 2 as well
            t = step(m, t, "BrokerBecomeLeader", 0, 2)
        if truncates:
            assert t.replicas[1].log == ()  # restart truncated to the HW checkpoint, 0
        else:
            assert t.replicas[1].log == ((1, 1),) and t.replicas[1].truncating
            assert moves(m, t, "FollowerTruncate")


def test_follower_truncate_exists_only_with_epoch_truncation():
    assert "FollowerTruncate" not in model("hw-truncation").action_names
    assert "FollowerTruncate" in model("kip-101").action_names


def test_kip_320_fences_fetches_from_another_epoch():
    for proto, fenced in (("kip-279", False), ("kip-320", True)):
        m = model(proto, replicas=2, records=1)
        s = run(m, ("ProducerSend", 0, 1))
        f = s.replicas[1]
        s2 = s._replace(replicas=(s.replicas[0]._replace(epoch=2), f))  # leader one epoch ahead
        assert (moves(m, s2, "FollowerFetch") == []) == fenced


def test_crash_and_restart():
    m = model("hw-truncation", replicas=2, records=1, crashes=1)
    s = run(m, ("ProducerSend", 0, 1), ("FollowerFetch", 1, 0), ("FollowerFetch", 1, 0))
    assert s.replicas[1].hw == 1 and s.replicas[1].hw_ckpt == 0
    s = step(m, s, "BrokerCheckpointHw", 1)
    assert s.replicas[1].hw_ckpt == 1
    s = step(m, s, "BrokerCrash", 1)
    assert not s.replicas[1].alive and s.replicas[1].hw == 0 and s.history.crashes == 1
    assert moves(m, s, "BrokerCrash") == []  # the crash budget is spent
    assert moves(m, s, "FollowerFetch") == []
    s = step(m, s, "BrokerRestart", 1)
    assert s.replicas[1].alive and s.replicas[1].hw == 1 and s.replicas[1].log == ((1, 1),)


def test_consumer_sees_only_below_the_hw():
    m = model(replicas=2, records=1)
    s = run(m, ("ProducerSend", 0, 1), ("FollowerFetch", 1, 0))
    assert moves(m, s, "ConsumerFetch") == []
    s = step(m, s, "FollowerFetch", 1, 0)
    t = step(m, s, "ConsumerFetch", 0)
    assert t.history.shown == ((0, 1),)
    assert moves(m, t, "ConsumerFetch") == []  # nothing new to show


def test_lost_and_stale_requests():
    """R8: a live broker's requests from the current controller are never lost (Kafka retries
    them until sent); a crashed broker's queue is, when the controller handles the crash."""
    m = model(replicas=3, records=1, crashes=2, epochs=2)
    s = run(m, ("BrokerCrash", 0), ("ControllerElectLeader", 1))
    assert moves(m, s, "NetworkLoseLeaderAndIsr") == []
    t = step(m, s, "BrokerBecomeLeader", 1, 2)
    assert t.replicas[1].leader == 1 and t.replicas[1].epoch == 2
    t = step(m, t, "BrokerCrash", 2)
    ((args, u),) = moves(m, t, "NetworkLoseLeaderAndIsr")
    assert args == (2, 2) and u.requests == ()


def test_a_broker_takes_its_requests_in_order():
    """R8: of the requests in flight to one broker from one controller only the oldest is
    delivered (or ignored); epoch 3 waits for epoch 2 (ControllerChannelManager's FIFO queue)."""
    m = model(replicas=2, records=1, crashes=0, epochs=3)
    s = run(m, ("ControllerMoveLeader", 1), ("ControllerMoveLeader", 0))
    assert sorted(q.epoch for q in s.requests if q.dest == 0) == [2, 3]
    assert [a for a, _ in moves(m, s, "BrokerBecomeLeader")] == [(1, 2)]  # not (0, 3): after (0, 2)
    assert [a for a, _ in moves(m, s, "BrokerBecomeFollower")] == [(0, 1, 2)]
    assert moves(m, s, "NetworkLoseLeaderAndIsr") == []


def test_the_kip101_data_loss_scenario_by_hand():
    """Follower restarts with a lagging HW checkpoint, truncates, then is elected (R13)."""
    m = model("hw-truncation", replicas=2, records=1, crashes=2, epochs=2)
    s = run(
        m,
        ("ProducerSend", 0, 1),
        ("FollowerFetch", 1, 0),
        ("FollowerFetch", 1, 0),
        ("BrokerCrash", 1),
        ("BrokerRestart", 1),
        ("BrokerBecomeFollower", 1, 0, 1),  # the restart's request first (R8: in order)
        ("BrokerCrash", 0),
        ("ControllerElectLeader", 1),
        ("BrokerBecomeLeader", 1, 2),
    )
    assert s.history.acked == ((0, 1),)
    assert not no_committed_loss(s)
    assert strong_isr(s)  # the ISR is now {1} alone


def test_a_request_that_is_not_newer_is_ignored():
    from isr.spec.state import Request

    m = model(replicas=2, records=1)
    s = m.init_states()[0]
    assert moves(m, s, "BrokerIgnoreStaleRequest") == []
    stale = s._replace(requests=(Request(1, 1, 1, 0b11, False, 1),))  # epoch 1: not newer than 1
    assert moves(m, stale, "BrokerBecomeLeader") == []
    assert moves(m, stale, "BrokerBecomeFollower") == []
    ((args, t),) = moves(m, stale, "BrokerIgnoreStaleRequest")
    assert args == (1, 1) and t.requests == () and t.replicas == s.replicas


def test_type_ok_bounds_every_replica_field():
    """TypeOK is a real check, not only a label: each out-of-range replica field fails it (a
    mutation run weakened its HW bound and no test noticed, since no reachable state breaks it)."""
    m = model(replicas=2, records=1, crashes=1)
    type_ok = next(p for p in m.properties if p.name == "TypeOK").check
    s = m.init_states()[0]
    assert type_ok(s)
    r0 = s.replicas[0]
    for bad in (
        {"hw": 2},  # beyond the longest log the bounds allow (one record)
        {"hw_ckpt": 2},
        {"hw": -1},
        {"leader": 2},  # no such replica
        {"epoch": 9},
        {"isr": 4},  # a replica outside the assignment
        {"remote_leo": (0,)},  # one entry per replica
        {"log": ((1, 1), (1, 1))},  # longer than the records written allow
        {"log": ((2, 1),)},  # a record id never written
    ):
        t = s._replace(replicas=(r0._replace(**bad), s.replicas[1]))
        assert not type_ok(t), bad


def test_a_re_elected_leader_keeps_its_followers_leos_and_commits_at_once():
    """Kafka's Partition.makeLeader forgets a follower's fetched LEO only for a new leader
    (``isNewLeader``; 3.5+ ``Replica.resetReplicaState``), then re-evaluates the HW: leader 0,
    re-elected at epoch 2 by the controller's removal of the crashed broker 2, still knows that
    follower 1 has record 1, and commits it in the same step. A new leader knows nothing."""
    m = model("kip-320", replicas=3, records=1, epochs=3, crashes=1)
    s = run(
        m,
        ("ProducerSend", 0, 1),
        ("FollowerFetch", 1, 0),
        ("FollowerFetch", 1, 0),
        ("BrokerCrash", 2),
        ("ControllerShrinkIsr", 2),
    )
    assert s.replicas[0].remote_leo[1] == 1 and s.replicas[0].hw == 0  # broker 2 held it back
    t = step(m, s, "BrokerBecomeLeader", 0, 2)
    assert t.replicas[0].remote_leo[1] == 1 and t.replicas[0].hw == 1
    # broker 1 made leader instead (a move) starts with every follower unknown
    u = step(m, t, "ControllerMoveLeader", 1)
    u = step(m, u, "BrokerBecomeFollower", 1, 0, 2)  # (its queue, in order: R8)
    u = step(m, u, "BrokerBecomeLeader", 1, 3)
    assert u.replicas[1].remote_leo == (-1, -1, -1)
