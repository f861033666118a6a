"""The ISR replication protocol as an executable TLA+-style specification (pure: no I/O)."""

from .config import PROTOCOL_NAMES, Config, ConfigError
from .model import IsrSpec
from .protocols import DEFAULT_PROTOCOL, PROTOCOLS, ProtocolVersion, get_protocol

__all__ = [
    "DEFAULT_PROTOCOL",
    "PROTOCOLS",
    "PROTOCOL_NAMES",
    "Config",
    "ConfigError",
    "IsrSpec",
    "ProtocolVersion",
    "get_protocol",
]
