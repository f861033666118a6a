"""`isr conform --adapter "COMMAND"`: the conformance kit (traces/ADAPTER.md)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from isr.spec.protocols import DEFAULT_PROTOCOL, protocol_source

from . import junit, reports
from .errors import BAD_INPUT, INCOMPLETE, OK, VIOLATION, UsageError, one_line
from .models import add_protocol_file_arg, int_in, positive_seconds, protocol_from_args, seed_int

REFERENCE = f"{sys.executable} -m isr.impl.adapter"
COVERAGE_KINDS = ("transitions", "actions", "all")


def unreached_aim(name: str, v: Any) -> str:
    """The action an accepted ``spec:Action`` scenario is named after when its trace never
    performed it (the implementation took another path), else ""."""
    if not name.startswith("spec:") or v.verdict != "accepted":
        return ""
    action = name.split(":")[1]  # spec:Action, spec:Action:crash-only; not spec:role:a->b
    if not action[:1].isupper():
        return ""
    fired = getattr(v, "fired", None) or set()
    return action if action not in fired else ""


def register(sub) -> None:
    p = sub.add_parser(
        "conform",
        help="drive an implementation through an adapter with spec-derived and random fault "
        "scenarios, validating every trace it records",
        description="Scenarios: shortest spec paths covering every spec action and replica role "
        "change, directed fault patterns (rare interleavings), and swarm-tested random fault "
        "schedules (shrunk on failure). Exit 0: every scenario accepted (an unsupported command "
        "is reported as a coverage gap); 1: a scenario failed (a broken property, a step the "
        "spec does not allow, or a trace that breaks the schema), --require-coverage not met, "
        "or, with --mutants, a mutant survived; 2: bad input or a broken adapter.",
    )
    p.add_argument(
        "--adapter",
        default=None,
        help=f'adapter command (default: "{REFERENCE}"), or apache-kafka[:VERSION] for Apache '
        "Kafka itself (fetched once from Maven Central; traces/conformance/apache_kafka)",
    )
    p.add_argument(
        "--random",
        type=int_in(0, 10_000),
        default=None,
        help="random schedules (default 20, or 0 with --adapter apache-kafka; at most 10,000: "
        "each runs a scenario)",
    )
    p.add_argument(
        "--max-ops", type=int_in(1, 1_000), default=24, help="commands per random schedule (24)"
    )
    p.add_argument(
        "--no-swarm",
        action="store_true",
        help="every random schedule may use every fault kind (default: each draws a subset)",
    )
    p.add_argument("--seed", type=seed_int, default=0)
    p.add_argument(
        "--protocol",
        default=DEFAULT_PROTOCOL,
        help=f"the version the implementation runs (default {DEFAULT_PROTOCOL})",
    )
    add_protocol_file_arg(
        p,
        "a Python file defining your own protocol version (see examples/protocols/my_kip.py): "
        "the implementation still runs --protocol; its traces are validated against yours",
    )
    p.add_argument(
        "--mutants",
        action="store_true",
        help="run the reference implementation's mutants (impl/mutants.py) and report the "
        "mutation score",
    )
    p.add_argument("--mutant", action="append", default=None, help="with --mutants: only these")
    p.add_argument(
        "--idempotence",
        action="store_true",
        help="start every scenario with the session option idempotence (the idempotent "
        "producer, traces/ADAPTER.md): its traces are validated with the spec's --idempotence "
        "(the idempotent:* scenarios always are)",
    )
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.add_argument("--junit", metavar="FILE", help="also write a JUnit XML report")
    p.add_argument("--sarif", metavar="FILE", help="also write a SARIF 2.1.0 report")
    p.add_argument(
        "--out",
        metavar="DIR",
        help="write each failing trace (with the command that re-validates it) and the "
        "adapter's stderr here",
    )
    p.add_argument(
        "--require-coverage",
        nargs="?",
        const="transitions",
        choices=COVERAGE_KINDS,
        help="fail (exit 1) when a spec role transition (or action, or both) was never "
        "exercised by an accepted trace",
    )
    p.add_argument(
        "--scenario",
        action="append",
        default=None,
        metavar="NAME",
        help="run only this directed scenario (repeatable; the names are in the report, e.g. "
        "kafka:faults); random schedules still follow --random",
    )
    p.add_argument(
        "--from-counterexample",
        action="append",
        default=None,
        metavar="FILE",
        help="run a counterexample of the spec (written by `isr check --trace-out FILE`, NDJSON "
        "or ITF) as a scenario: its environment steps become adapter commands, the "
        "implementation's own steps time passing; the report names the property it broke "
        "(repeatable; random schedules only with --random)",
    )
    add_timeout_arg(p)
    p.set_defaults(run=run)


def counterexample_scenarios(files: list[str], protocol: Any) -> tuple[dict, dict]:
    """--from-counterexample: each file's story as a scenario (traces/conformance/
    from_counterexample.py), named ``counterexample:VERSION:PROPERTY``; a file that cannot be
    read or converted (another protocol family, a step no adapter command causes) is bad input,
    one line naming the file and the step. ``protocol``: the claimed version, a built-in name
    or the user's version object. Returns (scenarios, name -> Story)."""
    from isr.traces.conformance.from_counterexample import StoryError, load_story

    from .replay import load_trace_protocol

    scenarios: dict = {}
    stories: dict = {}
    for path in files:
        # a counterexample of a user's version (--protocol-file at check time) names its file
        version = load_trace_protocol(path)
        try:
            story = load_story(path, protocol, version)
        except StoryError as e:
            raise UsageError(f"--from-counterexample {path}: {e}") from None
        name = f"counterexample:{story.protocol}:{story.property}"
        k = 2
        while name in scenarios:  # two files of the same story keep both
            name, k = f"counterexample:{story.protocol}:{story.property}:{k}", k + 1
        scenarios[name] = story.scenario
        stories[name] = story
    return scenarios, stories


def pick_scenarios(known, names: list[str], protocol: str, mine: Any = None) -> dict:
    """--scenario: the named directed scenarios, of the adapter's set (Apache Kafka's) or of the
    spec-derived one."""
    if known is None:
        from isr.traces.conformance.runner import default_scenarios

        known = default_scenarios(mine or protocol)
    unknown = [n for n in names if n not in known]
    if unknown:
        names_ = sorted(known)
        some = ", ".join(names_[:8]) + (", ..." if len(names_) > 8 else "")
        raise UsageError(f"unknown scenario {unknown[0]!r}; known: {some}")
    return {n: known[n] for n in names}


KAFKA_PREFIX = "apache-kafka"
KAFKA_TIMEOUT = 240.0  # a real cluster's start, settle and trace take tens of seconds on 2 cores


def kafka_release(adapter: str | None) -> str | None:
    """`--adapter apache-kafka[:VERSION]`: the Kafka release to run, else None (a command)."""
    if not adapter or not (adapter == KAFKA_PREFIX or adapter.startswith(KAFKA_PREFIX + ":")):
        return None
    from isr.traces.conformance.apache_kafka.install import NEWEST

    _, _, ver = adapter.partition(":")
    ver = ver or NEWEST
    if not ver.replace(".", "").isdigit():
        raise UsageError(f"--adapter {adapter}: expected apache-kafka or apache-kafka:4.x.y")
    return ver


def add_timeout_arg(p) -> None:
    """--adapter-timeout: how long the kit waits for one answer of the adapter (issue 17)."""
    from isr.traces.conformance.runner import DEFAULT_TIMEOUT

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
    from isr.impl.core.config import PROTOCOLS

    if name not in PROTOCOLS:
        raise UsageError(f"unknown protocol {name!r}; choose from {', '.join(PROTOCOLS)}")


def run(args: argparse.Namespace) -> int:
    from isr.traces.conformance.runner import Adapter, AdapterError, conform, mutation_score

    kafka = kafka_release(args.adapter)
    stories: dict = {}
    kafka_left: dict = {}
    if args.random is None:  # a counterexample's story runs alone unless --random says more
        args.random = 0 if kafka is not None or args.from_counterexample else 20
    if args.random < 0:
        raise UsageError("--random must be >= 0")
    check_protocol(args.protocol)
    mine = protocol_from_args(args)
    if mine is not None and args.mutants:
        raise UsageError("--protocol-file and --mutants: the mutation score is the built-in spec's")
    cmd = args.adapter or REFERENCE
    scenarios = None
    if kafka is not None:
        # Apache Kafka itself (traces/conformance/apache_kafka): fetched once from Maven Central
        from isr.traces.conformance.apache_kafka.install import KafkaSetupError, ensure
        from isr.traces.conformance.apache_kafka.scenarios import kafka_scenarios

        if args.mutants:
            raise UsageError("--mutants runs the reference adapter's mutants; drop --adapter")
        try:
            ensure(kafka, quiet=True)
        except KafkaSetupError as e:
            raise UsageError(str(e)) from None
        cmd = f"{sys.executable} -m isr.traces.conformance.apache_kafka.adapter --version {kafka}"
        args.protocol = "kraft"
        # kraft's separating stories at Kafka's timescale, those its adapter can drive (issue
        # 27, item 4); the others are named with the step it cannot cause
        from isr.traces.conformance.separating import kafka_separating_scenarios

        drivable, kafka_left = kafka_separating_scenarios()
        scenarios = {**kafka_scenarios(), **drivable}
        from isr.traces.conformance.runner import DEFAULT_TIMEOUT

        if args.adapter_timeout == DEFAULT_TIMEOUT:
            args.adapter_timeout = KAFKA_TIMEOUT
    out_dir = Path(args.out) if args.out else None
    if out_dir is not None:
        try:
            out_dir.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise UsageError(f"cannot create --out {args.out}: {e.strerror}") from None
    stderr_path = out_dir / "adapter.stderr" if out_dir else None
    try:
        if args.mutants:
            from isr.impl.mutants import KRAFT_MUTANTS
            from isr.impl.mutants import MUTANTS as ALL_MUTANTS

            # kraft's mutants change only the kraft version's code (impl/mutants.py)
            MUTANTS = KRAFT_MUTANTS if args.protocol == "kraft" else ALL_MUTANTS
            if args.adapter:
                raise UsageError("--mutants runs the reference adapter's mutants; drop --adapter")
            names = sorted(MUTANTS) if not args.mutant else args.mutant
            unknown = [m for m in names if m not in MUTANTS]
            if unknown:
                raise UsageError(f"unknown mutant {unknown[0]!r} (see impl/mutants.py)")
            t0 = time.perf_counter()
            ref = Adapter(cmd, stderr_path, timeout=args.adapter_timeout)
            try:
                base = conform(
                    ref,
                    random_examples=args.random,
                    seed=args.seed,
                    shrink=False,
                    protocol=args.protocol,
                )
            finally:
                ref.close()
            rows = mutation_score(
                names,
                lambda mu: Adapter(
                    f"{cmd} --mutant {mu}", stderr_path, timeout=args.adapter_timeout
                ),
                random_examples=args.random,
                seed=args.seed,
                protocol=args.protocol,
            )
            return _report_mutants(args, base, rows, MUTANTS, time.perf_counter() - t0)
        if args.scenario:
            scenarios = pick_scenarios(scenarios, args.scenario, args.protocol, mine)
        if args.from_counterexample:
            if args.scenario:
                raise UsageError("give --scenario or --from-counterexample, not both")
            scenarios, stories = counterexample_scenarios(
                args.from_counterexample, mine or args.protocol
            )
        ad = Adapter(cmd, stderr_path, timeout=args.adapter_timeout)
        try:
            rep = conform(
                ad,
                random_examples=args.random,
                seed=args.seed,
                protocol=args.protocol,
                swarm=not args.no_swarm,
                max_ops=args.max_ops,
                spec_protocol=mine,
                scenarios=scenarios,
                start_options={"idempotence": True} if args.idempotence else None,
            )
        finally:
            ad.close()
    except AdapterError as e:
        print(f"isr: error: {one_line(str(e))}", file=sys.stderr)
        return BAD_INPUT
    if kafka_left and not args.scenario and args.format != "json":
        for n, why in kafka_left.items():
            print(f"not run on Apache Kafka: {n}: {why[0]}")
    return _report(args, rep, stories, mine)


def separating_label(name: str, protocol: str) -> str:
    """``separating: kip-101 StrongIsr (10 steps)``: a separating scenario's story, named in the
    report (traces/conformance/separating.py)."""
    from isr.traces.conformance.separating import label, load, name_of

    try:
        stories = load().get("stories", {}).get(protocol, [])
    except (OSError, ValueError):
        return name
    return next((label(s) for s in stories if name_of(s) == name), name)


def _missing(cov: dict, need: str | None) -> list[str]:
    if not need:
        return []
    out = []
    if need in ("transitions", "all"):
        out += [f"transition {t}" for t in cov["transitions_missing"]]
    if need in ("actions", "all"):
        out += [f"action {a}" for a in cov["actions_missing"]]
    return out


def _suite(rep) -> junit.Suite:
    """The conformance report as one suite, a case per scenario (for --sarif): a failure's rule
    is the property it breaks when classify() names one, else its kind (step, encoding); an
    unsupported command is a skipped case (a coverage gap), as in --junit."""
    from isr.traces.conformance.report import UNSUPPORTED, classify

    suite = junit.Suite(name="isr conform", seconds=rep.seconds)
    for n, _sc, v in rep.results:
        case = junit.Case(name=n, classname="isr conform", seconds=v.seconds, rule="scenario")
        c = classify(v)
        if v.verdict == UNSUPPORTED:
            case.skipped, case.rule = v.reason, "scenario-unsupported"
        elif c:
            case.rule = c.get("property") or f"scenario-{c.get('kind', 'rejected')}"
            case.failure = "\n".join([v.reason, *v.mismatches])[:2000]
        suite.cases.append(case)
    return suite


def _counts(rep) -> str:
    """'41 accepted, 1 unsupported' (the report's one-line summary)."""
    return ", ".join(f"{n} {k}" for k, n in sorted(rep.counts().items())) or "no scenarios"


def _report(args, rep, stories: dict | None = None, mine: Any = None) -> int:
    from isr.traces.conformance.report import (
        classify,
        coverage,
        history_text,
        history_totals,
        junit_xml,
        to_json,
        write_failures,
    )

    failures = write_failures(rep, args.out) if args.out and (rep.rejected or rep.undecided) else []
    spec_name = mine.name if mine is not None else args.protocol
    cov = coverage(rep, mine or args.protocol)
    missing = _missing(cov, args.require_coverage)
    if args.junit:
        try:
            Path(args.junit).write_text(junit_xml(rep))
        except OSError as e:
            raise UsageError(f"cannot write --junit {args.junit}: {e.strerror}") from None
    if args.sarif:
        reports.write_reports(
            argparse.Namespace(sarif=args.sarif, command="conform"), [_suite(rep)]
        )
    if args.format == "json":
        doc = to_json(rep, spec_name, failures)
        doc.update(protocol_source(mine))
        doc["coverage_required"] = args.require_coverage
        doc["coverage_unmet"] = missing
        if stories:
            doc["counterexamples"] = {n: s.to_json() for n, s in stories.items()}
        json.dump(doc, sys.stdout, indent=2, default=list)
        sys.stdout.write("\n")
    else:
        for n, _s, v in rep.results:
            c = classify(v)
            tag = f" [{c.get('property') or c.get('kind')}]" if c else ""
            print(f"{v.verdict:12} {n}{tag}" + (f"  ({v.reason})" if v.reason else ""))
            aim = unreached_aim(n, v)
            if aim:
                print(
                    f"             {aim} never happened in this run: accepted, but the "
                    "scenario did not exercise what it is named after"
                )
            if n.startswith("separating:"):
                print(f"             {separating_label(n, spec_name)}")
            if stories and n in stories:
                st = stories[n]
                print(
                    f"             counterexample: {st.label}, {st.caused} steps caused by "
                    f"commands, {st.own} left to the implementation; {len(_s)} commands"
                )
                if st.reordered:  # normalize: the spec's commuting steps, retold
                    print(
                        "             (retold in an order an adapter can cause; the spec re-runs it to the same state)"
                    )
                if st.approximate:
                    shown = ", ".join(map(str, st.approximate))
                    print(f"             only approximated (no command causes them so): {shown}")
                for note in st.notes:
                    print(f"               {note}")
            h = rep.histories.get(n)
            if h is not None and any(h["counts"].values()):
                print(f"             {history_text(h)}")
                for k, exs in h["examples"].items():
                    print(f"               {k}: {json.dumps(exs[0], separators=(',', ':'))}")
        print(f"verdicts: {_counts(rep)} in {rep.seconds:.1f}s")
        tot = history_totals(rep)
        if tot is not None:
            nz = ", ".join(f"{k} {n}" for k, n in tot["counts"].items() if n) or "no anomaly"
            print(f"client histories: {tot['checked']} checked, {tot['invalid']} invalid; {nz}")
        print(
            f"spec actions covered: {len(cov['actions'])}/{len(cov['actions']) + len(cov['actions_missing'])}"
        )
        if cov["actions_missing"]:
            print(f"  never exercised: {', '.join(cov['actions_missing'])}")
            missed = {unreached_aim(n, v) for n, _s, v in rep.results} - {""}
            aimed = [a for a in cov["actions_missing"] if a in missed]
            if aimed:
                print(
                    f"  (the scenarios spec:{', spec:'.join(aimed)} were accepted without "
                    "reaching their action)"
                )
        print(f"role transitions covered: {', '.join(cov['transitions'])}")
        if cov["transitions_missing"]:
            print(f"  never exercised: {', '.join(cov['transitions_missing'])}")
        if "truncation_branches" in cov:  # KIP-279's rule, in the spec's terms (issue 27)
            got = ", ".join(cov["truncation_branches"]) or "none"
            print(f"truncation branches (KIP-279's rule) taken: {got}")
            if cov["truncation_branches_missing"]:
                print(f"  never taken: {', '.join(cov['truncation_branches_missing'])}")
        if rep.gaps:
            gaps = ", ".join(f"{k} ({n})" for k, n in sorted(rep.gaps.items()))
            print(f"coverage gaps (commands the adapter does not support): {gaps}")
        if rep.shortest_failing:
            n, sc, v = rep.shortest_failing
            c = classify(v)
            print(f"shortest failing scenario ({n}, {len(sc)} commands):")
            for op in sc:
                print(f"  {json.dumps(op)}")
            print(f"  -> {c.get('kind')}: {v.reason}")
            if c.get("property"):
                rec = f", record {c['record']}" if "record" in c else ""
                print(f"     broken property: {c['property']}{rec} ({c.get('why', '')})")
            for m in v.mismatches:
                print(f"     - {m}")
        for f in failures:
            if "revalidate" in f:
                print(f"failing trace {f['name']}: {f['revalidate']}")
            if "recheck_history" in f:
                print(f"its client history: {f['recheck_history']}")
        if rep.stderr_path and Path(rep.stderr_path).exists():  # (an empty temp file is removed)
            print(f"adapter stderr: {rep.stderr_path}")
        for m in missing:
            print(f"required coverage not met: {m}")
    if rep.rejected or missing:
        code = VIOLATION
    elif stories and any(v.verdict == "unsupported" for n, _s, v in rep.results if n in stories):
        code = INCOMPLETE  # a story the adapter could not perform (a coverage gap) is no pass
    else:
        code = INCOMPLETE if rep.undecided else OK  # undecided is never a pass
    if args.format != "json":  # the last line says it all, as `isr check`'s does
        word = {OK: "CONFORMS", VIOLATION: "DOES NOT CONFORM", INCOMPLETE: "UNDECIDED"}[code]
        print(f"verdict: {word} (exit {code})")
    return code


def _report_mutants(args, base, rows, mutants, seconds: float) -> int:
    """The mutation score; per mutant, the first scenario that rejected it and every separating
    scenario that rejects it (a mutant of a flag of ``kraft`` names the variant whose story
    should: ``Mutant.variant``, impl/mutants.py)."""
    killed = sum(1 for r in rows if r[1] == "killed")
    ref_ok = not base.rejected
    if args.format == "json":
        doc = {
            "reference": {"accepted": ref_ok, "counts": base.counts()},
            "mutants": [
                {
                    "name": m,
                    "bug": mutants[m].bug,
                    "verdict": k,
                    "scenarios": n,
                    "reason": why,
                    "variant": mutants[m].variant or None,
                    "separating": seps,
                }
                for m, k, n, why, seps in rows
            ],
            "score": f"{killed}/{len(rows)}",
            "killed": killed,
            "total": len(rows),
            "seconds": round(seconds, 1),
        }
        json.dump(doc, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(f"reference implementation: {'accepted' if ref_ok else 'REJECTED'} ({_counts(base)})")
        for m, k, n, why, seps in rows:
            print(f"{k:9} {m:30} ({mutants[m].bug}; {n} scenarios)")
            if why:
                print(f"          {why[:200]}")
            own = [
                x
                for x in seps
                if mutants[m].variant and x.startswith(f"separating:{mutants[m].variant}:")
            ]
            if seps:
                print(f"          rejected by the separating scenarios: {', '.join(seps)}")
            if mutants[m].variant:
                said = (
                    f"its fix's story rejects it: {separating_label(own[0], args.protocol)}"
                    if own
                    else f"its fix's story (separating:{mutants[m].variant}:*) does NOT reject it"
                )
                print(f"          {said}")
        print(f"mutation score: {killed}/{len(rows)} in {seconds:.0f}s")
    return OK if ref_ok and killed == len(rows) else VIOLATION
