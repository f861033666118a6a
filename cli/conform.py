"""`isr conform --adapter "COMMAND"`: the conformance kit (traces/ADAPTER.md)."""

from __future__ import annotations

import argparse
import json
import sys

from .errors import BAD_INPUT, OK, VIOLATION, UsageError, one_line
from .models import int_in, positive_seconds, seed_int

REFERENCE = f"{sys.executable} -m impl.adapter"


def register(sub) -> None:
    p = sub.add_parser(
        "conform",
        help="drive an implementation through an adapter with spec-derived and random fault "
        "scenarios, validating every trace it records",
        description="Scenarios: shortest spec paths covering every spec action and replica role "
        "change, directed fault patterns, and hypothesis-generated fault schedules (shrunk on "
        "failure). Exit 0: every scenario accepted (or unsupported); 1: a scenario rejected "
        "(or, with --mutants, a mutant survived); 2: bad input or a broken adapter.",
    )
    p.add_argument("--adapter", default=None, help=f'adapter command (default: "{REFERENCE}")')
    p.add_argument(
        "--random",
        type=int_in(0, 10_000),
        default=20,
        help="hypothesis examples (default 20, at most 10,000: each runs a scenario)",
    )
    p.add_argument("--seed", type=seed_int, default=0)
    p.add_argument("--protocol", default="kip-320")
    p.add_argument(
        "--mutants",
        action="store_true",
        help="run the reference implementation's mutants (impl/mutants.py) and report the "
        "mutation score",
    )
    p.add_argument("--format", choices=["text", "json"], default="text")
    add_timeout_arg(p)
    p.set_defaults(run=run)


def add_timeout_arg(p) -> None:
    """--adapter-timeout: how long the kit waits for one answer of the adapter (issue 17)."""
    from traces.conformance.runner import DEFAULT_TIMEOUT

    p.add_argument(
        "--adapter-timeout",
        type=positive_seconds,
        default=DEFAULT_TIMEOUT,
        metavar="S",
        help=f"seconds to wait for each answer of the adapter (default {DEFAULT_TIMEOUT:g}); "
        "a silent adapter is then an error (exit 2), not a hang",
    )


def check_protocol(name: str) -> None:
    """--protocol: one the reference implementation (and so the trace format) knows."""
    from impl.config import PROTOCOLS

    if name not in PROTOCOLS:
        raise UsageError(f"unknown protocol {name!r}; choose from {', '.join(PROTOCOLS)}")


def run(args: argparse.Namespace) -> int:
    from traces.conformance.runner import Adapter, AdapterError, conform, mutation_score

    if args.random < 0:
        raise UsageError("--random must be >= 0")
    check_protocol(args.protocol)
    cmd = args.adapter or REFERENCE
    try:
        if args.mutants:
            from impl.mutants import MUTANTS

            if args.adapter:
                raise UsageError("--mutants runs the reference adapter's mutants; drop --adapter")
            ref = Adapter(cmd, timeout=args.adapter_timeout)
            try:
                base = conform(ref, random_examples=args.random, seed=args.seed, shrink=False)
            finally:
                ref.close()
            rows = mutation_score(
                sorted(MUTANTS),
                lambda mu: Adapter(f"{cmd} --mutant {mu}", timeout=args.adapter_timeout),
                random_examples=args.random,
                seed=args.seed,
            )
            return _report_mutants(args, base, rows, MUTANTS)
        ad = Adapter(cmd, timeout=args.adapter_timeout)
        try:
            rep = conform(ad, random_examples=args.random, seed=args.seed, protocol=args.protocol)
        finally:
            ad.close()
    except AdapterError as e:
        print(f"isr: error: {one_line(str(e))}", file=sys.stderr)
        return BAD_INPUT
    return _report(args, rep)


def _report(args, rep) -> int:
    from spec import Config, IsrSpec

    names = IsrSpec(Config(protocol=args.protocol)).action_names
    covered = sorted(set(names) & rep.actions)
    if args.format == "json":
        doc = {
            "scenarios": [
                {"name": n, "verdict": v.verdict, "reason": v.reason, "events": v.events}
                for n, _s, v in rep.results
            ],
            "counts": rep.counts(),
            "coverage": {
                "actions": covered,
                "actions_missing": sorted(set(names) - rep.actions),
                "transitions": sorted(f"{a}->{b}" for a, b in rep.transitions),
            },
            "shortest_failing": None
            if rep.shortest_failing is None
            else {
                "name": rep.shortest_failing[0],
                "scenario": rep.shortest_failing[1],
                "verdict": rep.shortest_failing[2].to_json(),
            },
            "seconds": rep.seconds,
        }
        json.dump(doc, sys.stdout, indent=2, default=list)
        sys.stdout.write("\n")
    else:
        for n, _s, v in rep.results:
            print(f"{v.verdict:12} {n}" + (f"  ({v.reason})" if v.reason else ""))
        print(f"verdicts: {rep.counts()} in {rep.seconds:.1f}s")
        print(f"spec actions covered: {len(covered)}/{len(names)}")
        missing = sorted(set(names) - rep.actions)
        if missing:
            print(f"  never exercised: {', '.join(missing)}")
        print(
            "role transitions covered: "
            + ", ".join(f"{a}->{b}" for a, b in sorted(rep.transitions))
        )
        if rep.shortest_failing:
            n, sc, v = rep.shortest_failing
            print(f"shortest failing scenario ({n}, {len(sc)} commands):")
            for op in sc:
                print(f"  {json.dumps(op)}")
            print(f"  -> {v.reason}")
            for m in v.mismatches:
                print(f"     - {m}")
    return VIOLATION if rep.rejected else OK


def _report_mutants(args, base, rows, mutants) -> int:
    killed = sum(1 for r in rows if r[1] == "killed")
    ref_ok = not base.rejected
    if args.format == "json":
        doc = {
            "reference": {"accepted": ref_ok, "counts": base.counts()},
            "mutants": [
                {"name": m, "bug": mutants[m].bug, "verdict": k, "scenarios": n, "reason": why}
                for m, k, n, why in rows
            ],
            "score": f"{killed}/{len(rows)}",
        }
        json.dump(doc, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(f"reference implementation: {'accepted' if ref_ok else 'REJECTED'} {base.counts()}")
        for m, k, n, why in rows:
            print(f"{k:9} {m:26} ({mutants[m].bug}; {n} scenarios)")
            if why:
                print(f"          {why[:200]}")
        print(f"mutation score: {killed}/{len(rows)}")
    return OK if ref_ok and killed == len(rows) else VIOLATION
