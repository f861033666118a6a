"""A broker that always comes back (issue 17, item 2): a corrupt or missing HW checkpoint is
recovered from 0 (clamped to the log; the leader's fetches raise it again, R13) with a warning,
a stray file in the log directories is ignored with a warning, and ``isr cluster restart``
exits non-zero when the broker did not come up."""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

import pytest
from isr.impl.core import messages as m
from isr.impl.storage import checkpoint
from isr.impl.storage.log import HW_FILE, DurableLog

TP = ("t", 0)


def _fill(d: Path, n: int = 5, hw: int = 3) -> None:
    log = DurableLog(d)
    log.apply(m.Append(TP, 0, tuple((0, f"r{i}", "v") for i in range(n))))
    log.apply(m.CheckpointHw(((TP, hw),)))
    log.close()


@pytest.mark.parametrize(
    "content",
    [
        b"\xff\xfe\x00garbage",  # not UTF-8
        b"0\n1\nt 0 x\n",  # a non-integer HW
        b"0\n1\nt 0 -5\n",  # a negative HW
        b"0\n1\nt zero 3\n",  # a non-integer partition
        b"0\n3\nt 0 3\n",  # a short body
        b"7\n",  # another version
        b"",  # empty
    ],
)
def test_corrupt_hw_checkpoint_recovers_from_zero(tmp_path: Path, content: bytes, caplog) -> None:
    _fill(tmp_path)
    (tmp_path / HW_FILE).write_bytes(content)
    with caplog.at_level(logging.WARNING, logger="isr.storage"):
        got = DurableLog(tmp_path).recover()
    entries, start, hw = got[TP]
    assert len(entries) == 5 and start == 0 and hw == 0
    assert any("checkpoint" in r.getMessage() for r in caplog.records)


def test_missing_hw_checkpoint_recovers_from_zero(tmp_path: Path) -> None:
    _fill(tmp_path)
    (tmp_path / HW_FILE).unlink()
    entries, _s, hw = DurableLog(tmp_path).recover()[TP]
    assert len(entries) == 5 and hw == 0


def test_good_checkpoint_is_kept(tmp_path: Path) -> None:
    _fill(tmp_path)
    assert DurableLog(tmp_path).recover()[TP][2] == 3


def test_corrupt_epoch_checkpoint_is_rebuilt(tmp_path: Path, caplog) -> None:
    _fill(tmp_path)
    p = tmp_path / "t-0" / "leader-epoch-checkpoint"
    p.write_bytes(b"0\n1\nzero -1\n")
    with caplog.at_level(logging.WARNING, logger="isr.storage"):
        entries = DurableLog(tmp_path).recover()[TP][0]
    assert len(entries) == 5
    assert checkpoint.read_epochs(p) == [(0, 0)]
    assert caplog.records


@pytest.mark.parametrize("name", ["junk.log", "0.log", "notes.txt", "٣.log", "sub.log/"])
def test_stray_file_in_partition_dir_is_ignored(tmp_path: Path, name: str, caplog) -> None:
    _fill(tmp_path)
    stray = tmp_path / "t-0" / name.rstrip("/")
    if name.endswith("/"):
        stray.mkdir()
    else:
        stray.write_bytes(b"not a segment")
    with caplog.at_level(logging.WARNING, logger="isr.storage"):
        entries = DurableLog(tmp_path).recover()[TP][0]
    assert len(entries) == 5
    if name.endswith(".log") or name.endswith("/"):
        assert any("stray" in r.getMessage() for r in caplog.records)


def test_stray_entries_in_log_dir_are_ignored(tmp_path: Path, caplog) -> None:
    _fill(tmp_path)
    (tmp_path / "core.1234").write_bytes(b"\x00")
    (tmp_path / "lost+found").mkdir()
    (tmp_path / "t-٣").mkdir()
    with caplog.at_level(logging.WARNING, logger="isr.storage"):
        got = DurableLog(tmp_path).recover()
    assert list(got) == [TP] and len(got[TP][0]) == 5
    assert sum("stray" in r.getMessage() for r in caplog.records) == 3


@pytest.mark.zookeeper
def test_cluster_restart_reports_a_broker_that_did_not_come_up(cluster, capsys) -> None:
    """A corrupt checkpoint: the broker comes back (warning in its log), exit 0. A log
    directory that cannot be opened: ``isr cluster restart`` exits 1 naming the cause."""
    from isr.cli.main import main

    d = cluster.dir / "broker-1" / "log"
    cluster.kill(1)
    (d / HW_FILE).write_bytes(b"\xff\xff")
    assert main(["cluster", "restart", "1", "--dir", str(cluster.dir)]) == 0
    assert "broker 1 restarted" in capsys.readouterr().out
    text = (cluster.dir / "broker-1" / "broker.log").read_text(errors="replace")
    assert "checkpoint" in text and "WARNING" in text
    cluster.__init__(cluster.dir)  # the CLI's restart recorded the new process
    cluster.kill(1)
    shutil.rmtree(d)
    d.write_text("a file where the log directory should be")
    os.chmod(d, 0o000)
    code = main(["cluster", "restart", "1", "--dir", str(cluster.dir)])
    err = capsys.readouterr().err
    assert code == 1 and "broker 1" in err and "restarted" not in err


@pytest.mark.zookeeper
def test_cluster_up_reports_a_broker_that_did_not_come_up(tmp_path: Path, capsys) -> None:
    """``isr cluster up`` exits 1 at once (not after its registration wait) when a broker
    exits while starting, naming it, and leaves nothing running."""
    from isr.cli.main import main
    from isr.impl.cluster import zk as zkserver
    from isr.impl.cluster.manager import Cluster

    try:
        zkserver.find_install()
    except zkserver.ZooKeeperMissing as e:
        pytest.fail(str(e))
    d = tmp_path / "cluster"
    (d / "broker-1").mkdir(parents=True)
    (d / "broker-1" / "log").write_text("a file where the log directory should be")
    code = main(["cluster", "up", "--dir", str(d), "--brokers", "2", "--replication", "2"])
    err = capsys.readouterr().err
    assert code == 1 and "broker 1" in err, err
    assert not Cluster(d).running  # brought down: ZooKeeper and broker 0 stopped
