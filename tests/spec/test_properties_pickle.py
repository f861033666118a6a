"""Every property of every built-in protocol version pickles (issue 13: spec/properties.py is
compiled, and the Spark engine ships the properties with cloudpickle, which cannot pickle a
compiled closure): each check is a module-level function or an instance of a module-level class,
and a copy read back from ``pickle`` or ``pyspark.cloudpickle`` gives the same answers as the
original on states and transitions of the model."""

from __future__ import annotations

import pickle
from dataclasses import fields

import pytest
from isr.spec import Config, IsrSpec
from isr.spec.properties import TypeOk
from isr.spec.protocols import KRAFT, PROTOCOLS

cloudpickle = pytest.importorskip("pyspark.cloudpickle")

SMALL = {"replicas": 2, "records": 1, "epochs": 2, "crashes": 1}
# every fault mode and flag the version takes (kraft models no session expiry; its operator's
# DeleteRecords is kraft's only), with Available on: every property a model can state
FAULTS = {
    "unclean": True,
    "lose_unflushed": True,
    "retries": 1,
    "idempotence": True,
    "controller_failovers": 1,
    "availability": True,
    "retention": True,
}
ZK_ONLY = {"session_expiries": 1}
KRAFT_ONLY = {"delete_records": 1}
# kraft's guards, each put back to its bug (KRAFT.variant), plus the version as it is
KRAFT_FLAGS = sorted(
    k for k, v in vars(type(KRAFT)).items() if isinstance(v, bool) and k != "split_fetch"
)


def _models() -> list[tuple[str, IsrSpec]]:
    out = []
    for name, proto in PROTOCOLS.items():
        out.append((name, IsrSpec(Config(protocol=name, **SMALL))))
        extra = KRAFT_ONLY if proto.split_fetch else ZK_ONLY
        out.append((f"{name}+faults", IsrSpec(Config(protocol=name, **SMALL, **FAULTS, **extra))))
        out.append((f"{name}+acks1", IsrSpec(Config(protocol=name, **SMALL, acks="1"))))
    for flag in KRAFT_FLAGS:
        variant = KRAFT.variant(**{flag: not getattr(KRAFT, flag)})
        out.append((f"kraft-{flag}", IsrSpec(Config(protocol="kraft", **SMALL), variant)))
    return out


MODELS = _models()


def _sample(m: IsrSpec, limit: int = 150) -> tuple[list, list]:
    """The first ``limit`` states breadth first (canonical) and the transitions out of them."""
    seen: dict = {}
    frontier = [m.canonicalize(s) for s in m.init_states()]
    transitions = []
    while frontier and len(seen) < limit:
        nxt = []
        for s in frontier:
            if s in seen or len(seen) >= limit:
                continue
            seen[s] = None
            for a, t in m.successors(s):
                transitions.append((s, a, t))
                nxt.append(m.canonicalize(t))
        frontier = nxt
    return list(seen), transitions


def _answers(p, states: list, transitions: list) -> list:
    if p.kind == "eventually":
        out = []
        for s in states:
            tokens = sorted(p.trigger(s)) if p.trigger is not None else [None]
            out.append([(x, p.check(s, x) if x is not None else p.check(s)) for x in tokens])
        return out
    if p.kind == "action" or p.on_transitions:
        return [p.check(s, a, t) for s, a, t in transitions]
    return [p.check(s) for s in states]


def test_the_sample_covers_every_kind_of_check():
    """The models above state every property the spec has (so the round trip below sees every
    class and function), and the kraft variants are all distinct flags."""
    names = {p.name for _, m in MODELS for p in m.properties}
    assert {
        "TypeOK",
        "IsrWithinAssigned",
        "Available",
        "SometimesIsrShrinkAndExpand",
        "SometimesLeaderChange",
        "SometimesLogStartReset",
        "MonotonicReads",
        "HwMonotonic",
        "AcksAllAnswered",
    } <= names
    assert len(KRAFT_FLAGS) >= 10 and "response_guard" in KRAFT_FLAGS


@pytest.mark.parametrize("label,model", MODELS, ids=[label for label, _ in MODELS])
def test_every_property_round_trips_and_answers_the_same(label: str, model: IsrSpec):
    states, transitions = _sample(model)
    assert len(states) > 20 and transitions
    for p in model.properties:
        check = p.check
        # by reference: a module-level function or class, never a closure or a lambda
        qualname = getattr(check, "__qualname__", type(check).__qualname__)
        assert "<locals>" not in qualname and "<lambda>" not in qualname, (p.name, qualname)
        before = _answers(p, states, transitions)
        for dumps, loads in ((pickle.dumps, pickle.loads), (cloudpickle.dumps, cloudpickle.loads)):
            q = loads(dumps(p))
            assert [
                getattr(q, f.name) for f in fields(q) if f.name not in ("check", "trigger")
            ] == [getattr(p, f.name) for f in fields(p) if f.name not in ("check", "trigger")]
            assert type(q.check) is type(check)
            assert _answers(q, states, transitions) == before, (label, p.name)


def test_type_ok_leaves_its_cache_out_of_the_pickle_and_still_fails_a_bad_state():
    m = IsrSpec(Config(protocol="kip-320", **SMALL))
    type_ok = next(p.check for p in m.properties if p.name == "TypeOK")
    assert isinstance(type_ok, TypeOk)
    states, _ = _sample(m)
    assert all(type_ok(s) for s in states)
    assert type_ok.good_replicas  # memoised replicas
    for dumps, loads in ((pickle.dumps, pickle.loads), (cloudpickle.dumps, cloudpickle.loads)):
        copy = loads(dumps(type_ok))
        assert copy.good_replicas == set()
        assert all(copy(s) for s in states)
        s = states[-1]
        bad = [
            s._replace(coord=s.coord._replace(leader=2)),  # no replica 2
            s._replace(replicas=(s.replicas[0]._replace(epoch=3), *s.replicas[1:])),  # > epochs
            s._replace(replicas=s.replicas[:1]),
        ]
        assert [copy(b) for b in bad] == [type_ok(b) for b in bad] == [False] * 3
    # a pickle is as small as its plain fields: the memo is not in it
    assert len(pickle.dumps(type_ok)) < 400
