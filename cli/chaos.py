"""`isr chaos --duration S`: acks=all produce while killing and restarting brokers (and, with
``--faults``, shutting them down in a controlled way or moving leadership, R9), then consume
everything and report acknowledged, consumed, lost and duplicated records (R15, R17)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from .cluster import BROKER_DOWN, DEFAULT_DIR, add_cluster_options, open_cluster, start
from .errors import OK, VIOLATION, UsageError, refuse_unwritable
from .models import DAY, seconds_in, seed_int


def run(args: argparse.Namespace) -> int:
    from isr.impl.cluster.manager import BrokerDown
    from isr.impl.cluster.workload import FAULT_KINDS, chaos

    if args.duration <= 0:
        raise UsageError("--duration must be > 0")
    if args.timeline:  # refused before the run, not after it
        refuse_unwritable(args.timeline, "--timeline")
    kinds = tuple(k.strip() for k in args.faults.split(",") if k.strip())
    bad = [k for k in kinds if k not in FAULT_KINDS]
    if not kinds or bad:
        raise UsageError(f"--faults: choose from {', '.join(FAULT_KINDS)} (got {args.faults!r})")
    story = None
    if args.story is not None:
        from . import chaos_story

        if args.story == "auto":
            story = chaos_story.derive(args.protocol, args.replication, args.min_insync)
        else:
            story = chaos_story.from_file(args.story)
        print(f"chaos: story: {story.describe()}", file=sys.stderr)
    c = open_cluster(args.dir)
    own = not c.running
    if own:
        try:
            c = start(args)
        except BrokerDown as e:
            print(f"isr: chaos: the cluster did not come up: {e}", file=sys.stderr)
            return BROKER_DOWN
    try:

        def log(s: str) -> None:
            print(f"chaos: {s}", file=sys.stderr)

        rep = asyncio.run(
            chaos(
                c,
                args.duration,
                seed=args.seed,
                kill_every_s=args.kill_every,
                down_for_s=args.down_for,
                log=log,
                between_steps=not args.anywhere,
                kinds=kinds,
                idempotence=not args.no_idempotence,
                story=None if story is None else story.ops,
            )
        )
    except BrokerDown as e:  # a restarted broker did not come back: the run cannot go on
        print(f"isr: chaos: {e}", file=sys.stderr)
        return BROKER_DOWN
    finally:
        if own:
            c.down()
    hist = check_history(rep, args.history, args.timeline)
    if args.json:
        print(json.dumps(rep, indent=1))
    else:
        print(
            f"acknowledged {rep['acknowledged']}  consumed {rep['consumed']}  lost {rep['lost']}  "
            f"duplicated {rep['duplicated']}  failed {rep['failed']}"
        )
        if rep["lost"]:
            print(f"lost: {rep['lost_ids']}")
        if story is not None:
            rounds = rep.get("story_rounds", [])
            played = sum(1 for r in rounds if not r["not_reached"])
            print(f"story: {len(rounds)} rounds, {played} played to the end")
            for r in rounds:
                if r["not_reached"]:
                    print(f"  round on brokers {r['roles']}: not reached: {r['not_reached']}")
        if hist is not None:
            from .history import render

            print("\n".join(render(hist)))
            if args.history:
                print(f"client history: {args.history} (isr history {args.history})")
    bad_history = hist is not None and not hist.valid
    return OK if rep["lost"] == 0 and not bad_history else VIOLATION


def check_history(rep: dict[str, Any], path: str | None, timeline: str | None = None) -> Any:
    """The run's client history (``rep["history"]``, taken out of the report) checked by
    traces/history.py: the report gets its counts and first examples (``history_check``);
    ``path`` (--history) receives the history as NDJSON, a header line then one op a line;
    ``timeline`` (--timeline) its timeline page (cli/timeline.py)."""
    doc = rep.pop("history", None)
    if doc is None:
        return None
    from isr.traces.history import check, parse

    ops = doc.pop("ops")
    if path:
        try:
            with open(path, "w", encoding="utf-8") as f:
                f.write(json.dumps(doc, separators=(",", ":")) + "\n")
                for op in ops:
                    f.write(json.dumps(op, separators=(",", ":")) + "\n")
        except OSError as e:
            raise UsageError(f"cannot write --history {path}: {e.strerror}") from None
    history = parse(doc, ops, path or "chaos")
    res = check(history)
    if timeline:
        from . import timeline as page

        page.write(timeline, history, res, "--timeline")
    rep["history_check"] = {
        "valid": res.valid,
        "violations": res.violations,
        "counts": res.counts(),
        "examples": {k: a.examples for k, a in res.anomalies.items() if a.examples},
        "stats": res.stats,
    }
    return res


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "chaos",
        help="kill, shut down and restart brokers, move leaders, under an acks=all stream",
        description="The run's client history (every send and poll) is checked as `isr "
        "history` does (traces/FORMAT.md, 'Client history'). Exit 0: no acknowledged record was "
        "lost and the history is valid; 1: acknowledged records were lost, or the history has "
        "an anomaly; 2: bad input or a broken environment (no ZooKeeper, a cluster that will "
        "not start).",
    )
    p.add_argument(
        "--duration", type=seconds_in(0, DAY), required=True, help="seconds of faults (<= 1 day)"
    )
    p.add_argument("--dir", default=DEFAULT_DIR)
    p.add_argument("--seed", type=seed_int, default=0)
    p.add_argument(
        "--kill-every", type=seconds_in(0, DAY), default=4.0, help="seconds between kills"
    )
    p.add_argument(
        "--down-for",
        type=seconds_in(0, DAY),
        default=2.0,
        help="seconds a killed broker stays down",
    )
    p.add_argument(
        "--anywhere",
        action="store_true",
        help="kill at once, possibly inside a step (default: between two steps, so the run's "
        "traces can be validated)",
    )
    p.add_argument(
        "--faults",
        default="kill",
        help="comma-separated fault kinds drawn at random: kill (SIGKILL), shutdown (controlled "
        "shutdown, then stop), elect (move leadership to a random broker), preferred "
        "(preferred-replica election); default: kill",
    )
    p.add_argument(
        "--no-idempotence",
        action="store_true",
        help="non-idempotent producers (before Kafka 3.0): a retry after a lost answer may "
        "append a batch twice, which the report counts as duplicated (R15). Default: idempotent "
        "(a producer id and per-partition sequence numbers; the leader drops a duplicate)",
    )
    p.add_argument(
        "--history",
        metavar="FILE",
        help="write the run's client history here (NDJSON; re-check it with `isr history FILE`)",
    )
    p.add_argument(
        "--timeline",
        metavar="OUT",
        help="write the run as a timeline page at the end (as `isr history FILE --html OUT`: "
        "a lane per client, a bar per operation, lost writes red, the faults as bands)",
    )
    p.add_argument(
        "--story",
        nargs="?",
        const="auto",
        metavar="FILE",
        help="instead of random faults, play a spec counterexample's fault order in rounds "
        "(FILE: one written by `isr check --trace-out`; without FILE the checker's shortest "
        "acknowledged-record loss for --protocol, or, for a version with none, the one "
        "hw-truncation fails on)",
    )
    p.add_argument("--json", action="store_true")
    add_cluster_options(p)
    p.set_defaults(run=run)
