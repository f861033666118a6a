"""kraft's controller failover and lost or refused AlterPartition answers (issue 28 item 2;
spec/actions/alter_partition.py, spec/actions/controller_failover.py): behind
``--controller-failovers N``, off by default. Each removed fix's bug is found (its property,
steps and actions pinned) and the built-in ``kraft`` holds at the same bounds (the complete
"holds", 316,272 states, is bench/large_pins.py's kraft-2-1-2-0-controller-failover; here the
part of the space within reach of each bug)."""

from __future__ import annotations

from isr.checker.bfs import check_bfs
from isr.checker.engines import Limits
from isr.spec import Config, IsrSpec
from isr.spec.codec import state_from_json, state_to_json
from isr.spec.protocols import KRAFT, PROTOCOLS
from isr.spec.state import from_wire, to_wire
from isr.spec.symmetry import permute

BOUNDS = dict(replicas=2, records=1, epochs=2, crashes=0, controller_failovers=1)
NEW = {
    "ControllerFailover",
    "DeposedControllerHandleAlterPartition",
    "NetworkLoseAlterPartitionResponse",
    "LeaderClearPendingAlterPartition",
}
DROP_PENDING = KRAFT.variant(keep_pending_on_refusal=False)
STALE_CONTROLLER_FINAL = KRAFT.variant(not_controller_if_ahead=False)


def kraft(variant=None, **bounds) -> IsrSpec:
    return IsrSpec(Config(protocol="kraft", **{**BOUNDS, **bounds}), protocol=variant)


def verdicts(res) -> dict:
    return {p.name: p for p in res.properties}


def first_violation(model: IsrSpec, prop: str):
    res = check_bfs(model, properties=[prop], stop_at_first_violation=True)
    v = verdicts(res)[prop]
    assert v.holds is False, prop
    return v.counterexample


def step(action: str, **args) -> dict:
    return {"action": action, "args": args}


# --- the bound: off by default, and what it brings -----------------------------------------------


def test_the_default_kraft_model_has_none_of_it():
    for name, proto in PROTOCOLS.items():
        if not proto.split_fetch:
            continue
        m = IsrSpec(Config(protocol=name, replicas=2, records=1))
        assert not NEW & set(m.action_names), name
        assert "PendingAlterPartitionResolvable" not in {p.name for p in m.properties}
        assert m.init_states()[0].kraft.deposed == ()
        # every preset takes the bound (they subclass Kraft)
        m = IsrSpec(Config(protocol=name, **BOUNDS))
        assert {"NetworkLoseAlterPartitionResponse", "LeaderClearPendingAlterPartition"} <= set(
            m.action_names
        ), name


def test_with_the_fix_a_failover_is_no_step_of_its_own():
    """KRaft's partition state is in the replicated metadata log: the new controller has every
    committed record, so with KAFKA-14154's fix what a failover does is only the answers it
    loses. The ZooKeeper family's failover (a new controller re-sending the state with a new
    controller epoch) is not kraft's."""
    fixed = kraft()
    assert {"NetworkLoseAlterPartitionResponse", "LeaderClearPendingAlterPartition"} <= set(
        fixed.action_names
    )
    assert "ControllerFailover" not in fixed.action_names
    assert "DeposedControllerHandleAlterPartition" not in fixed.action_names
    assert "PendingAlterPartitionResolvable" in {p.name for p in fixed.properties}
    f = fixed.init_states()[0].faults  # brokers read the log: no controller epoch moves
    assert f.ctrl_epoch == 1 and set(f.ctrl_seen) == {1}
    assert set(kraft(STALE_CONTROLLER_FINAL).action_names) >= NEW
    zk = IsrSpec(Config(protocol="kip-320", replicas=2, records=1, controller_failovers=1))
    assert "ControllerFailover" in zk.action_names and not (NEW - {"ControllerFailover"}) & set(
        zk.action_names
    )


# --- a lost answer, its retry refused, the pending change kept ----------------------------------

LOST_ANSWER = [
    step("FollowerSendFetch", follower=1, leader=0),
    step("LeaderSendAlterPartition", leader=0, follower=1),  # drop 1: it has not fetched
    step("LeaderHandleFetch", leader=0, follower=1),
    step("ControllerHandleAlterPartition", leader=0),  # ISR {0}
    step("LeaderSendAlterPartition", leader=0, follower=1),  # add 1 back: caught up
    step("ProducerSend", leader=0, record=1),
    step("NetworkLoseAlterPartitionResponse", leader=0),  # ISR {0, 1}, the answer lost
    step("ControllerHandleAlterPartition", leader=0),  # the retry, refused as stale
]


def test_a_lost_answer_keeps_the_change_pending_until_newer_metadata_overrides_it():
    """The controller records the expansion but the leader never hears; its retry is refused
    (INVALID_UPDATE_VERSION: KRaft's controller has no idempotence for an applied change) and
    the leader keeps the change pending, its HW waiting for the follower the controller now
    counts, until the metadata reaches it (``Partition.handleAlterPartitionError``)."""
    m = kraft()
    run = m.follow(m.init_states()[0], LOST_ANSWER)
    assert run is not None
    s = run[-1][1]
    assert s.coord.isr == 0b11 and s.replicas[0].isr == 0b01  # recorded, not yet told
    (a,) = s.kraft.alter_partition
    assert a.answered and not a.fresh and a.new_isr == 0b11
    assert s.replicas[0].hw == 0 and s.history.acked == ()  # waits for follower 1
    assert m.follow(s, [step("LeaderClearPendingAlterPartition", leader=0)]) is None
    run = m.follow(
        s,
        [
            step("BrokerApplyPartitionChange", replica=0),
            step("LeaderClearPendingAlterPartition", leader=0),
        ],
    )
    assert run is not None
    t = run[-1][1]
    assert t.kraft.alter_partition == () and t.replicas[0].isr == 0b11
    assert t.replicas[0].hw == 0 and t.history.acked == ()
    # the leader that drops the change at the refusal commits the record alone at once
    d = kraft(DROP_PENDING)
    run = d.follow(d.init_states()[0], LOST_ANSWER)
    assert run is not None
    s = run[-1][1]
    assert s.kraft.alter_partition == () and s.replicas[0].hw == 1
    assert s.history.acked == ((0, 1),) and s.coord.isr == 0b11


def test_dropping_a_pending_change_at_a_refusal_loses_a_committed_record():
    """``keep_pending_on_refusal`` removed: after a lost answer the recorded ISR holds the
    follower the leader no longer counts; the controller moves leadership to it, and the
    retry's refusal lets the old leader, not yet told, commit the record alone: NoCommittedLoss
    in 10 steps, no crash (StrongIsr in 8)."""
    m = kraft(DROP_PENDING)
    assert first_violation(m, "StrongIsr").length == 8
    cx = first_violation(m, "NoCommittedLoss")
    actions = [s.action for s in cx.steps]
    assert actions[:8] == [
        "FollowerSendFetch",
        "LeaderSendAlterPartition",
        "LeaderHandleFetch",
        "ControllerHandleAlterPartition",
        "LeaderSendAlterPartition",
        "ProducerSend",
        "NetworkLoseAlterPartitionResponse",
        "ControllerMoveLeader",
    ]  # then the refusal and the new leader taking office, in either order
    assert sorted(actions[8:]) == ["BrokerBecomeLeader", "ControllerHandleAlterPartition"]


# --- a deposed controller's answer (KAFKA-14154) ------------------------------------------------


def test_a_deposed_controller_s_final_refusal_leaves_a_change_pending_for_ever():
    """``not_controller_if_ahead`` removed (the KRaft controller of 3.0-3.2): after a failover
    the new controller moves leadership, the new leader asks to drop the follower that has not
    fetched from it, and its request reaches the deposed controller, which answers
    FENCED_LEADER_EPOCH; the leader keeps the change pending with nothing newer to come:
    PendingAlterPartitionResolvable in 5 steps."""
    cx = first_violation(kraft(STALE_CONTROLLER_FINAL), "PendingAlterPartitionResolvable")
    assert [s.action for s in cx.steps] == [
        "ControllerFailover",
        "ControllerMoveLeader",
        "BrokerBecomeLeader",
        "LeaderSendAlterPartition",
        "DeposedControllerHandleAlterPartition",
    ]


def test_a_deposed_controller_behind_by_a_partition_epoch_refuses_too():
    """The same leader epoch, but a partition epoch the new controller wrote (an accepted
    shrink): the deposed controller's INVALID_UPDATE_VERSION is final as well. A request made
    with the deposed controller's own state is not answered by it (it would accept, fail to
    commit and resign: NOT_CONTROLLER, re-sent)."""
    m = kraft(STALE_CONTROLLER_FINAL)
    s0 = m.init_states()[0]
    run = m.follow(
        s0,
        [
            step("ControllerFailover"),
            step("LeaderSendAlterPartition", leader=0, follower=1),  # drop 1
        ],
    )
    assert run is not None
    s = run[-1][1]
    assert s.kraft.deposed == (1, 0)
    assert m.follow(s, [step("DeposedControllerHandleAlterPartition", leader=0)]) is None
    run = m.follow(
        s,
        [
            step("ControllerHandleAlterPartition", leader=0),  # the new controller: ISR {0}
            step("FollowerSendFetch", follower=1, leader=0),
            step("LeaderHandleFetch", leader=0, follower=1),
            step("LeaderSendAlterPartition", leader=0, follower=1),  # add 1 back
            step("DeposedControllerHandleAlterPartition", leader=0),
        ],
    )
    assert run is not None
    t = run[-1][1]
    assert t.kraft.deposed == (1, 1)
    (a,) = t.kraft.alter_partition
    assert a.answered and a.fresh and a.new_isr == 0b11
    prop = next(p for p in m.properties if p.name == "PendingAlterPartitionResolvable")
    assert not prop.check(t)
    assert m.follow(t, [step("LeaderClearPendingAlterPartition", leader=0)]) is None


def test_the_fixed_kraft_holds_within_reach_of_both_bugs():
    """Built-in kraft at the bugs' bounds: nothing breaks up to depth 11 (both stories are 10
    steps or fewer); the complete search (316,272 states, every safety property holds) is
    bench/large_pins.py's kraft-2-1-2-0-controller-failover."""
    props = ["NoCommittedLoss", "StrongIsr", "PendingAlterPartitionResolvable"]
    res = check_bfs(kraft(), limits=Limits(max_states=25_000), properties=props)
    assert res.depth >= 11
    assert [verdicts(res)[p].holds for p in props] == [None] * 3  # none violated, search cut


# --- the new variables through the JSON form, the wire form and symmetry -------------------------


def test_a_pending_change_and_a_deposed_controller_survive_every_encoding():
    m = kraft(STALE_CONTROLLER_FINAL)
    cx = first_violation(m, "PendingAlterPartitionResolvable")
    run = m.follow(m.init_states()[0], [step(st.action, **st.args) for st in cx.steps])
    assert run is not None
    s = run[-1][1]
    assert s.kraft.deposed and any(a.answered for a in s.kraft.alter_partition)
    assert state_from_json(state_to_json(s)) == s
    assert from_wire(to_wire(s)) == s and hash(to_wire(s)) == hash(s)
    swapped = permute(s, [1, 0])
    assert permute(swapped, [1, 0]) == s
    (a,) = swapped.kraft.alter_partition
    (b,) = s.kraft.alter_partition
    assert a.answered == b.answered and a.leader == 1 - b.leader
    assert swapped.kraft.deposed == s.kraft.deposed
    assert m.canonicalize(swapped) == m.canonicalize(s)
    tok = next(p for p in m.properties if p.name == "TypeOK")
    assert tok.check(s) and tok.check(swapped)


def test_a_counterexample_file_replays_in_both_formats(tmp_path, capsys):
    """The new variables keep the same keys in every state's JSON (ITF takes its variables from
    the first state), so `isr replay` confirms the story from NDJSON and from ITF."""
    from pathlib import Path

    from isr.cli.main import main

    example = Path(__file__).resolve().parents[2] / "examples" / "protocols"
    mine = str(example / "kraft_stale_controller_is_final.py")
    bounds = [
        "--replicas",
        "2",
        "--records",
        "1",
        "--epochs",
        "2",
        "--crashes",
        "0",
        "--controller-failovers",
        "1",
    ]
    for fmt in ("ndjson", "itf"):
        out = str(tmp_path / f"cx.{fmt}")
        argv = ["check", "--protocol-file", mine, *bounds, "--workers", "1", "--quiet"]
        argv += ["--invariant", "PendingAlterPartitionResolvable"]
        assert main([*argv, "--trace-out", out, "--trace-format", fmt]) == 1
        assert main(["replay", out, "--protocol-file", mine]) == 1  # violated, confirmed
        assert "confirmed: all 5 steps" in capsys.readouterr().out
