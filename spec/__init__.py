"""The ISR replication protocol as an executable TLA+-style specification (pure: no I/O)."""

from .config import PROTOCOL_NAMES, Config, ConfigError
from .model import IsrSpec
from .protocols import PROTOCOLS

__all__ = ["PROTOCOLS", "PROTOCOL_NAMES", "Config", "ConfigError", "IsrSpec"]
