"""The strengthened safety invariant of kip-320 and its inductiveness check (z3).

``Inv`` is the conjunction of named clauses (so a counterexample to induction names the clause
the step breaks). StrongIsr (R17) follows from Committed + HwCommitted; each clause is needed
for the others to be inductive:

* Bounds: HW and checkpoint within the log (HwAtMostLeo, R4), epochs within the coordination's,
  the recorded leader in the recorded ISR (LeaderInIsr, R9), only the recorded leader presumes
  leadership, a crashed broker has no leader or epoch.
* EpochLeader: the ghost ``leader_of`` names the recorded leader of the current epoch, and
  every live replica's (leader, epoch) view matches it.
* Committed: every recorded ISR member holds the whole committed log (R5, R17).
* HwCommitted: below every replica's HW (and its checkpoint) its log is the committed log.
* FollowerPrefix: a non-truncating follower fetching from its leader (fenced: same epoch) holds
  a prefix of the leader's log (R2).
* FollowerAhead: a follower that applied an epoch its leader has not yet applied has nothing
  to keep (an empty log) unless it is still truncating.
* EpochOwner: no log holds an entry of the current epoch before its (live) leader applied it.
* EpochStart (KAFKA-7128): a leader whose HW lags the committed log has no entry of its own
  epoch below the committed length, so a follower at its epoch start holds everything committed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import z3

from ..protocols import DEFAULT_PROTOCOL
from .encoding import SYM_PROTOCOLS, Sym, agree, init, steps, variables


def _presumes(s: Sym, i: int) -> z3.BoolRef:
    return z3.And(s.alive[i], s.lead[i] == i)


def clauses(s: Sym) -> dict[str, z3.BoolRef]:
    n = s.n
    k = z3.Int("k")
    c: dict[str, z3.BoolRef] = {}
    c["Bounds"] = z3.And(
        s.cl >= 0,
        s.cl < n,
        s.ce >= 1,
        s.clen >= 0,
        *[z3.Implies(s.cl == i, s.cisr[i]) for i in range(n)],
        *[
            z3.And(
                s.hw[i] >= 0,
                s.hw[i] <= s.leo[i],
                s.ckpt[i] >= 0,
                s.ckpt[i] <= s.leo[i],
                s.epoch[i] >= 0,
                s.epoch[i] <= s.ce,
                s.lead[i] >= -1,
                s.lead[i] < n,
                z3.Implies(_presumes(s, i), s.cl == i),
                z3.Implies(z3.Not(s.alive[i]), z3.And(s.lead[i] == -1, s.epoch[i] == 0)),
                z3.Implies(s.lead[i] == -1, s.epoch[i] == 0),
                z3.Implies(s.lead[i] >= 0, s.epoch[i] >= 1),
            )
            for i in range(n)
        ],
    )
    c["EpochLeader"] = z3.And(
        s.leader_of[s.ce] == s.cl,
        *[z3.Implies(s.lead[i] >= 0, s.leader_of[s.epoch[i]] == s.lead[i]) for i in range(n)],
    )
    c["Committed"] = z3.And(
        *[
            z3.Implies(
                s.cisr[j],
                z3.And(s.leo[j] >= s.clen, agree(s.rec[j], s.ep[j], s.crec, s.cep, s.clen)),
            )
            for j in range(n)
        ]
    )
    c["HwCommitted"] = z3.And(
        *[
            z3.And(
                s.hw[i] <= s.clen,
                s.ckpt[i] <= s.clen,
                agree(s.rec[i], s.ep[i], s.crec, s.cep, s.hw[i]),
                agree(s.rec[i], s.ep[i], s.crec, s.cep, s.ckpt[i]),
            )
            for i in range(n)
        ]
    )
    c["FollowerPrefix"] = z3.And(
        *[
            z3.Implies(
                z3.And(
                    s.alive[j],
                    s.lead[j] == l,
                    z3.Not(s.trunc[j]),
                    _presumes(s, l),
                    s.epoch[j] == s.epoch[l],
                ),
                z3.And(s.leo[j] <= s.leo[l], agree(s.rec[j], s.ep[j], s.rec[l], s.ep[l], s.leo[j])),
            )
            for j in range(n)
            for l in range(n)
            if j != l
        ]
    )
    c["FollowerAhead"] = z3.And(
        *[
            z3.Implies(
                z3.And(
                    s.alive[j],
                    s.lead[j] == l,
                    z3.Not(s.trunc[j]),
                    s.alive[l],
                    s.cl == l,
                    s.epoch[j] == s.ce,
                    s.epoch[l] < s.epoch[j],
                ),
                s.leo[j] == 0,
            )
            for j in range(n)
            for l in range(n)
            if j != l
        ]
    )
    c["EpochOwner"] = z3.And(
        *[
            z3.Implies(
                z3.And(s.cl == l, s.alive[l], s.epoch[l] != s.ce),
                z3.ForAll([k], z3.Implies(z3.And(k >= 0, k < s.leo[i]), s.ep[i][k] != s.ce)),
            )
            for l in range(n)
            for i in range(n)
        ]
    )
    c["EpochStart"] = z3.And(
        *[
            z3.Implies(
                _presumes(s, l),
                z3.Or(
                    s.clen <= s.hw[l],
                    z3.ForAll([k], z3.Implies(z3.And(k >= 0, k < s.clen), s.ep[l][k] < s.epoch[l])),
                ),
            )
            for l in range(n)
        ]
    )
    c["EpochsBelowLeader"] = z3.And(
        *[
            z3.ForAll(
                [k],
                z3.Implies(
                    z3.And(k >= 0, k < s.leo[i]), z3.And(s.ep[i][k] >= 1, s.ep[i][k] <= s.ce)
                ),
            )
            for i in range(n)
        ],
        z3.ForAll([k], z3.Implies(z3.And(k >= 0, k < s.clen), s.cep[k] <= s.ce)),
    )
    return c


def strong_isr(s: Sym) -> z3.BoolRef:
    """StrongIsr (R17): below a presumed leader's HW, every recorded ISR member agrees with it."""
    return z3.And(
        *[
            z3.Implies(
                z3.And(_presumes(s, l), s.cisr[j]),
                z3.And(s.leo[j] >= s.hw[l], agree(s.rec[j], s.ep[j], s.rec[l], s.ep[l], s.hw[l])),
            )
            for l in range(s.n)
            for j in range(s.n)
        ]
    )


def invariant(s: Sym) -> z3.BoolRef:
    return z3.And(*clauses(s).values())


@dataclass
class Cti:
    """A counterexample to induction: a state satisfying Inv, a step, a successor breaking the
    named clause. ``model`` is z3's model (evaluate the pre-state's terms in it)."""

    action: str
    args: tuple
    broken: list[str]
    model: z3.ModelRef
    pre: Sym
    post: Sym
    models: dict[str, z3.ModelRef] = field(default_factory=dict)


@dataclass
class InductionResult:
    protocol: str
    replicas: int
    init_ok: bool
    implies_strong_isr: bool
    ctis: list[Cti] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    per_action_seconds: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def inductive(self) -> bool:
        return self.init_ok and not self.ctis and not self.unknown

    def to_json(self) -> dict[str, Any]:
        return {
            "protocol": self.protocol,
            "replicas": self.replicas,
            "init_implies_inv": self.init_ok,
            "inv_implies_strong_isr": self.implies_strong_isr,
            "inductive": self.inductive,
            "ctis": [
                {"action": c.action, "args": list(c.args), "broken": c.broken} for c in self.ctis
            ],
            "unknown": self.unknown,
            "seconds": round(self.seconds, 2),
        }


def _small(s: Sym, bound: int = 3) -> z3.BoolRef:
    return z3.And(
        s.ce <= bound,
        s.clen <= bound,
        *[z3.And(s.leo[i] <= bound, s.hw[i] <= bound) for i in range(s.n)],
    )


def _solver(timeout_ms: int) -> z3.Solver:
    s = z3.Solver()
    s.set("timeout", timeout_ms)
    return s


def check_induction(
    protocol: str = DEFAULT_PROTOCOL,
    n: int = 2,
    *,
    timeout_ms: int = 60_000,
    stop_at_first: bool = False,
    clock: Callable[[], float] = lambda: 0.0,
) -> InductionResult:
    """Init => Inv, Inv => StrongIsr, and Inv /\\ Step => Inv' for every encoded action.
    ``clock`` times the proof (the caller's: spec/ reads no clock of its own)."""
    t0 = clock()
    proto = SYM_PROTOCOLS[protocol]
    s0 = init(n)
    sol = _solver(timeout_ms)
    sol.add(z3.Not(invariant(s0)))
    init_ok = sol.check() == z3.unsat
    s = variables("s", n)
    inv = invariant(s)
    sol = _solver(timeout_ms)
    sol.add(inv, z3.Not(strong_isr(s)))
    implies = sol.check() == z3.unsat
    res = InductionResult(protocol, n, init_ok, implies)
    for name, args, guard, t in steps(s, proto):
        t1 = clock()
        post = clauses(t)
        sol = _solver(timeout_ms)
        sol.add(inv, guard, z3.Not(z3.And(*post.values())))
        r = sol.check()
        key = f"{name}{args}"
        res.per_action_seconds[key] = clock() - t1
        if r == z3.sat:
            broken = []
            models: dict[str, z3.ModelRef] = {}
            for c, f in post.items():
                one = _solver(timeout_ms)
                one.add(inv, guard, z3.Not(f))
                one.push()
                one.add(_small(s))  # prefer a small counterexample to induction
                r1 = one.check()
                if r1 != z3.sat:
                    one.pop()
                    r1 = one.check()
                if r1 == z3.sat:
                    broken.append(c)
                    models[c] = one.model()
            first = models[broken[0]] if broken else sol.model()
            res.ctis.append(Cti(name, args, broken, first, s, t, models))
            if stop_at_first:
                break
        elif r == z3.unknown:
            res.unknown.append(key)
    res.seconds = clock() - t0
    return res


def concrete_state(m: z3.ModelRef, s: Sym) -> dict[str, Any]:
    """The values of a symbolic state in a model, logs cut at their length."""

    def iv(x) -> int:
        return m.eval(x, model_completion=True).as_long()

    def bv(x) -> bool:
        return z3.is_true(m.eval(x, model_completion=True))

    n = s.n
    logs = [[(iv(s.rec[i][o]), iv(s.ep[i][o])) for o in range(iv(s.leo[i]))] for i in range(n)]
    return {
        "log": logs,
        "hw": [iv(x) for x in s.hw],
        "ckpt": [iv(x) for x in s.ckpt],
        "alive": [bv(x) for x in s.alive],
        "lead": [iv(x) for x in s.lead],
        "epoch": [iv(x) for x in s.epoch],
        "trunc": [bv(x) for x in s.trunc],
        "cl": iv(s.cl),
        "ce": iv(s.ce),
        "cisr": [bv(x) for x in s.cisr],
        "leader_of": {e: iv(s.leader_of[e]) for e in range(1, iv(s.ce) + 1)},
        "committed": [(iv(s.crec[o]), iv(s.cep[o])) for o in range(iv(s.clen))],
    }


def _arr(entries: list[tuple[int, int]], which: int) -> z3.ArrayRef:
    a = z3.K(z3.IntSort(), 0)
    for o, e in enumerate(entries):
        a = z3.Store(a, o, e[which])
    return a


def constant_sym(c: dict[str, Any]) -> Sym:
    """A symbolic state with every variable fixed to the values of ``c`` (see concrete_state)."""
    lo = z3.K(z3.IntSort(), -1)
    for e, l in c["leader_of"].items():
        lo = z3.Store(lo, e, l)
    return Sym(
        rec=tuple(_arr(log, 0) for log in c["log"]),
        ep=tuple(_arr(log, 1) for log in c["log"]),
        leo=tuple(z3.IntVal(len(log)) for log in c["log"]),
        hw=tuple(z3.IntVal(x) for x in c["hw"]),
        ckpt=tuple(z3.IntVal(x) for x in c["ckpt"]),
        alive=tuple(z3.BoolVal(x) for x in c["alive"]),
        lead=tuple(z3.IntVal(x) for x in c["lead"]),
        epoch=tuple(z3.IntVal(x) for x in c["epoch"]),
        trunc=tuple(z3.BoolVal(x) for x in c["trunc"]),
        cl=z3.IntVal(c["cl"]),
        ce=z3.IntVal(c["ce"]),
        cisr=tuple(z3.BoolVal(x) for x in c["cisr"]),
        leader_of=lo,
        crec=_arr(c["committed"], 0),
        cep=_arr(c["committed"], 1),
        clen=z3.IntVal(len(c["committed"])),
    )


def holds(formula: z3.BoolRef) -> bool:
    """Truth of a closed formula (over constant states): valid, by z3."""
    sol = z3.Solver()
    sol.add(z3.Not(formula))
    r = sol.check()
    if r == z3.unknown:
        raise RuntimeError("z3 could not decide a closed formula")
    return r == z3.unsat
