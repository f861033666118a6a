"""`isr cluster` / `isr chaos` argument handling: user mistakes are one-line errors (exit 2)."""

from __future__ import annotations

import pytest
from isr.cli import chaos, cluster
from isr.cli.errors import BAD_INPUT, UsageError
from isr.cli.main import _Parser


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
        (["cluster", "elect-leader", "--broker", "1"], "no cluster running"),
        (["cluster", "shutdown", "1"], "no cluster running"),
        (["chaos", "--duration", "5", "--faults", "kill,bogus"], "--faults"),
    ],
)
def test_user_mistakes_are_usage_errors(tmp_path, argv, message):
    args = parse([*argv, "--dir", str(tmp_path / "c")])
    with pytest.raises(UsageError, match=message):
        args.run(args)


@pytest.mark.parametrize(
    "argv",
    [
        ["cluster", "kill", "not-a-number"],
        ["chaos", "--duration", "0"],
        ["cluster", "up", "--fetchers", "0"],
        ["cluster", "up", "--brokers", "1000"],
    ],
)
def test_argparse_errors_exit_2(argv):
    with pytest.raises(SystemExit) as e:
        parse(argv)
    assert e.value.code == BAD_INPUT


def test_dir_naming_a_file_is_a_usage_error(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    args = parse(["cluster", "up", "--dir", str(f)])
    with pytest.raises(UsageError, match="not a directory"):
        args.run(args)


def test_cluster_commands_keep_kazoo_warnings_off_the_terminal(tmp_path):
    """issue 30: every short-lived ZooKeeper client of `isr cluster` / `isr chaos` logged
    "Connection dropped: socket connection broken" on the user's terminal as it closed."""
    import logging

    from isr.cli.cluster import open_cluster

    logging.getLogger("kazoo").setLevel(logging.NOTSET)
    open_cluster(str(tmp_path / "c"))
    assert logging.getLogger("kazoo").getEffectiveLevel() == logging.ERROR
    assert not logging.getLogger("kazoo.client").isEnabledFor(logging.WARNING)
