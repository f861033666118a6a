"""`isr protocols`: the protocol versions and the fault modes, each with a one-line description."""

from __future__ import annotations

import argparse
import json

from isr.spec import PROTOCOLS
from isr.spec.config import FAULT_MODES
from isr.spec.protocols import protocol_source

from .models import add_protocol_file_arg, protocol_from_args


def register(sub) -> None:
    p = sub.add_parser(
        "protocols",
        help="list the protocol versions of the spec and the fault modes",
        description="Exit 0: listed; 2: bad input.",
    )
    p.add_argument("--format", choices=["text", "json"], default="text")
    add_protocol_file_arg(
        p, "also list your own protocol version from this Python file (and check that it loads)"
    )
    p.set_defaults(run=run)


def _flags(settings) -> str:
    out = []
    for key, value in settings:
        flag = "--" + key.replace("_", "-")
        out.append(flag if value is True else f"{flag} {value}")
    return " ".join(out)


def run(args: argparse.Namespace) -> int:
    mine = protocol_from_args(args)  # listed below after the built-in versions
    versions = [*PROTOCOLS.values(), *([mine] if mine is not None else [])]
    if args.format == "json":
        print(
            json.dumps(
                {
                    "protocols": [
                        {"name": p.name, "description": p.description, **protocol_source(p)}
                        for p in versions
                    ],
                    "fault_modes": [
                        {
                            "name": m.name,
                            "requirement": m.requirement,
                            "flags": _flags(m.settings),
                            "description": m.description,
                        }
                        for m in FAULT_MODES
                    ],
                },
                indent=2,
            )
        )
    else:
        width = max(len(p.name) for p in versions)
        print("protocol versions (--protocol NAME):")
        for p in versions:
            src = protocol_source(p)
            where = f" (--protocol-file {src['protocol_file']})" if src else ""
            print(f"  {p.name:<{width}}  {p.description}{where}")
        print()
        print("fault modes (flags of `isr check`; rows of `isr matrix`):")
        width = max(len(m.name) for m in FAULT_MODES)
        for m in FAULT_MODES:
            print(
                f"  {m.name:<{width}}  {_flags(m.settings):<26} {m.description} ({m.requirement})"
            )
    return 0
