"""The engines' errors, in one module: what a caller catches, whatever the engine runs.

| error                | raised by                                  | means                             | `isr` |
|----------------------|--------------------------------------------|-----------------------------------|-------|
| `EngineOptionError`  | :func:`checker.engines.run`, before a run  | an option the engine does not     | 2     |
|                      |                                            | support, an unknown engine, one   |       |
|                      |                                            | whose imports fail                |       |
| `CheckpointError`    | parallel, spark, spark-barrier             | a checkpoint that cannot be       | 2     |
|                      |                                            | resumed (missing, another check)  |       |
| `SparkError`         | the Spark engines (:mod:`.spark.session`)  | Spark cannot start, or lost its   | 2     |
|                      |                                            | cluster                           |       |
| `EngineFailure`      | parallel, spark-barrier                    | a worker died: no verdict         | 5     |
| `ReplayError`        | the breadth-first engines (:mod:`.paths`)  | a counterexample path could not   | 3     |
|                      |                                            | be rebuilt                        |       |

``BAD_INPUT`` groups the ones that are the caller's input (exit 2 on the command line). Each
is one line for a person. Nothing here imports an engine.
"""

from __future__ import annotations


class EngineOptionError(ValueError):
    """An engine was asked for an option it does not support, or an unknown engine."""


class CheckpointError(ValueError):
    """A checkpoint that cannot be resumed: missing, made for another check, or altered."""


class SparkError(RuntimeError):
    """Spark cannot run (start-up failed, or the cluster went away): one line for the user."""


class EngineFailure(RuntimeError):
    """A worker died or failed: the run has no verdict (the CLI exits 5)."""


class ReplayError(RuntimeError):
    """The stored fingerprints do not correspond to a path of the model (a fingerprint collision,
    or a model whose successors are not a function of the state)."""


BAD_INPUT = (EngineOptionError, CheckpointError, SparkError)

__all__ = [
    "BAD_INPUT",
    "CheckpointError",
    "EngineFailure",
    "EngineOptionError",
    "ReplayError",
    "SparkError",
]
