"""The parallel local engine: level-synchronous BFS over worker processes (see :mod:`.engine`)."""

from .checkpoint import CheckpointError
from .engine import FIRST_VIOLATION, INTERRUPTED, check_parallel
from .pool import EngineFailure

__all__ = ["FIRST_VIOLATION", "INTERRUPTED", "CheckpointError", "EngineFailure", "check_parallel"]
