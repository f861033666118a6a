"""isr-toolkit under one importable name: ``isr.spec``, ``isr.checker``, ``isr.traces``,
``isr.impl``, ``isr.cli`` (issue 15). Nothing generic goes into site-packages.

In the repository the subpackages are its top-level folders (``spec/``, ``checker/``, ...), as
the project's layout asks; the wheel installs them under ``isr/`` (pyproject.toml's
``package-dir``). In a source checkout this package also searches the repository root, so that
``import isr.spec`` works with nothing installed (tests, Spark executors given the root on their
PYTHONPATH).

The Python API for scripts and pytest (``isr.api``, re-exported here)::

    import isr
    result = isr.check(protocol="kip-101", replicas=2, records=3, epochs=3, crashes=0)
    assert not result.holds("StrongIsr")
    verdict = isr.validate(["run/trace-broker-0.ndjson", ...])
"""

from __future__ import annotations

from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
if (_ROOT / "pyproject.toml").is_file() and (_ROOT / "spec" / "__init__.py").is_file():
    __path__.append(str(_ROOT))  # a source checkout: isr.spec is <root>/spec


def _version() -> str:
    try:
        from importlib.metadata import PackageNotFoundError, version

        return version("isr-toolkit")
    except PackageNotFoundError:  # a checkout that was never installed
        return "0+unknown"


__version__ = _version()

from .api import check, model, simulate, validate  # noqa: E402

__all__ = ["__version__", "check", "model", "simulate", "validate"]
