"""One log segment: ``<base>.log`` holding record batches and ``<base>.index`` mapping offsets to
file positions (one entry per batch, so lookups are a bisect plus a short scan).

Batch layout (big-endian): length u32 (of what follows), crc32 u32 (of what follows it),
base offset u64, record count u32, payload (UTF-8 JSON list of [epoch, record_id, value]).
Index entry: relative offset u32, position u32. The index is rebuilt from the log on recovery, so
a torn index is harmless.
"""

from __future__ import annotations

import bisect
import json
import os
import struct
import zlib
from pathlib import Path

from ..core.messages import Entry

HEADER = struct.Struct(">II")  # length, crc
BODY = struct.Struct(">QI")  # base offset, count
INDEX = struct.Struct(">II")


def encode_batch(base: int, entries: tuple[Entry, ...] | list[Entry]) -> bytes:
    payload = json.dumps([list(e) for e in entries], separators=(",", ":")).encode()
    body = BODY.pack(base, len(entries)) + payload
    return HEADER.pack(len(body) + 4, zlib.crc32(body)) + body


def decode_batches(data: bytes) -> tuple[list[tuple[int, int, list[Entry]]], int]:
    """Valid batches as (position, base offset, entries), and the length of the valid prefix.
    Stops at the first torn or corrupt batch: nothing after it is trusted."""
    out: list[tuple[int, int, list[Entry]]] = []
    pos = 0
    expected: int | None = None
    while pos + HEADER.size <= len(data):
        length, crc = HEADER.unpack_from(data, pos)
        end = pos + 4 + length
        if length < 4 + BODY.size or end > len(data):
            break
        body = data[pos + HEADER.size : end]
        if zlib.crc32(body) != crc:
            break
        base, count = BODY.unpack_from(body)
        try:
            raw = json.loads(body[BODY.size :])
            entries = [
                (int(e[0]), str(e[1]), str(e[2]))
                if len(e) == 3
                else (int(e[0]), str(e[1]), str(e[2]), int(e[3]), int(e[4]))
                if len(e) == 5
                else (int(e[0]), str(e[1]), str(e[2]), int(e[3]), int(e[4]), int(e[5]))
                for e in raw
            ]
        except (ValueError, TypeError, IndexError):  # (a 4-field entry: IndexError)
            break
        if len(entries) != count or (expected is not None and base != expected):
            break
        out.append((pos, base, entries))
        expected = base + count
        pos = end
    return out, pos


class Segment:
    def __init__(self, directory: Path, base: int) -> None:
        self.base = base
        self.log_path = directory / f"{base:020d}.log"
        self.index_path = directory / f"{base:020d}.index"
        self.index: list[tuple[int, int]] = []  # (offset, position)
        self.next_offset = base
        self.size = 0
        self._f = open(self.log_path, "ab")  # noqa: SIM115 - kept open for appends

    def recover(self) -> list[Entry]:
        """Read back, truncating a torn or corrupt tail; rebuild the index."""
        data = self.log_path.read_bytes()
        batches, valid = decode_batches(data)
        if valid < len(data):
            self._f.truncate(valid)
        entries: list[Entry] = []
        self.index = []
        for pos, base, es in batches:
            self.index.append((base, pos))
            entries.extend(es)
        self.size = valid
        self.next_offset = self.base + len(entries)
        self._write_index()
        return entries

    def append(self, base: int, entries: tuple[Entry, ...]) -> None:
        assert base == self.next_offset, (base, self.next_offset)
        data = encode_batch(base, entries)
        self._f.write(data)
        self._f.flush()  # to the OS: survives a process crash (SIGKILL), not a power failure
        self.index.append((base, self.size))
        with open(self.index_path, "ab") as ix:
            ix.write(INDEX.pack(base - self.base, self.size))
        self.size += len(data)
        self.next_offset = base + len(entries)

    def read_from(self, offset: int) -> list[Entry]:
        """Entries from ``offset`` to the segment's end, found through the index."""
        i = bisect.bisect_right([o for o, _p in self.index], offset) - 1
        if i < 0:
            return []
        pos = self.index[i][1]
        with open(self.log_path, "rb") as f:
            f.seek(pos)
            batches, _ = decode_batches(f.read())
        out: list[Entry] = []
        for _p, base, es in batches:
            out.extend(es[max(0, offset - base) :])
        return out

    def truncate_to(self, offset: int) -> None:
        """Cut at ``offset``: drop the batches after it, rewrite the prefix of the one it is in."""
        if offset >= self.next_offset:
            return
        i = bisect.bisect_right([o for o, _p in self.index], offset) - 1
        keep: list[Entry] = []
        if i < 0:
            cut, new_next = 0, self.base
        else:
            base, cut = self.index[i]
            with open(self.log_path, "rb") as f:
                f.seek(cut)
                batches, _ = decode_batches(f.read())
            keep = batches[0][2][: offset - base] if batches else []
            new_next = base
        self._f.truncate(cut)
        self.size = cut
        self.index = self.index[: max(i, 0)]
        self.next_offset = new_next
        self._write_index()
        if keep:
            self.append(new_next, tuple(keep))

    def _write_index(self) -> None:
        data = b"".join(INDEX.pack(o - self.base, p) for o, p in self.index)
        self.index_path.write_bytes(data)

    def fsync(self) -> None:
        self._f.flush()
        os.fsync(self._f.fileno())

    def close(self) -> None:
        self._f.close()

    def delete(self) -> None:
        self._f.close()
        self.log_path.unlink(missing_ok=True)
        self.index_path.unlink(missing_ok=True)
