"""The durable log under crash-at-every-write-point tests (issue 5 item 2; R13)."""

from __future__ import annotations

import shutil
from pathlib import Path

from isr.impl.core import messages as m
from isr.impl.storage import checkpoint
from isr.impl.storage.log import EPOCH_FILE, HW_FILE, DurableLog
from isr.impl.storage.segment import decode_batches, encode_batch

TP = ("t", 0)


def batch(base: int, n: int, epoch: int = 0) -> tuple:
    return tuple((epoch, f"r{base + i}", "x" * (i + 1)) for i in range(n))


def write_log(d: Path, batches: list[tuple]) -> list:
    log = DurableLog(d)
    log.recover()
    entries: list = []
    for b in batches:
        log.apply(m.Append(TP, len(entries), b))
        entries.extend(b)
    log.apply(m.CheckpointHw(((TP, 2),)))
    log.close()
    return entries


def test_roundtrip_and_index_reads(tmp_path):
    bs = [batch(0, 3), batch(3, 2, epoch=1), batch(5, 4, epoch=3)]
    entries = write_log(tmp_path, bs)
    log = DurableLog(tmp_path)
    got = log.recover()
    assert got == {TP: (entries, 0, 2)}
    assert log.parts[TP].read(4) == entries[4:]
    assert checkpoint.read_epochs(tmp_path / "t-0" / EPOCH_FILE) == [(0, 0), (1, 3), (3, 5)]


def test_crash_at_every_byte_of_the_last_batch(tmp_path):
    bs = [batch(0, 3), batch(3, 2, epoch=1), batch(5, 3, epoch=2)]
    src = tmp_path / "src"
    entries = write_log(src, bs)
    seg = src / "t-0" / f"{0:020d}.log"
    full = seg.read_bytes()
    last = len(encode_batch(5, bs[2]))
    start = len(full) - last
    for cut in range(start, len(full) + 1):
        d = tmp_path / f"cut{cut}"
        shutil.copytree(src, d)
        (d / "t-0" / f"{0:020d}.log").write_bytes(full[:cut])
        log = DurableLog(d)
        got, _start, hw = log.recover()[TP]
        want = entries if cut == len(full) else entries[:5]
        assert got == want, cut
        assert hw <= len(got)
        # the torn tail is gone from disk, and the log keeps working after recovery
        assert len((d / "t-0" / f"{0:020d}.log").read_bytes()) == (
            cut if cut == len(full) else start
        )
        log.apply(m.Append(TP, len(got), ((9, "new", "v"),)))
        log.close()
        again = DurableLog(d).recover()[TP][0]
        assert again == [*want, (9, "new", "v")], cut
        shutil.rmtree(d)


def test_corrupt_byte_in_last_batch_is_never_served(tmp_path):
    bs = [batch(0, 2), batch(2, 2)]
    entries = write_log(tmp_path, bs)
    seg = tmp_path / "t-0" / f"{0:020d}.log"
    data = bytearray(seg.read_bytes())
    data[-3] ^= 0xFF  # flip a byte inside the last record's value
    seg.write_bytes(bytes(data))
    assert DurableLog(tmp_path).recover()[TP][0] == entries[:2]


def test_truncate_inside_a_batch_and_across_segments(tmp_path):
    log = DurableLog(tmp_path, segment_bytes=64)
    log.recover()
    entries: list = []
    for i in range(6):
        b = batch(len(entries), 3, epoch=i)
        log.apply(m.Append(TP, len(entries), b))
        entries.extend(b)
    assert len(list((tmp_path / "t-0").glob("*.log"))) > 1
    log.apply(m.Truncate(TP, 7))
    log.close()
    log = DurableLog(tmp_path, segment_bytes=64)
    assert log.recover()[TP][0] == entries[:7]
    assert checkpoint.read_epochs(tmp_path / "t-0" / EPOCH_FILE) == [(0, 0), (1, 3), (2, 6)]


def test_checkpoint_is_atomic_old_or_new(tmp_path):
    p = tmp_path / HW_FILE
    checkpoint.write_hw(p, {TP: 5})
    # A crash before the rename leaves only a temp file: the old checkpoint still reads.
    (tmp_path / (HW_FILE + ".tmp")).write_text("0\n1\nt 0")
    assert checkpoint.read_hw(p) == {TP: 5}
    checkpoint.write_hw(p, {TP: 7})
    assert checkpoint.read_hw(p) == {TP: 7}
    p.write_text("0\n2\nt 0 7\n")  # torn (count says 2): treated as absent, never half-read
    assert checkpoint.read_hw(p) == {}


def test_decode_stops_at_garbage():
    good = encode_batch(0, batch(0, 2))
    got, valid = decode_batches(good + b"\x00\x00\x00\x10garbage")
    assert valid == len(good) and len(got) == 1
