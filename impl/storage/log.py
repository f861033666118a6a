"""The durable log of one broker: a directory per partition with segments, plus the broker's HW
checkpoint and one leader-epoch checkpoint per partition (R3, R13, R14).

It applies the core's storage effects (``Append``, ``Truncate``, ``Flush``, ``CheckpointHw``,
``DeleteLog``) and, on start, recovers what a crash left: each segment is scanned, a torn or
corrupt tail is cut (never served), the offset index is rebuilt. Writes reach the OS on every
append (a SIGKILL loses nothing written); fsync happens on ``Flush`` (the flush policy:
``Config.flush_interval_batches``) and for checkpoints. Not modelled: retention and compaction.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from ..core import messages as m
from ..core.messages import TP, Entry
from . import checkpoint
from .segment import Segment

log = logging.getLogger("isr.storage")

HW_FILE = "replication-offset-checkpoint"
EPOCH_FILE = "leader-epoch-checkpoint"


def _dir_name(tp: TP) -> str:
    return f"{tp[0]}-{tp[1]}"


def _parse_dir(name: str) -> TP | None:
    topic, _, part = name.rpartition("-")
    return (topic, int(part)) if topic and part.isascii() and part.isdigit() else None


class PartitionStore:
    def __init__(self, directory: Path, segment_bytes: int) -> None:
        self.dir = directory
        self.dir.mkdir(parents=True, exist_ok=True)
        self.segment_bytes = segment_bytes
        self.segments: list[Segment] = []
        self.epochs: list[tuple[int, int]] = []

    def recover(self) -> list[Entry]:
        entries: list[Entry] = []
        bases = []
        for p in self.dir.glob("*.log"):
            # a segment is <20-digit base>.log (Segment); anything else is not ours (issue 17)
            if len(p.stem) == 20 and p.stem.isascii() and p.stem.isdigit() and p.is_file():
                bases.append(int(p.stem))
            else:
                log.warning("stray file %s in the partition directory; ignored", p)
        bases.sort()
        for i, base in enumerate(bases):
            seg = Segment(self.dir, base)
            if base != len(entries):  # a gap: this segment and the rest are not trusted
                seg.delete()
                for b in bases[i + 1 :]:
                    Segment(self.dir, b).delete()
                break
            got = seg.recover()
            self.segments.append(seg)
            entries.extend(got)
            if seg.next_offset != base + len(got) or (
                i + 1 < len(bases) and bases[i + 1] != seg.next_offset
            ):
                for b in bases[i + 1 :]:
                    Segment(self.dir, b).delete()
                break
        if not self.segments:
            self.segments.append(Segment(self.dir, 0))
        self._rebuild_epochs(entries)
        return entries

    @property
    def leo(self) -> int:
        return self.segments[-1].next_offset

    def append(self, base: int, entries: tuple[Entry, ...]) -> None:
        seg = self.segments[-1]
        if seg.size >= self.segment_bytes:
            seg = Segment(self.dir, base)
            self.segments.append(seg)
        seg.append(base, entries)
        new = [(e[0], base + i) for i, e in enumerate(entries)]
        changed = False
        for ep, off in new:
            if not self.epochs or ep > self.epochs[-1][0]:
                self.epochs.append((ep, off))
                changed = True
        if changed:
            checkpoint.write_epochs(self.dir / EPOCH_FILE, self.epochs)

    def truncate(self, offset: int) -> None:
        while len(self.segments) > 1 and self.segments[-1].base >= offset:
            self.segments.pop().delete()
        self.segments[-1].truncate_to(max(offset, self.segments[-1].base))
        before = list(self.epochs)
        self.epochs = [(e, o) for e, o in self.epochs if o < offset]
        if self.epochs != before:
            checkpoint.write_epochs(self.dir / EPOCH_FILE, self.epochs)

    def read(self, offset: int) -> list[Entry]:
        """Entries from ``offset`` to the end, through the segments' offset indexes."""
        out: list[Entry] = []
        for seg in self.segments:
            if seg.next_offset > offset:
                out.extend(seg.read_from(max(offset, seg.base)))
        return out

    def fsync(self) -> None:
        self.segments[-1].fsync()

    def _rebuild_epochs(self, entries: list[Entry]) -> None:
        """The epoch checkpoint must agree with the recovered log; rebuild it from the batches
        (each record carries its epoch) when it does not."""
        derived: list[tuple[int, int]] = []
        for i, e in enumerate(entries):
            if not derived or e[0] != derived[-1][0]:
                derived.append((e[0], i))
        if checkpoint.read_epochs(self.dir / EPOCH_FILE) != derived:
            checkpoint.write_epochs(self.dir / EPOCH_FILE, derived)
        self.epochs = derived

    def close(self) -> None:
        for s in self.segments:
            s.close()


class DurableLog:
    def __init__(self, directory: str | Path, segment_bytes: int = 16 << 20) -> None:
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.segment_bytes = segment_bytes
        self.parts: dict[TP, PartitionStore] = {}
        self.hws: dict[TP, int] = {}

    def recover(self) -> dict[TP, tuple[list[Entry], int, int]]:
        """Open every partition; returns tp -> (entries, log start, HW checkpoint) for the core."""
        self.hws = checkpoint.read_hw(self.dir / HW_FILE)
        out: dict[TP, tuple[list[Entry], int, int]] = {}
        for d in sorted(self.dir.iterdir()):
            tp = _parse_dir(d.name) if d.is_dir() else None
            if tp is None:
                if d.name not in (HW_FILE, HW_FILE + ".tmp"):
                    log.warning("stray entry %s in the log directory; ignored", d)
                continue
            ps = PartitionStore(d, self.segment_bytes)
            entries = ps.recover()
            self.parts[tp] = ps
            out[tp] = (entries, 0, min(self.hws.get(tp, 0), len(entries)))
        return out

    def _part(self, tp: TP) -> PartitionStore:
        ps = self.parts.get(tp)
        if ps is None:
            ps = self.parts[tp] = PartitionStore(self.dir / _dir_name(tp), self.segment_bytes)
            ps.recover()
        return ps

    def apply(self, eff: object) -> None:
        if isinstance(eff, m.Append):
            if not eff.entries:  # the partition's log directory is created, nothing written
                self._part(eff.tp)
                return
            self._part(eff.tp).append(eff.base_offset, eff.entries)
        elif isinstance(eff, m.Truncate):
            self._part(eff.tp).truncate(eff.offset)
        elif isinstance(eff, m.Flush):
            self._part(eff.tp).fsync()
        elif isinstance(eff, m.CheckpointHw):
            self.hws.update(dict(eff.hws))
            checkpoint.write_hw(self.dir / HW_FILE, self.hws)
        elif isinstance(eff, m.DeleteLog):
            ps = self.parts.pop(eff.tp, None)
            if ps is not None:
                ps.close()
                shutil.rmtree(ps.dir, ignore_errors=True)

    def close(self) -> None:
        for ps in self.parts.values():
            ps.close()
