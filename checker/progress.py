"""Progress lines for long runs: states, distinct, queue, depth, states/s, peak memory and, once the
level sizes allow one, a rough ETA; every few seconds, and a final line when the run ends."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

try:
    import resource
except ImportError:  # not on Windows
    resource = None  # type: ignore[assignment]

ProgressReporter = Callable[[dict], None]


def peak_rss_mib(pids: Sequence[int] = ()) -> float | None:
    """The process's peak resident set size so far, in MiB (None where it cannot be read), plus
    that of the processes ``pids`` (a parallel run's workers, which hold the states: Linux's
    /proc/PID/status VmHWM; a worker that cannot be read, or is gone, adds nothing)."""
    if resource is None:
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    mib = peak / (1 << 20) if sys.platform == "darwin" else peak / 1024  # bytes there, KiB here
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status", encoding="ascii") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        mib += int(line.split()[1]) / 1024  # kB
                        break
        except (OSError, ValueError):
            continue
    return mib


def estimate_eta(levels: Sequence[int], expanded_in_level: int, seconds: float) -> float | None:
    """A rough estimate of the seconds left in a breadth-first search, or None when the level
    sizes do not allow one yet.

    ``levels`` are the sizes of the levels so far, the last being expanded (``expanded_in_level``
    of its states done). There is an estimate only once the levels have started to shrink (the
    last growth ratio below 0.95). The levels to come are extrapolated from the last two growth
    ratios: past its widest level a state space's ratios typically keep falling by about as much
    per level (the default model: 0.93, 0.85, 0.76, 0.67, 0.57...), so the ratio goes on falling
    by the last decrease; if it did not fall, the levels are taken to shrink geometrically at the
    last ratio. States are expanded at the average rate so far."""
    if len(levels) < 3 or seconds <= 0:
        return None
    a, b, c = levels[-3:]
    if a <= 0 or b <= 0:
        return None
    r_prev, r = b / a, c / b
    if r >= 0.95:  # not (clearly) shrinking yet
        return None
    fall = r_prev - r
    expanded = sum(levels[:-1]) + expanded_in_level
    if expanded <= 0:
        return None
    future = 0.0
    size = float(c)
    for _ in range(10_000):
        if fall > 0:
            r -= fall
        if r <= 0:
            break
        size *= r
        if size < 1:
            break
        future += size
    remaining = max(c - expanded_in_level, 0) + future
    return remaining * seconds / expanded


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def format_line(info: dict) -> str:
    """One progress line (what stderr_reporter prints)."""
    if info.get("final"):
        reason = info.get("stop_reason")
        word = "done" if reason in (None, "exhausted") else f"stopped: {reason}"
    else:
        word = "progress"
    line = (
        f"[{word}] {info['seconds']:7.1f}s  states {info['generated']:,}  "
        f"distinct {info['distinct']:,}  queue {info['queue']:,}  depth {info['depth']}  "
        f"{info['rate']:,.0f} distinct/s"
    )
    if info.get("peak_rss_mib") is not None:
        line += f"  peak RSS {info['peak_rss_mib']:,.0f} MiB"
    if info.get("disk_mib") is not None:
        line += f"  disk {info['disk_mib']:,.0f} MiB"
    if info.get("eta_seconds") is not None and not info.get("final"):
        line += f"  ETA ~{_duration(info['eta_seconds'])} (rough estimate)"
    return line


def stderr_reporter(interval: float = 3.0) -> ProgressReporter:
    """A reporter printing one line per report to stderr."""

    def report(info: dict) -> None:
        print(format_line(info), file=sys.stderr, flush=True)

    report.interval = interval  # type: ignore[attr-defined]
    return report


@dataclass
class Progress:
    """Rate-limits calls to a reporter; a no-op without one.

    Reports carry ``seconds generated distinct queue depth rate final`` and ``peak_rss_mib``
    (``disk_mib`` too when the engine keeps a disk store);
    ``eta_seconds`` (None when there is no estimate) when the engine passes its level sizes; the
    final one ``stop_reason``."""

    reporter: ProgressReporter | None
    last: float = 0.0
    # the worker processes whose memory counts too (the parallel engine sets it)
    pids: Callable[[], Sequence[int]] | None = None
    # bytes the run's disk store holds now (checker.store; engines with one set it)
    disk: Callable[[], int] | None = None

    def maybe_report(
        self,
        seconds: float,
        generated: int,
        distinct: int,
        queue: int,
        depth: int,
        levels: Sequence[int] | None = None,
        expanded_in_level: int = 0,
    ) -> None:
        """``levels``/``expanded_in_level``: see :func:`estimate_eta` (breadth-first engines)."""
        if self.reporter is None:
            return
        interval = getattr(self.reporter, "interval", 3.0)
        if seconds - self.last < interval:
            return
        self.last = seconds
        info = self._info(seconds, generated, distinct, queue, depth, False, self._pids())
        self._add_disk(info)
        if levels is not None:
            info["eta_seconds"] = estimate_eta(levels, expanded_in_level, seconds)
        self.reporter(info)

    def final(
        self,
        seconds: float,
        generated: int,
        distinct: int,
        depth: int,
        queue: int = 0,
        stop_reason: str | None = None,
    ) -> None:
        """The closing line, only after at least one progress line. ``queue``: states left
        unexpanded (0 when the search completed)."""
        if self.reporter is not None and self.last > 0:
            info = self._info(seconds, generated, distinct, queue, depth, True, self._pids())
            self._add_disk(info)
            info["stop_reason"] = stop_reason
            self.reporter(info)

    def _add_disk(self, info: dict) -> None:
        if self.disk is not None:
            info["disk_mib"] = self.disk() / (1 << 20)

    def _pids(self) -> Sequence[int]:
        return self.pids() if self.pids is not None else ()

    @staticmethod
    def _info(seconds, generated, distinct, queue, depth, final, pids=()) -> dict:
        return {
            "seconds": seconds,
            "generated": generated,
            "distinct": distinct,
            "queue": queue,
            "depth": depth,
            "rate": distinct / seconds if seconds > 0 else 0.0,
            "final": final,
            "peak_rss_mib": peak_rss_mib(pids),
        }
