"""Idempotent-producer traces validated with the spec's --idempotence (issue 28 item 4; R6,
R15): the reference's idempotent runs are accepted in every version, a broker whose duplicate
check or producer state is broken is rejected with the rule it breaks, and a trace that does
not observe the producer keeps the old mapping (VALIDATION.md, decision 7)."""

from __future__ import annotations

import pytest
from isr.impl.adapter import Session
from isr.impl.mutants import IDEMPOTENT_MUTANTS, KRAFT_MUTANTS, MUTANTS
from isr.traces.conformance.runner import InProcess, run_scenario_full, schema_problem
from isr.traces.conformance.scenarios import idempotent_scenarios
from isr.traces.validator.mapping import derive_config
from isr.traces.validator.validate import split_partitions, validate_events

SCENARIOS = idempotent_scenarios()


def _run(protocol: str, name: str, mutant: str | None = None):
    return run_scenario_full(InProcess(Session(mutant)), SCENARIOS[name], name, 0, protocol)


@pytest.mark.parametrize("protocol", ["kip-320", "kraft", "hw-truncation"])
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_reference_idempotent_runs_are_accepted(protocol: str, name: str) -> None:
    v, out = _run(protocol, name)
    assert v.verdict == "accepted", (v.reason, v.mismatches)
    assert not schema_problem(out.header, out.events)
    # the retry was answered DUPLICATE with the original offset, and mapped with --idempotence
    dups = [e for e in out.events if e["action"] == "ProducerSend" and e["args"].get("duplicate")]
    assert dups and {"ProducerSend", "ProducerCompleteBatch"} <= v.fired
    evs = split_partitions(out.header, out.events)["t-0"]
    cfg = derive_config(out.header, evs, 3)
    assert cfg.idempotence and cfg.retries >= 1
    # the log entries carry the batch header, compared with the spec's
    assert any(
        len(x) == 4 for e in out.events for x in (e.get("state") or {}).get("log_append", [])
    )


def test_duplicate_in_new_leader_is_answered_with_the_original_offset() -> None:
    _v, out = _run("kip-320", "idempotent:lost-reply-new-leader")
    dup = next(e for e in out.events if e["args"].get("duplicate"))
    first = next(
        e
        for e in out.events
        if e["action"] == "ProducerSend" and e["args"]["records"] == dup["args"]["records"]
    )
    assert dup["node"] != first["node"]  # the new leader learned the batch as a follower
    assert dup["args"]["base_offset"] == first["args"]["base_offset"]


@pytest.mark.parametrize("protocol", ["kip-320", "kraft"])
@pytest.mark.parametrize("mutant", sorted(IDEMPOTENT_MUTANTS))
def test_broken_producer_state_is_rejected_naming_the_rule(protocol: str, mutant: str) -> None:
    assert mutant in MUTANTS and mutant in KRAFT_MUTANTS  # (isr conform --mutants runs them)
    v, _out = _run(protocol, "idempotent:lost-reply-new-leader", mutant)
    assert v.verdict == "rejected"
    why = " ".join(v.mismatches)
    if mutant == "idem-duplicate-window-off-by-one":
        assert "OUT_OF_ORDER_SEQUENCE_NUMBER" in why and "producer-state rule" in why
        assert "answers DUPLICATE" in why
    else:
        assert "NoDuplicates" in why and "holds that batch at offset 2" in why


def test_without_the_producer_observed_the_old_mapping_accepts_a_duplicate_append() -> None:
    """Why the producer must be observed: mapped as before (decision 7), a leader appending a
    retry again is a new send and passes; with the producer's events it is rejected."""
    _v, out = _run("kip-320", "idempotent:lost-reply-duplicate", "idem-append-retry-again")
    head = dict(out.header)
    head["observed"] = [k for k in head["observed"] if k != "producer"]
    old = validate_events(head, out.events, "old")
    assert old.verdict == "accepted"
    assert validate_events(out.header, out.events, "new").verdict == "rejected"


def test_the_old_mapping_skips_duplicates_and_the_producers_steps() -> None:
    _v, out = _run("kraft", "idempotent:retries-while-leaders-change")
    head = dict(out.header, observed=[k for k in out.header["observed"] if k != "producer"])
    assert validate_events(head, out.events, "old").verdict == "accepted"


def test_a_forged_batch_header_is_rejected() -> None:
    _v, out = _run("kip-320", "idempotent:lost-reply-duplicate")
    evs = [dict(e) for e in out.events]
    k = next(i for i, e in enumerate(evs) if e["action"] == "ProducerSend")
    evs[k] = dict(evs[k], args=dict(evs[k]["args"], base_sequence=1))
    v = validate_events(out.header, evs, "forged")
    assert v.verdict == "rejected" and "sequence 1" in " ".join(v.mismatches)


def test_producer_steps_must_be_at_the_producer() -> None:
    _v, out = _run("kip-320", "idempotent:lost-reply-duplicate")
    evs = [dict(e) for e in out.events]
    k = next(i for i, e in enumerate(evs) if e["action"] == "ProducerCompleteBatch")
    evs[k]["node"] = 0
    assert validate_events(out.header, evs, "bad").verdict == "bad-input"


def test_a_reassignment_under_the_idempotent_producer_is_unsupported_not_a_crash() -> None:
    """The spec does not combine kraft's reassignments with the idempotent producer (its
    ConfigError); a trace with both is an unsupported verdict (exit 2), never a traceback:
    `isr conform --protocol kraft --idempotence` draws reassignments in its random schedules."""
    from isr.traces.conformance.scenarios import IDEMPOTENT_START, reassign_scenarios

    name, cmds = next(iter(sorted(reassign_scenarios().items())))
    cmds = [{**cmds[0], **IDEMPOTENT_START}, *cmds[1:]]
    v, out = run_scenario_full(InProcess(Session(None)), cmds, name, 0, "kraft")
    assert any(e["action"] == "OperatorReassignPartition" for e in out.events)
    assert v.verdict == "unsupported" and "spec-config" in v.reason, v.reason
