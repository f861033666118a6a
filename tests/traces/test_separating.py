"""Separating scenarios (issue 27, item 2): the shipped stories are what the checker derives
(the cheap ones re-derived here), the kit runs them by default, and one of them rejects an
implementation bug that defines a protocol version."""

from __future__ import annotations

import pytest
from isr.impl.adapter import Session
from isr.spec.protocols import PROTOCOLS
from isr.traces.conformance import separating as sep
from isr.traces.conformance.runner import InProcess, default_scenarios, run_scenario_full

DATA = sep.load()
REGENERATE = f"stale {sep.DATA.name}: regenerate with `{sep.COMMAND}`"


def _shipped(claimed: str, weaker: str) -> list[dict]:
    return [s for s in DATA["stories"].get(claimed, []) if s["weaker"] == weaker]


def _key(s: dict) -> tuple:
    return (s["weaker"], s["property"], s.get("branch"), s["steps"], s["path"])


def test_the_cheap_stories_are_what_the_checker_derives() -> None:
    """kraft without the maximal ISR (two small complete searches) and kip-101's stories
    through the branches of KIP-279's truncation rule (a sub-model's graph, a few seconds)."""
    got = sep.derive("kraft", only="kraft-no-maximal-isr")
    assert [_key(s) for s in got] == [_key(s) for s in _shipped("kraft", "kraft-no-maximal-isr")], (
        REGENERATE
    )
    assert got and all(s["claimed_states"] > 0 for s in got)
    branches = sep._branch_stories("kip-320", "kip-101")
    shipped = [s for s in _shipped("kip-320", "kip-101") if s.get("branch")]
    assert [_key(s) for s in branches] == [_key(s) for s in shipped], REGENERATE
    assert [s["schedule_path"] for s in branches] == [s["schedule_path"] for s in shipped]
    # no-common-epoch has no story since kip-320 answers as Kafka 2.1 (KAFKA-7415): its cut
    # differs from kip-101's (to the HW) only when the follower's HW covers records the leader
    # lacks, a state no fenced run reaches; the branch is still counted in coverage
    assert {s["branch"] for s in branches} == {"walk-back", "cap-by-own-end"}


def test_only_stories_of_weaker_versions_the_claimed_one_survives() -> None:
    assert sep.weaker_versions("kip-320") == ["kip-279", "kip-101", "hw-truncation"]
    assert sep.weaker_versions("kraft") == []  # kraft's ancestors are of another family
    for claimed, stories in DATA["stories"].items():
        for s in stories:
            assert s["claimed"] == claimed and s["weaker"] != claimed
            if s["claimed_states"] is not None:  # a complete search of the claimed version
                assert s["claimed_states"] > 0
    assert DATA["stories"]["hw-truncation"] == []  # nothing is weaker than the seeds'


def test_truncation_branches_follow_the_spec_rule() -> None:
    k279, k320 = PROTOCOLS["kip-279"], PROTOCOLS["kip-320"]
    # leader [a1 b1 x3] at epoch 3; follower [a1 c2]: common epoch 1 ends at 1 on the follower
    lead = ((1, 1), (2, 1), (9, 3))
    for proto in (k279, k320):
        assert sep.truncation_branches(proto, ((1, 1), (3, 2)), lead, 3) == {"cap-by-own-end"}
    # the leader has not written in epoch 3: 2.0's leader has no epoch above 2 (UNDEFINED),
    # 2.1's has epoch 3 from becoming leader (KAFKA-7415)
    lead = ((1, 1), (2, 1))
    assert sep.truncation_branches(k279, ((1, 1), (3, 2)), lead, 3) == {"no-common-epoch"}
    assert sep.truncation_branches(k320, ((1, 1), (3, 2)), lead, 3) == {"cap-by-own-end"}
    # follower [a1 c3] never had epoch 2: it walks back past it
    lead = ((1, 1), (2, 2), (9, 4))
    for proto in (k279, k320):
        assert sep.truncation_branches(proto, ((1, 1), (3, 3)), lead, 4) == {"walk-back"}
    # follower [c2] never had epoch 1 nor anything older: it walks back past it (2.0 to the
    # leader's end of epoch 1, keeping c2; 2.1 to its first entry)
    for proto in (k279, k320):
        assert sep.truncation_branches(proto, ((2, 2),), ((1, 1), (9, 3)), 3) == {"walk-back"}
    assert k279.truncation_offset(((2, 2),), 0, ((1, 1), (9, 3)), 3) == 1
    assert k320.truncation_offset(((2, 2),), 0, ((1, 1), (9, 3)), 3) == 0
    # the leader has nothing as old as epoch 1
    for proto in (k279, k320):
        assert sep.truncation_branches(proto, ((1, 1),), ((2, 2),), 3) == {"no-common-epoch"}


def test_the_kit_runs_them_by_default() -> None:
    names = set(default_scenarios("kip-320"))
    want = {sep.name_of(s) for s in DATA["stories"]["kip-320"]}
    assert want and want <= names
    assert "separating:kip-101:StrongIsr" in names


@pytest.mark.parametrize(
    ("mutant", "verdict"), [(None, "accepted"), ("no-epoch-walk-back", "rejected")]
)
def test_kip101s_walk_back_story_separates_kip320_from_kip101(
    mutant: str | None, verdict: str
) -> None:
    """KIP-101's divergence through KIP-279's walk back (three elections, no crash), reordered
    for an adapter and run with the replica link cut until the truncation: the reference
    kip-320 survives it, a follower that does not walk back cuts where the spec never does.
    (kip-279 has no such story since it answers as Kafka 2.0: at two replicas and three epochs
    a follower lacking the leader's answered epoch has none older, and 2.0 then cuts to the
    leader's end offset as the mutant does; kip-101's divergence breaks kip-279 too.)"""
    sc = sep.separating_scenarios("kip-320")["separating:kip-101:StrongIsr:walk-back"]
    v, _out = run_scenario_full(InProcess(Session(mutant)), sc, "s", 0, "kip-320")
    assert v.verdict == verdict, v.reason
    if mutant:
        assert "FollowerTruncate" in v.reason


def test_the_kip279_mutant_dies_on_the_cap_story_only() -> None:
    """Issue 27's bug: a KIP-279 follower that truncates to the leader's end of the common
    epoch without capping it by its own end. The story through KIP-279's cap-by-own-end branch
    is the one it fails, and the reference survives it; the walk-back story never reaches the
    cap."""
    sc = sep.separating_scenarios("kip-279")["separating:kip-101:StrongIsr:cap-by-own-end"]
    ref, _ = run_scenario_full(InProcess(Session(None)), sc, "s", 0, "kip-279")
    assert ref.verdict == "accepted", ref.reason
    mu, _ = run_scenario_full(
        InProcess(Session("kip279-uncapped-truncation")), sc, "s", 0, "kip-279"
    )
    assert mu.verdict == "rejected" and "FollowerTruncate" in mu.reason, mu.reason
    walk, _ = run_scenario_full(
        InProcess(Session("kip279-uncapped-truncation")),
        sep.separating_scenarios("kip-320")["separating:kip-101:StrongIsr:walk-back"],
        "s",
        0,
        "kip-320",
    )
    assert walk.verdict == "accepted", walk.reason  # the walk-back story never reaches the cap


def test_coverage_names_the_truncation_branches_taken() -> None:
    """Coverage in the spec's terms (issue 27, item 3): the cap story's trace takes KIP-279's
    cap-by-own-end branch, the walk-back story's only walks back."""
    got = {}
    for claimed, name in (
        ("kip-279", "separating:kip-101:StrongIsr:cap-by-own-end"),
        ("kip-320", "separating:kip-101:StrongIsr:walk-back"),
    ):
        sc = sep.separating_scenarios(claimed)[name]
        v, out = run_scenario_full(InProcess(Session(None)), sc, "s", 0, claimed)
        assert v.verdict == "accepted", v.reason
        got[claimed] = sep.branches_in_trace(PROTOCOLS[claimed], out.events)
    assert "cap-by-own-end" in got["kip-279"]
    assert got["kip-320"] == {"walk-back"}


# ---- kraft: each flag's mutant dies on its fix's story (issue 27, done-when) -----------------
KRAFT_STORIES = sep.separating_scenarios("kraft")
# the mutant (impl/mutants.py KRAFT_MUTANTS, Mutant.variant) -> the event its story catches
KRAFT_KILLS = {
    "hw-over-proposed-isr": "LeaderSendAlterPartition",  # the HW passes the member on its way out
    "count-diverging-fetch": "diverging",  # the leader counts the diverging fetch's offset
    "follower-reads-to-leo": "ConsumerFetch(replica=0",  # the deposed leader's record shown
    "hw-ignores-min-isr": "ControllerHandleAlterPartition",  # the HW moves below min ISR
    # the diverging answer's HW taken before the truncation: the read in between shows m0
    "hw-before-truncation": "ConsumerFetch(replica=0, offset=0, records=['m0'])",
    # the follower added back on its previous incarnation's fetch, after its new registration
    "no-broker-epoch-check": "ControllerHandleAlterPartition(leader=0, accepted=True)",
}


def test_every_kraft_mutant_with_a_variant_is_listed() -> None:
    from isr.impl.mutants import KRAFT_MUTANTS

    assert {m for m, mu in KRAFT_MUTANTS.items() if mu.variant} == set(KRAFT_KILLS)
    shipped = {s["weaker"] for s in DATA["stories"]["kraft"]}
    assert {KRAFT_MUTANTS[m].variant for m in KRAFT_KILLS} <= shipped


@pytest.mark.parametrize("mutant", sorted(KRAFT_KILLS))
def test_each_kraft_mutant_dies_on_its_fixs_story(mutant: str) -> None:
    """A mutant of the reference implementation written for a flag of kraft is rejected by
    every separating story of that flag's variant (the story holds the replica it keeps apart
    and is retold for an adapter), at the step the bug changes; the reference survives each."""
    from isr.impl.mutants import KRAFT_MUTANTS

    variant = KRAFT_MUTANTS[mutant].variant
    own = {n: sc for n, sc in KRAFT_STORIES.items() if n.startswith(f"separating:{variant}:")}
    assert own
    for name, sc in own.items():
        ref, _ = run_scenario_full(InProcess(Session(None)), sc, name, 0, "kraft")
        assert ref.verdict == "accepted", (name, ref.reason)
        v, _ = run_scenario_full(InProcess(Session(mutant)), sc, name, 0, "kraft")
        assert v.verdict == "rejected", (name, v.reason)
        assert KRAFT_KILLS[mutant] in v.reason, (name, v.reason)


def test_a_kraft_story_holds_the_replica_it_keeps_apart() -> None:
    """kraft without the maximal ISR (2 steps): the follower is paused from the start (the
    kraft adapters cannot cut a link) and the leader's shrink waits for the lag time."""
    sc = KRAFT_STORIES["separating:kraft-no-maximal-isr:StrongIsr"]
    assert sc[0]["op"] == "start" and sc[0]["session_timeout_ms"] == 2000
    assert sc[1] == {"op": "pause", "broker": 1, "ms": 1500}
    assert {"op": "run", "ms": 460} in sc
    assert {"op": "resume", "broker": 1} in sc


def test_kip903s_story_is_retold_at_the_followers_crash() -> None:
    """KIP-903 (15 steps, NoAckedLoss and NoCommittedLoss): the leader proposes follower 1 on a fetch of its previous
    incarnation (stale_expansions finds the proposal, the crash before it, the restart and
    registration before the controller's decision); the crash step holds 1 until its next
    fetch is parked at the leader, then 1 loses power, restarts at once and is held, and its
    later restart and registration steps are taken there."""
    from isr.traces.conformance.from_counterexample import stale_expansions

    stories = {s["property"]: s for s in _shipped("kraft", "kraft-no-kip-903")}
    assert {p: s["steps"] for p, s in stories.items()} == {
        "NoAckedLoss": 15,  # (NoCommittedLoss's too: one story per path)
        "NoPhantomRead": 16,
        "MonotonicReads": 17,
    }
    story = stories["NoAckedLoss"]
    path = story["schedule_path"]
    ((c, k, f, ld, r, g),) = stale_expansions(path)
    assert (path[c][0], path[k][0], path[r][0], path[g][0]) == (
        "BrokerCrash", "LeaderSendAlterPartition", "BrokerRestart", "BrokerRegister",
    )  # fmt: skip
    assert (f, ld) == (1, 0) and c < k < r < g
    sc = KRAFT_STORIES["separating:kraft-no-kip-903:NoAckedLoss"]
    at = sc.index({"op": "power_fail", "broker": 1})
    assert sc[at - 2 : at + 3] == [
        {"op": "pause", "broker": 1, "ms": 80},
        {"op": "run", "ms": 90},
        {"op": "power_fail", "broker": 1},
        {"op": "restart", "broker": 1},
        {"op": "pause", "broker": 1, "ms": 1500},
    ]
    assert {"op": "restart", "broker": 1} not in sc[at + 3 : sc.index({"op": "heal"})]


def test_conform_mutants_names_each_kraft_mutants_story(capsys) -> None:
    """`isr conform --protocol kraft --mutants` at its defaults (the reference adapter, 20
    random schedules): the reference passes every scenario, every kraft mutant is killed, and
    the report names, for each mutant of a flag, its fix's separating scenario among those
    that reject it."""
    import json

    from isr.cli.main import main
    from isr.impl.mutants import KRAFT_MUTANTS

    assert main(["conform", "--protocol", "kraft", "--mutants", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["reference"]["accepted"] is True and "rejected" not in doc["reference"]["counts"]
    assert doc["killed"] == doc["total"] == len(KRAFT_MUTANTS)
    by = {m["name"]: m for m in doc["mutants"]}
    # the first scenario that killed each (deterministic: spec paths and directed ones first,
    # seed 0); the two mutants of flags whose removal the checker finds no story for (class
    # (c) in docs/conformance.md) die on the trace alone
    first = {m: r["reason"].split(":")[0] + ":" + r["reason"].split(":")[1] for m, r in by.items()}
    assert first == {
        "count-diverging-fetch": "directed:reordered-requests",
        "follower-reads-to-leo": "separating:kraft-follower-reads-to-leo",
        "fresh-hw-in-response": "spec:BrokerApplyPartitionChange",
        # (its truncation event's HW: the one taken before, capped by the truncation)
        "hw-before-truncation": "directed:reordered-requests",
        "hw-ignores-min-isr": "directed:reordered-requests",
        "hw-over-proposed-isr": "directed:lagging-follower-rejoins",
        "no-stale-fetch-fence": "spec:ControllerShutdownBroker",
        # only its fix's stories reach a stale expansion
        "no-broker-epoch-check": "separating:kraft-no-kip-903",
        # the log start's (issue 28 item 3): kraft's logstart scenarios, no story shipped yet
        "retention-beyond-hw": "logstart:retention-while-hw-lags",
        "hw-below-log-start-on-reset": "logstart:follower-reset-to-log-start",
        # reassignment's (issue 28 item 1): kraft's reassign scenarios, no story shipped yet
        "reassign-below-min-isr": "reassign:min-isr-2-waits",
        "reassign-before-isr": "reassign:follower-to-spare",
        # the idempotent producer's (issue 28 item 4): its idempotent:* scenarios, every version
        "idem-append-retry-again": "idempotent:lost-reply-duplicate",
        "idem-duplicate-window-off-by-one": "idempotent:lost-reply-duplicate",
        "idem-state-not-rebuilt": "idempotent:lost-reply-new-leader",
    }
    for name in KRAFT_KILLS:
        own = [
            s for s in by[name]["separating"] if s.startswith(f"separating:{by[name]['variant']}:")
        ]
        assert own, by[name]
