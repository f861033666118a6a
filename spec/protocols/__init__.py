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
and the object itself is what the spec is given (``IsrSpec(config, protocol)``): the registry
below holds the built-in versions only, so no name is ever turned back into a user's version.
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

# The one registry: the built-in versions, by name (a user's version is passed as the object).
PROTOCOLS: dict[str, ProtocolVersion] = {p.name: p for p in BUILTIN}


class ProtocolFileError(ValueError):
    """A protocol file that cannot be used; the message is one line for the user."""


def get_protocol(name: str) -> ProtocolVersion:
    """The built-in version called ``name`` (KeyError with the known names otherwise)."""
    try:
        return PROTOCOLS[name]
    except KeyError:
        raise KeyError(f"unknown protocol {name!r}; known: {', '.join(PROTOCOLS)}") from None


def version_of(p: str | ProtocolVersion) -> ProtocolVersion:
    """``p`` itself when it is a version object (a user's, a variant), else the built-in
    version it names: for the functions that take either (the conformance kit's)."""
    return p if isinstance(p, ProtocolVersion) else get_protocol(p)


def protocol_source(p: ProtocolVersion | None) -> dict[str, str]:
    """For result headers: ``{"protocol_file", "protocol_sha256"}`` of a user's version, empty
    for a built-in one (or None)."""
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
    "version_of",
]
