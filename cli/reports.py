"""The reports every command can write after a run, from the same suites: ``--junit FILE``
(JUnit XML, cli/junit.py) and ``--sarif FILE`` (SARIF 2.1.0, cli/sarif.py). Its own module so
that junit and sarif do not import each other (sarif builds on junit's suites)."""

from __future__ import annotations

from typing import Any

from . import junit, sarif


def write_reports(args: Any, suites: list[junit.Suite]) -> None:
    """The one call every command makes after a run."""
    if getattr(args, "junit", None):
        junit.write(args.junit, suites)
    if getattr(args, "sarif", None):
        sarif.write(args.sarif, sarif.from_suites(suites, command=_command(args)))


def _command(args: Any) -> str:
    cmd = getattr(args, "command", None) or getattr(args, "cmd", None)
    return f"isr {cmd}" if isinstance(cmd, str) else "isr"
