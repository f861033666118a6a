"""The compiled hot path (issue 13, item 2): the checker's per-state modules built with Cython 3
in pure-Python mode. The ``.py`` files stay the only source: Cython compiles them as they are
(``annotation_typing=False``: a type hint is never a C type nor a run-time check, so the
semantics are Python's), and ``isr/__init__.py`` loads a compiled module only when its ``.py``
is the one it was built from (``isr/_compiled.json`` records each source's SHA-256), else the
``.py``. ``ISR_PURE_PYTHON=1`` forces the ``.py`` everywhere.

Everything else is in pyproject.toml. If Cython or the C compiler is missing or fails, the
install still succeeds, every module runs as Python, and one warning line says so.

Not compiled, on purpose: ``spec/protocols/*`` (users subclass ``ProtocolVersion`` in
``--protocol-file``), the packages' ``__init__`` modules, and everything off the per-state
path. ``spec/properties.py`` is compiled: its checks are module-level functions and instances of
module-level classes (no closures: the Spark engine ships the properties with cloudpickle, and a
compiled closure cannot be pickled).
``spec/state.py`` is compiled: its NamedTuples stay ordinary Python classes (a compiled module
runs the class statements as Python does), pickled by reference as Spark does
(tests/checker/test_compiled.py).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sys
import tomllib

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

with open("pyproject.toml", "rb") as _f:
    _CONF = tomllib.load(_f)
# (folder in the repository -> package it installs as): pyproject.toml's package-dir.
_PACKAGES = {d: pkg for pkg, d in _CONF["tool"]["setuptools"]["package-dir"].items()}
# By the profile (docs/performance.md, "The compiled hot path"): pyproject.toml's [tool.isr] compiled.
COMPILED: list[str] = _CONF["tool"]["isr"]["compiled"]

MANIFEST = "isr/_compiled.json"
_WARNING = os.path.join("build", "compiled-warning.txt")  # this build's failures, if any


def module_name(path: str) -> str:
    top, _, rest = path.partition("/")
    return _PACKAGES[top] + "." + rest[: -len(".py")].replace("/", ".")


_SOURCE = {module_name(p): p for p in COMPILED}


def _warn(why: str) -> None:
    line = f"WARNING: isr-toolkit's compiled hot path was not built ({why}); every module runs as Python (correct, slower)."
    print(line, file=sys.stderr)
    # pip hides a build's output unless -v: `make setup` prints the reason afterwards, in its
    # one status line (isr/_hotpath.py main)
    try:
        os.makedirs("build", exist_ok=True)
        with open(_WARNING, "a") as f:
            f.write(why + "\n")
    except OSError:
        pass


def _sha256(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class OptionalBuildExt(build_ext):
    """build_ext whose failure is a warning, not an error, and that records what it built."""

    def finalize_options(self) -> None:
        super().finalize_options()
        if not self.parallel:  # the C compiler on every core (the build's wall time)
            self.parallel = os.cpu_count() or 1

    def run(self) -> None:
        if self.inplace:
            self._remove_dropped()
        self._built: dict[str, str] = {}
        try:
            super().run()
        except Exception as e:  # no compiler, a setup error: the Python modules still work
            _warn(
                f"{type(e).__name__}: {str(e).strip().splitlines()[-1] if str(e).strip() else ''}"
            )
        self._write_manifest()

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as e:
            _warn(f"{ext.name}: {type(e).__name__}")
            return
        self._built[ext.name] = _sha256(_SOURCE[ext.name])

    def copy_file(self, infile, outfile, *args, **kwargs):  # type: ignore[override]
        """An in-place build replaces each extension by a rename, never by rewriting the file:
        a long check still running has the old file mapped, and a copy over it (distutils
        truncates and writes) changes the code under the running process, which then dies.
        The rename leaves it the old file's inode; new processes load the new one."""
        if not str(outfile).endswith((".so", ".pyd")):
            return super().copy_file(infile, outfile, *args, **kwargs)
        tmp = f"{outfile}.{os.getpid()}.tmp"
        shutil.copyfile(infile, tmp)
        shutil.copymode(infile, tmp)
        os.replace(tmp, outfile)
        return outfile, 1

    def _remove_dropped(self) -> None:
        """Extensions in the source folders of modules no longer compiled: they would shadow
        their .py (isr/_hotpath.py then runs the .py, but warns on every run)."""
        keep = {p[: -len(".py")] for p in COMPILED}
        for top in _PACKAGES.values():
            if top == "isr":
                continue
            folder = next(d for d, pkg in _PACKAGES.items() if pkg == top)
            for dirpath, _, files in os.walk(folder):
                for name in files:
                    stem = name.split(".", 1)[0]
                    if name.endswith((".so", ".pyd")) and os.path.join(dirpath, stem) not in keep:
                        os.remove(os.path.join(dirpath, name))

    def _write_manifest(self) -> None:
        target = MANIFEST if self.inplace else os.path.join(self.build_lib, MANIFEST)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w") as f:
            json.dump(dict(sorted(self._built.items())), f, indent=1)
            f.write("\n")

    def get_outputs(self) -> list[str]:
        target = MANIFEST if self.inplace else os.path.join(self.build_lib, MANIFEST)
        return [*super().get_outputs(), target]


def extensions() -> list[Extension]:
    if os.environ.get("ISR_PURE_PYTHON", "") not in ("", "0"):
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:
        _warn("Cython is not installed")
        return []
    # -O2 without debug information: 40% less compile time than Python's own -g -O3 (the build
    # is part of every fresh `make test`), for code that is calls into the C API either way
    flags = ["-g0", "-O2"] if os.name == "posix" else []
    exts = [Extension(module_name(p), [p], extra_compile_args=flags) for p in COMPILED]
    try:
        return cythonize(
            exts,
            build_dir="build/cython",
            quiet=True,
            nthreads=os.cpu_count() or 1,
            compiler_directives={
                "language_level": 3,
                # Python semantics: hints are documentation, never C types or checks
                "annotation_typing": False,
                "binding": True,
                "embedsignature": False,
            },
        )
    except Exception as e:  # a Cython compile error: Python modules instead
        _warn(f"Cython: {type(e).__name__}")
        return []


with contextlib.suppress(OSError):
    os.remove(_WARNING)
setup(ext_modules=extensions(), cmdclass={"build_ext": OptionalBuildExt})
