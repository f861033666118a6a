"""Cross-check of the z3 encoding against the executable spec (hypothesis): random reachable
kip-320 states from random walks of IsrSpec; for the replica-local actions the encoding must
agree on enabledness and on the acting replica's successor."""

from __future__ import annotations

import z3
from hypothesis import given, settings
from hypothesis import strategies as st

from spec import Config, IsrSpec
from spec.symbolic import encoding as enc
from spec.symbolic.induction import constant_sym

SPEC = IsrSpec(Config(protocol="kip-320", replicas=2, records=3, epochs=4, crashes=2))
KIND = SPEC.kind_of


def alpha(s) -> enc.Sym:
    """The symbolic image of a concrete state (ghosts: the leader's log below its HW)."""
    reps = s.replicas
    lead = s.replicas[s.coord.leader]
    return constant_sym(
        {
            "log": [list(r.log) for r in reps],
            "hw": [r.hw for r in reps],
            "ckpt": [r.hw_ckpt for r in reps],
            "alive": [r.alive for r in reps],
            "lead": [r.leader for r in reps],
            "epoch": [r.epoch for r in reps],
            "trunc": [r.truncating for r in reps],
            "cl": s.coord.leader,
            "ce": s.coord.epoch,
            "cisr": [bool(s.coord.isr >> i & 1) for i in range(len(reps))],
            "leader_of": {s.coord.epoch: s.coord.leader},
            "committed": list(lead.log[: lead.hw]),
        }
    )


def same_replica(sym: enc.Sym, i: int, r) -> z3.BoolRef:
    eqs = [sym.leo[i] == len(r.log), sym.hw[i] == r.hw, sym.ckpt[i] == r.hw_ckpt]
    eqs += [sym.trunc[i] == r.truncating]
    for o, (rec, ep) in enumerate(r.log):
        eqs += [sym.rec[i][o] == rec, sym.ep[i][o] == ep]
    return z3.And(*eqs)


def sat(f) -> bool:
    sol = z3.Solver()
    sol.add(f)
    return sol.check() == z3.sat


ENCODED = {
    "FollowerTruncate": lambda s, a: enc.follower_truncate(s, a[0], a[1]),
    "FollowerFetch": lambda s, a: enc.follower_fetch(s, a[0], a[1], True),
    "BrokerCheckpointHw": lambda s, a: enc.broker_checkpoint_hw(s, a[0]),
    "BrokerCrash": lambda s, a: enc.broker_crash(s, a[0]),
}


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 10_000), min_size=0, max_size=14))
def test_encoding_agrees_with_the_spec(choices):
    s = SPEC.init_states()[0]
    for c in choices:
        succ = list(SPEC.successors(s))
        if not succ:
            break
        s = succ[c % len(succ)][1]
    sym = alpha(s)
    concrete = {(a[0], a[1]): t for a, t in SPEC.successors(s)}
    for name, fn in ENCODED.items():
        kind = KIND[name]
        arg_sets = [(i, j) for i in range(2) for j in range(2) if i != j]
        if name in ("BrokerCheckpointHw", "BrokerCrash"):
            arg_sets = [(i,) for i in range(2)]
        for args in arg_sets:
            _, _, guard, post = fn(sym, args)
            if name == "BrokerCrash" and s.history.crashes >= SPEC.config.crashes:
                continue  # the crash budget is a bound of explicit search only
            t = concrete.get((kind, args))
            if name == "FollowerFetch":
                if t is None:
                    continue  # the spec omits fetches that change nothing (stuttering)
            else:
                assert sat(guard) == (t is not None), (name, args, s)
            if t is not None:
                f = args[0]
                assert sat(z3.And(guard, same_replica(post, f, t.replicas[f]))), (name, args, s)
