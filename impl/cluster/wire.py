"""Length-prefixed JSON frames over TCP: 4-byte big-endian length, then
``{"src": sender, "clock": Lamport clock, "msg": to_wire(message)}`` (or a runtime request such
as ``{"op": "status"}``)."""

from __future__ import annotations

import asyncio
import json
import struct
from typing import Any

LEN = struct.Struct(">I")
MAX_FRAME = 64 << 20


def encode(obj: dict[str, Any]) -> bytes:
    data = json.dumps(obj, separators=(",", ":")).encode()
    return LEN.pack(len(data)) + data


async def read_frame(reader: asyncio.StreamReader) -> dict[str, Any] | None:
    try:
        head = await reader.readexactly(LEN.size)
        (n,) = LEN.unpack(head)
        if n > MAX_FRAME:
            raise ValueError(f"frame of {n} bytes")
        return json.loads(await reader.readexactly(n))
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
