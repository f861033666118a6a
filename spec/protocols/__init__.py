"""The protocol versions: one module per version, each extending its predecessor as the TLA+
modules do (``Kip320.tla`` EXTENDS ``Kip279.tla``), and the one registry every other list of
names is derived from or tested against (spec.config, spec.symbolic, impl.core.truncation, cli).

    hw_truncation ─┬─ original_design
                   ├─ kafka_0_10
                   └─ kip_101 ── kip_279 ─┬─ kip_320 ─┬─ kip_966 ── kraft ── kraft-4.0 ── kraft-3.7
                                          │           └─ majority_quorum
                                          └─ kip_320_first_try

A user's own version is a Python file defining a ``ProtocolVersion`` subclass (see
examples/protocols/my_kip.py); cli/protocol_file.py reads and imports it (the spec does no I/O)
and ``register_protocol`` here makes its name usable as ``Config.protocol``.
"""

from __future__ import annotations

from .base import ProtocolVersion
from .hw_truncation import HW_TRUNCATION, HwTruncation
from .kafka_0_10 import KAFKA_0_10, Kafka010
from .kip_101 import KIP_101, Kip101
from .kip_279 import KIP_279, Kip279
from .kip_320 import KIP_320, Kip320
from .kip_320_first_try import KIP_320_FIRST_TRY, Kip320FirstTry
from .kip_966 import KIP_966, Kip966
from .kraft import KRAFT, Kraft
from .kraft_3_7 import KRAFT_3_7, Kraft37
from .kraft_4_0 import KRAFT_4_0, Kraft40
from .majority_quorum import MAJORITY_QUORUM, MajorityQuorum
from .original_design import ORIGINAL_DESIGN, OriginalDesign

DEFAULT_PROTOCOL = "kip-320"

BUILTIN: tuple[ProtocolVersion, ...] = (
    HW_TRUNCATION,
    ORIGINAL_DESIGN,
    KAFKA_0_10,
    KIP_101,
    KIP_279,
    KIP_320_FIRST_TRY,
    KIP_320,
    KIP_966,
    MAJORITY_QUORUM,
    KRAFT,
    KRAFT_4_0,
    KRAFT_3_7,
)
BUILTIN_NAMES: tuple[str, ...] = tuple(p.name for p in BUILTIN)

# The one registry: the built-in versions, then any user version registered in this process.
PROTOCOLS: dict[str, ProtocolVersion] = {p.name: p for p in BUILTIN}


class ProtocolFileError(ValueError):
    """A protocol file that cannot be used; the message is one line for the user."""


def get_protocol(name: str) -> ProtocolVersion:
    """The registered version called ``name`` (KeyError with the known names otherwise)."""
    try:
        return PROTOCOLS[name]
    except KeyError:
        raise KeyError(f"unknown protocol {name!r}; known: {', '.join(PROTOCOLS)}") from None


def register_protocol(p: ProtocolVersion) -> ProtocolVersion:
    """Make a user's version usable by name. A built-in name cannot be taken; registering the
    same file again (same name and content) is a no-op."""
    old = PROTOCOLS.get(p.name)
    if old is not None and old is not p:
        if p.name in BUILTIN_NAMES:
            raise ProtocolFileError(
                f"protocol name {p.name!r} is a built-in version; give yours another name"
            )
        if old.source_sha256 != p.source_sha256:
            raise ProtocolFileError(f"another protocol named {p.name!r} is already loaded")
    PROTOCOLS[p.name] = p
    return p


def protocol_source(name: str) -> dict[str, str]:
    """For result headers: ``{"protocol_file", "protocol_sha256"}`` of a user's version, empty
    for a built-in one."""
    p = PROTOCOLS.get(name)
    if p is None or p.source_file is None:
        return {}
    return {"protocol_file": p.source_file, "protocol_sha256": p.source_sha256 or ""}


__all__ = [
    "BUILTIN",
    "BUILTIN_NAMES",
    "DEFAULT_PROTOCOL",
    "HW_TRUNCATION",
    "KAFKA_0_10",
    "KIP_101",
    "KIP_279",
    "KIP_320",
    "KIP_320_FIRST_TRY",
    "KIP_966",
    "KRAFT",
    "KRAFT_3_7",
    "KRAFT_4_0",
    "MAJORITY_QUORUM",
    "ORIGINAL_DESIGN",
    "PROTOCOLS",
    "HwTruncation",
    "Kafka010",
    "Kip101",
    "Kip279",
    "Kip320",
    "Kip320FirstTry",
    "Kip966",
    "Kraft",
    "Kraft37",
    "Kraft40",
    "MajorityQuorum",
    "OriginalDesign",
    "ProtocolFileError",
    "ProtocolVersion",
    "get_protocol",
    "protocol_source",
    "register_protocol",
]
