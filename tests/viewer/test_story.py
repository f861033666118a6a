"""The step sentences of `isr explain` (cli/story.py): exact strings for a few steps told in
Kafka's words, the roles that explain anomalies, and the fallback that never fails a page."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import pytest
from isr.cli import story
from isr.spec import Config, IsrSpec
from isr.spec.actions import ACTIONS

DATA = Path(__file__).parent / "data"


def _state(**over) -> dict:
    """A two-replica state as counterexample files hold it: replica 0 leads at epoch 1, ISR
    [0, 1], empty logs; ``over`` replaces variables (per-replica maps merged)."""
    s = {
        "log": {"r0": [], "r1": []},
        "hw": {"r0": 0, "r1": 0},
        "hw_checkpoint": {"r0": 0, "r1": 0},
        "alive": {"r0": True, "r1": True},
        "leader_view": {"r0": 0, "r1": 0},
        "epoch_view": {"r0": 1, "r1": 1},
        "isr_view": {"r0": [0, 1], "r1": [0, 1]},
        "zk_version_current": {"r0": True, "r1": False},
        "truncating": {"r0": False, "r1": False},
        "pending_acks": {"r0": [], "r1": []},
        "coordination": {"leader": 0, "leader_epoch": 1, "isr": [0, 1]},
        "leader_and_isr_in_flight": [],
        "acked_all": [],
        "acked_1": [],
        "refused": [],
        "shown_to_consumers": [],
    }
    for k, v in over.items():
        if isinstance(v, dict) and k in s and k != "coordination":
            s[k] = {**s[k], **v}
        else:
            s[k] = v
    return s


def _after(s: dict, **over) -> dict:
    t = copy.deepcopy(s)
    for k, v in over.items():
        t[k] = {**t[k], **v} if isinstance(v, dict) and k != "coordination" else v
    return t


def test_a_lost_request_is_said_lost():
    q = {"to": 1, "leader": 0, "epoch": 2, "isr": [0], "version_current": True}
    b = _state(
        alive={"r1": False},
        coordination={"leader": 0, "leader_epoch": 2, "isr": [0]},
        leader_and_isr_in_flight=[q],
    )
    a = _after(b, leader_and_isr_in_flight=[])
    assert story.sentence("NetworkLoseLeaderAndIsr", {"replica": 1, "epoch": 2}, b, a) == (
        "The LeaderAndIsr request to broker 1 (epoch 2, leader 0) is lost: the controller drops "
        "the queue of broker 1, which crashed; broker 1 never learns of epoch 2."
    )


def test_a_deposed_leader_takes_a_write():
    """The 14-step trace's step 3: broker 0 was moved off leadership by a controlled shutdown
    (the controller is at epoch 2) and, not knowing, appends a record."""
    lines = [
        json.loads(x) for x in (DATA / "hw-truncation-14-steps.ndjson").read_text().splitlines()
    ]
    b, step = lines[3]["state"], lines[4]
    assert story.sentence(step["action"], step["args"], b, step["state"]) == (
        "The producer sends record 1 to broker 0, a deposed leader still at epoch 1 (the "
        "controller is at epoch 2), which appends it at offset 0; it waits until the ISR has it "
        "(acks=all)."
    )
    assert ("deposed leader (epoch 1 < 2)", "warn") in story.roles(step["state"], 0)
    assert story.roles(step["state"], 1) == [("leader", "role")]


def test_a_restart_truncates_below_the_isr():
    b = _state(log={"r1": [[1, 1]]}, alive={"r1": False}, hw={"r1": 0})
    a = _after(b, log={"r1": []}, alive={"r1": True})
    assert story.sentence("BrokerRestart", {"replica": 1}, b, a) == (
        "Broker 1 restarts and reads its HW checkpoint, 0, truncating its log to it and dropping "
        "record 1 at offset 0, while the controller still counts it in the ISR."
    )


def test_a_fetch_that_commits_says_the_record_is_acknowledged():
    b = _state(log={"r0": [[1, 1]], "r1": [[1, 1]]}, pending_acks={"r0": [0]})
    a = _after(b, hw={"r0": 1, "r1": 1}, pending_acks={"r0": []}, acked_all=[[0, 1]])
    assert story.sentence("FollowerFetch", {"follower": 1, "leader": 0}, b, a) == (
        "Follower 1 fetches from leader 0 and finds nothing new to copy; leader 0's HW and its "
        "own move from 0 to 1; record 1 at offset 0 acknowledged to the producer (acks=all)."
    )


def test_an_election_names_what_the_new_leader_lacks():
    b = _state(
        log={"r0": [[1, 1]], "r1": []},
        hw={"r0": 1},
        alive={"r0": False},
        leader_view={"r0": -1},
        acked_all=[[0, 1]],
    )
    a = _after(b, coordination={"leader": 1, "leader_epoch": 2, "isr": [1]})
    assert story.sentence("ControllerElectLeader", {"leader": 1}, b, a) == (
        "The controller elects replica 1 leader at epoch 2 (ISR [1]) in place of broker 0, which "
        "crashed; replica 1's log lacks offset 0 (record 1, acknowledged to the producer)."
    )


def test_positional_arguments_are_named():
    b = _state(log={"r0": [[1, 1]]}, hw={"r0": 1})
    a = _after(b, hw_checkpoint={"r0": 1})
    assert story.sentence("BrokerCheckpointHw", [0], b, a) == (
        "Broker 0 writes its HW, 1, to its checkpoint file."
    )


def test_an_unknown_action_gets_the_fallback():
    b = _state()
    a = _after(b, hw={"r0": 1})
    assert story.sentence("OperatorResetsHw", {"replica": 0}, b, a) == (
        "OperatorResetsHw(replica=0), an action this page does not describe, changes hw of "
        "replica 0."
    )


def test_a_step_the_sentence_cannot_read_gets_the_fallback():
    """A known action whose arguments do not fit (another spec version, a hand-edited file)."""
    b = _state()
    assert story.sentence("BrokerCrash", {"broker": 0}, b, b) == (
        "BrokerCrash(broker=0), an action this page does not describe, changes nothing."
    )


def test_zombie_and_stale_zk_version_are_roles():
    s = _state(
        session_expired=[0],
        zk_version_current={"r0": False},
        coordination={"leader": 0, "leader_epoch": 2, "isr": [0]},
    )
    assert story.roles(s, 0) == [
        ("leader at an old epoch (1 < 2)", "warn"),
        ("zombie (session expired)", "warn"),
        ("stale zkVersion: ISR writes fail", "warn"),
    ]
    assert story.roles(_state(alive={"r1": False}), 1) == [("crashed", "dead")]


def test_every_action_of_the_spec_has_a_sentence():
    """A new action in spec/actions/ needs its sentence here (the fallback is for unknown ones)."""
    missing = sorted({a.name for a in ACTIONS} - set(story.SENTENCES))
    assert not missing, f"no sentence for {missing}: add one to cli/story.py"


@pytest.mark.parametrize(
    "config",
    [
        {"protocol": "kip-320", "session_expiries": 1, "controller_failovers": 1},
        {"protocol": "kip-101", "retries": 1, "retention": True, "acks": "mixed"},
        {"protocol": "kraft", "lose_unflushed": True},
    ],
)
def test_random_walks_are_told_without_the_fallback(config):
    """Steps of real runs: each known action is told by its own sentence, none falls back."""
    model = IsrSpec(Config(replicas=3, records=2, epochs=3, crashes=2, **config).validate())
    rng = random.Random(7)
    for _walk in range(4):
        s = rng.choice(model.init_states())
        for _ in range(20):
            succ = model.successors(s)
            if not succ:
                break
            action, t = rng.choice(succ)
            d = model.describe_action(action)
            text = story.sentence(
                d["action"], d["args"], model.state_to_json(s), model.state_to_json(t)
            )
            assert "does not describe" not in text and text.endswith("."), text
            s = t
