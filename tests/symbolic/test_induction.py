"""The z3 proof for kip-320, its counterexample to induction for hw-truncation, and BMC."""

from __future__ import annotations

import pytest
import z3
from isr.spec.symbolic.bmc import bmc
from isr.spec.symbolic.encoding import SYM_PROTOCOLS, become_follower, init, offsets_below, steps
from isr.spec.symbolic.induction import (
    check_induction,
    concrete_state,
    constant_sym,
    holds,
    invariant,
    strong_isr,
)


@pytest.mark.parametrize("n", [2, 3])
def test_kip320_invariant_is_inductive(n):
    r = check_induction("kip-320", n)
    assert r.init_ok and r.implies_strong_isr
    assert r.unknown == []
    assert r.ctis == [], [(c.action, c.args, c.broken) for c in r.ctis]
    assert r.inductive


def test_hw_truncation_has_a_real_counterexample_to_induction():
    r = check_induction("hw-truncation", 2)
    assert r.init_ok and not r.inductive
    cti = next(c for c in r.ctis if c.action == "BrokerBecomeFollower" and "Committed" in c.broken)
    pre = concrete_state(cti.models["Committed"], cti.pre)
    i = cti.args[0]
    # a real CTI: the concrete pre-state satisfies Inv, the step is enabled, the successor
    # (computed again from the constants) breaks Inv: committed records are truncated away
    s = constant_sym(pre)
    assert holds(invariant(s))
    _, _, guard, t = become_follower(s, i, truncate_to_hw=True)
    assert holds(guard)
    assert not holds(invariant(t))
    assert pre["cisr"][i] and pre["hw"][i] < len(pre["committed"])


def test_removing_a_clause_breaks_the_kip320_proof(monkeypatch):
    """The proof is not vacuous: without EpochStart (KAFKA-7128's fact) induction fails."""
    import isr.spec.symbolic.induction as ind

    full = ind.clauses

    def weaker(s):
        c = full(s)
        del c["EpochStart"]
        return c

    monkeypatch.setattr(ind, "clauses", weaker)
    r = ind.check_induction("kip-320", 2)
    assert not r.inductive


def test_bmc_finds_the_hw_truncation_loss_and_not_kip320():
    # z3's timeout is wall time: a generous one, so that a loaded machine (the whole suite on
    # every core beside a benchmark) gets the answer rather than "unknown" (about 1 s when quiet)
    slow = 900_000
    r = bmc("hw-truncation", 2, 5, timeout_ms=slow)
    assert r.violation_depth == 5
    assert r.actions[-1].startswith("BrokerRestart")
    r = bmc("kip-320", 2, 5, timeout_ms=slow)
    assert not r.unknown and r.violation_depth is None


def test_bmc_query_has_no_quantifier():
    """CI once got "unknown (incomplete quantifiers)" from z3 on the first BMC query of a process:
    the unrolling must be quantifier-free, so z3 decides it whatever its instantiation order."""

    def has_quantifier(t: z3.ExprRef) -> bool:
        seen: set[int] = set()
        todo = [t]
        while todo:
            e = todo.pop()
            if e.get_id() in seen:
                continue
            seen.add(e.get_id())
            if z3.is_quantifier(e):
                # a lambda is an array term the array theory reduces; a forall/exists is not
                if not e.is_lambda():
                    return True
                todo.append(e.body())
            else:
                todo.extend(e.children())
        return False

    proto = SYM_PROTOCOLS["hw-truncation"]
    with offsets_below(5):
        s = init(2)
        terms = [strong_isr(s)] + [z3.And(g) for _, _, g, _ in steps(s, proto)]
    assert not any(has_quantifier(t) for t in terms)
    # outside the block (the induction proof: logs of any length) the quantifier is back
    assert has_quantifier(strong_isr(init(2)))


def test_strong_isr_formula_can_fail():
    pre = {
        "log": [[(1, 1)], []],
        "hw": [1, 0],
        "ckpt": [0, 0],
        "alive": [True, True],
        "lead": [0, 0],
        "epoch": [1, 1],
        "trunc": [False, False],
        "cl": 0,
        "ce": 1,
        "cisr": [True, True],
        "leader_of": {1: 0},
        "committed": [(1, 1)],
    }
    assert not holds(strong_isr(constant_sym(pre)))


def test_cli_prove_exit_codes(capsys):
    from isr.cli.main import main

    assert main(["prove", "--bmc-depth", "2"]) == 0
    out = capsys.readouterr().out
    # the verdict says what it covers (issue 30): the replicas, and no leader moves
    assert "PROVEN for 2 replicas, all log lengths and epochs" in out
    assert "elections after crashes only" in out
    assert main(["prove", "--protocol", "hw-truncation", "--bmc-depth", "5"]) == 1
    assert main(["prove", "--replicas", "9"]) == 2
