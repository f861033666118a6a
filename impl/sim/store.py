"""In-memory durable store for the simulation: what survives a process crash (R13, R14).

A process crash (SIGKILL) keeps everything written (the OS page cache survives); a power failure
(``crash(..., lose_unflushed=True)``) drops what was not flushed, which is how R14's "a committed
record can exist only in memory" shows up.
"""

from __future__ import annotations

from ..core import messages as m
from ..core.messages import TP, Entry


class MemStore:
    def __init__(self) -> None:
        self.logs: dict[TP, list[Entry]] = {}
        self.log_start: dict[TP, int] = {}
        self.flushed: dict[TP, int] = {}  # number of entries known flushed
        self.hw_checkpoint: dict[TP, int] = {}

    def apply(self, eff: object) -> None:
        if isinstance(eff, m.Append):
            log = self.logs.setdefault(eff.tp, [])
            start = self.log_start.get(eff.tp, 0)
            assert eff.base_offset == start + len(log), (eff, start, len(log))
            log.extend(eff.entries)
        elif isinstance(eff, m.Truncate):
            start = self.log_start.get(eff.tp, 0)
            if eff.offset < start:  # R12 reset: the core's log restarts elsewhere
                self.logs[eff.tp] = []
                self.log_start[eff.tp] = eff.offset
            else:
                del self.logs.setdefault(eff.tp, [])[eff.offset - start :]
            self.flushed[eff.tp] = min(self.flushed.get(eff.tp, 0), len(self.logs[eff.tp]))
        elif isinstance(eff, m.Flush):
            self.flushed[eff.tp] = len(self.logs.get(eff.tp, []))
        elif isinstance(eff, m.CheckpointHw):
            self.hw_checkpoint.update(dict(eff.hws))  # written atomically (fsync'd)
        elif isinstance(eff, m.DeleteBefore):
            start = self.log_start.get(eff.tp, 0)
            log = self.logs.setdefault(eff.tp, [])
            n = max(0, eff.offset - start)
            del log[:n]  # (past the log end: emptied, starting there, a follower's reset)
            self.log_start[eff.tp] = max(start, eff.offset)
            # (the recovery point follows the log start: a crash never brings back less)
            self.flushed[eff.tp] = max(0, self.flushed.get(eff.tp, 0) - n)
        elif isinstance(eff, m.DeleteLog):
            # the replica's directory goes, and its entries of the checkpoint files with it
            # (KIP-455's stop with delete: a broker given the partition again starts empty,
            # HW 0, not at a checkpoint of its previous replica)
            for d in (self.logs, self.log_start, self.flushed, self.hw_checkpoint):
                d.pop(eff.tp, None)

    def power_failure(self) -> None:
        for tp, log in self.logs.items():
            del log[self.flushed.get(tp, 0) :]

    def restored(self) -> dict[TP, tuple[list[Entry], int, int]]:
        return {
            tp: (list(log), self.log_start.get(tp, 0), self.hw_checkpoint.get(tp, 0))
            for tp, log in self.logs.items()
        }
