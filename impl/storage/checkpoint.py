"""Atomic checkpoint files (R13): write a temporary file, fsync it, rename it over the old one,
fsync the directory. A crash leaves either the old or the new file, never a torn one.

Format (text, like Kafka's): a version line, a count line, then one entry per line.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

VERSION = 0
log = logging.getLogger("isr.storage")


def write_atomic(path: Path, lines: list[str]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    data = "\n".join([str(VERSION), str(len(lines)), *lines]) + "\n"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_lines(path: Path) -> list[list[str]] | None:
    """The entries, or None if the file is missing or not well formed (treated as absent: a
    corrupt checkpoint is recovered, never a refusal to start; issue 17). A corrupt one is
    reported with a warning."""
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as e:
        log.warning("checkpoint %s unreadable (%s); ignored", path, type(e).__name__)
        return None
    rows = text.splitlines()
    if len(rows) < 2 or rows[0] != str(VERSION) or not rows[1].isdigit():
        log.warning("checkpoint %s is not a version-%d checkpoint; ignored", path, VERSION)
        return None
    n = int(rows[1])
    body = [r.split() for r in rows[2 : 2 + n]]
    if len(body) != n:
        log.warning("checkpoint %s holds %d of its %d entries; ignored", path, len(body), n)
        return None
    return body


def _nat(x: str) -> int | None:
    return int(x) if x.isascii() and x.isdigit() else None


def write_hw(path: Path, hws: dict[tuple[str, int], int]) -> None:
    write_atomic(path, [f"{t} {p} {hw}" for (t, p), hw in sorted(hws.items())])


def read_hw(path: Path) -> dict[tuple[str, int], int]:
    """The HW checkpoint (R13). A missing or corrupt file (not UTF-8, a non-integer, a negative
    HW, a short body) is ignored as a whole with a warning: every HW recovers from 0, clamped
    to the log, and the leader's fetch responses bring it back up (as Kafka does when its
    replication-offset-checkpoint is unusable). A lower HW is always safe: it only delays
    what a consumer may read; a higher one could expose records that are not committed."""
    out: dict[tuple[str, int], int] = {}
    for r in read_lines(path) or []:
        part = _nat(r[1]) if len(r) == 3 else None
        hw = _nat(r[2]) if len(r) == 3 else None
        if part is None or hw is None:
            log.warning("HW checkpoint %s has a bad entry %r; every HW recovers from 0", path, r)
            return {}
        out[(r[0], part)] = hw
    return out


def write_epochs(path: Path, epochs: list[tuple[int, int]]) -> None:
    write_atomic(path, [f"{e} {o}" for e, o in epochs])


def read_epochs(path: Path) -> list[tuple[int, int]]:
    """The leader-epoch checkpoint, or [] when missing or corrupt (the caller rebuilds it from
    the log's batches, which carry their epochs)."""
    out = []
    for r in read_lines(path) or []:
        e, o = (_nat(r[0]), _nat(r[1])) if len(r) == 2 else (None, None)
        if e is None or o is None:
            log.warning("epoch checkpoint %s has a bad entry %r; rebuilt from the log", path, r)
            return []
        out.append((e, o))
    return out
