"""`isr cluster` / `isr chaos` argument handling: user mistakes are one-line errors (exit 2)."""

from __future__ import annotations

import pytest

from cli import chaos, cluster
from cli.errors import BAD_INPUT, UsageError
from cli.main import _Parser


def parse(argv: list[str]):
    p = _Parser(prog="isr")
    sub = p.add_subparsers(parser_class=_Parser)
    cluster.register(sub)
    chaos.register(sub)
    return p.parse_args(argv)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["cluster", "status"], "no cluster running"),
        (["cluster", "kill", "1"], "no cluster running"),
        (["cluster", "up", "--replication", "4"], "exceeds --brokers"),
        (["cluster", "up", "--protocol", "kip-999"], "unknown protocol"),
        (["cluster", "up", "--min-insync", "5"], "--min-insync"),
        (["chaos", "--duration", "0"], "--duration"),
        (["cluster", "elect-leader", "--broker", "1"], "no cluster running"),
        (["cluster", "shutdown", "1"], "no cluster running"),
        (["chaos", "--duration", "5", "--faults", "kill,bogus"], "--faults"),
    ],
)
def test_user_mistakes_are_usage_errors(tmp_path, argv, message):
    args = parse([*argv, "--dir", str(tmp_path / "c")])
    with pytest.raises(UsageError, match=message):
        args.run(args)


def test_argparse_errors_exit_2():
    with pytest.raises(SystemExit) as e:
        parse(["cluster", "kill", "not-a-number"])
    assert e.value.code == BAD_INPUT
