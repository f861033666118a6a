"""Which form of a hot module runs: the compiled extension or its ``.py`` (issue 13, item 2).

``setup.py`` compiles the modules listed in pyproject.toml's ``[tool.isr] compiled`` with Cython
(pure-Python mode: the ``.py`` is the only source) and records each source's SHA-256 in
``isr/_compiled.json``. Python's own import system would load an extension whenever one sits next
to the ``.py``, even one built from an older source; the finder below, ahead of it on
``sys.meta_path``, loads the extension only when

- ``ISR_PURE_PYTHON`` is unset (or ``0``): ``ISR_PURE_PYTHON=1`` runs every module as Python,
  the reference the compiled build is tested against (tests/checker/test_compiled.py);
- the ``.py`` beside it is the one it was built from (same SHA-256): an edited or checked-out
  source runs as Python, with one warning line a process tree (``make setup`` rebuilds).

Not modelled: an extension with no ``.py`` beside it (a wheel stripped of sources) is loaded
as it is.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from importlib.abc import MetaPathFinder
from importlib.machinery import EXTENSION_SUFFIXES, ExtensionFileLoader, ModuleSpec, PathFinder
from importlib.util import spec_from_file_location
from pathlib import Path

PURE_ENV = "ISR_PURE_PYTHON"
_WARNED_ENV = "ISR_HOTPATH_WARNED"  # inherited by child processes: one warning a process tree
_MANIFEST = Path(__file__).resolve().parent / "_compiled.json"


def pure_python() -> bool:
    """True when ``ISR_PURE_PYTHON`` asks for the ``.py`` modules only."""
    return os.environ.get(PURE_ENV, "") not in ("", "0")


def _manifest() -> dict[str, str]:
    try:
        with open(_MANIFEST, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return {}  # never built (a plain checkout) or unreadable: every module as Python
    return data if isinstance(data, dict) else {}


def _sha256(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class HotPathFinder(MetaPathFinder):
    """Chooses between ``isr.*``'s extension modules and their sources (see the module doc)."""

    def __init__(self) -> None:
        self.manifest = _manifest()
        self.compiled: set[str] = set()  # loaded as extensions
        self.stale: list[str] = []  # an extension is there, but not built from this source

    def find_spec(self, fullname: str, path=None, target=None) -> ModuleSpec | None:
        if path is None or not fullname.startswith("isr."):
            return None
        spec = PathFinder.find_spec(fullname, path)
        if spec is None or not isinstance(spec.loader, ExtensionFileLoader) or not spec.origin:
            return None  # not an extension: the ordinary machinery finds the same module
        origin = spec.origin
        stem = next((origin[: -len(s)] for s in EXTENSION_SUFFIXES if origin.endswith(s)), None)
        source = f"{stem}.py" if stem else None
        if source is None or not os.path.isfile(source):
            self.compiled.add(fullname)
            return None
        if not pure_python():
            if self.manifest.get(fullname) == _sha256(source):
                self.compiled.add(fullname)
                return None
            self.stale.append(fullname)
            self._warn(fullname, source)
        return spec_from_file_location(fullname, source)

    def _warn(self, fullname: str, source: str) -> None:
        if os.environ.get(_WARNED_ENV):
            return
        os.environ[_WARNED_ENV] = "1"
        print(
            f"isr: warning: the compiled {fullname} was built from another version of {source}; "
            "running the .py (slower; `make setup` rebuilds)",
            file=sys.stderr,
        )


def install() -> HotPathFinder:
    """Put the finder first on ``sys.meta_path`` (once a process)."""
    for f in sys.meta_path:
        if isinstance(f, HotPathFinder):
            return f
    finder = HotPathFinder()
    sys.meta_path.insert(0, finder)
    return finder


def status() -> dict[str, str]:
    """Each module the build compiles: ``compiled``, ``python`` (forced, or never built) or
    ``stale`` (built from another source). Imports them."""
    import importlib

    finder = install()
    out: dict[str, str] = {}
    for name in compiled_modules():
        importlib.import_module(name)
        if name in finder.compiled:
            out[name] = "compiled"
        elif name in finder.stale:
            out[name] = "stale"
        else:
            out[name] = "python"
    return out


def compiled_modules() -> list[str]:
    """The modules setup.py compiles (pyproject.toml's ``[tool.isr] compiled``), as ``isr.*``
    names; [] outside a source checkout."""
    import tomllib

    root = Path(__file__).resolve().parent.parent
    try:
        with open(root / "pyproject.toml", "rb") as f:
            conf = tomllib.load(f)
    except OSError:
        return sorted(_manifest())
    dirs = conf["tool"]["setuptools"]["package-dir"]
    to_pkg = {d: pkg for pkg, d in dirs.items()}
    names = []
    for p in conf["tool"]["isr"]["compiled"]:
        top, _, rest = p.partition("/")
        names.append(to_pkg[top] + "." + rest.removesuffix(".py").replace("/", "."))
    return names


def _build_warning() -> str:
    """Why setup.py's last build failed, if it did (it writes build/compiled-warning.txt)."""
    path = Path(__file__).resolve().parent.parent / "build" / "compiled-warning.txt"
    try:
        text = path.read_text(encoding="utf-8").strip()
    except OSError:
        return ""
    return text.splitlines()[0] if text else ""


def main() -> int:
    """One line: how many hot modules run compiled (``make setup`` prints it)."""
    st = status()
    n = sum(v == "compiled" for v in st.values())
    if pure_python():
        print(f"isr: {PURE_ENV} is set: all {len(st)} hot modules run as Python")
    elif n == len(st):
        print(f"isr: compiled hot path: all {n} hot modules compiled (Cython)")
    else:
        missing = [k for k, v in st.items() if v != "compiled"]
        why = _build_warning()
        print(
            f"isr: WARNING: {len(missing)} of {len(st)} hot modules are not compiled "
            f"({why or missing[0]}): they run as Python (correct, slower; see build/)"
        )
    return 0
