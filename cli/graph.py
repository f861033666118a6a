"""`isr graph`: the reachable state graph of the spec, its statistics, GraphML and DOT export."""

from __future__ import annotations

import argparse
import json
import sys

from isr.checker.graph import GraphLimitError, build_graph, export_dot, export_graphml, graph_stats
from isr.spec.protocols import protocol_source

from .errors import INCOMPLETE, UsageError
from .models import add_model_args, model_from_args, positive_int

DOT_READABLE = 2_000  # more states than this make a drawing nobody can read


def register(sub) -> None:
    p = sub.add_parser(
        "graph",
        help="build the reachable state graph; print statistics, export GraphML / DOT",
        description="Statistics: states, edges, SCCs, diameter (largest BFS depth), deadlocks. "
        "Exit 0: the graph was built; 2: bad input; 3: the graph exceeds --max-states.",
    )
    add_model_args(p)
    p.add_argument("--graphml", metavar="FILE", help="write the graph as GraphML")
    p.add_argument(
        "--dot",
        metavar="FILE",
        help="write the graph as Graphviz DOT (nodes labelled by leader, epoch, ISR and each "
        "replica's LEO/HW)",
    )
    p.add_argument(
        "--dot-tooltips",
        action="store_true",
        help="with --dot: each node's whole state as its tooltip (for SVG output; about 1 kB "
        "a node)",
    )
    p.add_argument(
        "--symmetry", action="store_true", help="one state per orbit of replica renaming"
    )
    p.add_argument("--max-states", type=positive_int, default=500_000, metavar="N")
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    model = model_from_args(args)
    if args.max_states <= 0:
        raise UsageError("--max-states must be positive")
    try:
        sg = build_graph(model, symmetry=args.symmetry, max_states=args.max_states)
    except GraphLimitError as e:
        print(f"isr graph: incomplete: {e}", file=sys.stderr)
        return INCOMPLETE
    stats = graph_stats(sg)
    try:
        if args.graphml:
            export_graphml(sg, args.graphml)
        if args.dot:
            export_dot(sg, args.dot, with_states=args.dot_tooltips)
            if sg.graph.number_of_nodes() > DOT_READABLE:
                print(
                    f"isr graph: note: {sg.graph.number_of_nodes():,} states in {args.dot}; "
                    f"Graphviz draws up to a few hundred readably (smaller bounds, or "
                    f"--symmetry)",
                    file=sys.stderr,
                )
    except OSError as e:
        raise UsageError(f"cannot write: {e}") from None
    if args.format == "json":
        src = protocol_source(model.protocol)
        json.dump(
            {"model": model.name, "config": model.config.to_json(), **src, **stats}, sys.stdout
        )
        sys.stdout.write("\n")
    else:
        print(f"isr graph: {model.name} {json.dumps(model.config.to_json())}")
        for k, v in protocol_source(model.protocol).items():
            print(f"  {k:<18} {v}")
        for k, v in stats.items():
            print(f"  {k:<18} {v}")
    return 0
