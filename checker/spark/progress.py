"""One progress line per level: states generated, new distinct states, frontier, seconds, rate.

The engine calls its reporter once per level with a dict holding the keys of
:mod:`checker.progress` (``seconds generated distinct queue depth rate final``) plus ``level``,
``new``, ``level_generated``, ``level_seconds`` and ``level_rate`` (states generated per second
in the level). :func:`level_reporter` prints them to stderr.
"""

from __future__ import annotations

import sys
from typing import Any

from ..progress import ProgressReporter


def level_info(
    *,
    level: int,
    seconds: float,
    level_seconds: float,
    generated: int,
    level_generated: int,
    new: int,
    distinct: int,
    final: bool = False,
) -> dict[str, Any]:
    return {
        "seconds": seconds,
        "generated": generated,
        "distinct": distinct,
        "queue": new,
        "depth": level,
        "rate": distinct / seconds if seconds > 0 else 0.0,
        "final": final,
        "level": level,
        "new": new,
        "level_generated": level_generated,
        "level_seconds": level_seconds,
        "level_rate": level_generated / level_seconds if level_seconds > 0 else 0.0,
    }


def level_reporter() -> ProgressReporter:
    def report(info: dict[str, Any]) -> None:
        if info.get("final"):
            print(
                f"[done] {info['seconds']:7.1f}s  states {info['generated']:,}  "
                f"distinct {info['distinct']:,}  depth {info['depth']}  "
                f"{info['rate']:,.0f} distinct/s",
                file=sys.stderr,
                flush=True,
            )
            return
        print(
            f"[level {info['level']:3d}] {info['seconds']:7.1f}s  "
            f"states {info['level_generated']:,}  new {info['new']:,}  "
            f"frontier {info['queue']:,}  distinct {info['distinct']:,}  "
            f"{info['level_seconds']:.2f} s  {info['level_rate']:,.0f} states/s",
            file=sys.stderr,
            flush=True,
        )

    report.interval = 0.0  # type: ignore[attr-defined]
    return report
