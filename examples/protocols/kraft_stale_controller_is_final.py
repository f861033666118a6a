"""kraft before KAFKA-14154's fix (Kafka 3.0-3.2's KRaft controller): a controller that has lost
office, asked to alter a partition whose leader epoch is ahead of its own state, answers
FENCED_LEADER_EPOCH (or INVALID_UPDATE_VERSION for a partition epoch ahead), which the leader
takes as final (issue 28 item 2; spec/protocols/kraft.py, spec/actions/controller_failover.py).

    isr check --protocol-file examples/protocols/kraft_stale_controller_is_final.py \
        --replicas 2 --records 1 --epochs 2 --crashes 0 --controller-failovers 1

The leader's channel manager keeps sending to the controller it has cached until a disconnect or
NOT_CONTROLLER, so after a failover it may reach the deposed controller with state the new one
wrote. Taking the refusal as final, it keeps the ISR change pending and waits for newer metadata,
which never comes: it already holds the current state. It proposes no other ISR change until some
unrelated event makes the controller write the partition again: a follower it asked to add never
rejoins (KAFKA-14154's persistent under-replicated partition), one it asked to drop stays counted
for its HW. The checker finds it in 5 steps (PendingAlterPartitionResolvable; 1,547 states): a
failover, the new controller moves leadership, the new leader applies it and asks to drop the
follower that has not fetched from it yet, and the deposed controller answers. Fixed in 3.3.0 (#12514, ``ReplicationControlManager.
validateAlterPartitionData``: NOT_CONTROLLER when the request's leader or partition epoch is
ahead), with which the request goes to the new controller; with the fix (the built-in ``kraft``,
``not_controller_if_ahead = True``) every safety property holds at these bounds.
"""

from isr.spec.protocols.kraft import Kraft


class KraftStaleControllerIsFinal(Kraft):
    name = "kraft-stale-controller-is-final"
    description = (
        "kraft before KAFKA-14154's fix: a deposed controller's FENCED_LEADER_EPOCH is final"
    )
    not_controller_if_ahead = False


PROTOCOL = KraftStaleControllerIsFinal()
