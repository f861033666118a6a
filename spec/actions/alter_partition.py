"""The ``kraft`` version's ISR changes as AlterPartition request and controller answer (R7, R9,
R18; issue 18 step 2, docs/design/kraft.md §4-§5). They replace LeaderShrinkIsr and
LeaderExpandIsr there: the leader proposes, keeps counting the *maximal* ISR (its ISR and the
proposed one together) for its HW until the controller answers, and the controller accepts only
a proposal made with the current partition state and, for an added follower, the broker epoch
of its current incarnation (KIP-903).

The partition epoch is apart from the leader epoch (KAFKA-15021): an accepted change bumps only
the partition epoch, abstracted as the cached-version bit ``fresh`` (Coord's docstring explains
the abstraction for the zkVersion: only equality with the current one is ever asked).
The controller refuses a proposed ISR with a fenced or shutting-down broker in it (KIP-841).
Not modelled: a lost AlterPartition, the leader's own KIP-841 filter (it proposes from its
followers' fetches alone; its metadata view of fencing is not modelled, so only the controller's
check stands)."""

from __future__ import annotations

from ..epoch_cache import epoch_start as cache_epoch_start
from ..log import epoch_start
from ..state import AlterReq, Kraft, State
from .common import Ctx, advance_leader_hw, stale_alters, with_stale_versions
from .controller import elr_after_shrink
from .fetch import with_kraft

_new = tuple.__new__


def alter_in_flight(k: Kraft, leader: int) -> AlterReq | None:
    for a in k.alter_partition:
        if a.leader == leader:
            return a
    return None


def leader_send_alter_partition(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """LeaderSendAlterPartition(leader, follower): a leader with no AlterPartition of its own in
    flight proposes one ISR change: a shrink of a member whose last fetch did not reach its LEO
    (replica.lag.time.max.ms may pass at any moment), or an expansion by a follower whose
    counted fetch reached its HW and its epoch's start offset (KAFKA-7128), carrying the broker
    epoch of that fetch (KIP-903) (the join rule's halves are flags: ``isr_join_needs_hw``,
    ``isr_join_needs_epoch_start``). Only with a current cached partition state: a stale one is
    refused by the controller for certain, so it is not listed (with ``partition_epoch_check``
    off it is listed, and may be accepted). The leader's maximal ISR is now
    its ISR with the proposal's; the HW is re-evaluated (``maximal_isr=False`` counts only the
    proposed ISR: a shrink then lets the HW pass records the dropped member lacks before the
    controller agreed)."""
    k = s.kraft
    any_version = not ctx.protocol.partition_epoch_check
    join_hw = ctx.protocol.isr_join_needs_hw
    join_epoch = ctx.protocol.isr_join_needs_epoch_start
    for l, r in enumerate(s.replicas):
        if not (r.alive and r.leader == l and (r.zk_fresh or any_version)):
            continue
        if alter_in_flight(k, l):
            continue
        lleo = len(r.log)
        # the join rule (R7): the HW (``isr_join_needs_hw``) and the start of the leader's epoch
        # (KAFKA-7128, ``isr_join_needs_epoch_start``); 0 with both off: any counted fetch
        floor = r.hw if join_hw else 0
        if join_epoch:
            if k.epoch_cache:
                start = cache_epoch_start(k.epoch_cache[l], r.epoch, lleo)
            else:
                start = epoch_start(r.log, r.epoch)
            floor = max(floor, start)
        rem_epochs = k.remote_epoch[l]
        for j in range(ctx.n):
            if j == l:
                continue
            if r.isr >> j & 1:
                if r.remote_leo[j] >= lleo:
                    continue
                a = AlterReq(l, r.epoch, r.isr & ~(1 << j), -1, -1, r.zk_fresh, k.broker_epoch[l])
            elif r.remote_leo[j] >= floor:
                a = AlterReq(
                    l, r.epoch, r.isr | (1 << j), j, rem_epochs[j], r.zk_fresh, k.broker_epoch[l]
                )
            else:
                continue
            t = with_kraft(s, k._replace(alter_partition=tuple(sorted((*k.alter_partition, a)))))
            out.append(((kind, (l, j)), advance_leader_hw(ctx, t, l)))


def controller_handle_alter_partition(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """ControllerHandleAlterPartition(leader): the controller answers a leader's AlterPartition.
    It accepts when the proposal was made with the current partition state (its partition epoch
    is the current one, else INVALID_UPDATE_VERSION; ``partition_epoch_check=False`` checks only
    the leader and its leader epoch, FENCED_LEADER_EPOCH) by the leader's current
    incarnation (a leader that restarted since sent it from its previous life: STALE_BROKER_EPOCH,
    KIP-497's check of the sender), no member of the proposed ISR is fenced or in controlled
    shutdown (KIP-841, INELIGIBLE_REPLICA; ``ineligible_replica_check``) and, for an expansion, the
    added follower's broker epoch is its registered one (KIP-903; ``broker_epoch_check``). It
    then records the new ISR (kip-966's ELR rule applies) and answers the leader, which adopts
    it if it still leads in that epoch. A refusal changes nothing recorded; either way the
    leader's maximal ISR falls back to its ISR and its HW is re-evaluated. KIP-704
    (``leader_recovery_state``, Kafka 3.2+): an accepted request saying RECOVERED ends the
    partition's RECOVERING state; one saying RECOVERING with more than the leader in its ISR is
    refused (INVALID_REQUEST, ``ReplicationControlManager.validateAlterPartitionData``;
    ``recovering_isr_check``)."""
    k = s.kraft
    kip903 = ctx.protocol.broker_epoch_check
    pe_check = ctx.protocol.partition_epoch_check
    kip841 = ctx.protocol.ineligible_replica_check
    # KIP-704 (``leader_recovery_state``): with the partition RECOVERING, the leader's request
    # says RECOVERED if it recovers at once (Kafka: ``Partition.makeLeader``), else RECOVERING
    # until its LeaderCompleteRecovery (the request's sender is then the current leader, which
    # has not completed: completion clears the state at the controller)
    recovering = s.kraft.leader_recovery
    says_recovering = recovering and not ctx.protocol.leader_recovers_at_once
    c0 = s.coord
    barred = k.fenced | k.shutting_down if kip841 else 0
    for a in k.alter_partition:
        l = a.leader
        alters = tuple(x for x in k.alter_partition if x is not a)
        t = with_kraft(s, k._replace(alter_partition=alters))
        accept = (
            (a.fresh if pe_check else c0.leader == l and c0.epoch == a.leader_epoch)
            and a.leader_be == k.broker_epoch[l]
            and not a.new_isr & barred
            and (a.added < 0 or not kip903 or a.added_be == k.broker_epoch[a.added])
        )
        if accept and says_recovering and a.new_isr != 1 << l and ctx.protocol.recovering_isr_check:
            accept = False  # KIP-704: RECOVERING with more than the leader (INVALID_REQUEST)
        if accept:
            c = t.coord
            old_isr = c.isr
            reps, reqs = with_stale_versions(t, writer=l)
            r = reps[l]
            if r.alive and r.leader == l and r.epoch == a.leader_epoch:
                reps = reps[:l] + (r._replace(isr=a.new_isr, zk_fresh=True),) + reps[l + 1 :]
            t = State(
                reps, c._replace(isr=a.new_isr), reqs, t.history, t.faults, stale_alters(t.kraft)
            )
            if ctx.elr:
                t = elr_after_shrink(ctx, t, old_isr, a.new_isr)
            if recovering and not says_recovering:  # KIP-704: the leader says RECOVERED
                t = with_kraft(t, t.kraft._replace(leader_recovery=0))
            if a.added >= 0 and t.faults.unclean >> a.added & 1:  # kip-966: eligible again
                f = t.faults
                t = t._replace(faults=f._replace(unclean=f.unclean & ~(1 << a.added)))
        r = t.replicas[l]
        if r.alive and r.leader == l:
            t = advance_leader_hw(ctx, t, l)
        out.append(((kind, (l,)), t))
