"""Issue 28 item 4: the idempotent producer as Kafka 3.9 has it (KIP-98, KIP-360): batch headers
(producer epoch, sequence) in the log, the leader's producer state derived from its log
(spec/producer_state.py), the producer's own state (spec.state.Producer): retries one at a time
in sequence order, completion by acknowledgement, the epoch bump after OUT_OF_ORDER_SEQUENCE.
Off by default (the default model is unchanged). Each fix modelled as a flag is found missing
when taken back, and the fixed version holds at the same bounds; the duplicates Kafka 3.9
itself allows are pinned with their lengths. Counts are pinned: a change that moves them must
say why."""

from __future__ import annotations

import marshal

import pytest
from isr.checker.bfs import check_bfs
from isr.spec import Config, ConfigError, IsrSpec
from isr.spec.codec import state_from_json, state_to_json
from isr.spec.producer_state import (
    APPEND,
    DUPLICATE,
    INVALID_EPOCH,
    OUT_OF_ORDER,
    analyze,
    producer_entry,
)
from isr.spec.protocols import KIP_320
from isr.spec.state import NO_FAULTS, NO_PRODUCER, Producer, from_wire, to_wire
from isr.spec.symmetry import permute

from .helpers import run, step

FORGET = KIP_320.variant(retain_producer_state=False)  # KAFKA-7190 taken back
ONE_BATCH = KIP_320.variant(cache_five_batches=False)  # KAFKA-5494 taken back


def idem(version=None, **bounds) -> IsrSpec:
    """kip-320 (or ``bounds``' protocol) at 2, 2, 2, 0 with --retries 1 --idempotence, unless
    ``bounds`` say otherwise; ``version`` a variant."""
    cfg = dict(protocol="kip-320", replicas=2, records=2, epochs=2, crashes=0, retries=1)
    cfg.update(bounds)
    return IsrSpec(Config(idempotence=True, **cfg), protocol=version)


def no_duplicates(m: IsrSpec) -> tuple[bool, int | None, list[str]]:
    """(holds, steps, actions) of NoDuplicates alone, with a shortest counterexample."""
    res = check_bfs(m, properties=["NoDuplicates"], stop_at_first_violation=True)
    (p,) = res.properties
    if p.holds:
        return True, None, []
    cex = p.counterexample
    return False, cex.length, [st.action for st in cex.steps]


# --- the broker's rule ----------------------------------------------------------------------


def test_the_leader_keeps_the_last_five_batches_of_the_last_producer_epoch():
    log = tuple((r, 1, 0, r - 1) for r in range(1, 8))  # sequences 0..6, producer epoch 0
    assert producer_entry(log) == (0, tuple((s, s) for s in range(2, 7)))
    assert producer_entry(log, cached=1) == (0, ((6, 6),))
    bumped = (*log[:3], (4, 1, 1, 0))  # a batch of epoch 1 clears the epoch-0 batches
    assert producer_entry(bumped) == (1, ((0, 3),))
    assert producer_entry(log, start=7) is None  # (a reset follower: nothing from there on)
    # before KAFKA-7190: a producer whose last batch is below the log start is forgotten
    assert producer_entry(log[:2], log_start=2, retain=False) is None
    assert producer_entry(log[:2], log_start=2) == (0, ((0, 0), (1, 1)))


def test_the_leader_answers_by_producer_epoch_and_sequence():
    entry = (1, ((0, 4), (1, 5)))
    assert analyze(entry, 1, 1) == (DUPLICATE, 5)  # a cached batch: its offset
    assert analyze(entry, 1, 2) == (APPEND, -1)  # in sequence
    assert analyze(entry, 1, 3) == (OUT_OF_ORDER, -1)  # a gap
    assert analyze((1, ((1, 5),)), 1, 0) == (OUT_OF_ORDER, -1)  # older, not cached
    assert analyze(entry, 2, 0) == (APPEND, -1)  # a new epoch starts at 0
    assert analyze(entry, 2, 1) == (OUT_OF_ORDER, -1)
    assert analyze(entry, 0, 0) == (INVALID_EPOCH, -1)
    assert analyze(None, 0, 7) == (APPEND, -1)  # no state: any sequence (KAFKA-8710)


# --- off by default ---------------------------------------------------------------------------


def test_off_by_default_nothing_changes():
    """Without --idempotence the states carry no producer state, the plain producer's actions
    are the ones the default model has, and no pinned count moves (the default model's
    3,057,459 is checked by tests/cli and docs/performance.md)."""
    m = IsrSpec(Config(protocol="kip-320", replicas=2, records=1, crashes=1, retries=1))
    (s,) = m.init_states()
    assert s.faults.producer == () and s.faults.producer_state_start == ()
    assert not {"ProducerCompleteBatch", "ProducerBumpEpoch"} & set(m.action_names)
    assert IsrSpec(Config()).init_states()[0].faults is NO_FAULTS
    assert idem().init_states()[0].faults.producer == NO_PRODUCER


def test_idempotence_needs_acks_all():
    with pytest.raises(ConfigError, match="acks all"):
        Config(retries=1, idempotence=True, acks="1").validate()


def test_the_producer_state_round_trips_through_json_and_the_wire():
    """The state's JSON form and its wire form (marshal, the disk store's: plain tuples only)
    carry the producer's state; a renaming of the replicas renames the brokers its batches
    were answered by."""
    m = idem(retries=3, retention=True)
    s = run(m, *TWO_LEADERS, ("ProducerRetry", 1, 1))
    assert s.faults.producer.batches[1][3] == 1  # record 2 answered by broker 1
    assert state_from_json(state_to_json(s)) == s
    w = to_wire(s)
    assert marshal.loads(marshal.dumps(w)) == w and hash(w) == hash(s)
    assert from_wire(w) == s and type(from_wire(w).faults.producer) is Producer
    swapped = permute(s, [1, 0])
    assert swapped.faults.producer.batches[1][3] == 0
    assert permute(swapped, [1, 0]) == s


def test_symmetry_keeps_the_verdicts():
    """The producer's batches name brokers and, with retention, each replica has where its
    producer state starts: the reduction renames both (same shortest counterexamples)."""
    for retention in (False, True):
        m = idem(records=1, epochs=2, retention=retention)
        on = check_bfs(m, properties=["NoDuplicates", "TypeOK"])
        off = check_bfs(m, properties=["NoDuplicates", "TypeOK"], symmetry=False)
        assert [(p.holds, p.counterexample and p.counterexample.length) for p in on.properties] == [
            (p.holds, p.counterexample and p.counterexample.length) for p in off.properties
        ]
        assert on.distinct_states < off.distinct_states


# --- counts -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bounds", "distinct"),
    [
        # with the old log scan, 5,883 and 898: a retry found its record anywhere in the log
        # and was otherwise appended, a record was retried at most once and never completed;
        # now the producer's state (its batches in flight, their answers, their sequences,
        # its epoch) and the batch headers in the logs are part of the state
        (dict(records=1, epochs=2, crashes=1), 12_609),
        (dict(records=2, epochs=1, retries=2), 3_985),
    ],
)
def test_pinned_counts(bounds, distinct):
    res = check_bfs(idem(**bounds))
    assert res.distinct_states == distinct
    assert all(p.holds is not False for p in res.properties if p.kind != "sometimes")


# --- the out-of-order retry (the old rule appended it) ---------------------------------------

# Broker 0 is deposed by a controlled shutdown (epoch 2, ISR {1}) but has not heard: the
# producer, at epoch 1 still, sends record 1 to it; then, told of epoch 2, record 2 to broker 1,
# which holds nothing of the producer and takes sequence 1 (KAFKA-8710: any sequence from an
# unknown producer) and commits it at once.
TWO_LEADERS = (
    ("ControllerShutdownBroker", 0, 1),
    ("BrokerBecomeLeader", 1, 2),
    ("ProducerSend", 0, 1),
    ("ProducerSend", 1, 2),
)


def test_a_retry_whose_record_is_gone_after_a_later_one_is_out_of_order():
    """Record 1's retry reaches broker 1, which holds record 2 (sequence 1) but not record 1:
    OUT_OF_ORDER_SEQUENCE_NUMBER, nothing appended (the old scan appended record 1 after record
    2). The producer, which has not taken in record 2's acknowledgement, expects record 1
    next, so it may bump its epoch; once it has taken in record 2's, it does not."""
    m = idem(retries=3)
    s = run(m, *TWO_LEADERS)
    assert [e[0] for e in s.replicas[1].log] == [2]
    t = step(m, s, "ProducerRetry", 1, 1)
    assert t.replicas[1].log == s.replicas[1].log  # not appended
    assert t.faults.producer.batches[0][:3] == (1, 0, 2)  # OUT_OF_ORDER, the next batch
    assert "ProducerBumpEpoch" in {m.action_names[a[0]] for a, _ in m.successors(t)}
    done = step(m, s, "ProducerCompleteBatch", 2)  # record 2's answer taken in first
    u = step(m, done, "ProducerRetry", 1, 1)
    assert u.replicas[1].log == s.replicas[1].log
    assert u.faults.producer.batches[0][2] == 0  # retried without a bump
    assert "ProducerBumpEpoch" not in {m.action_names[a[0]] for a, _ in m.successors(u)}


def test_the_bump_rewrites_a_batch_already_appended_into_a_duplicate():
    """Kafka 3.9's idempotent producer duplicates record 2 (KAFKA-14034's mechanism, open): the
    answer to record 2 is lost with its connection, record 1's retry is answered
    OUT_OF_ORDER_SEQUENCE_NUMBER, the producer bumps its epoch and rewrites both batches in
    flight (record 1 sequence 0, record 2 sequence 1, epoch 1); record 1 is appended as the
    new epoch's first batch and acknowledged, and record 2's retry continues the new epoch:
    broker 1 appends it a second time."""
    m = idem(retries=3)
    s = run(
        m,
        *TWO_LEADERS,
        ("ProducerRetry", 1, 1),
        ("ProducerBumpEpoch", 1),
        ("ProducerRetry", 1, 1),
        ("ProducerCompleteBatch", 1),
        ("ProducerRetry", 1, 2),
    )
    assert s.replicas[1].log == ((2, 2, 0, 1), (1, 2, 1, 0), (2, 2, 1, 1))
    assert s.replicas[1].hw == 3  # committed (the ISR is broker 1 alone)
    assert (0, 2) in s.history.acked and (2, 2) in s.history.acked


def test_kafka_3_9_duplicates_with_three_retries_and_holds_with_two():
    assert no_duplicates(idem(retries=3)) == (
        False,
        9,
        [
            "ControllerShutdownBroker",
            "BrokerBecomeLeader",
            "ProducerSend",
            "ProducerSend",
            "ProducerRetry",
            "ProducerBumpEpoch",
            "ProducerRetry",
            "ProducerCompleteBatch",
            "ProducerRetry",
        ],
    )
    assert no_duplicates(idem(retries=2))[0] is True
    # and in KRaft (Kafka 4.x): the same nine steps (kraft at --retries 1 holds: 3,975,273
    # states, docs/model.md)
    assert no_duplicates(idem(protocol="kraft", retries=3))[:2] == (False, 9)


# --- the fixes, each taken back ---------------------------------------------------------------


def test_without_five_cached_batches_a_retry_is_appended_again():
    """KAFKA-5494 taken back (examples/protocols/kip320_one_cached_batch.py): record 1's retry
    is not the one batch the leader keeps, OUT_OF_ORDER, a bump, record 1 appended again."""
    bounds = dict(records=2, epochs=1, retries=2)
    assert no_duplicates(idem(ONE_BATCH, **bounds)) == (
        False,
        5,
        ["ProducerSend", "ProducerSend", "ProducerRetry", "ProducerBumpEpoch", "ProducerRetry"],
    )
    assert no_duplicates(idem(**bounds))[0] is True


def test_without_retained_producer_state_retention_forgets_the_producer():
    """KAFKA-7190 taken back (examples/protocols/kip320_forget_producer_state.py): retention
    deletes the acknowledged record 1 and the leader forgets the producer; the retry is
    appended again. With the fix the leader answers it with its offset."""
    bounds = dict(records=1, epochs=1, retention=True)
    assert no_duplicates(idem(FORGET, **bounds)) == (
        False,
        4,
        ["ProducerSend", "LeaderShrinkIsr", "BrokerDeleteOldSegment", "ProducerRetry"],
    )
    assert no_duplicates(idem(**bounds))[0] is True


def test_a_follower_reset_to_the_log_start_forgets_the_producer():
    """Kafka 3.9 with retention: a follower reset to its leader's log start starts with no
    producer state (truncateFullyAndStartAt), rejoins, is elected, and appends the retry of the
    record retention deleted."""
    assert no_duplicates(idem(records=1, epochs=2, retention=True)) == (
        False,
        9,
        [
            "ProducerSend",
            "LeaderShrinkIsr",
            "BrokerDeleteOldSegment",
            "FollowerResetToLogStart",
            "FollowerFetch",
            "LeaderExpandIsr",
            "ControllerMoveLeader",
            "BrokerBecomeLeader",
            "ProducerRetry",
        ],
    )


def test_the_partial_order_reduction_finds_the_duplicates_too():
    """The producer's actions declare their footprints (spec/por.py): the reduced model keeps
    the verdict (its counterexamples are real, not always shortest)."""
    for bounds in (dict(retries=3), dict(records=1, retention=True)):
        m = IsrSpec(
            Config(
                idempotence=True,
                **{
                    **dict(protocol="kip-320", replicas=2, records=2, epochs=2, crashes=0),
                    "retries": 1,
                    **bounds,
                },
            ),
            reduction="por",
        )
        res = check_bfs(m, properties=["NoDuplicates"], stop_at_first_violation=True)
        assert res.properties[0].holds is False


# --- a purgatory kept across the same broker's re-election ------------------------------------


def test_a_re_elected_leader_answers_the_batch_waiting_in_its_purgatory():
    """Kafka keeps a leader's delayed produce when the same broker is elected again in a newer
    leader epoch (``Partition.makeLeader`` with isNewLeader false; BrokerBecomeLeader's
    ``again``) and answers it when the HW passes it. The spec's producer takes that answer: a
    batch waiting at broker b, appended in an older leader epoch than b's current one, becomes
    acknowledged in one step. (Keyed by the batch's leader epoch, the answer was lost: the
    kit's idempotent random schedules found the reference's ProducerCompleteBatch rejected.)"""
    from isr.spec.producer_state import ACKED, WAITING

    m = idem(records=1, epochs=2, crashes=1)  # (the controller's shrink re-elects the leader)
    (s0,) = m.init_states()
    seen, frontier, found = {s0}, [s0], []
    while frontier and not found:
        nxt = []
        for s in frontier:
            for a, t in m.successors(s):
                for b, c in zip(s.faults.producer.batches, t.faults.producer.batches, strict=False):
                    if b[2] == WAITING and c[2] == ACKED and t.replicas[b[3]].epoch > b[4]:
                        found.append(m.describe_action(a)["action"])
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        frontier = nxt
    assert "BrokerBecomeLeader" in found
