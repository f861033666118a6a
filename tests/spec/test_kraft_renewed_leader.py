"""A restarted recorded leader never takes up its old leader epoch through a partition change.

Found by the kit's random kraft schedules (docs/conformance.md, "Random kraft schedules"): with
the controller's fence, ISR removal and election as separate steps (``atomic_fence`` off, the
reference implementation's declaration), a leader that crashed with no successor stays the
recorded leader; once it restarted and registered, an ISR change (another broker's unclean
registration) was sent to it as a partition change of the recorded epoch, and the new
incarnation could become leader at that old epoch. Kafka rules the step out: the fence's batch
records leader -1 with a new epoch, and the unfencing elects it with another
(``PartitionChangeBuilder``, ``handleBrokerUnfenced``). The spec's own rule is that such a
leader is lost (``leader_lost``) and must be elected first."""

from __future__ import annotations

from isr.spec.actions.common import partition_change
from isr.spec.state import NO_EPOCH, NO_LEADER, Request

from .helpers import kraft


def _restarted_leader_state():
    m = kraft(replicas=3, records=0, epochs=2, crashes=0)
    s = m.init_states()[0]
    # the recorded leader 0 restarted: it has applied nothing yet (no leader, no epoch) and
    # nothing of the recorded epoch is in flight to it
    r0 = s.replicas[0]._replace(leader=NO_LEADER, epoch=NO_EPOCH)
    return m, s._replace(replicas=(r0, *s.replicas[1:]), requests=())


def test_a_partition_change_is_not_sent_to_a_restarted_unelected_leader() -> None:
    m, s = _restarted_leader_state()
    t = partition_change(m.ctx, s, new_isr=0b011, live=0b111)
    assert t.coord.isr == 0b011 and t.coord.epoch == s.coord.epoch
    assert not any(q.dest == 0 for q in t.requests)


def test_a_partition_change_is_sent_to_a_leader_of_the_recorded_epoch() -> None:
    m, s = _restarted_leader_state()
    # the leader at the recorded epoch (it applied its election): told, as before
    s_led = s._replace(replicas=(s.replicas[0]._replace(leader=0, epoch=1), *s.replicas[1:]))
    t = partition_change(m.ctx, s_led, new_isr=0b011, live=0b111)
    assert [q.dest for q in t.requests] == [0]
    # a leader whose election is still in flight to it: told too (it will lead at that epoch)
    c = s.coord
    s_flight = s._replace(requests=(Request(0, 0, c.epoch, c.isr, True, 1),))
    t = partition_change(m.ctx, s_flight, new_isr=0b011, live=0b111)
    assert any(q.dest == 0 and q.isr == 0b011 for q in t.requests)
