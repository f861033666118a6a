"""The kraft version's log start offset in the reference implementation (issue 28 item 3, R4,
R12; impl/core/logstart.py): the operator's DeleteRecords up to the HW (refused above it,
applied by a deposed leader too), retention of segments wholly below the HW, followers taking
up the leader's log start from fetch responses, OFFSET_OUT_OF_RANGE and the follower's reset
to the leader's log start (its HW there too, KAFKA-9491), the log start surviving a restart;
and the mutants of KAFKA-5634 and KAFKA-9491."""

from __future__ import annotations

from isr.impl.core.log import PartitionLog
from isr.impl.mutants import KRAFT_MUTANTS
from isr.impl.sim.world import World, sim_config

TP = ("t", 0)


def _world(broker_cls=None) -> World:
    kw = {} if broker_cls is None else {"broker_cls": broker_cls}
    w = World(3, 1, 3, sim_config("kraft", min_insync_replicas=2), seed=1, **kw)
    w.run_until(100)
    return w


def _produce(w: World, n: int, first: int = 0) -> None:
    for i in range(n):
        w.produce(TP, f"m{first + i}")
        w.run_until(w.now + 10)


def _starts(w: World) -> dict[int, tuple[int, int, int]]:
    """broker -> (log start, HW, LEO) of t-0."""
    out = {}
    for b in w.ids:
        if w.nodes[b].alive:
            log = w.broker(b).partitions[TP].log
            out[b] = (log.log_start, log.hw, log.leo)
    return out


def _actions(w: World, name: str) -> list[dict]:
    return [e for e in w.trace if e["action"] == name]


def test_partition_log_delete_before_keeps_offsets_and_epochs() -> None:
    log = PartitionLog([(0, "a", "a"), (0, "b", "b"), (1, "c", "c"), (1, "d", "d")], hw=4)
    assert log.delete_before(3) == 3
    assert (log.log_start, log.leo, log.entry(3)[1]) == (3, 4, "d")
    assert log.epochs() == [(1, 3)]  # the derived cache starts at the log start
    assert log.read(2, 10) == () and [e[1] for e in log.read(3, 10)] == ["d"]
    assert log.delete_before(2) == 0 and log.log_start == 3  # never down
    assert log.delete_before(9) == 1 and (log.log_start, log.leo) == (4, 4)  # at most the LEO


def test_delete_records_up_to_the_hw_and_followers_take_it_up() -> None:
    w = _world()
    _produce(w, 6)
    w.run_until(w.now + 300)
    assert w.delete_records(TP, 1000) == "OFFSET_OUT_OF_RANGE"  # above the HW: nothing moves
    assert {s[0] for s in _starts(w).values()} == {0}
    assert w.delete_records(TP, 4) == "NONE"
    assert w.delete_records(TP, 2) == "NONE"  # at or below the log start: nothing
    (ev,) = _actions(w, "LeaderDeleteRecords")
    assert ev["args"] == {"leader": w.leader_of(TP), "offset": 4}
    assert ev["state"]["log_start"] == 4
    w.run_until(w.now + 600)  # (an idle fetch is parked until the max wait)
    assert _starts(w) == {0: (4, 6, 6), 1: (4, 6, 6), 2: (4, 6, 6)}
    assert w.delete_records(TP, -1) == "NONE"  # -1: the HW
    assert w.broker(w.leader_of(TP)).partitions[TP].log.log_start == 6


def test_a_deposed_leader_applies_delete_records_and_others_answer_not_leader() -> None:
    w = _world()
    _produce(w, 4)
    w.run_until(w.now + 300)
    assert w.delete_records(TP, 2, broker=1) == "NOT_LEADER_FOR_PARTITION"
    assert w.elect_leader(1)
    # before broker 0 learns it was deposed it still presumes to lead: it applies the request
    assert w.delete_records(TP, 2, broker=0) == "NONE"
    w.run_until(w.now + 600)
    assert _actions(w, "LeaderDeleteRecords")[0]["node"] == 0


def _hw_held_by_a_dead_member(w):
    """Three records replicated, broker 2 crashed (min ISR 2, its ISR removal not yet made),
    three more written: the leader's HW stays where 2 left it. The leader and its log."""
    _produce(w, 3)
    w.run_until(w.now + 300)
    w.crash(2)
    _produce(w, 3, 3)
    lead = w.leader_of(TP)
    return lead, w.broker(lead).partitions[TP].log


def test_retention_deletes_whole_segments_below_the_hw_only() -> None:
    """A dead ISR member holds the HW (min ISR 2, its removal not yet made): retention on the
    leader deletes only the segments (2 records each) wholly below the HW."""
    w = _world()
    lead, log = _hw_held_by_a_dead_member(w)
    hw = log.hw
    assert w.delete_old_segments(lead)
    assert log.log_start == hw // 2 * 2 <= hw
    ends = [e["args"]["offset"] for e in _actions(w, "BrokerDeleteOldSegment")]
    assert ends == list(range(2, log.log_start + 1, 2))
    w.run_until(w.now + 900)  # the ISR shrinks, the HW reaches the log end
    assert w.delete_old_segments(lead)
    assert log.log_start == log.hw == log.leo  # the active segment too (rolled first)


def test_a_follower_back_below_the_leaders_log_start_is_reset_to_it() -> None:
    w = _world()
    _produce(w, 3)
    w.run_until(w.now + 300)
    w.crash(2)
    w.run_until(w.now + 900)
    _produce(w, 5, 3)
    w.run_until(w.now + 300)
    assert w.delete_records(TP, -1) == "NONE"
    w.restart(2)
    w.run_until(w.now + 1500)
    (oor,) = _actions(w, "FollowerHandleOffsetOutOfRange")
    assert oor["node"] == 2 and oor["args"]["offset"] == 8 == oor["args"]["leader_log_start"]
    assert oor["state"]["log_start"] == oor["state"]["hw"] == oor["state"]["leo"] == 8
    errs = [e for e in _actions(w, "LeaderHandleFetch") if e["args"].get("error")]
    assert errs[0]["args"]["error"] == "OFFSET_OUT_OF_RANGE"
    assert _starts(w) == {0: (8, 8, 8), 1: (8, 8, 8), 2: (8, 8, 8)}
    _produce(w, 2, 8)
    w.run_until(w.now + 300)
    assert {s for s in _starts(w).values()} == {(8, 10, 10)}
    assert w.lost_acked() == []


def test_the_log_start_survives_a_restart() -> None:
    w = _world()
    _produce(w, 4)
    w.run_until(w.now + 300)
    assert w.delete_records(TP, 3) == "NONE"
    w.run_until(w.now + 600)
    w.crash(1)
    w.restart(1)
    w.run_until(w.now + 900)
    assert _starts(w)[1][0] == 3 and _starts(w)[1][1] >= 3


def test_mutant_retention_beyond_hw_deletes_uncommitted_records() -> None:
    w = _world(KRAFT_MUTANTS["retention-beyond-hw"].broker_cls)
    lead, log = _hw_held_by_a_dead_member(w)
    w.delete_old_segments(lead)
    assert log.log_start == log.leo > log.hw  # KAFKA-5634's bug: the log start past the HW


def test_mutant_hw_below_log_start_on_reset() -> None:
    w = _world(KRAFT_MUTANTS["hw-below-log-start-on-reset"].broker_cls)
    _produce(w, 3)
    w.run_until(w.now + 300)
    w.crash(2)
    w.run_until(w.now + 900)
    _produce(w, 5, 3)
    w.run_until(w.now + 300)
    w.delete_records(TP, -1)
    w.restart(2)
    w.run_until(w.now + 60)
    (oor,) = _actions(w, "FollowerHandleOffsetOutOfRange")
    assert oor["state"]["log_start"] == 8 > oor["state"]["hw"]  # KAFKA-9491's bug


def test_a_consumer_below_the_log_start_resets_to_the_hw() -> None:
    """R12: a consumer position the leader deleted is OFFSET_OUT_OF_RANGE there, and the
    consumer resets to the leader's HW (auto.offset.reset=latest: the spec's
    ConsumerResetOffset), then reads on; the run validates."""
    from isr.traces.validator.validate import validate_events

    w = _world()
    _produce(w, 4)
    w.run_until(w.now + 300)
    w._refresh_metadata()
    w._apply("consumer", w.consumer.poll(TP))
    w.run_until(w.now + 50)
    assert w.consumer.positions[TP] == 4
    _produce(w, 4, 4)
    w.run_until(w.now + 300)
    assert w.delete_records(TP, 6) == "NONE"
    w._apply("consumer", w.consumer.poll(TP))
    w.run_until(w.now + 50)
    assert w.consumer.positions[TP] == 8  # reset to the HW, nothing read below the log start
    _produce(w, 2, 8)
    w.run_until(w.now + 300)
    w._apply("consumer", w.consumer.poll(TP))
    w.run_until(w.now + 50)
    assert [w.consumer.seen[(TP, o)] for o in (8, 9)] == ["m8", "m9"]
    assert (TP, 5) not in w.consumer.seen
    v = validate_events(w.trace_header(), list(w.trace))
    assert v.verdict == "accepted", v.reason
