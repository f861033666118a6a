"""Atomic checkpoint files (R13): write a temporary file, fsync it, rename it over the old one,
fsync the directory. A crash leaves either the old or the new file, never a torn one.

Format (text, like Kafka's): a version line, a count line, then one entry per line.
"""

from __future__ import annotations

import os
from pathlib import Path

VERSION = 0


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
    """The entries, or None if the file is missing or not well formed (treated as absent)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    rows = text.splitlines()
    if len(rows) < 2 or rows[0] != str(VERSION) or not rows[1].isdigit():
        return None
    n = int(rows[1])
    body = [r.split() for r in rows[2 : 2 + n]]
    return body if len(body) == n else None


def write_hw(path: Path, hws: dict[tuple[str, int], int]) -> None:
    write_atomic(path, [f"{t} {p} {hw}" for (t, p), hw in sorted(hws.items())])


def read_hw(path: Path) -> dict[tuple[str, int], int]:
    rows = read_lines(path) or []
    return {(r[0], int(r[1])): int(r[2]) for r in rows if len(r) == 3}


def write_epochs(path: Path, epochs: list[tuple[int, int]]) -> None:
    write_atomic(path, [f"{e} {o}" for e, o in epochs])


def read_epochs(path: Path) -> list[tuple[int, int]]:
    rows = read_lines(path) or []
    return [(int(r[0]), int(r[1])) for r in rows if len(r) == 2]
