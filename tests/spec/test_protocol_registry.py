"""One registry of protocol versions (issue 15 part 1): spec/protocols/ holds one module per
version, each extending its predecessor, and every other list of names is derived from the
registry or checked against it here (spec.config, spec.symbolic, cli)."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest
from isr.spec import Config, IsrSpec
from isr.spec.actions.common import Ctx
from isr.spec.config import PROTOCOL_NAMES
from isr.spec.protocols import (
    BUILTIN,
    BUILTIN_NAMES,
    DEFAULT_PROTOCOL,
    PROTOCOLS,
    ProtocolVersion,
    get_protocol,
)

ROOT = Path(__file__).resolve().parents[2]

# version -> the version it extends, as the TLA+ modules do (Kip320.tla EXTENDS Kip279.tla)
PARENT = {
    "hw-truncation": None,
    "original-design": "hw-truncation",
    "kafka-0.10": "hw-truncation",
    "kip-101": "hw-truncation",
    "kip-279": "kip-101",
    "kip-320": "kip-279",
    "kip-320-first-try": "kip-279",
    "kip-966": "kip-320",
    "majority-quorum": "kip-320",
    "kraft": "kip-966",
    "kraft-4.0": "kraft",
    "kraft-3.7": "kraft-4.0",
}


def test_one_registry_the_others_derive_from_it():
    assert tuple(p.name for p in BUILTIN) == BUILTIN_NAMES == PROTOCOL_NAMES
    assert [n for n in PROTOCOLS if n in BUILTIN_NAMES] == list(BUILTIN_NAMES)
    assert Config().protocol == DEFAULT_PROTOCOL == "kip-320"
    assert get_protocol(DEFAULT_PROTOCOL) is PROTOCOLS["kip-320"]
    with pytest.raises(KeyError, match="unknown protocol 'kip-999'"):
        get_protocol("kip-999")


def test_each_version_extends_its_predecessor():
    for name, parent in PARENT.items():
        cls = type(PROTOCOLS[name])
        assert cls.name == name
        base = cls.__mro__[1]
        if parent is None:
            assert base is ProtocolVersion, name
        else:
            assert base is type(PROTOCOLS[parent]), (name, base)
    assert set(PARENT) == set(BUILTIN_NAMES)


def test_one_module_per_version_whose_docstring_says_what_it_changed():
    for p in BUILTIN:
        mod = importlib.import_module(type(p).__module__)
        assert mod.__name__ == "isr.spec.protocols." + p.name.replace("-", "_").replace(".", "_")
        assert mod.__doc__ and p.name in mod.__doc__.splitlines()[0]
        if PARENT[p.name]:
            assert "changes from " + PARENT[p.name] in " ".join(mod.__doc__.split()), p.name


def test_the_flags_each_version_declares():
    """The rules as the versions declare them (the table the flags used to be): a change here
    changes a version's meaning."""
    rows = {
        p.name: (
            p.truncate_to_hw_on_become_follower,
            p.truncate_to_hw_on_restart,
            p.fenced_fetch,
            p.isr_join_needs_epoch_start,
            p.new_leader_hw_is_leo,
            p.majority_quorum,
            p.eligible_leader_replicas,
            p.broker_epoch_fencing,
            p.truncate_on_divergence,
            p.walks_back,
            p.split_fetch,
            p.hw_needs_min_isr,
            p.startup_needs_failure,
        )
        for p in BUILTIN
    }
    T, F = True, False
    assert rows == {
        "hw-truncation": (T, T, F, F, F, F, F, F, F, F, F, F, F),
        "original-design": (T, T, F, F, T, F, F, F, F, F, F, F, F),
        "kafka-0.10": (T, F, F, F, F, F, F, F, F, F, F, F, T),
        "kip-101": (F, F, F, F, F, F, F, F, F, F, F, F, T),
        "kip-279": (F, F, F, F, F, F, F, F, F, T, F, F, T),
        "kip-320-first-try": (F, F, F, T, F, F, F, F, T, T, F, F, T),
        "kip-320": (F, F, T, T, F, F, F, F, F, T, F, F, T),
        "kip-966": (F, F, T, T, F, F, T, T, F, T, F, T, F),
        "majority-quorum": (F, F, T, F, F, T, F, F, F, T, F, F, F),
        "kraft": (F, F, T, T, F, F, T, T, F, T, T, T, F),
        "kraft-4.0": (F, F, T, T, F, F, F, T, F, T, T, T, F),
        "kraft-3.7": (F, F, T, T, F, F, F, T, F, T, T, T, F),
    }


def test_hooks_are_bound_once_per_model():
    ctx = IsrSpec(Config(replicas=2, records=1)).ctx
    proto = PROTOCOLS["kip-320"]
    assert ctx.protocol is proto
    for hook in ("become_follower", "on_restart", "truncation_offset"):
        assert getattr(ctx, hook).__self__ is proto, hook
    log = (("a", 1), ("b", 2))
    assert ctx.isr_join_floor(log, 2, 0) == proto.isr_join_floor(log, 2, 0) == 1
    assert ctx.isr_join_floor(log, 3, 0) == proto.isr_join_floor(log, 3, 0) == 2
    old279 = Ctx.of(Config(replicas=2, records=1, protocol="kip-279"))
    assert old279.isr_join_floor(log, 2, 0) == PROTOCOLS["kip-279"].isr_join_floor(log, 2, 0) == 0
    assert ctx.fetch_fenced(2, 1) and not ctx.fetch_fenced(2, 2)
    old = Ctx.of(Config(replicas=2, records=1, protocol="kip-279"))
    assert not old.fetch_fenced(2, 1)

    class Mine(type(proto)):  # an overridden hook is bound as it is
        name = "mine"

        def fetch_fenced(self, leader_epoch, follower_epoch):
            return leader_epoch > follower_epoch

    mine = PROTOCOLS.setdefault("mine", Mine())
    ctx = Ctx.of(Config(replicas=2, records=1, protocol="mine"))
    assert ctx.fetch_fenced.__self__ is mine
    assert ctx.fetch_fenced(2, 1) and not ctx.fetch_fenced(1, 2)


def test_symbolic_encoding_reads_the_registry():
    pytest.importorskip("z3")
    from isr.cli.prove import SYM_NAMES
    from isr.spec.symbolic.encoding import SYM_PROTOCOLS, SymProtocol

    assert list(SYM_PROTOCOLS) == SYM_NAMES
    for name, sp in SYM_PROTOCOLS.items():
        assert sp == SymProtocol.of(PROTOCOLS[name])
    assert SYM_PROTOCOLS["kip-320"] == SymProtocol(
        "kip-320", fenced=True, truncate_to_hw=False, epoch_start=True
    )


def test_cli_lists_come_from_the_registry(capsys):
    from isr.cli.main import build_parser, main

    assert main(["protocols", "--format", "json"]) == 0
    names = [p["name"] for p in json.loads(capsys.readouterr().out)["protocols"]]
    assert names == list(BUILTIN_NAMES)
    parser = build_parser()
    # the matrix's default rows: every built-in version but those with the split fetch (kraft:
    # its cells are ~50 times larger at three replicas; it is asked for by name)
    default_rows = [n for n in BUILTIN_NAMES if not PROTOCOLS[n].split_fetch]
    assert default_rows and "kraft" not in default_rows
    assert parser.parse_args(["matrix"]).protocols == ",".join(default_rows)
    assert parser.parse_args(["check"]).protocol == DEFAULT_PROTOCOL
    assert parser.parse_args(["conform"]).protocol == DEFAULT_PROTOCOL


def test_default_protocol_not_written_out_in_the_tools():
    """DEFAULT_PROTOCOL, not the literal, wherever a tool means "the default version". Allowed:
    the registry and kip-320's own module, the implementation (it imports no spec; its constant
    is checked in tests/impl/test_strategies_match_spec.py) and the symbolic encoding, which
    names the one version its proof is about, and the list of versions the kit derives
    separating stories for."""
    allowed = {
        "spec/protocols/__init__.py",
        "spec/protocols/kip_320.py",
        "spec/symbolic/encoding.py",
        "impl/core/config.py",
        "impl/core/truncation.py",
        "traces/conformance/separating.py",  # (lists the versions a claim can name)
    }
    found = []
    for pkg in ("spec", "checker", "cli", "traces", "impl"):
        for f in (ROOT / pkg).rglob("*.py"):
            rel = f.relative_to(ROOT).as_posix()
            if rel not in allowed and '"kip-320"' in f.read_text(encoding="utf-8"):
                found.append(rel)
    assert found == []


def _steps(result, name):
    p = next(p for p in result.properties if p.name == name)
    return None if p.counterexample is None else len(p.counterexample.steps)


def test_the_commit_rule_is_a_hook():
    """``high_watermark`` (R4): the base rule written out in a user's version explores exactly
    kip-320's states, and a leader that commits at its fastest follower instead of its slowest
    ISR member is caught: a follower that lags the HW is still in the ISR (StrongIsr, 3 steps:
    send, one fetch, the leader's HW passes the other follower) and an election of that follower
    loses the record (NoCommittedLoss, 5 steps)."""
    from isr import api

    base = type(PROTOCOLS["kip-320"])

    class WrittenOut(base):
        name = "hw-written-out"

        def high_watermark(self, leader_leo, follower_leos):
            return min([leader_leo, *follower_leos])

    class Fastest(base):
        name = "hw-fastest"

        def high_watermark(self, leader_leo, follower_leos):
            return min(leader_leo, max(follower_leos)) if follower_leos else leader_leo

    for v in (WrittenOut(), Fastest()):
        PROTOCOLS[v.name] = v
    bounds = dict(replicas=3, records=1, epochs=2, crashes=0)
    assert Ctx.of(Config(**bounds)).high_watermark is None  # the base rule stays inline
    same = api.check(Config(protocol="hw-written-out", **bounds))
    ref = api.check(Config(**bounds))
    assert same.distinct_states == ref.distinct_states == 15_700  # 27,480 before R8
    assert all(p.holds is not False for p in same.properties)
    bad = api.check(Config(protocol="hw-fastest", **bounds))
    assert bad.holds("StrongIsr") is False and _steps(bad, "StrongIsr") == 3
    assert bad.holds("NoCommittedLoss") is False and _steps(bad, "NoCommittedLoss") == 5
    assert bad.holds("HwAtMostLeo") is True
