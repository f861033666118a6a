"""The Python API: what `isr check`, `isr simulate` and `isr validate` do, for scripts and pytest.

    from isr.api import check, validate

    r = check(protocol="kip-101", replicas=2, records=3, epochs=3, crashes=0,
              properties=["StrongIsr"], stop_at_first_violation=True)
    assert r.holds("StrongIsr") is False
    print(r.violated[0].counterexample.length)          # 9

    r = check(workers=2)                    # the default model on two cores
    v = validate(["trace.ndjson"])          # a recorded run against the spec
    assert v.verdict == "accepted"

Everything here is a thin layer over the engines' registry (isr.checker.engines) and the
validator (isr.traces.validator.validate); the CLI uses the same functions, so an answer here is the
answer `isr` prints. Bad input raises (ConfigError, EngineOptionError: both ValueError); a
violation is a result, never an exception.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from isr.checker.engines import Limits, Options
from isr.checker.engines import check as _check
from isr.checker.engines import simulate as _simulate
from isr.checker.progress import ProgressReporter
from isr.checker.result import CheckResult
from isr.cli.sparkopts import local_check_engine  # what `isr check --engine local` runs
from isr.spec import Config, IsrSpec
from isr.spec.protocols import ProtocolVersion
from isr.traces.validator.validate import Verdict, validate_paths


def model(
    config: Config | None = None, *, version: ProtocolVersion | None = None, **bounds: Any
) -> IsrSpec:
    """The spec for ``config``, or for ``Config(**bounds)`` (protocol, replicas, records, epochs,
    crashes, acks, min_isr and the fault modes; see isr.spec.Config). ``version``: the
    protocol version object when it is not the built-in one the config names (a user's, e.g.
    ``isr.cli.protocol_file.load_protocol_file(path)``; the config's protocol is its name)."""
    if config is not None and bounds:
        raise ValueError("give a Config or keyword bounds, not both")
    return IsrSpec(config if config is not None else Config(**bounds), version)


def check(
    config: Config | None = None,
    *,
    properties: Iterable[str] | None = None,
    symmetry: bool = True,
    max_states: int | None = None,
    max_seconds: float | None = None,
    stop_at_first_violation: bool = False,
    workers: int = 1,
    progress: ProgressReporter | None = None,
    version: ProtocolVersion | None = None,
    **bounds: Any,
) -> CheckResult:
    """Explore every reachable state of the model and check its properties (``isr check``).
    ``workers`` > 1 uses that many local processes (the same counts and verdicts as one; the
    counterexample shown may be another of the same length). ``version``: as for ``model``."""
    m = model(config, version=version, **bounds)
    options = Options(
        properties=None if properties is None else list(properties),
        symmetry=symmetry,
        limits=Limits(max_states=max_states, max_seconds=max_seconds),
        progress=progress,
        stop_at_first_violation=stop_at_first_violation,
        config=m.config.to_json(),
        workers=workers,
    )
    return _check(m, local_check_engine(workers), options)


def simulate(
    config: Config | None = None,
    *,
    walks: int = 1000,
    depth: int = 50,
    seed: int = 0,
    properties: Iterable[str] | None = None,
    version: ProtocolVersion | None = None,
    **bounds: Any,
) -> CheckResult:
    """Random walks of the model (``isr simulate``): finds violations, proves nothing.
    ``version``: as for ``model``."""
    m = model(config, version=version, **bounds)
    options = Options(
        properties=None if properties is None else list(properties),
        config=m.config.to_json(),
        walks=walks,
        depth=depth,
        seed=seed,
    )
    return _simulate(m, "seq", options)


def validate(paths: Iterable[str | Path]) -> Verdict:
    """Check a recorded run (its trace files, any order) against the spec (``isr validate``)."""
    return validate_paths(list(paths))


__all__ = ["check", "model", "simulate", "validate"]
