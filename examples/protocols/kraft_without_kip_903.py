"""kraft with one guard removed: the controller does not check the broker epoch of the follower
an AlterPartition adds (KIP-903; KAFKA-14139's story).

    isr check --protocol-file examples/protocols/kraft_without_kip_903.py \
        --replicas 2 --records 1 --epochs 2 --crashes 1 --lose-unflushed \
        --invariant NoCommittedLoss

A follower fetches a record (the leader counts it) and loses it unflushed in a crash; the
fence's batch takes it out of the ISR and the leader applies the change. The leader, from the
fetch of the previous incarnation, proposes to add it back; the follower restarts and registers
anew (a new broker epoch) before the controller handles the proposal. Without KIP-903 the
controller accepts, then moves leadership to the empty follower: the acknowledged record is
gone (14 steps; 14 too before issue 25, when the ISR removal was the registration's). The
file keeps kip-966's election rule (``elect_last_known_leader = False``): with Kafka 4.x's
election of the last known leader, "last replica standing" is a shorter loss (8 steps). With the released rule (``broker_epoch_check = True``, the built-in ``kraft``) no
committed record is lost at these bounds.

With ``--min-isr 2`` the same story is 15 steps (the fence puts the follower in the ELR), and
there the built-in ``kraft`` (with its election of the last known leader) holds NoCommittedLoss
too: a complete search, 2,585,623 states with symmetry (docs/conformance.md, row
``broker_epoch_check``).
"""

from isr.spec.protocols.kraft import Kraft


class KraftWithoutKip903(Kraft):
    name = "kraft-no-kip-903"
    description = "kraft, but AlterPartition's added follower's broker epoch is not checked"
    broker_epoch_check = False
    # kip-966's election rule, so that the shortest loss is this one: with Kafka 4.x's election
    # of the last known leader, "last replica standing" loses a record in 8 steps first
    elect_last_known_leader = False


PROTOCOL = KraftWithoutKip903()
