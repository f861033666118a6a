"""isr-toolkit under one importable name: ``isr.spec``, ``isr.checker``, ``isr.traces``,
``isr.impl``, ``isr.cli`` (issue 15). Nothing generic goes into site-packages.

In the repository the subpackages are its top-level folders (``spec/``, ``checker/``, ...), as
the project's layout asks; the wheel installs them under ``isr/`` (pyproject.toml's
``package-dir``). In a source checkout this package also searches the repository root, so that
``import isr.spec`` works with nothing installed (tests, Spark executors given the root on their
PYTHONPATH).

The Python API for scripts and pytest is ``isr.api`` (``from isr.api import check, validate``).
This module does not import it: it holds only what every subpackage may read (the version, the
search path), so that nothing below imports its own parent in a loop.
"""

from __future__ import annotations

from pathlib import Path

from . import _hotpath

_ROOT = Path(__file__).resolve().parent.parent
if (_ROOT / "pyproject.toml").is_file() and (_ROOT / "spec" / "__init__.py").is_file():
    __path__.append(str(_ROOT))  # a source checkout: isr.spec is <root>/spec

# Before any isr.* module is imported: the compiled hot path only where it was built from the
# .py beside it, and never under ISR_PURE_PYTHON=1 (isr/_hotpath.py).
_hotpath.install()


def _version() -> str:
    try:
        from importlib.metadata import PackageNotFoundError, version

        return version("isr-toolkit")
    except PackageNotFoundError:  # a checkout that was never installed
        return "0+unknown"


__version__ = _version()

__all__ = ["__version__"]
