"""Progress lines for long runs: states, distinct, queue, depth, states/s, every few seconds."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

ProgressReporter = Callable[[dict], None]


def stderr_reporter(interval: float = 3.0) -> ProgressReporter:
    """A reporter printing one line per report to stderr."""

    def report(info: dict) -> None:
        word = "done" if info.get("final") else "progress"
        print(
            f"[{word}] {info['seconds']:7.1f}s  states {info['generated']:,}  "
            f"distinct {info['distinct']:,}  queue {info['queue']:,}  depth {info['depth']}  "
            f"{info['rate']:,.0f} distinct/s",
            file=sys.stderr,
            flush=True,
        )

    report.interval = interval  # type: ignore[attr-defined]
    return report


@dataclass
class Progress:
    """Rate-limits calls to a reporter; a no-op without one."""

    reporter: ProgressReporter | None
    last: float = 0.0

    def maybe_report(self, seconds: float, generated: int, distinct: int, queue: int, depth: int):
        if self.reporter is None:
            return
        interval = getattr(self.reporter, "interval", 3.0)
        if seconds - self.last < interval:
            return
        self.last = seconds
        self.reporter(self._info(seconds, generated, distinct, queue, depth, False))

    def final(self, seconds: float, generated: int, distinct: int, depth: int) -> None:
        if self.reporter is not None and self.last > 0:
            self.reporter(self._info(seconds, generated, distinct, 0, depth, True))

    @staticmethod
    def _info(seconds, generated, distinct, queue, depth, final) -> dict:
        return {
            "seconds": seconds,
            "generated": generated,
            "distinct": distinct,
            "queue": queue,
            "depth": depth,
            "rate": distinct / seconds if seconds > 0 else 0.0,
            "final": final,
        }
