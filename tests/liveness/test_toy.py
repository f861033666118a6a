"""The liveness engine on toy models whose answers are known by hand."""

from __future__ import annotations

from isr.checker.graph import build_graph, graph_stats, to_dot
from isr.checker.liveness import STUTTER, check_liveness
from isr.checker.model import Fairness, Property, SimpleModel


def _result(model: SimpleModel, name: str):
    res = check_liveness(model)
    return next(p for p in res.properties if p.name == name)


def _replayed_states(model: SimpleModel, cx) -> list[tuple]:
    """The concrete states along a counterexample, by replaying its actions."""
    s = model.init()[0]
    states = [s]
    for step in cx.steps:
        if step.action == STUTTER:
            states.append(s)
            continue
        kind = list(model.action_names).index(step.action)
        s = next(t for (k, a), t in model.next(s) if k == kind and list(a) == step.args)
        states.append(s)
    return states


def _assert_lasso(model: SimpleModel, cx) -> None:
    states = _replayed_states(model, cx)
    assert cx.loop_start is not None and 1 <= cx.loop_start <= len(cx.steps)
    assert states[-1] == states[cx.loop_start - 1], "the cycle must return to its first state"


# --- a one-step model: <>done needs weak fairness (TLA+ behaviours may stutter) -------------
def _one_step(fair: bool) -> SimpleModel:
    return SimpleModel(
        name="one-step",
        action_names=["Go"],
        init=lambda: [(0,)],
        next=lambda s: [((0, ()), (1,))] if s[0] == 0 else [],
        properties=[Property("Done", "eventually", lambda s: s[0] == 1)],
        fairness=[Fairness("Go", "weak")] if fair else [],
    )


def test_without_fairness_stuttering_violates_eventually():
    p = _result(_one_step(fair=False), "Done")
    assert p.holds is False
    assert [s.action for s in p.counterexample.steps] == [STUTTER]
    assert p.counterexample.loop_start == 1


def test_weak_fairness_makes_eventually_hold():
    assert _result(_one_step(fair=True), "Done").holds is True


# --- weak vs strong fairness: Go is enabled only every other step ----------------------------
def _flicker(kind: str) -> SimpleModel:
    # state (done, flag): Toggle flips flag forever; Go (only when flag) finishes
    def nxt(s):
        done, flag = s
        if done:
            return []
        out = [((0, ()), (0, 1 - flag))]
        if flag:
            out.append(((1, ()), (1, flag)))
        return out

    return SimpleModel(
        name="flicker",
        action_names=["Toggle", "Go"],
        init=lambda: [(0, 0)],
        next=nxt,
        properties=[Property("Done", "eventually", lambda s: s[0] == 1)],
        fairness=[Fairness("Toggle", "weak"), Fairness("Go", kind)],
    )


def test_weak_fairness_allows_intermittently_enabled_action_to_starve():
    model = _flicker("weak")
    p = _result(model, "Done")
    assert p.holds is False
    assert {s.action for s in p.counterexample.steps} == {"Toggle"}
    assert len(p.counterexample.steps) == 2  # a two-state cycle from the initial state
    _assert_lasso(model, p.counterexample)


def test_strong_fairness_forbids_it():
    assert _result(_flicker("strong"), "Done").holds is True


# --- a livelock: two fair actions chase each other, the exit is not fair ---------------------
def _livelock(exit_fair: bool) -> SimpleModel:
    def nxt(s):
        (x,) = s
        if x == 3:
            return []
        out = []
        if x == 0:
            out.append(((0, ()), (1,)))  # Ping
        if x == 1:
            out.append(((1, ()), (2,)))  # Pong
        if x == 2:
            out.append(((0, ()), (1,)))  # Ping again
        if x in (1, 2):
            out.append(((2, ()), (3,)))  # Exit
        return out

    fairness = [Fairness("Ping", "weak"), Fairness("Pong", "weak")]
    if exit_fair:
        fairness.append(Fairness("Exit", "weak"))
    return SimpleModel(
        name="livelock",
        action_names=["Ping", "Pong", "Exit"],
        init=lambda: [(0,)],
        next=nxt,
        properties=[Property("Exits", "eventually", lambda s: s[0] == 3)],
        fairness=fairness,
    )


def test_livelock_found_as_lasso():
    model = _livelock(exit_fair=False)
    p = _result(model, "Exits")
    assert p.holds is False
    cx = p.counterexample
    assert [s.action for s in cx.steps] == ["Ping", "Pong", "Ping"]
    assert cx.loop_start == 2
    _assert_lasso(model, cx)


def test_livelock_broken_by_fair_exit():
    assert _result(_livelock(exit_fair=True), "Exits").holds is True


# --- leads-to with tokens: a server that may starve a client ---------------------------------
def _server(instances: bool) -> SimpleModel:
    # state: (req0, req1); Request(i) is the clients' (not fair), Serve(i) the server's
    def nxt(s):
        out = []
        for i in range(2):
            if not s[i]:
                out.append(((0, (i,)), tuple(1 if k == i else s[k] for k in range(2))))
        for i in range(2):
            if s[i]:
                out.append(((1, (i,)), tuple(0 if k == i else s[k] for k in range(2))))
        return out

    return SimpleModel(
        name="server",
        action_names=["Request", "Serve"],
        init=lambda: [(0, 0)],
        next=nxt,
        properties=[
            Property(
                "EveryRequestServed",
                "eventually",
                lambda s, i: s[i] == 0,
                trigger=lambda s: [i for i in range(2) if s[i]],
            )
        ],
        fairness=[Fairness("Serve", "weak", instances=instances)],
    )


def test_fairness_of_the_action_as_a_whole_lets_one_client_starve():
    model = _server(instances=False)
    res = check_liveness(model)
    p = res.properties[0]
    assert p.holds is False
    assert "Request" in {s.action for s in p.counterexample.steps}
    _assert_lasso(model, p.counterexample)
    states = _replayed_states(model, p.counterexample)
    starving = [i for i in range(2) if all(s[i] for s in states[p.counterexample.loop_start - 1 :])]
    assert starving, "some client waits through the whole cycle"


def test_per_instance_fairness_serves_everyone():
    assert check_liveness(_server(instances=True)).properties[0].holds is True


# --- a deadlock where the goal fails is a violation ------------------------------------------
def test_deadlock_short_of_the_goal_is_a_violation():
    model = SimpleModel(
        name="dead-end",
        action_names=["Left", "Right"],
        init=lambda: [(0,)],
        next=lambda s: [((0, ()), (1,)), ((1, ()), (2,))] if s[0] == 0 else [],
        properties=[Property("Right", "eventually", lambda s: s[0] == 2)],
        fairness=[Fairness("Left", "weak"), Fairness("Right", "weak")],
    )
    p = check_liveness(model).properties[0]
    assert p.holds is False
    assert [s.action for s in p.counterexample.steps] == ["Left", STUTTER]


# --- graph statistics and export --------------------------------------------------------------
def test_graph_stats_and_dot(tmp_path):
    sg = build_graph(_livelock(exit_fair=False))
    st = graph_stats(sg)
    assert st["states"] == 4
    assert st["edges"] == 5
    assert st["sccs"] == 3  # {0}, {1, 2}, {3}
    assert st["nontrivial_sccs"] == 1
    assert st["deadlocks"] == 1
    assert st["diameter"] == 2
    dot = to_dot(sg)
    assert dot.startswith('digraph "livelock"') and dot.count("->") == 5
    assert "doublecircle" in dot and "color=red" in dot
