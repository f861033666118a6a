"""Unit tests of the broker and controller handlers: message in, effects out (R4-R11)."""

from __future__ import annotations

from isr.impl.core import messages as m
from isr.impl.core.config import Config
from isr.impl.core.controller import Controller
from isr.impl.core.replica import Broker
from isr.impl.core.trace import LamportClock

TP = ("t", 0)


def lai(
    leader: int, epoch: int, isr=(0, 1, 2), cepoch: int = 1, version: int = 0
) -> m.LeaderAndIsr:
    lp = m.LeaderAndIsrPartition("t", 0, leader, epoch, tuple(isr), version, (0, 1, 2))
    return m.LeaderAndIsr(0, cepoch, (lp,))


def sends(effects, typ):
    return [e for e in effects if isinstance(e, m.Send) and isinstance(e.msg, typ)]


def actions(effects):
    return [e.event["action"] for e in effects if isinstance(e, m.Trace)]


def produce(b: Broker, rid: str, acks: int = -1, now: int = 0, corr: int = 1):
    req = m.ProduceRequest("c", corr, "t", 0, acks, ((rid, "v"),))
    return b.on_message("c", req, 0, now)


def fetch(b: Broker, replica: int, offset: int, now: int, epoch: int = 1, corr: int = 1):
    req = m.FetchRequest(replica, 0, corr, (m.FetchPartition("t", 0, offset, epoch),))
    return b.on_message(replica, req, 0, now)


def leader(cfg: Config | None = None, isr=(0, 1, 2)) -> Broker:
    b = Broker(0, cfg or Config(min_insync_replicas=2))
    b.start(0)
    effs = b.on_message(9, lai(0, 1, isr), 0, 0)
    assert "BrokerBecomeLeader" in actions(effs)
    return b


def test_acks_all_waits_for_isr_then_acknowledges():
    b = leader()
    effs = produce(b, "a")
    assert sends(effs, m.ProduceResponse) == []  # delayed: HW has not passed it
    assert any(isinstance(e, m.Append) for e in effs)
    fetch(b, 1, 1, now=10)
    assert b.partitions[TP].log.hw == 0  # replica 2 is in the ISR and has not fetched
    effs = fetch(b, 2, 1, now=11)
    assert b.partitions[TP].log.hw == 1
    (resp,) = sends(effs, m.ProduceResponse)
    assert resp.msg.error == m.NONE and resp.msg.base_offset == 0
    assert "ProduceAcked" in actions(effs)


def test_acks_1_answers_at_append_and_consumer_sees_only_below_hw():
    b = leader()
    (resp,) = sends(produce(b, "a", acks=1), m.ProduceResponse)
    assert resp.msg.error == m.NONE
    req = m.ConsumeRequest("k", 1, "t", 0, 0)
    (r,) = sends(b.on_message("k", req, 0, 5), m.ConsumeResponse)
    assert r.msg.entries == () and r.msg.high_watermark == 0  # R5: nothing committed yet


def test_min_insync_refuses_acks_all():
    b = leader(isr=(0,))
    (resp,) = sends(produce(b, "a"), m.ProduceResponse)
    assert resp.msg.error == m.NOT_ENOUGH_REPLICAS
    assert b.partitions[TP].log.leo == 0


def test_isr_shrinks_after_lag_time_by_cas_and_then_acks():
    cfg = Config(min_insync_replicas=2, replica_lag_time_max_ms=1000)
    b = leader(cfg)
    produce(b, "a", now=0)
    fetch(b, 1, 1, now=10)
    fetch(b, 1, 1, now=1_200, corr=2)  # replica 1 keeps fetching; replica 2 never does
    effs = b.on_timer("isrcheck", 1_500)
    (cas,) = [e for e in effs if isinstance(e, m.CasWrite)]
    assert cas.state.isr == (0, 1) and cas.expected_version == 0
    assert b.partitions[TP].isr == {0, 1, 2}  # unchanged until the write succeeds
    effs = b.on_cas_results([m.CasResult(TP, True, cas.state, 1)], 1_501)
    assert "LeaderShrinkIsr" in actions(effs)
    assert b.partitions[TP].log.hw == 1
    assert [s.msg.error for s in sends(effs, m.ProduceResponse)] == [m.NONE]
    assert b.metrics_view()["under_replicated_partitions"] == 1


def test_isr_cas_conflict_leaves_isr_alone():
    cfg = Config(min_insync_replicas=1, replica_lag_time_max_ms=1000)
    b = leader(cfg)
    (_cas,) = [e for e in b.on_timer("isrcheck", 5_000) if isinstance(e, m.CasWrite)]
    other = m.PartitionState(1, 2, (1, 2), 2)
    effs = b.on_cas_results([m.CasResult(TP, False, other, 7)], 5_001)
    assert b.partitions[TP].isr == {0, 1, 2}
    assert "IsrUpdateConflict" in actions(effs)


def test_follower_catching_up_is_added_back_to_isr():
    b = leader(Config(min_insync_replicas=1), isr=(0, 1))
    produce(b, "a", acks=1)
    effs = fetch(b, 2, 1, now=5)
    (cas,) = [e for e in effs if isinstance(e, m.CasWrite)]
    assert cas.state.isr == (0, 1, 2)
    effs = b.on_cas_results([m.CasResult(TP, True, cas.state, 1)], 6)
    assert "LeaderExpandIsr" in actions(effs) and b.partitions[TP].isr == {0, 1, 2}


def test_follower_applies_fetch_and_sets_hw_min_of_leo_and_leader_hw():
    f = Broker(1, Config(protocol="hw-truncation"))
    f.start(0)
    effs = f.on_message(9, lai(0, 1), 0, 0)
    (req,) = sends(effs, m.FetchRequest)
    data = m.FetchPartitionData("t", 0, m.NONE, 5, 2, 0, 0, ((1, "a", "v"), (1, "b", "v")))
    effs = f.on_message(
        0, m.FetchResponse(0, req.msg.fetcher_id, req.msg.correlation_id, (data,)), 0, 1
    )
    p = f.partitions[TP]
    assert (p.log.leo, p.log.hw) == (2, 2)
    assert "FollowerFetch" in actions(effs)
    assert sends(effs, m.FetchRequest)[0].msg.partitions[0].fetch_offset == 2


def test_follower_truncates_to_leader_leo_on_out_of_range_r12():
    f = Broker(
        1, Config(protocol="kip-320"), {TP: ([(0, "a", "v"), (0, "b", "v"), (0, "x", "v")], 0, 0)}
    )
    f.start(0)
    effs = f.on_message(9, lai(0, 1), 0, 0)
    (q,) = sends(effs, m.OffsetsForLeaderEpochRequest)
    ans = m.EpochEndOffset("t", 0, m.NONE, 0, 3)
    effs = f.on_message(0, m.OffsetsForLeaderEpochResponse(0, q.msg.correlation_id, (ans,)), 0, 1)
    (req,) = sends(effs, m.FetchRequest)
    data = m.FetchPartitionData("t", 0, m.OFFSET_OUT_OF_RANGE, 1, 2, 0, 3, ())
    effs = f.on_message(
        0, m.FetchResponse(0, req.msg.fetcher_id, req.msg.correlation_id, (data,)), 0, 2
    )
    assert f.partitions[TP].log.leo == 2
    assert "FollowerTruncate" in actions(effs)


def test_fetch_error_backs_off():
    f = Broker(1, Config(replica_fetch_backoff_ms=100))
    f.start(0)
    (req,) = sends(f.on_message(9, lai(0, 1), 0, 0), m.OffsetsForLeaderEpochRequest)
    ans = m.EpochEndOffset("t", 0, m.NONE, -1, 0)
    effs = f.on_message(0, m.OffsetsForLeaderEpochResponse(0, req.msg.correlation_id, (ans,)), 0, 0)
    (fr,) = sends(effs, m.FetchRequest)
    data = m.FetchPartitionData("t", 0, m.NOT_LEADER, 0, 0, 0, 0, ())
    effs = f.on_message(
        0, m.FetchResponse(0, fr.msg.fetcher_id, fr.msg.correlation_id, (data,)), 0, 10
    )
    assert sends(effs, m.FetchRequest) == []
    assert [
        e.delay_ms for e in effs if isinstance(e, m.SetTimer) and e.key.startswith("fetch:")
    ] == [100]


def test_kip320_fences_stale_epoch_fetch_but_hw_truncation_does_not():
    for proto, err in (("kip-320", m.FENCED_LEADER_EPOCH), ("hw-truncation", m.NONE)):
        b = Broker(0, Config(protocol=proto))
        b.start(0)
        b.on_message(9, lai(0, 3), 0, 0)
        effs = fetch(b, 1, 0, now=1, epoch=2)
        effs += b.on_timer("dfetch:1:1", 600)
        (resp,) = sends(effs, m.FetchResponse)
        assert resp.msg.partitions[0].error == err, proto


def test_stale_leader_and_isr_is_ignored():
    b = leader()
    effs = b.on_message(9, lai(1, 0), 0, 1)
    assert actions(effs) == ["BrokerIgnoreStaleRequest"]
    effs = b.on_message(9, lai(1, 5, cepoch=0), 0, 1)
    assert actions(effs) == ["BrokerIgnoreStaleRequest"]
    assert b.partitions[TP].role == "leader"


def test_become_follower_fails_waiting_produce_and_truncates_to_hw_in_seeds_protocol():
    b = leader(Config(protocol="hw-truncation", min_insync_replicas=1))
    produce(b, "a")
    effs = b.on_message(9, lai(1, 2), 0, 5)
    assert [s.msg.error for s in sends(effs, m.ProduceResponse)] == [m.NOT_LEADER]
    assert b.partitions[TP].log.leo == 0  # HW was 0: the uncommitted "a" is cut
    assert any(isinstance(e, m.CheckpointHw) for e in effs)


def test_restart_truncates_to_hw_checkpoint_only_in_seeds_protocol():
    entries = [(0, "a", "v"), (0, "b", "v")]
    old = Broker(1, Config(protocol="hw-truncation"), {TP: (list(entries), 0, 1)})
    old.start(0)
    assert old.partitions[TP].log.leo == 1
    new = Broker(1, Config(protocol="kip-320"), {TP: (list(entries), 0, 1)})
    new.start(0)
    assert new.partitions[TP].log.leo == 2 and new.partitions[TP].log.hw == 1


def test_lamport_clock_merges_on_receive():
    b = leader()
    before = b.clock.value
    b.on_message(1, m.FetchRequest(1, 0, 1, ()), 1_000, 1)
    assert b.clock.value > 1_000 > before


def ctrl(live, states=None, unclean=False):
    c = Controller(0, Config(unclean_leader_election=unclean), 4, LamportClock())
    effs = c.activate(0, set(live), {TP: (0, 1, 2)}, states or {})
    return c, effs


def test_controller_creates_partition_with_preferred_leader():
    _c, effs = ctrl({0, 1, 2})
    (cas,) = [e for e in effs if isinstance(e, m.CasWrite)]
    assert cas.state == m.PartitionState(0, 0, (0, 1, 2), 4) and cas.expected_version == -1


def test_controller_elects_from_live_isr_and_batches_leader_and_isr():
    st = m.PartitionState(0, 3, (0, 2), 1)
    c, _ = ctrl({0, 1, 2}, {TP: (st, 5)})
    effs = c.on_brokers_changed(10, {1, 2})
    (cas,) = [e for e in effs if isinstance(e, m.CasWrite)]
    assert cas.state == m.PartitionState(2, 4, (2,), 4) and cas.expected_version == 5
    effs = c.on_cas_results(11, [m.CasResult(TP, True, cas.state, 6)])
    assert actions(effs) == ["ControllerElectLeader"]
    assert sorted(s.dst for s in sends(effs, m.LeaderAndIsr)) == [1, 2]


def test_controller_retries_on_cas_conflict():
    st = m.PartitionState(0, 3, (0, 1), 1)
    c, _ = ctrl({0, 1, 2}, {TP: (st, 5)})
    (_cas,) = [e for e in c.on_brokers_changed(10, {1, 2}) if isinstance(e, m.CasWrite)]
    winner = m.PartitionState(0, 3, (0, 1, 2), 1)  # the leader expanded the ISR meanwhile
    effs = c.on_cas_results(11, [m.CasResult(TP, False, winner, 6)])
    (again,) = [e for e in effs if isinstance(e, m.CasWrite)]
    assert again.expected_version == 6 and again.state.leader == 1 and again.state.isr == (1, 2)


def test_controller_clean_vs_unclean_election():
    st = m.PartitionState(0, 3, (0,), 1)
    c, _ = ctrl({0, 1, 2}, {TP: (st, 5)})
    (cas,) = [e for e in c.on_brokers_changed(10, {1, 2}) if isinstance(e, m.CasWrite)]
    assert cas.state.leader == -1 and cas.state.isr == (0,)
    c, _ = ctrl({0, 1, 2}, {TP: (st, 5)}, unclean=True)
    (cas,) = [e for e in c.on_brokers_changed(10, {1, 2}) if isinstance(e, m.CasWrite)]
    assert cas.state.leader == 1 and cas.state.isr == (1,)


def test_controller_removes_dead_follower_from_isr():
    st = m.PartitionState(0, 3, (0, 1, 2), 1)
    c, _ = ctrl({0, 1, 2}, {TP: (st, 5)})
    (cas,) = [e for e in c.on_brokers_changed(10, {0, 1}) if isinstance(e, m.CasWrite)]
    assert cas.state == m.PartitionState(0, 4, (0, 1), 4)
    effs = c.on_cas_results(11, [m.CasResult(TP, True, cas.state, 6)])
    assert actions(effs) == ["ControllerShrinkIsr"]


def test_wire_roundtrip():
    msg = lai(0, 1)
    assert m.from_wire(m.to_wire(msg)) == msg


def _follower_fetching(log):
    """Follower 1 (kip-320) with ``log`` (epoch-0 entries), told that 0 leads at epoch 1; its
    OffsetsForLeaderEpoch answered (epoch 0 ends at 2): returns the broker, the answer and the
    first FetchRequest."""
    f = Broker(1, Config(protocol="kip-320"), {TP: (log, 0, 0)})
    f.start(0)
    (q,) = sends(f.on_message(9, lai(0, 1), 0, 0), m.OffsetsForLeaderEpochRequest)
    answer = m.OffsetsForLeaderEpochResponse(
        0, q.msg.correlation_id, (m.EpochEndOffset("t", 0, m.NONE, 0, 2),)
    )
    effs = f.on_message(0, answer, 0, 1)
    assert "FollowerTruncate" in actions(effs)
    (req,) = sends(effs, m.FetchRequest)
    return f, answer, req


def test_a_duplicated_epoch_answer_does_not_truncate_again():
    """KAFKA-7786's class: an OffsetsForLeaderEpoch answer delivered a second time, after the
    follower truncated and fetched on, must not cut what it fetched since."""
    f, answer, req = _follower_fetching([(0, "a", "v"), (0, "b", "v"), (0, "x", "v")])
    assert f.partitions[TP].log.leo == 2
    data = m.FetchPartitionData("t", 0, m.NONE, 4, 4, 0, 2, ((1, "c", "v"), (1, "d", "v")))
    f.on_message(0, m.FetchResponse(0, req.msg.fetcher_id, req.msg.correlation_id, (data,)), 0, 2)
    assert f.partitions[TP].log.leo == 4
    effs = f.on_message(0, answer, 0, 3)  # the same answer again
    assert "FollowerTruncate" not in actions(effs)
    assert f.partitions[TP].log.leo == 4


def test_a_fetch_answered_after_the_follower_restarted_truncation_is_ignored():
    """A fetch in flight when a newer LeaderAndIsr (same leader, epoch 2) sends the follower back
    to truncating: its response, sent by the leader at epoch 1, is not appended to a log that
    has not been checked against epoch 2 yet."""
    f, _answer, req = _follower_fetching([(0, "a", "v"), (0, "b", "v")])
    effs = f.on_message(9, lai(0, 2, cepoch=1, version=1), 0, 2)
    assert sends(effs, m.OffsetsForLeaderEpochRequest)  # truncating again
    data = m.FetchPartitionData("t", 0, m.NONE, 3, 3, 0, 2, ((1, "c", "v"),))
    effs = f.on_message(
        0, m.FetchResponse(0, req.msg.fetcher_id, req.msg.correlation_id, (data,)), 0, 3
    )
    assert "FollowerFetch" not in actions(effs)
    assert f.partitions[TP].log.leo == 2


def test_hw_waits_for_a_follower_whose_isr_expansion_is_in_flight():
    """R4's "about to re-enter the ISR": while the expansion write for follower 2 is in flight,
    the HW must not pass follower 2's LEO, or the write lands an ISR member without a committed
    record (StrongIsr). A mutation run found no test failing without the rule."""
    b = leader(Config(min_insync_replicas=1), isr=(0, 1))
    produce(b, "a", acks=1)
    effs = fetch(b, 2, 1, now=5)  # follower 2 caught up to the LEO (1): expansion sent
    (cas,) = [e for e in effs if isinstance(e, m.CasWrite)]
    assert cas.state.isr == (0, 1, 2) and b.partitions[TP].isr == {0, 1}
    produce(b, "b", acks=1, now=6, corr=2)
    fetch(b, 1, 2, now=7)  # follower 1 has both records; follower 2 only the first
    assert b.partitions[TP].log.hw == 1  # not 2: follower 2 is about to re-enter the ISR
    b.on_cas_results([m.CasResult(TP, True, cas.state, 1)], 8)
    assert b.partitions[TP].isr == {0, 1, 2}
    assert b.partitions[TP].log.hw <= b.partitions[TP].remote[2].leo
