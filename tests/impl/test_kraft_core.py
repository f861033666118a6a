"""The kraft version's sans-I/O core (impl/core/kraft.py, leader.py, become.py): the leader's
answers to fetches (DivergingEpoch not counted, STALE_BROKER_EPOCH, the HW read before the
fetch), the follower's truncation on a diverging answer, and a partition change applied in the
leader's own epoch keeping its followers' fetch state. Each checks the effects and the traced
event, as the spec's kraft actions (spec/actions/fetch.py) define them."""

from __future__ import annotations

from typing import Any

from isr.impl.core import messages as m
from isr.impl.core.config import Config
from isr.impl.core.replica import Broker

TP = ("t", 0)
CFG = Config(protocol="kraft", min_insync_replicas=1)


def _lai(leader: int, epoch: int, isr: tuple[int, ...], version: int) -> m.LeaderAndIsr:
    return m.LeaderAndIsr(
        9, 1, (m.LeaderAndIsrPartition("t", 0, leader, epoch, isr, version, (0, 1, 2)),)
    )


def _leader(entries: list[tuple[int, str, str]], epoch: int) -> Broker:
    b = Broker(0, CFG, {TP: (entries, 0, 0)})
    b.start(0)
    b.on_message(9, _lai(0, epoch, (0, 1, 2), 0), 0, 0)
    return b


def _fetch(b: Broker, offset: int, last_epoch: int, epoch: int, be: int = 1, f: int = 1) -> tuple:
    fp = m.FetchPartition("t", 0, offset, epoch, last_epoch, be)
    out = b.on_message(f, m.FetchRequest(f, 0, offset + 100 * be, (fp,)), 0, 10)
    evs = [
        e.event for e in out if isinstance(e, m.Trace) and e.event["action"] == "LeaderHandleFetch"
    ]
    resp = [e.msg for e in out if isinstance(e, m.Send) and isinstance(e.msg, m.FetchResponse)]
    return evs, resp


def _args(evs: list[dict[str, Any]]) -> dict[str, Any]:
    assert len(evs) == 1
    return {k: v for k, v in evs[0]["args"].items() if k not in ("leader", "follower")}


def test_diverging_fetch_is_answered_and_not_counted() -> None:
    # leader 0 at epoch 2 holds a@0 b@0 y@2; follower 1 holds a@0 b@0 x@1 (epoch 1 never reached it)
    b = _leader([(0, "a", ""), (0, "b", ""), (2, "y", "")], epoch=2)
    evs, resp = _fetch(b, offset=3, last_epoch=1, epoch=2)
    assert _args(evs) == {
        "fetch_offset": 3, "leader_epoch": 2, "broker_epoch": 1, "diverging": [0, 2], "hw": 0,
    }  # fmt: skip
    d = resp[0].partitions[0]
    assert d.diverging == (0, 2) and d.entries == ()
    assert evs[0]["state"]["remote_leo"]["1"] == -1  # KAFKA-13141: not counted


def test_stale_broker_epoch_is_refused_after_the_new_incarnation_was_counted() -> None:
    b = _leader([(0, "a", "")], epoch=0)
    evs, _ = _fetch(b, offset=1, last_epoch=0, epoch=0, be=2)  # the restarted incarnation
    assert "error" not in _args(evs)
    evs, resp = _fetch(b, offset=0, last_epoch=-1, epoch=0, be=1)  # its previous one
    assert _args(evs)["error"] == m.STALE_BROKER_EPOCH
    assert resp[0].partitions[0].error == m.STALE_BROKER_EPOCH
    assert evs[0]["state"]["remote_leo"]["1"] == 1  # nothing changed


def test_answer_carries_the_hw_read_before_the_fetch() -> None:
    """KAFKA-7104: follower 1's fetch at 1 (all of the log) commits offset 0 (ISR {0, 1} with
    2 fetched already); the answer still carries the HW read with the records, 0."""
    b = _leader([(0, "a", "")], epoch=0)
    b.on_message(9, _lai(0, 0, (0, 1), 1), 0, 0)  # (a partition change: ISR {0, 1})
    evs, resp = _fetch(b, offset=1, last_epoch=0, epoch=0)
    assert _args(evs)["hw"] == 0 and resp[0].partitions[0].high_watermark == 0
    assert evs[0]["state"]["hw"] == 1


def test_follower_truncates_on_the_diverging_answer() -> None:
    """A diverging answer is taken in one step and truncated in the fetcher's next (Kafka's
    ``processFetchRequest`` then ``truncateOnFetchResponse``): in between the follower's HW has
    not moved (KAFKA-14704) and no fetch is sent; the truncation's event is the spec's step."""
    f = Broker(1, CFG, {TP: ([(0, "a", ""), (0, "b", ""), (1, "x", "")], 0, 0)})
    f.start(0)
    out = f.on_message(9, _lai(0, 2, (0, 1, 2), 0), 0, 0)
    send = [e for e in out if isinstance(e, m.Trace) and e.event["action"] == "FollowerSendFetch"]
    assert send[0].event["args"]["last_fetched_epoch"] == 1
    assert send[0].event["args"]["fetch_offset"] == 3
    corr = f.fetchers.get(0, 0).in_flight
    d = m.FetchPartitionData("t", 0, m.NONE, 2, 3, 0, 3, (), (0, 2), 2)
    out = f.on_message(0, m.FetchResponse(0, 0, corr, (d,)), 0, 5)
    assert not [e for e in out if isinstance(e, (m.Trace, m.Send))]
    assert [e for e in out if isinstance(e, m.SetTimer)] == [m.SetTimer("trunc:0:0", 0)]
    assert f.partitions[TP].log.leo == 3 and f.partitions[TP].log.hw == 0  # the HW waits
    out = f.on_timer("trunc:0:0", 5)
    ev = [e.event for e in out if isinstance(e, m.Trace)]
    assert ev[0]["action"] == "FollowerHandleFetchResponse"
    assert ev[0]["args"]["diverging"] == [0, 2] and ev[0]["args"]["offset"] == 2
    assert f.partitions[TP].log.leo == 2 and f.partitions[TP].log.hw == 0
    assert ev[1]["action"] == "FollowerSendFetch" and ev[1]["args"]["fetch_offset"] == 2


def test_a_diverging_answer_is_ignored_if_the_follower_moved_on_before_truncating() -> None:
    """Between taking a diverging answer and truncating, the follower learns a newer leader
    epoch: the truncation step ignores the answer (the spec's FollowerHandleFetchResponse with
    the guard), as Kafka skips a partition that left the fetcher meanwhile."""
    f = Broker(1, CFG, {TP: ([(0, "a", ""), (1, "x", "")], 0, 0)})
    f.start(0)
    f.on_message(9, _lai(0, 2, (0, 1, 2), 0), 0, 0)
    corr = f.fetchers.get(0, 0).in_flight
    d = m.FetchPartitionData("t", 0, m.NONE, 1, 2, 0, 2, (), (0, 1), 2)
    f.on_message(0, m.FetchResponse(0, 0, corr, (d,)), 0, 5)
    f.on_message(9, _lai(0, 3, (0, 1, 2), 1), 0, 6)
    ev = [e.event for e in f.on_timer("trunc:0:0", 6) if isinstance(e, m.Trace)]
    assert ev[0]["action"] == "FollowerHandleFetchResponse" and ev[0]["args"]["ignored"]
    assert f.partitions[TP].log.leo == 2


def test_partition_change_in_the_leaders_epoch_keeps_fetch_state() -> None:
    """KAFKA-15021: the controller removes follower 2 (same leader epoch, next partition epoch):
    the leader adopts the ISR and keeps follower 1's fetched LEO and broker epoch."""
    b = _leader([(0, "a", "")], epoch=0)
    _fetch(b, offset=1, last_epoch=0, epoch=0, be=1)
    out = b.on_message(9, _lai(0, 0, (0, 1), 1), 0, 20)
    ev = [e.event for e in out if isinstance(e, m.Trace)]
    assert [e["action"] for e in ev] == ["BrokerApplyPartitionChange"]
    p = b.partitions[TP]
    assert p.isr == frozenset({0, 1}) and p.zk_version == 1 and p.leader_epoch == 0
    assert p.remote[1].leo == 1 and p.remote[1].broker_epoch == 1
    assert ev[0]["state"]["hw"] == 1  # the shrink let the HW pass offset 0
