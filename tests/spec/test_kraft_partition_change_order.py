"""kraft: partition changes in the leader's own epoch are applied in the order written, any of
them, never an older one after a newer (R8, R9; KAFKA-15021). A KRaft broker reads the metadata
log in order and may publish an image after each record or after several (MetadataLoader);
``Partition.makeLeader`` skips only a partition epoch below its own. The spec ranks the changes
in flight to the leader (``Request.pc``); a request is lost only when a newer one to the same
broker supersedes it (spec/actions/broker.py). Found by the kit's random kraft schedules: a run
of the reference applied [0, 2] then [0] after both were written (docs/conformance.md)."""

from __future__ import annotations

from isr.spec import Config, IsrSpec


def _two_changes_in_flight() -> tuple[IsrSpec, object]:
    """Two controlled shutdowns of followers: the ISR [0, 1, 2] becomes [0, 2], then [0]; the
    leader has applied neither."""
    m = IsrSpec(Config(protocol="kraft", replicas=3, records=0, epochs=1, crashes=0))
    (s0,) = m.init_states()
    seen, frontier = {s0}, [s0]
    while frontier:
        nxt = []
        for s in frontier:
            for _a, t in m.successors(s):
                if t in seen:
                    continue
                seen.add(t)
                nxt.append(t)
                if sorted(q.pc for q in t.requests if q.pc) == [1, 2]:
                    return m, t
        frontier = nxt
    raise AssertionError("no state with two partition changes in flight")


def _steps(m: IsrSpec, s, name: str) -> list:
    return [t for a, t in m.successors(s) if m.describe_action(a)["action"] == name]


def test_the_leader_may_apply_the_intermediate_change_then_the_newest():
    m, s = _two_changes_in_flight()
    older = next(q for q in s.requests if q.pc == 1)
    newer = next(q for q in s.requests if q.pc == 2)
    assert not older.fresh and newer.fresh and older.isr != newer.isr
    applied = _steps(m, s, "BrokerApplyPartitionChange")
    isrs = sorted(t.replicas[0].isr for t in applied)
    assert isrs == sorted([older.isr, newer.isr])
    mid = next(t for t in applied if t.replicas[0].isr == older.isr)
    assert not mid.replicas[0].zk_fresh  # (not the current partition state yet)
    assert [(q.isr, q.pc) for q in mid.requests] == [(newer.isr, 1)]
    (last,) = _steps(m, mid, "BrokerApplyPartitionChange")
    assert last.replicas[0].isr == newer.isr and last.replicas[0].zk_fresh


def test_after_the_newest_the_older_change_is_only_ignored():
    m, s = _two_changes_in_flight()
    newer = next(q for q in s.requests if q.pc == 2)
    applied = _steps(m, s, "BrokerApplyPartitionChange")
    t = next(t for t in applied if t.replicas[0].isr == newer.isr)
    assert [q.pc for q in t.requests] == [0]
    assert not _steps(m, t, "BrokerApplyPartitionChange")
    assert _steps(m, t, "BrokerIgnoreStaleRequest")


def test_only_the_superseded_change_can_be_lost():
    m, s = _two_changes_in_flight()
    (lost,) = _steps(m, s, "NetworkLoseLeaderAndIsr")
    assert [(q.pc, q.fresh) for q in lost.requests] == [(1, True)]  # the newest stays
    (t,) = [t for t in _steps(m, lost, "BrokerApplyPartitionChange")]
    assert not _steps(m, t, "NetworkLoseLeaderAndIsr")  # nothing in flight supersedes
