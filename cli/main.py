"""Entry point of the `isr` command. Each subcommand lives in its own module exposing
``register(subparsers)``; the module list below is the only place they are wired together."""

from __future__ import annotations

import argparse
import sys

from isr.spec.config import did_you_mean

from . import (
    chaos,
    check,
    cluster,
    conform,
    explain,
    explore,
    graph,
    history,
    liveness,
    matrix,
    protocols,
    prove,
    replay,
    simulate,
    validate,
)
from .errors import BAD_INPUT, UsageError, one_line
from .sparkopts import flush_notices

# Subcommand modules, in the order `isr --help` lists them; each has register(subparsers).
COMMANDS = (
    check,
    simulate,
    protocols,
    matrix,
    replay,
    liveness,
    graph,
    prove,
    explain,
    explore,
    validate,
    conform,
    history,
    cluster,
    chaos,
)


def version() -> str:
    """The installed distribution's version (pyproject.toml), or "unknown" in a checkout that was
    never installed."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("isr-toolkit")
    except PackageNotFoundError:
        return "unknown"


class _Parser(argparse.ArgumentParser):
    """No abbreviated options: with them, ``isr validate --protocol kip-320`` (validate has no
    ``--protocol``) was read as ``--protocol-file kip-320``; an option must be spelt out."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)
        self._argv: list[str] = []

    def error(self, message: str):  # argparse's own usage errors: exit 2, one line
        if message.startswith("unrecognized arguments: "):
            # an option mistyped (``--replica``, ``--invariants``): name the closest one
            opts = [o for a in self._actions for o in a.option_strings if o.startswith("--")]
            for a in self._actions:  # the top parser reports its command's leftovers
                if isinstance(a, argparse._SubParsersAction):
                    cmd = next((w for w in self._argv if w in a.choices), None)
                    if cmd is not None:
                        opts += [
                            o
                            for b in a.choices[cmd]._actions
                            for o in b.option_strings
                            if o.startswith("--")
                        ]
            for word in message.split(": ", 1)[1].split():
                if word.startswith("--"):
                    hint = did_you_mean(word.split("=", 1)[0], opts)
                    if hint:
                        message += hint
                        break
        self.exit(BAD_INPUT, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="isr",
        description="Specification, model checker and reference implementation of Kafka's "
        "in-sync-replica replication protocol.",
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"isr {version()} (Python {sys.version.split()[0]})",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for command in COMMANDS:
        command.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        parser._argv = list(sys.argv[1:] if argv is None else argv)  # (for error hints)
        args = parser.parse_args(argv)
    except SystemExit as e:  # a usage error (its line is printed): the code, like any other
        if e.code == BAD_INPUT:
            return BAD_INPUT
        raise  # --help
    if not getattr(args, "run", None):
        parser.print_help()
        return BAD_INPUT
    flush_notices(show=False)
    try:
        code = int(args.run(args) or 0)
    except UsageError as e:
        flush_notices(show=False)  # bad input: one line, the error
        print(f"isr: error: {one_line(str(e))}", file=sys.stderr)
        return BAD_INPUT
    except KeyboardInterrupt:
        flush_notices()
        print("isr: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    flush_notices()  # deprecated option spellings (cli.sparkopts)
    return code


if __name__ == "__main__":
    sys.exit(main())
