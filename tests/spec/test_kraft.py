"""The ``kraft`` version (issue 18, step 1; docs/design/kraft.md): the split fetch, its guards,
its state counts, symmetry, and each guard's bug found when the guard is removed. Counts and
counterexample lengths are pinned: a change that moves them must say why."""

from __future__ import annotations

import itertools
import json

import pytest
from isr.checker.bfs import check_bfs
from isr.checker.engines import Limits
from isr.cli.main import main
from isr.spec import Config, IsrSpec
from isr.spec.protocols import KRAFT, PROTOCOLS
from isr.spec.state import NO_KRAFT

from .helpers import moves, run, step

# every invariant and action property the kraft model states (from the model, not a list kept here)
SAFETY = [
    p.name
    for p in IsrSpec(Config(protocol="kraft", replicas=2, records=1)).properties
    if p.kind in ("always", "action")
]


def kraft(variant=None, **bounds) -> IsrSpec:
    return IsrSpec(Config(protocol="kraft", **bounds), protocol=variant)


def without(**flags):
    return KRAFT.variant(**flags)


# The kraft version before issue 25 read Kafka 4.x: the fence apart from the ISR removal and the
# election, no unfence of a paused broker, unclean-shutdown handling only with --lose-unflushed,
# the truncation's epoch checkpoint written with it, a crash fenced at once. The scripted stories below that walk those
# separate steps run on it (the mechanism each shows is unchanged).
LEGACY = dict(
    atomic_fence=False,
    unfence_on_heartbeat=False,
    unclean_shutdown_on_register=False,
    sync_truncation_ckpt=True,
    fence_at_crash=True,
)


def legacy(**flags):
    return KRAFT.variant(**{**LEGACY, **flags})


def verdicts(res) -> dict:
    return {p.name: p for p in res.properties}


# --- the state component and the actions -------------------------------------------------------


def test_other_versions_keep_the_constant_and_the_atomic_fetch():
    for name in PROTOCOLS:
        m = IsrSpec(Config(protocol=name, replicas=2, records=1))
        s = m.init_states()[0]
        if PROTOCOLS[name].split_fetch:  # kraft and its release presets
            assert s.kraft != NO_KRAFT and s.kraft.broker_epoch == (1, 1)
            assert "FollowerFetch" not in m.action_names
            assert "FollowerTruncate" not in m.action_names
            assert (
                "LeaderExpandIsr" not in m.action_names and "LeaderShrinkIsr" not in m.action_names
            )
            assert {"FollowerSendFetch", "LeaderHandleFetch", "FollowerHandleFetchResponse"} <= set(
                m.action_names
            )
        else:
            assert s.kraft is NO_KRAFT
            assert "FollowerSendFetch" not in m.action_names


def test_a_variant_must_be_a_kraft_version():
    with pytest.raises(ValueError, match="not a"):
        IsrSpec(Config(protocol="kip-320"), protocol=KRAFT)


def test_the_follower_learns_the_hw_one_round_late():
    """KAFKA-7104: the response carries the HW read with the records, before the leader applied
    the fetch; the follower learns an advance one fetch later than the atomic fetch tells it.
    ``fresh_hw_in_response`` (the pre-2.0 answer) removes that round."""
    script = [
        ("ProducerSend", 0, 1),
        ("FollowerSendFetch", 1, 0),
        ("LeaderHandleFetch", 0, 1),
        ("FollowerHandleFetchResponse", 1, 0),
        ("FollowerSendFetch", 1, 0),
        ("LeaderHandleFetch", 0, 1),
    ]
    m = kraft(replicas=2, records=1, crashes=0)
    s = run(m, *script)
    assert s.replicas[0].hw == 1 and s.history.acked == ((0, 1),)  # committed on receipt
    assert s.kraft.fetch_responses[0].hw == 0  # ... but answered with the HW read before
    s = step(m, s, "FollowerHandleFetchResponse", 1, 0)
    assert s.replicas[1].log == ((1, 1),) and s.replicas[1].hw == 0  # one more round to go
    m = kraft(without(fresh_hw_in_response=True), replicas=2, records=1, crashes=0)
    s = run(m, *script, ("FollowerHandleFetchResponse", 1, 0))
    assert s.replicas[1].hw == 1


def test_one_fetch_in_flight_per_fetcher():
    m = kraft(replicas=2, records=1, crashes=0)
    s = run(m, ("FollowerSendFetch", 1, 0))
    assert moves(m, s, "FollowerSendFetch") == []  # the request is in flight
    s = step(m, s, "LeaderHandleFetch", 0, 1)
    assert moves(m, s, "FollowerSendFetch") == []  # ... then its response
    s = step(m, s, "FollowerHandleFetchResponse", 1, 0)
    assert [a for a, _ in moves(m, s, "FollowerSendFetch")] == [(1, 0)]


def _diverged():
    """Replica 0, deposed but not yet told, writes record 1 in epoch 1; replica 1 leads epoch 2
    and writes record 2 at the same offset; replica 0 follows it and fetches with last epoch 1."""
    return [
        ("ControllerMoveLeader", 1),
        ("BrokerBecomeLeader", 1, 2),
        ("ProducerSend", 0, 1),  # replica 0 has not heard of epoch 2 yet: a zombie write
        ("BrokerBecomeFollower", 0, 1, 2),
        ("ProducerSend", 1, 2),
        ("FollowerSendFetch", 0, 1),
        ("LeaderHandleFetch", 1, 0),
    ]


def test_a_diverging_fetch_is_answered_with_the_epoch_and_not_counted():
    """KIP-595-style truncation in the fetch response (Kafka 2.7+), and KAFKA-13141's fix: the
    leader does not count the fetch offset of a diverging follower."""
    m = kraft(replicas=2, records=2, crashes=0)
    s = run(m, *_diverged())
    (resp,) = s.kraft.fetch_responses
    # the leader knows no epoch <= 1: since Kafka 2.1 (KAFKA-7415) it answers the asked epoch
    # with the start of its first one, here 0 (before, UNDEFINED: the follower kept its HW)
    assert resp.diverging == (1, 0) and resp.records == ()
    assert s.replicas[1].remote_leo[0] == -1 and s.replicas[1].hw == 0
    s = step(m, s, "FollowerHandleFetchResponse", 0, 1)
    assert s.replicas[0].log == ()  # truncated to where the leader's epochs begin
    m = kraft(without(count_diverging_fetch=True), replicas=2, records=2, crashes=0)
    s = run(m, *_diverged())
    # the bug: offset 1 counted, the HW passes record 2, which replica 0 does not have
    assert s.replicas[1].remote_leo[0] == 1 and s.replicas[1].hw == 1
    assert s.history.acked == ((0, 2),) and s.replicas[0].log == ((1, 1),)


def test_a_stale_response_is_ignored():
    """A response to a fetch sent in an older leader epoch (the follower's epoch changed while it
    was in flight: here the same leader re-elected after a restart) is not applied
    (AbstractFetcherThread's guard, KAFKA-18991's epoch half)."""
    script = [
        ("ProducerSend", 0, 1),
        ("FollowerSendFetch", 1, 0),
        ("LeaderHandleFetch", 0, 1),
        ("BrokerCrash", 0),  # the response to replica 1 is on its way already
        ("BrokerRestart", 0),
        ("BrokerRegister", 0),
        ("ControllerElectLeader", 0),  # epoch 2, the same leader
        ("BrokerBecomeLeader", 0, 2),
        ("BrokerBecomeFollower", 1, 0, 2),
    ]
    bounds = dict(replicas=2, records=1, crashes=1)
    m = kraft(legacy(), **bounds)
    t = step(m, run(m, *script), "FollowerHandleFetchResponse", 1, 0)
    assert t.replicas[1].log == () and t.kraft.fetch_responses == ()
    m = kraft(legacy(response_guard=False), **bounds)
    t = step(m, run(m, *script), "FollowerHandleFetchResponse", 1, 0)
    assert t.replicas[1].log == ((1, 1),)


def test_an_isr_change_bumps_the_partition_epoch_only():
    """KAFKA-15021: the controller removes a follower from the ISR (here by controlled shutdown)
    with the leader epoch unchanged. The follower's fetch in flight is still answered and
    applied (fetches are fenced by the leader epoch only); the leader applies the change
    (BrokerApplyPartitionChange) and keeps what it knows of the follower; its AlterPartition
    built before the change is refused (its partition epoch is stale)."""
    m = kraft(replicas=2, records=1, crashes=0)
    s = run(
        m,
        ("ProducerSend", 0, 1),
        ("FollowerSendFetch", 1, 0),
        ("LeaderHandleFetch", 0, 1),
        ("LeaderSendAlterPartition", 0, 1),  # a shrink: replica 1's fetch did not reach 1
        ("ControllerShutdownBroker", 1, 0),
    )
    assert s.coord.epoch == 1 and s.coord.isr == 0b01
    assert [(q.dest, q.epoch, q.fresh) for q in s.requests] == [(0, 1, True)]  # the leader only
    assert moves(m, s, "BrokerIgnoreStaleRequest") == []
    t = step(m, s, "FollowerHandleFetchResponse", 1, 0)
    assert t.replicas[1].log == ((1, 1),)  # applied across the ISR change
    t = step(m, s, "BrokerApplyPartitionChange", 0)
    r = t.replicas[0]
    assert (r.isr, r.epoch, r.zk_fresh, r.remote_leo[1]) == (0b01, 1, True, 0)  # still known
    # the leader's shrink proposal, built on the old partition epoch, is refused
    t = step(m, t, "ControllerHandleAlterPartition", 0)
    assert t.coord.isr == 0b01 and t.kraft.alter_partition == ()
    # refused before the leader applied the change: it keeps its old ISR view until it does
    t = step(m, s, "ControllerHandleAlterPartition", 0)
    assert (t.replicas[0].isr, t.replicas[0].zk_fresh) == (0b11, False)
    # partition_epoch_check=False: only the leader and its leader epoch are checked: accepted
    m = kraft(without(partition_epoch_check=False), replicas=2, records=1, crashes=0)
    t = step(m, s, "ControllerHandleAlterPartition", 0)
    assert (t.replicas[0].isr, t.replicas[0].zk_fresh) == (0b01, True)


def test_a_fetch_from_a_previous_incarnation_is_fenced():
    """KAFKA-15221: a fetch sent before a restart that lost the log, handled after the new
    incarnation's first fetch, is rejected by its broker epoch; without the fence it puts the
    old incarnation's LEO back into the leader's view."""
    script = [
        ("ProducerSend", 0, 1),
        ("FollowerSendFetch", 1, 0),
        ("LeaderHandleFetch", 0, 1),
        ("FollowerHandleFetchResponse", 1, 0),
        ("FollowerSendFetch", 1, 0),  # fetch offset 1: it has record 1, unflushed
        ("BrokerCrash", 1),  # loses the unflushed record; the fetch stays in the leader's queue
        ("ControllerFenceBroker", 1),  # its session times out
        ("BrokerRestart", 1),
        ("BrokerRegister", 1),  # broker epoch 2
        ("BrokerBecomeFollower", 1, 0, 1),
        ("FollowerSendFetch", 1, 0),  # the new incarnation (broker epoch 2) at offset 0
        ("LeaderHandleFetch", 0, 1),
    ]
    bounds = dict(replicas=2, records=1, crashes=1, lose_unflushed=True)
    m = kraft(**bounds)
    s = run(m, *script[:-1])
    assert s.kraft.broker_epoch == (1, 2) and len(s.kraft.fetch_requests) == 2
    s = step(m, s, "LeaderHandleFetch", 0, 1)
    stale = [q for q in s.kraft.fetch_requests if q.broker_epoch == 1]
    assert s.replicas[0].remote_leo[1] == 0 and stale and stale[0].fetch_offset == 1
    t = [t for a, t in moves(m, s, "LeaderHandleFetch") if a == (0, 1)]
    fenced = [
        t
        for t in t
        if t.kraft.fetch_requests == () and t.kraft.fetch_responses == s.kraft.fetch_responses
    ]
    assert fenced and fenced[0].replicas[0].remote_leo[1] == 0  # rejected: STALE_BROKER_EPOCH
    m = kraft(without(fence_stale_fetch=False), **bounds)
    s = run(m, *script)
    s = [t for a, t in moves(m, s, "LeaderHandleFetch") if a == (0, 1)]
    assert any(t.replicas[0].remote_leo[1] == 1 for t in s)  # the lost record counted again


def test_registration_is_apart_from_restart():
    """KIP-841 in Kafka 4.x: the controller learns of a crash only when the broker's session
    times out; until then the crashed broker is live to it (in the ISR, unfenced), and it may
    not restart (register) yet. The fence's batch takes it out of the ISR
    (``handleBrokerFenced``); the restart is the registration (fenced, with its batch's
    unclean-shutdown handling: Kafka 4.x with ELR never elects it cleanly until back in the
    ISR); BrokerRegister, the unfencing, gives it a new broker epoch and sends it the partition
    state. With ``fence_at_crash`` the crash is fenced at once and the registration does the
    unclean-shutdown handling."""
    m = kraft(replicas=2, records=1, crashes=1)
    s = run(m, ("BrokerCrash", 1))
    assert s.kraft.fenced == 0 and s.coord.isr == 0b11 and not s.replicas[1].alive
    assert moves(m, s, "BrokerRestart") == [] and moves(m, s, "ControllerShrinkIsr") == []
    assert [a for a, _ in moves(m, s, "ControllerFenceBroker")] == [(1,)]
    s = step(m, s, "ControllerFenceBroker", 1)
    assert s.kraft.fenced == 0b10 and s.coord.isr == 0b01 and s.coord.epoch == 1
    assert s.history.crashes == 1  # the fence of a crashed broker is not counted again
    assert moves(m, s, "ControllerShrinkIsr") == []
    assert [(q.dest, q.leader, q.isr) for q in s.requests] == [(0, 0, 0b01)]  # the leader's
    s = step(m, s, "BrokerRestart", 1)
    assert s.kraft.fenced == 0b10 and s.kraft.broker_epoch == (1, 1) and s.faults.unclean == 0b10
    assert moves(m, s, "FollowerSendFetch") == []
    s = step(m, s, "BrokerRegister", 1)
    assert s.kraft.fenced == 0 and s.kraft.broker_epoch == (1, 2) and s.faults.unclean == 0b10
    assert (1, 0, 1) in [(q.dest, q.leader, q.epoch) for q in s.requests]
    assert moves(m, s, "BrokerRegister") == []
    m = kraft(KRAFT.variant(fence_at_crash=True), replicas=2, records=1, crashes=1)
    s = run(m, ("BrokerCrash", 1))
    assert s.kraft.fenced == 0b10 and s.coord.isr == 0b01 and s.coord.epoch == 1
    s = run(m, ("BrokerCrash", 1), ("BrokerRestart", 1))
    assert s.faults.unclean == 0
    s = step(m, s, "BrokerRegister", 1)
    assert s.kraft.fenced == 0 and s.kraft.broker_epoch == (1, 2) and s.faults.unclean == 0b10
    assert (1, 0, 1) in [(q.dest, q.leader, q.epoch) for q in s.requests]
    assert moves(m, s, "BrokerRegister") == []
    # before (the fence alone): the ISR shrink is a later step, and a registration first leaves
    # the restarted broker in the ISR
    m = kraft(legacy(), replicas=2, records=1, crashes=1)
    s = run(m, ("BrokerCrash", 1))
    assert s.kraft.fenced == 0b10 and s.coord.isr == 0b11
    assert [a for a, _ in moves(m, s, "ControllerShrinkIsr")] == [(1,)]
    s = run(m, ("BrokerCrash", 1), ("BrokerRestart", 1), ("BrokerRegister", 1))
    assert s.coord.isr == 0b11 and moves(m, s, "ControllerShrinkIsr") == []


def test_a_fenced_broker_loses_leadership_and_isr_and_runs_on():
    """ControllerFenceBroker (KIP-841): heartbeats lost while the process runs on. A fenced
    leader is replaced in the fence's batch (a new leader epoch) and, a zombie, still takes
    writes; a fenced follower is removed from the ISR in it (the partition epoch only). A fence
    counts as one of the --crashes."""
    m = kraft(replicas=2, records=1, crashes=1)
    s = step(m, m.init_states()[0], "ControllerFenceBroker", 0)
    assert s.kraft.fenced == 0b01 and s.history.crashes == 1 and s.replicas[0].alive
    assert (s.coord.leader, s.coord.epoch, s.coord.isr) == (1, 2, 0b10)
    assert moves(m, s, "ControllerFenceBroker") == [] and moves(m, s, "BrokerCrash") == []
    assert moves(m, s, "ControllerElectLeader") == []
    assert [a for a, _ in moves(m, s, "ProducerSend")] == [(0, 1)]  # the zombie leader
    t = step(m, m.init_states()[0], "ControllerFenceBroker", 1)
    assert (t.coord.leader, t.coord.epoch, t.coord.isr) == (0, 1, 0b01)
    assert moves(m, t, "ControllerShrinkIsr") == [] and moves(m, t, "ControllerElectLeader") == []


def test_a_paused_broker_is_unfenced_with_its_old_broker_epoch():
    """A pause past the session timeout (SIGSTOP, then SIGCONT): fenced, then unfenced by its
    heartbeats with its old broker epoch (BrokerUnfence), no restart and no registration; it
    learns the leader elected meanwhile and follows it. The sole ISR member paused leaves the
    partition with leader -1 (a new leader epoch) until it is back; then it is elected again in
    another."""
    m = kraft(replicas=2, records=1, crashes=1)
    s = run(m, ("ControllerFenceBroker", 0), ("BrokerUnfence", 0))
    assert s.kraft.fenced == 0 and s.kraft.broker_epoch == (1, 1) and s.replicas[0].alive
    assert (0, 1, 2) in [(q.dest, q.leader, q.epoch) for q in s.requests]
    assert moves(m, s, "BrokerRegister") == []
    # the sole ISR member: leader -1 (epoch 2), then re-elected (epoch 3)
    m = kraft(replicas=2, records=1, epochs=3, crashes=1)
    s = run(m, ("ControllerShutdownBroker", 1, 0), ("ControllerFenceBroker", 0))
    assert s.coord.isr == 0b01 and s.faults.lead_renewed and s.coord.leader == 0
    # (told to the live brokers: the shutting-down follower; the fenced one learns it when
    # it is unfenced)
    assert s.coord.epoch == 2 and (1, -1, 2) in [(q.dest, q.leader, q.epoch) for q in s.requests]
    assert moves(m, s, "ControllerElectLeader") == []
    s = step(m, s, "BrokerUnfence", 0)
    assert [a for a, _ in moves(m, s, "ControllerElectLeader")] == [(0,)]
    s = step(m, s, "ControllerElectLeader", 0)
    assert (s.coord.leader, s.coord.epoch) == (0, 3) and not s.faults.lead_renewed
    # at the --epochs bound the sole ISR leader's fence (which needs a new leader epoch for its
    # leader -1) is not taken; the shutting-down follower's is
    m = kraft(replicas=2, records=1, epochs=2, crashes=1)
    s = run(m, ("ControllerMoveLeader", 1), ("ControllerShutdownBroker", 0, 1))
    assert (s.coord.leader, s.coord.epoch, s.coord.isr) == (1, 2, 0b10)
    assert [a for a, _ in moves(m, s, "ControllerFenceBroker")] == [(0,)]


def test_the_last_isr_members_controlled_shutdown_leaves_leader_minus_one():
    """KIP-841 as Kafka does it (``handleBrokerInControlledShutdown``, PartitionChangeBuilder):
    the controlled shutdown of a leader no other ISR member can replace records leader -1 with
    a new leader epoch; the replicas are told (they stop leading and fetching) and the broker
    is elected again only when it is back (not shutting down)."""
    m = kraft(replicas=2, records=1, epochs=3, crashes=1)
    s = run(m, ("ControllerShutdownBroker", 1, 0), ("BrokerApplyPartitionChange", 0))
    assert s.coord.isr == 0b01
    s = step(m, s, "ControllerShutdownBroker", 0, -1)
    assert s.faults.lead_renewed and s.coord.epoch == 2 and s.kraft.shutting_down == 0b11
    assert moves(m, s, "ControllerElectLeader") == []
    s = step(m, s, "BrokerBecomeFollower", 0, -1, 2)
    assert s.replicas[0].leader == -1 and moves(m, s, "ProducerSend") == []


def _shut_down_and_caught_up():
    """Replica 1 asks for a controlled shutdown and is shrunk out of the ISR, the leader applies
    the change; replica 1, still running, fetches and is caught up; the leader proposes to add
    it back."""
    return [
        ("ControllerShutdownBroker", 1, 0),
        ("BrokerApplyPartitionChange", 0),
        ("FollowerSendFetch", 1, 0),
        ("LeaderHandleFetch", 0, 1),
        ("LeaderSendAlterPartition", 0, 1),
    ]


def test_kip_841_refuses_to_add_a_shutting_down_broker():
    """KIP-841: a broker in controlled shutdown is live (it fetches) but the controller refuses
    an AlterPartition that puts it back in the ISR (INELIGIBLE_REPLICA);
    ``ineligible_replica_check=False`` accepts the expansion."""
    m = kraft(replicas=2, records=1, crashes=0)
    s = run(m, *_shut_down_and_caught_up())
    assert s.kraft.shutting_down == 0b10 and s.coord.isr == 0b01
    (a,) = s.kraft.alter_partition
    assert a.new_isr == 0b11 and a.added == 1 and a.fresh
    t = step(m, s, "ControllerHandleAlterPartition", 0)
    assert t.coord.isr == 0b01 and t.replicas[0].isr == 0b01
    m = kraft(without(ineligible_replica_check=False), replicas=2, records=1, crashes=0)
    t = step(m, run(m, *_shut_down_and_caught_up()), "ControllerHandleAlterPartition", 0)
    assert t.coord.isr == 0b11 and t.replicas[0].isr == 0b11


def _follower_lags():
    """Record 1 is committed on the leader; follower 1 holds it, with HW 0 until the response
    to its next fetch (KAFKA-7104's round of lag)."""
    return [
        ("ProducerSend", 0, 1),
        ("FollowerSendFetch", 1, 0),
        ("LeaderHandleFetch", 0, 1),
        ("FollowerHandleFetchResponse", 1, 0),
        ("FollowerSendFetch", 1, 0),
        ("LeaderHandleFetch", 0, 1),
        ("FollowerHandleFetchResponse", 1, 0),
        ("FollowerSendFetch", 1, 0),
        ("LeaderHandleFetch", 0, 1),
    ]


def test_a_follower_serves_the_consumer_below_its_hw():
    """KIP-392: the consumer reads at its position from the leader or a follower, below that
    replica's HW; a follower's HW lags the leader's, so it serves nothing until it learns the
    advance; the position moves to the HW it read up to and never back."""
    m = kraft(replicas=2, records=1, crashes=0)
    s = run(m, *_follower_lags())
    assert s.replicas[0].hw == 1 and s.replicas[1].log == ((1, 1),) and s.replicas[1].hw == 0
    assert [a for a, _ in moves(m, s, "ConsumerFetch")] == [(0,)]  # not the lagging follower
    s = step(m, s, "FollowerHandleFetchResponse", 1, 0)
    assert s.replicas[1].hw == 1
    t = step(m, s, "ConsumerFetch", 1)  # from the follower
    assert t.history.shown == ((0, 1),) and (t.kraft.consumer_pos, t.kraft.consumer_epoch) == (1, 1)
    assert moves(m, t, "ConsumerFetch") == []  # nothing new anywhere
    assert moves(m, t, "ConsumerResetOffset") == []
    # before KIP-392 (follower_reads=False) only the leader serves
    m = kraft(without(follower_reads=False), replicas=2, records=1, crashes=0)
    s = run(m, *_follower_lags(), ("FollowerHandleFetchResponse", 1, 0))
    assert [a for a, _ in moves(m, s, "ConsumerFetch")] == [(0,)]


def test_out_of_range_at_a_follower_is_no_reset():
    """The consumer read offset 0 from the leader; follower 1 restarted with an empty log, so the
    position is past its LEO: OFFSET_OUT_OF_RANGE there sends the consumer back to the leader
    (no step); only the leader's OFFSET_OUT_OF_RANGE resets the position (none here)."""
    m = kraft(replicas=2, records=1, crashes=1, lose_unflushed=True)
    s = run(
        m,
        ("ProducerSend", 0, 1),
        ("ControllerShutdownBroker", 1, 0),  # the ISR shrinks to the leader: record 1 commits
        ("BrokerApplyPartitionChange", 0),
        ("ConsumerFetch", 0),
        ("BrokerCrash", 1),
        ("ControllerFenceBroker", 1),
        ("BrokerRestart", 1),
        ("BrokerRegister", 1),
        ("BrokerBecomeFollower", 1, 0, 1),
    )
    assert s.kraft.consumer_pos == 1 and s.replicas[1].log == () and s.replicas[1].leader == 0
    assert moves(m, s, "ConsumerFetch") == [] and moves(m, s, "ConsumerResetOffset") == []


def test_a_follower_serving_up_to_its_leo_shows_what_is_lost():
    """``follower_reads_below_hw=False``: a follower serves up to its LEO. A deposed leader not
    yet told takes record 1, becomes a follower of the new leader (empty log) and shows it:
    NoPhantomRead in 5 steps, no crash; the consumer, past the leader's log end, is reset one
    step later (MonotonicReads, 6). The released rule holds both at these bounds
    (test_pinned_counts_and_every_safety_property_holds) and at 2/2/2/0 and 2/1/2/1."""
    res = check_bfs(
        kraft(without(follower_reads_below_hw=False), replicas=2, records=1, epochs=2, crashes=0),
        properties=["NoPhantomRead", "MonotonicReads"],
    )
    v = verdicts(res)
    cx = v["NoPhantomRead"].counterexample
    assert [(st.action, tuple(st.args.values())) for st in cx.steps] == [
        ("ControllerMoveLeader", (1,)),
        ("BrokerBecomeLeader", (1, 2)),
        ("ProducerSend", (0, 1)),
        ("BrokerBecomeFollower", (0, 1, 2)),
        ("ConsumerFetch", (0,)),
    ]
    cx = v["MonotonicReads"].counterexample
    assert cx.length == 6 and cx.steps[-1].action == "ConsumerResetOffset"


def test_an_unclean_election_resets_the_consumer():
    """Kafka's documented price of unclean leader election, seen by the consumer: record 1 is
    committed and read, the leader crashes, the out-of-sync follower is elected (--unclean) with
    an empty log, and the consumer, past its end, is reset to its HW: MonotonicReads in 7
    steps (8 before the fence's batch elected). The shortest story now fences the running
    leader (lost heartbeats): a crash is fenced only at its session timeout, one step more.
    Not a bug of kraft (the built-in version without --unclean holds it)."""
    res = check_bfs(
        kraft(replicas=2, records=1, epochs=2, crashes=1, unclean=True),
        properties=["MonotonicReads"],
        stop_at_first_violation=True,
    )
    cx = verdicts(res)["MonotonicReads"].counterexample
    assert [st.action for st in cx.steps] == [
        "ProducerSend",
        "LeaderSendAlterPartition",
        "ControllerHandleAlterPartition",
        "ConsumerFetch",
        "ControllerFenceBroker",  # the fence's batch elects the follower (unclean)
        "BrokerBecomeLeader",
        "ConsumerResetOffset",
    ]


def _stale_epoch_checkpoint():
    """Broker 1 holds record 1 (epoch 1) and leads epoch 2 without writing (its cache keeps
    (2, 1)); broker 0, not yet told, writes record 2 at offset 1 in epoch 1 and is made leader
    again (epoch 3). Broker 1 follows it: its fetch carries its cache's latest epoch, 2; the
    answer diverges at epoch 1's end, 2, so broker 1 truncates to its own end of epoch 1, 1: the
    log loses nothing, the cache loses (2, 1) (KAFKA-10706's truncation past the log end). It
    fetches record 2 (epoch 1: no new cache entry, so no checkpoint write) and the leader
    commits it. Broker 1 crashes and comes back."""
    return [
        ("ProducerSend", 0, 1),
        ("FollowerSendFetch", 1, 0),
        ("LeaderHandleFetch", 0, 1),
        ("FollowerHandleFetchResponse", 1, 0),
        ("ControllerMoveLeader", 1),
        ("BrokerBecomeLeader", 1, 2),
        ("ProducerSend", 0, 2),
        ("ControllerMoveLeader", 0),
        ("BrokerBecomeLeader", 0, 3),
        ("BrokerBecomeFollower", 1, 0, 3),
        ("FollowerSendFetch", 1, 0),
        ("LeaderHandleFetch", 0, 1),
        ("FollowerHandleFetchResponse", 1, 0),
        ("FollowerSendFetch", 1, 0),
        ("LeaderHandleFetch", 0, 1),
        ("FollowerHandleFetchResponse", 1, 0),
        ("FollowerSendFetch", 1, 0),
        ("LeaderHandleFetch", 0, 1),
        ("BrokerCrash", 1),
        ("ControllerFenceBroker", 1),  # (kraft; the legacy spec fenced at the crash)
        ("BrokerRestart", 1),
        ("BrokerRegister", 1),
        ("BrokerBecomeFollower", 1, 0, 3),
        ("FollowerSendFetch", 1, 0),
        ("LeaderHandleFetch", 0, 1),
        ("FollowerHandleFetchResponse", 1, 0),
    ]


def test_the_epoch_cache_keeps_an_epoch_without_records():
    """The cache is its own state (KAFKA-7415's subject): a leader's epoch is in its cache from
    the moment it leads, records or not, and a follower's fetch carries the cache's latest
    epoch, not its last record's; the cache is truncated with the log, even past the log end
    (KAFKA-10706). With ``epoch_cache=False`` (derived from the log) the epoch is forgotten."""
    bounds = dict(replicas=2, records=2, epochs=3, crashes=1)
    m = kraft(without(sync_truncation_ckpt=True), **bounds)
    s = run(m, *_stale_epoch_checkpoint()[:11])
    assert s.kraft.epoch_cache[1] == ((1, 0), (2, 1)) and s.replicas[1].log == ((1, 1),)
    (q,) = s.kraft.fetch_requests
    assert (q.fetch_offset, q.last_fetched_epoch) == (1, 2)
    s = run(m, *_stale_epoch_checkpoint()[:13])
    assert s.replicas[1].log == ((1, 1),) and s.kraft.epoch_cache[1] == ((1, 0),)
    assert s.kraft.epoch_ckpt[1] == ((1, 0),)  # written with the truncation (Kafka 3.7)
    assert s.kraft.epoch_cache[0] == ((1, 0), (3, 2))
    m = kraft(without(epoch_cache=False), **bounds)
    s = run(m, *_stale_epoch_checkpoint()[:11])
    assert s.kraft.epoch_cache == () and s.kraft.fetch_requests[0].last_fetched_epoch == 1


def test_a_stale_epoch_checkpoint_truncates_a_committed_record_only_in_the_old_spec():
    """KAFKA-16541's fix (#15993, Kafka 3.8+) writes the epoch checkpoint after a truncation
    asynchronously (``sync_truncation_ckpt=False``). A crash before the write restores the
    epoch the truncation removed, (2, 1), which starts below the recovered log end and so
    survives the restart's truncation of the cache; the follower's fetch carries epoch 2 again,
    the leader's answer diverges at 2, and the follower truncates to its own (stale) end of
    epoch 1, 1: record 2, committed, is cut from the restarted follower.

    In the spec before issue 25 (the fence apart from the ISR removal, ``legacy``) the follower
    registered again before the controller removed it, so it was still an ISR member: StrongIsr
    broken in 25 steps. A false alarm: Kafka fences the crashed broker and removes it from the
    ISR in one batch (``handleBrokerFenced``) before it can register again (``registerBroker``
    refuses a second registration while the old session is valid), and at metadata version
    4.0-IV1+ the registration is handled as an unclean shutdown. In ``kraft`` (4.1+) and
    ``kraft-4.0`` the same story leaves the follower out of the ISR, so the cut record is not an
    ISR member's loss (StrongIsr holds); in ``kraft-3.7`` the write is synchronous and the
    record is kept."""
    bounds = dict(replicas=2, records=2, epochs=3, crashes=1)
    strong = next(p for p in kraft(**bounds).properties if p.name == "StrongIsr").check
    m = kraft(legacy(sync_truncation_ckpt=False), **bounds)
    story = _stale_epoch_checkpoint()
    old_story = [x for x in story if x[0] != "ControllerFenceBroker"]  # fenced at the crash
    s = run(m, *old_story[:13])
    assert s.kraft.epoch_cache[1] == ((1, 0),) and s.kraft.epoch_ckpt[1] == ((1, 0), (2, 1))
    assert [a for a, _ in moves(m, s, "BrokerCheckpointEpochCache")] == [(1,)]
    s = run(m, *old_story[:-1])
    assert s.replicas[0].hw == 2 and s.coord.isr == 0b11 and strong(s)
    assert s.kraft.epoch_cache[1] == ((1, 0), (2, 1))  # restored from the stale file
    t = step(m, s, *old_story[-1])
    assert t.replicas[1].log == ((1, 1),) and not strong(t)
    for name in ("kraft", "kraft-4.0"):  # Kafka 4.x: the follower is out of the ISR
        m = IsrSpec(Config(protocol=name, **bounds))
        t = run(m, *story)
        assert t.replicas[1].log == ((1, 1),) and t.coord.isr == 0b01 and strong(t)
    m = IsrSpec(Config(protocol="kraft-3.7", **bounds))  # the write with the truncation
    t = run(m, *story)
    assert t.replicas[1].log == ((1, 1), (2, 1)) and t.coord.isr == 0b01 and strong(t)
    assert moves(m, t, "BrokerCheckpointEpochCache") == []


# --- state counts and verdicts ----------------------------------------------------------------


def test_pinned_counts_and_every_safety_property_holds():
    """Two replicas, one record, two epochs, no crash: with symmetry and without (the initial
    leader is replica 0, so symmetry saves nothing here); both verdicts agree. kip-320 and
    kip-966 have 657 states at these bounds: the split fetch costs x6.8 (4,493 states with step
    1's atomic ISR changes), the asynchronous AlterPartition x3 more (13,633), the partition
    epoch apart from the leader epoch x2.5 more (33,481: a controller ISR change no longer uses
    up one of the --epochs, so an election may follow it, and fetches go on across it), and
    KIP-841 x0.82 (a broker in controlled shutdown can no longer fetch its way back into the
    ISR; with no crash there is no fence nor registration): 27,459; KIP-392's consumer x1.18
    (32,323: its position and leader epoch are state, x1.15 with leader reads only, 31,491;
    follower reads x1.03 more); the epoch cache as its own state x1.04 (33,633: epochs without
    records are remembered); issue 25's Kafka 4.x rules x1.25 (41,968): with no crash only the
    leader -1 of the last ISR member's controlled shutdown (x1.15, 38,574: kraft-3.7) and the
    asynchronous checkpoint write after a truncation (x1.09) apply; the leader's answer for an
    epoch it never had as Kafka 2.1+ gives it (KAFKA-7415) x0.91 (38,068; kraft-3.7 37,264):
    a follower with only an epoch-less entry no longer pays a diverging round; a broker's
    metadata lost only when a newer record supersedes it, and an intermediate partition change
    applicable in its order (``Request.pc``) x0.71 (27,139; kraft-3.7 26,455)."""
    on = check_bfs(kraft(replicas=2, records=1, epochs=2, crashes=0), symmetry=True)
    off = check_bfs(kraft(replicas=2, records=1, epochs=2, crashes=0), symmetry=False)
    assert on.complete and off.complete
    assert (on.distinct_states, off.distinct_states) == (27139, 27139)
    for res in (on, off):
        v = verdicts(res)
        assert all(v[p].holds for p in SAFETY), [p for p in SAFETY if not v[p].holds]
        assert v["SometimesCommitted"].holds and v["SometimesIsrShrinkAndExpand"].holds


def test_two_records_and_a_crash_hold():
    """A larger small config: two replicas, one record, two epochs, one crash (818,042 states;
    669,360 before a stopped broker's clean exit was told apart from a kill (its next
    registration keeps its ELR seat), x1.22; 809,151 before the fence of a sole ISR leader took a new leader epoch for its leader -1
    (at two epochs the partition then stays offline), x0.83; 781,691 before a crash was fenced
    at its session timeout rather than at once, x1.035;
    523,921 before issue 25's Kafka 4.x rules (the fence's batch, unfenced pauses, every
    registration an unclean shutdown, the last known leader elected, the asynchronous
    checkpoint write), x1.49; 503,415 before the epoch cache was its own state, x1.04; 422,128
    before KIP-392's consumer with follower reads, x1.19; 357,957 before KIP-841's
    fencing and registration, x1.18; 126,750 before the partition epoch
    was apart from the leader epoch; 41,312 with step 1's atomic ISR changes; kip-966: 4,454,
    kip-320: 5,626)."""
    # The complete search (818,042 states, ~55 s) is bench/large_pins.py's
    # kraft-2-1-2-1-safety; the suite checks every state within 15 steps (the stories the
    # kraft flags' bugs tell at these bounds are 6-15 steps long) and that none breaks a
    # safety property (about 20 s instead of 55; half that with the dead-state reduction,
    # which keeps every path length: 190,000 states reach depth 16, 300,000 without it).
    m = IsrSpec(
        Config(protocol="kraft", replicas=2, records=1, epochs=2, crashes=1), reduction="dead-state"
    )
    res = check_bfs(m, limits=Limits(max_states=190_000))
    assert not res.complete and res.depth >= 16
    v = verdicts(res)
    assert not [p for p in SAFETY if v[p].holds is False]


def _permutation_commutes(m: IsrSpec, limit: int) -> int:
    """For reachable states s and every renaming p: successors(p(s)) = p(successors(s)). This
    is what makes symmetry reduction sound, and it fails if ``permute`` misses a field."""
    frontier = list(m.init_states())
    seen = set(frontier)
    checked = 0
    perms = list(itertools.permutations(range(m.ctx.n)))[1:]
    while frontier and checked < limit:
        nxt = []
        for s in frontier:
            succ = {t for _, t in m.successors(s)}
            for p in perms:
                ps = m.permute(s, p)
                assert {t for _, t in m.successors(ps)} == {m.permute(t, p) for t in succ}
                checked += 1
            for t in succ:
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        frontier = nxt
    return checked


def test_renaming_replicas_commutes_with_the_kraft_actions():
    m = kraft(replicas=3, records=1, epochs=2, crashes=1, lose_unflushed=True)
    assert _permutation_commutes(m, 6000) >= 6000


def test_symmetry_on_and_off_agree_on_the_verdicts():
    for variant in (None, without(maximal_isr=False)):
        res = [
            check_bfs(kraft(variant, replicas=2, records=1, epochs=2, crashes=0), symmetry=sym)
            for sym in (True, False)
        ]
        a, b = (verdicts(r) for r in res)
        assert {n: a[n].holds for n in SAFETY} == {n: b[n].holds for n in SAFETY}
        assert variant is None or not a["NoCommittedLoss"].holds
        for n in SAFETY:
            if a[n].counterexample:
                assert a[n].counterexample.length == b[n].counterexample.length


# --- each guard removed -----------------------------------------------------------------------


def test_counting_a_diverging_fetch_loses_a_committed_record():
    """KAFKA-13141: the leader counts a diverging follower's fetch offset; the HW passes an entry
    the follower does not have (StrongIsr, 7 steps at 2 replicas, 2 records, 2 epochs, no
    crash), and a leader move back to that follower loses it (NoCommittedLoss, 9 steps with a
    third epoch). The default holds at the first bounds (375,601 states; 329,638 before issue
    25's Kafka 4.x rules; 325,898 before the
    epoch cache was its own state, x1.01; 268,898 before KIP-392's consumer, x1.21)."""
    # the default's complete "holds" (375,601 states) is bench/large_pins.py's
    # kraft-2-2-2-0-safety; here: nothing within reach of the bug's 7 steps breaks StrongIsr
    res = check_bfs(
        kraft(replicas=2, records=2, epochs=2, crashes=0),
        limits=Limits(max_states=60_000),
        properties=["StrongIsr"],
    )
    assert res.depth >= 14 and verdicts(res)["StrongIsr"].holds is not False
    bug = without(count_diverging_fetch=True)
    res = check_bfs(
        kraft(bug, replicas=2, records=2, epochs=2, crashes=0),
        properties=["StrongIsr"],
        stop_at_first_violation=True,
    )  # (breadth first: the first violation found is a shortest one)
    v = verdicts(res)
    assert v["StrongIsr"].holds is False and v["StrongIsr"].counterexample.length == 7
    res = check_bfs(
        kraft(bug, replicas=2, records=2, epochs=3, crashes=0),
        properties=["NoCommittedLoss"],
        stop_at_first_violation=True,
    )
    cx = verdicts(res)["NoCommittedLoss"].counterexample
    assert cx.length == 9
    actions = [s.action for s in cx.steps]
    assert "LeaderHandleFetch" in actions and "BrokerCrash" not in actions


def test_without_kip_903_a_disk_losing_follower_rejoins_and_loses_the_record():
    """KIP-903 (the controller accepts an expansion only with the added follower's current
    broker epoch) removed: a follower fetches the record (the leader counts its LEO) and
    crashes losing its unflushed log; the crash's fence takes it out of the ISR in the same
    batch (Kafka's ``handleBrokerFenced``; a partition change the leader applies); the leader,
    from the previous incarnation's fetch, proposes to add it back; the follower restarts and
    registers with a new broker epoch; the controller accepts and moves leadership to it: the
    acknowledged record is gone (KAFKA-14139's story, 15 steps: the fence comes at the crash's
    session timeout, a step of its own; the yardstick's `broker-epoch` drop takes 13; 14 before
    Kafka's crash notice was modelled, and before issue 25 too, when the ISR removal was the registration's, and
    before KIP-841's registration step, with the AlterPartition in flight across the restart). With kip-966's
    election rule (``elect_last_known_leader=False``) NoCommittedLoss holds at these bounds;
    the built-in kraft loses the record of the last replica standing (9 steps at three epochs:
    the fence's leader -1 takes one, the election another; elected as the
    last known leader: test_last_replica_standing_at_kafka_4_x_defaults). (StrongIsr and WeakIsr fail in both: a follower that
    acknowledged a record before flushing it loses it in a crash, as in kip-966 with
    lose-unflushed.)"""
    bounds = dict(replicas=2, records=1, epochs=2, crashes=1, lose_unflushed=True)
    # The fixed version, searched breadth first past the depth of the bug's story: with the
    # dead-state reduction (which keeps every path length, docs/reduction.md) its first 310,000
    # states reach depth 17 (700,000 without it), so every state within 16 steps was checked,
    # and none violates (the variant below violates at 15). The complete search (2,638,388
    # states, every property holds) takes minutes and is bench/large_pins.py's pin
    # "kraft-kip-966-election-lose-unflushed".
    fixed = IsrSpec(
        Config(protocol="kraft", **bounds),
        protocol=without(elect_last_known_leader=False),
        reduction="dead-state",
    )
    res = check_bfs(
        fixed,
        properties=["NoCommittedLoss", "NoPhantomRead", "MonotonicReads"],
        limits=Limits(max_states=310_000),
    )
    assert not res.complete and res.depth >= 17
    assert not res.violated
    res = check_bfs(  # (with the last known leader elected, the 8-step last replica standing)
        kraft(without(broker_epoch_check=False, elect_last_known_leader=False), **bounds),
        properties=["NoCommittedLoss"],
        stop_at_first_violation=True,
    )
    cx = verdicts(res)["NoCommittedLoss"].counterexample
    assert cx.length == 15
    actions = [s.action for s in cx.steps]
    i = actions.index("BrokerRestart")
    # the crash's fence takes the follower out of the ISR at once; the leader's proposal to
    # re-add it (from the old incarnation's fetch) is handled after the new one registered
    assert actions.index("BrokerCrash") < actions.index("LeaderSendAlterPartition") < i
    assert actions[i + 1] == "BrokerRegister"
    assert actions.index("ControllerHandleAlterPartition") > i + 1
    assert actions[-2:] == ["ControllerMoveLeader", "BrokerBecomeLeader"]


def test_without_the_maximal_isr_the_hw_passes_a_member_the_controller_keeps():
    """The maximal ISR removed (the HW counts the proposed ISR while an AlterPartition is in
    flight): the leader proposes to shrink a follower that lacks a record, commits the record at
    once, and the controller, which still has the follower in the ISR, moves leadership to it:
    NoCommittedLoss in 4 steps, no crash (StrongIsr in 2). The default holds at these bounds
    (test_pinned_counts_and_every_safety_property_holds)."""
    res = check_bfs(
        kraft(without(maximal_isr=False), replicas=2, records=1, epochs=2, crashes=0),
        properties=["NoCommittedLoss", "StrongIsr"],
    )
    v = verdicts(res)
    assert v["StrongIsr"].counterexample.length == 2
    cx = v["NoCommittedLoss"].counterexample
    assert [s.action for s in cx.steps] == [
        "ProducerSend",
        "LeaderSendAlterPartition",
        "ControllerMoveLeader",
        "BrokerBecomeLeader",
    ]


# Guards whose removal finds nothing at the bounds we can afford (said, not hidden):
# * response_guard=False (the epoch half of the fetcher's guard; the offset half stays, since the
#   log refuses an append off its LEO): nothing at 2 replicas / 2 records / 3 epochs / 0 crashes
#   (690,604 states). The stale answer does harm only when its leader lost and regained
#   leadership (truncating meanwhile) while the fetch was in flight and the follower's LEO came
#   back to the same offset: at least 3 epochs and a third replica, or 4 epochs.
# * fence_stale_fetch=False (KAFKA-15221): nothing beyond what the default also violates at
#   2 replicas / 1 record / 2 epochs / 1 lossy crash. With KIP-903 checked atomically at the
#   expansion, a stale fetch can put an old LEO back into the leader's view (see
#   test_a_fetch_from_a_previous_incarnation_is_fenced) but never justify an expansion; the bug
#   KAFKA-15221 fixed is a race between two reads of that view inside one expansion (the
#   caught-up check and the broker epoch read apart), which LeaderSendAlterPartition, reading
#   both in one step, does not express.
# * partition_epoch_check=False (the controller checks the leader epoch only, KAFKA-15021's
#   partition epoch not): nothing at 2 replicas / 1 record / 2 epochs / 1 crash (545,398 states,
#   every safety property holds). A stale proposal's ISR is the leader's old view; at two
#   replicas the members the controller removed meanwhile are gone for a reason KIP-841 (fenced,
#   shutting down), KIP-903 (a new incarnation) or kip-966 (an unclean registration) checks
#   again. The harm needs a stale shrink that re-adds a third replica the controller removed.
# * ineligible_replica_check=False (KIP-841's refusal): nothing at 2 / 1 / 2 / 1 (509,714 states)
#   nor with lose-unflushed (1,344,605 states, NoCommittedLoss and NoPhantomRead hold).
#   Re-adding a shutting-down follower that caught up is no loss (it has the records); a fenced
#   one keeps its broker epoch until it registers, and registering after an unclean shutdown
#   takes it out of the ISR again (kip-966). KIP-841's own story is availability: an ISR
#   holding a broker about to stop, so acks=all writes wait and min ISR is missed.
# * fresh_hw_in_response=True is not a safety bug (KAFKA-7104 is about the follower's HW lag):
#   see test_the_follower_learns_the_hw_one_round_late.


def test_fresh_hw_is_not_a_safety_bug():
    # The complete search (628,638 states: 318,620 before KIP-392's consumer, 367,439 before
    # the epoch cache was its own state, 386,337 before issue 25's Kafka 4.x rules, 591,437
    # before a crash was fenced at its session timeout, 614,869 before leader -1 took a new
    # leader epoch, 506,436 before a clean exit was told apart from a kill) is
    # bench/large_pins.py's kraft-fresh-hw-2-1-2-1-safety; here every state within 12 steps.
    res = check_bfs(
        kraft(without(fresh_hw_in_response=True), replicas=2, records=1, epochs=2, crashes=1),
        limits=Limits(max_states=150_000),
    )
    assert not res.complete and res.depth >= 13
    v = verdicts(res)
    assert not [p for p in SAFETY if v[p].holds is False]


# --- the CLI ------------------------------------------------------------------------------------


def test_cli_checks_and_lists_kraft(capsys):
    argv = ["check", "--protocol", "kraft", "--replicas", "2", "--records", "1", "--epochs", "2"]
    assert main([*argv, "--crashes", "0", "--workers", "1", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["model"] == "isr/kraft" and out["distinct_states"] == 27139
    assert main(["protocols", "--format", "json"]) == 0
    names = [p["name"] for p in json.loads(capsys.readouterr().out)["protocols"]]
    assert {"kraft", "kraft-4.0", "kraft-3.7"} <= set(names)


def test_the_validator_refuses_kraft_traces(tmp_path, capsys):
    """A trace that says kraft but logs the atomic fetch (a kip-320 trace relabelled) is bad
    input (exit 2): FollowerFetch is no action of the kraft version, whose traces log the
    split fetch (issue 18 step 4: tests/traces/test_kraft_traces.py validates those)."""
    from pathlib import Path

    sample = Path(__file__).parents[2] / "traces/samples/accepted/sim-kip320-leader-crash.ndjson"
    lines = sample.read_text().splitlines()
    header = json.loads(lines[0])
    header["protocol"] = "kraft"
    trace = tmp_path / "kraft.ndjson"
    trace.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    assert main(["validate", str(trace)]) == 2
    assert "kraft" in capsys.readouterr().err  # the trace format lists the versions it knows


def test_type_ok_bounds_the_kraft_variables():
    """TypeOK checks the kraft variables too: it fails on two fetches of one fetcher in flight,
    which FollowerSendFetch never produces."""
    m = kraft(replicas=2, records=1, crashes=0)
    type_ok = next(p for p in m.properties if p.name == "TypeOK").check
    s = run(m, ("FollowerSendFetch", 1, 0))
    assert type_ok(s)
    (q,) = s.kraft.fetch_requests
    twice = s._replace(kraft=s.kraft._replace(fetch_requests=(q, q._replace(fetch_offset=1))))
    assert not type_ok(twice)
    assert not type_ok(s._replace(kraft=s.kraft._replace(broker_epoch=(1, 3))))


def test_last_replica_standing_needs_kip_966():
    """The yardstick's "last replica standing" (Vanlightly's Kafka 3.5 spec under TLC:
    LeaderCompleteness violated in 7 steps, bench/kraft_tla) told by our kraft version without
    KIP-966's eligible leader replicas: the ISR shrinks to the leader (the follower's controlled
    shutdown, a partition change the leader applies), the leader takes a record alone, loses
    its unflushed log in a crash, restarts, registers, and is elected again as the sole ISR
    member with an empty log: the committed record is gone, in 9 steps at three epochs (the
    fence's leader -1 takes a leader epoch; 8 at two epochs before the fence came at the
    session timeout, a step of its own; 7 before registration
    was its own step; TLC's story has 7 too: there the controller elects while it handles the
    registration). With kip-966's ELR rule alone (``elect_last_known_leader=False``) a replica
    back from an unclean shutdown is not elected cleanly, and no committed record is lost: the
    search completes (test_without_kip_903_...). Kafka 4.x's ELR elects the last known leader
    once ISR and ELR are empty, so the built-in kraft tells the same story
    (test_last_replica_standing_at_kafka_4_x_defaults)."""
    bounds = dict(replicas=2, records=1, epochs=3, crashes=1, lose_unflushed=True)
    res = check_bfs(
        kraft(without(eligible_leader_replicas=False), **bounds),
        properties=["NoCommittedLoss"],
        stop_at_first_violation=True,
    )
    (p,) = res.properties
    assert p.holds is False and p.counterexample.length == 9
    assert [s.action for s in p.counterexample.steps] == [
        "ControllerShutdownBroker",
        "BrokerApplyPartitionChange",
        "ProducerSend",
        "BrokerCrash",
        "ControllerFenceBroker",  # at the session timeout
        "BrokerRestart",
        "BrokerRegister",
        "ControllerElectLeader",
        "BrokerBecomeLeader",
    ]
    # with ELR the search completes and NoCommittedLoss holds at these bounds: pinned by
    # test_without_kip_903_a_disk_losing_follower_rejoins_and_loses_the_record


# --- release presets (issue 25) ------------------------------------------------------------------


def test_release_presets_differ_in_their_defaults_only():
    """``kraft`` is Kafka 4.1+'s defaults, ``kraft-4.0`` turns ELR off, ``kraft-3.7`` also drops
    the unclean-shutdown handling at registration and writes the epoch checkpoint with a
    truncation; the HW needs min ISR in all three (KAFKA-15583, apart from ELR). At 2/1/2/0
    every safety property holds in each: 27,139 states for kraft and kraft-4.0 (no crash: ELR
    and the registration change nothing), 26,455 for kraft-3.7 (no asynchronous checkpoint
    write)."""
    from isr.spec.protocols import KRAFT_3_7, KRAFT_4_0

    flags = (
        "eligible_leader_replicas",
        "hw_needs_min_isr",
        "unclean_shutdown_on_register",
        "sync_truncation_ckpt",
        "atomic_fence",
        "unfence_on_heartbeat",
    )
    rows = {p.name: tuple(getattr(p, f) for f in flags) for p in (KRAFT, KRAFT_4_0, KRAFT_3_7)}
    T, F = True, False
    assert rows == {
        "kraft": (T, T, T, F, T, T),
        "kraft-4.0": (F, T, T, F, T, T),
        "kraft-3.7": (F, T, F, T, T, T),
    }
    for name, states in (("kraft", 27139), ("kraft-4.0", 27139), ("kraft-3.7", 26455)):
        res = check_bfs(IsrSpec(Config(protocol=name, replicas=2, records=1, epochs=2, crashes=0)))
        assert res.complete and res.distinct_states == states, name
        v = verdicts(res)
        assert all(v[p].holds for p in SAFETY), (name, [p for p in SAFETY if not v[p].holds])


def test_last_replica_standing_at_kafka_4_x_defaults():
    """ "Last replica standing" is Kafka's own behaviour at min.insync.replicas 1 and a power
    failure, at each release's defaults: NoCommittedLoss in 9 steps. The sole ISR member crashes;
    its fence, at the session timeout, leaves leader -1; it restarts and registers (an unclean shutdown) and is elected
    again, empty: without ELR (kraft-4.0, kraft-3.7) as the last ISR member, which the builder
    never removes; with ELR (kraft, 4.1's default for new clusters) as the last known leader,
    ISR and ELR being empty (``PartitionChangeBuilder.canElectLastKnownLeader``). kip-966's rule
    (``elect_last_known_leader=False``) holds, pinned by test_without_kip_903_...."""
    bounds = dict(replicas=2, records=1, epochs=3, crashes=1, lose_unflushed=True)
    for name in ("kraft", "kraft-4.0", "kraft-3.7"):
        res = check_bfs(
            IsrSpec(Config(protocol=name, **bounds)),
            properties=["NoCommittedLoss"],
            stop_at_first_violation=True,
        )
        cx = verdicts(res)["NoCommittedLoss"].counterexample
        assert [s.action for s in cx.steps] == [
            "ControllerShutdownBroker",
            "BrokerApplyPartitionChange",
            "ProducerSend",
            "BrokerCrash",
            "ControllerFenceBroker",  # at the session timeout
            "BrokerRestart",
            "BrokerRegister",
            "ControllerElectLeader",
            "BrokerBecomeLeader",
        ], name


def test_cli_checks_a_release_preset(capsys):
    argv = [
        "check",
        "--protocol",
        "kraft-4.0",
        "--replicas",
        "2",
        "--records",
        "1",
        "--epochs",
        "2",
    ]
    assert main([*argv, "--crashes", "0", "--workers", "1", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["model"] == "isr/kraft-4.0" and out["distinct_states"] == 27139


def test_a_replica_that_rejoins_the_isr_leaves_the_elr():
    """KIP-966: ELR and ISR are disjoint. Below min.insync.replicas an ISR expansion keeps the
    ELR, less the replica that joined (Kafka 4.4.0 wrote ISR [0, 2], ELR [1] when broker 2
    rejoined from ISR [0], ELR [1, 2]; the spec kept 2 in both until this was read)."""
    from isr.spec.actions.controller import elr_after_shrink

    m = kraft(replicas=3, records=0, crashes=0, min_isr=3)
    s = m.init_states()[0]
    s = s._replace(faults=s.faults._replace(elr=0b110))
    t = elr_after_shrink(m.ctx, s, 0b001, 0b101)  # broker 2 rejoins: ISR {0, 2}
    assert t.faults.elr == 0b010
    t = elr_after_shrink(m.ctx, s, 0b101, 0b001)  # broker 2 leaves again: back in the ELR
    assert t.faults.elr == 0b110
    t = elr_after_shrink(m.ctx, s, 0b011, 0b111)  # at min ISR the ELR is cleared
    assert t.faults.elr == 0


def test_hw_before_truncation_shows_an_uncommitted_record():
    """KAFKA-14704 (fixed in Kafka 3.5.0): before the fix a diverging fetch response moved the
    follower's HW (capped by its LEO, divergent records included) before the truncation, and a
    consumer reading from the follower in between was shown a record never committed:
    NoPhantomRead in 8 steps at 2 replicas, 2 records, 2 epochs, no crash (a deposed leader's
    record, the new leader's committed one at the same offset, the diverging answer carrying
    HW 1). The step exists only under the flag; the built-in kraft holds NoPhantomRead there
    (bench/large_pins.py's kraft-2-2-2-0-safety: 375,601 states, every safety property)."""
    assert "ConsumerFetchDuringTruncation" not in kraft(replicas=2).action_names
    bug = without(truncate_before_hw=False)
    m = kraft(bug, replicas=2, records=2, epochs=2, crashes=0)
    assert "ConsumerFetchDuringTruncation" in m.action_names
    res = check_bfs(m, properties=["NoPhantomRead"], stop_at_first_violation=True)
    cx = verdicts(res)["NoPhantomRead"].counterexample
    assert cx.length == 8
    assert cx.steps[-1].action == "ConsumerFetchDuringTruncation"
    assert "BrokerCrash" not in [s.action for s in cx.steps]
    # the fixed rule: nothing within reach of the bug's 8 steps shows a phantom record
    res = check_bfs(
        kraft(replicas=2, records=2, epochs=2, crashes=0),
        limits=Limits(max_states=60_000),
        properties=["NoPhantomRead"],
    )
    assert res.depth >= 14 and verdicts(res)["NoPhantomRead"].holds is not False
