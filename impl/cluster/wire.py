"""Length-prefixed JSON frames over TCP: 4-byte big-endian length, then
``{"src": sender, "clock": Lamport clock, "msg": to_wire(message), "mac": HMAC}`` (or a runtime
request such as ``{"op": "status"}``).

Only members speak (issue 17): frames between brokers and from the controller carry ``mac``,
an HMAC-SHA256 with the cluster's secret (generated at ``isr cluster up``, ``cluster.secret``,
mode 0600) over the frame's other fields in canonical JSON. A frame that is not a JSON object of
at most ``MAX_FRAME`` bytes is a ``BadFrame``: the receiver logs it once and drops it.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import os
import secrets
import struct
from pathlib import Path
from typing import Any

LEN = struct.Struct(">I")
MAX_FRAME = 64 << 20
SECRET_FILE = "cluster.secret"


class BadFrame(ValueError):
    """A frame that is not a JSON object (or is too large): malformed, dropped."""


def _canonical(frame: dict[str, Any]) -> bytes:
    body = {k: v for k, v in frame.items() if k != "mac"}
    return json.dumps(body, sort_keys=True, separators=(",", ":")).encode()


def sign(frame: dict[str, Any], key: bytes | None) -> dict[str, Any]:
    """``frame`` with its ``mac`` (unchanged without a key: a cluster without a secret)."""
    if key is None:
        return frame
    return {**frame, "mac": hmac.new(key, _canonical(frame), hashlib.sha256).hexdigest()}


def verify(frame: dict[str, Any], key: bytes | None) -> bool:
    """Whether ``frame`` was signed with ``key`` (always, without a key)."""
    if key is None:
        return True
    mac = frame.get("mac")
    if not isinstance(mac, str):
        return False
    want = hmac.new(key, _canonical(frame), hashlib.sha256).hexdigest()
    return hmac.compare_digest(mac, want)


def encode(obj: dict[str, Any], key: bytes | None = None) -> bytes:
    data = json.dumps(sign(obj, key), separators=(",", ":")).encode()
    return LEN.pack(len(data)) + data


async def read_frame(reader: asyncio.StreamReader) -> dict[str, Any] | None:
    """The next frame, None at end of stream; ``BadFrame`` if it is not a JSON object."""
    try:
        head = await reader.readexactly(LEN.size)
        (n,) = LEN.unpack(head)
        if n > MAX_FRAME:
            raise BadFrame(f"frame of {n} bytes (at most {MAX_FRAME})")
        data = await reader.readexactly(n)
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    try:
        obj = json.loads(data)
    except (ValueError, RecursionError) as e:  # (UnicodeDecodeError is a ValueError)
        raise BadFrame(f"not JSON: {type(e).__name__}") from None
    if not isinstance(obj, dict):
        raise BadFrame(f"a JSON {type(obj).__name__}, not an object")
    return obj


def new_secret(directory: Path) -> bytes:
    """Create the cluster's secret in ``directory`` (0600, never group/world readable)."""
    p = directory / SECRET_FILE
    p.unlink(missing_ok=True)
    fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    key = secrets.token_hex(32)
    with os.fdopen(fd, "w") as f:
        f.write(key)
    return key.encode()


def load_secret(path: str | Path | None) -> bytes | None:
    if not path:
        return None
    return Path(path).read_text().strip().encode()
