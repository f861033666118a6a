"""`isr protocols`: the protocol versions with a one-line description."""

from __future__ import annotations

import argparse
import json

from spec import PROTOCOLS


def register(sub) -> None:
    p = sub.add_parser("protocols", help="list the protocol versions of the spec")
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.format == "json":
        print(
            json.dumps(
                [{"name": p.name, "description": p.description} for p in PROTOCOLS.values()],
                indent=2,
            )
        )
    else:
        width = max(len(n) for n in PROTOCOLS)
        for p in PROTOCOLS.values():
            print(f"{p.name:<{width}}  {p.description}")
    return 0
