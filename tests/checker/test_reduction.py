"""The dead-state reduction (spec.model.IsrSpec ``reduction="dead-state"``, docs/reduction.md):
every verdict and every counterexample length the same as without it, on pinned models of every
kind of protocol version and fault mode; fewer states; counterexamples still concrete paths
(replayed step by step by the spec); refused where its argument does not hold."""

from __future__ import annotations

import pytest
from isr.checker.bfs import check_bfs
from isr.checker.parallel import check_parallel
from isr.spec import Config, IsrSpec
from isr.spec.codec import state_from_json
from isr.spec.protocols import get_protocol

MODELS = [
    # (config, distinct states without, with the reduction)
    (dict(protocol="kip-320", replicas=2, records=1, epochs=3, crashes=2), 34_618, 28_064),
    (dict(protocol="hw-truncation", replicas=2, records=1, epochs=2, crashes=1), 3_361, 2_025),
    (dict(protocol="kip-101", replicas=2, records=1, epochs=3, crashes=1), None, None),
    (dict(protocol="kip-279", replicas=2, records=1, epochs=3, crashes=1), None, None),
    (dict(protocol="original-design", replicas=2, records=1, epochs=2, crashes=1), None, None),
    (dict(protocol="kafka-0.10", replicas=2, records=1, epochs=2, crashes=1), None, None),
    (
        dict(protocol="kip-320", replicas=2, records=1, epochs=2, crashes=1, lose_unflushed=True),
        # 9,091 and 3,503 before kip-320's answers were Kafka 2.1's (KAFKA-7415): a follower
        # asking below every epoch of a leader that lost its unflushed records cuts to the
        # leader's first offset, not its HW
        9_067,
        3_497,
    ),
    (
        dict(protocol="kip-320", replicas=2, records=1, epochs=2, crashes=1, unclean=True),
        None,
        None,
    ),
    (
        dict(protocol="kip-320", replicas=2, records=1, epochs=2, crashes=1, retention=True),
        None,
        None,
    ),
    (
        dict(protocol="kip-966", replicas=2, records=1, epochs=2, crashes=1, lose_unflushed=True),
        None,
        None,
    ),
    (dict(protocol="kip-320", replicas=3, records=1, epochs=2, crashes=0), None, None),
    (
        dict(protocol="kip-320", replicas=2, records=1, epochs=2, crashes=1, session_expiries=1),
        None,
        None,
    ),
    (
        dict(
            protocol="kip-320", replicas=2, records=1, epochs=2, crashes=1, controller_failovers=1
        ),
        None,
        None,
    ),
    (
        dict(protocol="kip-320", replicas=2, records=1, crashes=1, retries=1, idempotence=True),
        None,
        None,
    ),
    (dict(protocol="kip-320", replicas=2, records=1, crashes=1, acks="mixed"), None, None),
    (dict(protocol="kraft", replicas=2, records=1, epochs=2, crashes=0), None, None),
    (dict(protocol="kraft-3.7", replicas=2, records=1, epochs=1, crashes=1), None, None),
    (dict(protocol="majority-quorum", replicas=3, records=1, epochs=2, crashes=1), None, None),
]


def verdicts(res) -> dict:
    return {
        p.name: (p.holds, p.counterexample.length if p.counterexample else None, p.note)
        for p in res.properties
    }


@pytest.mark.parametrize(("cfg", "full", "reduced"), MODELS, ids=lambda v: str(v))
def test_every_verdict_and_length_is_kept(cfg, full, reduced):
    plain = check_bfs(IsrSpec(Config(**cfg)))
    model = IsrSpec(Config(**cfg), reduction="dead-state")
    small = check_bfs(model)
    assert verdicts(small) == verdicts(plain)
    # (the depth may shrink: a state that took extra checkpoint steps to reach is merged with
    # one reached sooner)
    assert small.depth <= plain.depth and small.complete and plain.complete
    assert small.distinct_states <= plain.distinct_states
    if full is not None:
        assert (plain.distinct_states, small.distinct_states) == (full, reduced)
    # a counterexample found with the reduction is a real behaviour of the unreduced spec: the
    # spec takes each of its steps from the state before (not merely up to what was forgotten)
    spec = IsrSpec(Config(**cfg))
    for p in small.properties:
        cx = p.counterexample
        if cx is None or cx.states is None:
            continue
        for before, step, after in zip(cx.states, cx.steps, cx.states[1:], strict=False):
            nexts = [t for a, t in spec.successors(spec_state(spec, before))]
            assert spec_state(spec, after) in nexts, (p.name, step)


def spec_state(spec, whole):
    """A counterexample's whole state (JSON) back as the spec's value."""
    return state_from_json(whole)


def test_the_parallel_engine_and_the_disk_store_agree():
    cfg = dict(protocol="hw-truncation", replicas=2, records=1, epochs=2, crashes=1)
    ref = check_bfs(IsrSpec(Config(**cfg), reduction="dead-state"))
    for store in ("memory", "disk"):
        res = check_parallel(IsrSpec(Config(**cfg), reduction="dead-state"), workers=2, store=store)
        assert res.distinct_states == ref.distinct_states == 2_025
        assert verdicts(res) == verdicts(ref)


def test_a_crash_free_model_never_keeps_a_checkpoint_apart():
    """With no crash to spend, every live replica's checkpoint is dead from the start: no two
    states of the reduced model differ only in the HW checkpoint."""
    model = IsrSpec(
        Config(protocol="kip-320", replicas=2, records=2, crashes=0), reduction="dead-state"
    )
    res = check_bfs(model)
    assert res.complete
    assert "BrokerCheckpointHw" in res.actions_never_fired  # always a no-op, so never taken


def test_refused_for_a_version_that_may_read_the_checkpoint():
    proto = get_protocol("kip-320")

    class Mine(type(proto)):
        def become_follower(self, log, hw, hw_ckpt):
            return log[:hw_ckpt], hw_ckpt, hw_ckpt, False

    mine = Mine()
    with pytest.raises(ValueError, match="not known to be sound"):
        IsrSpec(Config(protocol="kip-320"), protocol=mine, reduction="dead-state")
    with pytest.raises(ValueError, match="unknown reduction"):
        IsrSpec(Config(protocol="kip-320"), reduction="magic")


def test_a_checkpoint_names_the_reduction():
    from isr.checker.model import model_identity

    a = model_identity(IsrSpec(Config(), reduction="dead-state"))
    b = model_identity(IsrSpec(Config()))
    assert a["reduction"] == "dead-state" and "reduction" not in b and a != b
