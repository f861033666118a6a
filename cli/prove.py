"""`isr prove`: symbolic checks with z3 (spec.symbolic): inductiveness of the strengthened
invariant (a proof of StrongIsr for all log lengths and epochs, for a fixed replica count, of
the encoded abstraction) and bounded model checking to a depth."""

from __future__ import annotations

import argparse
import json
import sys
import time

from isr.spec.protocols import DEFAULT_PROTOCOL

from .errors import INCOMPLETE, OK, VIOLATION, UsageError
from .models import int_in

# spec.symbolic.encoding.SYM_PROTOCOLS (z3 is imported only when the command runs; a test checks)
SYM_NAMES = [DEFAULT_PROTOCOL, "hw-truncation"]

MAX_BMC_DEPTH = 60  # z3's work grows steeply with the unrolling; 60 steps would not finish


def register(sub) -> None:
    p = sub.add_parser(
        "prove",
        help="z3: prove StrongIsr inductive for all log lengths, or BMC to a depth",
        description="Exit 0: the invariant is inductive (proven for all log lengths and epochs) "
        "and BMC found nothing; 1: a counterexample to induction or a BMC violation; 2: bad "
        "input; 3: z3 answered unknown.",
    )
    p.add_argument("--protocol", default=DEFAULT_PROTOCOL, choices=SYM_NAMES)
    p.add_argument("--replicas", type=int_in(2, 4), default=2, metavar="N", help="2..4 (default 2)")
    p.add_argument(
        "--bmc-depth",
        type=int_in(0, MAX_BMC_DEPTH),
        default=5,
        metavar="K",
        help=f"0: no BMC (default 5, at most {MAX_BMC_DEPTH})",
    )
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if not 2 <= args.replicas <= 4:
        raise UsageError(f"--replicas must be between 2 and 4, got {args.replicas}")
    if args.bmc_depth < 0:
        raise UsageError("--bmc-depth must be >= 0")
    from isr.spec.symbolic.bmc import bmc
    from isr.spec.symbolic.induction import check_induction

    ind = check_induction(args.protocol, args.replicas, clock=time.perf_counter)
    b = (
        bmc(args.protocol, args.replicas, args.bmc_depth, clock=time.perf_counter)
        if args.bmc_depth
        else None
    )
    verdict, code = decide(ind, b, args.bmc_depth, args.replicas)
    if args.format == "json":
        out = {
            "induction": ind.to_json(),
            "bmc": None if b is None else b.to_json(),
            "verdict": verdict,
        }
        json.dump(out, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return code
    print(f"isr prove: protocol {args.protocol}, replicas {args.replicas} (z3, spec/symbolic)")
    print(f"  Init => Inv: {'yes' if ind.init_ok else 'NO'}")
    print(f"  Inv => StrongIsr: {'yes' if ind.implies_strong_isr else 'NO'}")
    print(f"  Inv /\\ Next => Inv': {'yes' if ind.inductive else 'NO'} ({ind.seconds:.1f} s)")
    for c in ind.ctis:
        print(f"    counterexample to induction: {c.action}{c.args} breaks {', '.join(c.broken)}")
    if b is not None:
        if b.violation_depth is None:
            print(f"  BMC to depth {b.depth}: no StrongIsr violation ({b.seconds:.1f} s)")
        else:
            print(
                f"  BMC: StrongIsr violated at depth {b.violation_depth}: "
                f"{' -> '.join(b.actions)} ({b.seconds:.1f} s)"
            )
    print(f"verdict: {verdict} (exit {code})")
    return code


def decide(ind, b, depth: int, replicas: int = 2) -> tuple[str, int]:
    """The verdict line and the exit code, as the help documents them: 1 for a BMC violation
    (a real behaviour breaking StrongIsr, whatever z3 answered elsewhere) or a counterexample
    to induction; 3 when z3 answered unknown and nothing was found; 0 only when proven and
    BMC found nothing."""
    if b is not None and b.violation_depth is not None:
        return f"StrongIsr: VIOLATED at depth {b.violation_depth} (BMC)", VIOLATION
    bmc_ok = b is None or not b.unknown
    if ind.inductive and bmc_ok:
        # what the proof covers, said in the verdict (spec/symbolic/encoding.py lists the
        # abstractions): these replicas, any log length and epoch, crash-only elections
        return (
            f"StrongIsr, HwAtMostLeo, LeaderInIsr: PROVEN for {replicas} replicas, all log "
            "lengths and epochs, elections after crashes only (no leader moved off a live "
            "leader: `isr check` covers those)",
            OK,
        )
    if ind.inductive:
        return "StrongIsr: PROVEN inductive; BMC undecided (z3 answered unknown)", INCOMPLETE
    if ind.ctis or not ind.init_ok or not ind.implies_strong_isr:
        bounded = f"; holds up to depth {depth} (BMC)" if b is not None and bmc_ok else ""
        return f"StrongIsr: NOT PROVEN (counterexample to induction){bounded}", VIOLATION
    return "StrongIsr: UNDECIDED (z3 answered unknown)", INCOMPLETE
