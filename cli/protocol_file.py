"""Reading a user's protocol version from a Python file (``--protocol-file``, issue 15).

The spec does no I/O: this module reads and imports the file and returns the ``ProtocolVersion``
it defines, the object every later step is given (the spec, the engines, the validator). It is
never registered under its name: nothing turns ``Config.protocol`` back into a user's version.

Another process gets the version by value: a user's version pickles as a call to
:func:`rebuilt` with the file's path, hash and content (``ProtocolVersion.rebuild``), which
builds it again there (once per process and content) without reading the file, so Spark
executors on other machines, matrix's pool and the validator's Spark tasks need no step of
their own.
"""

from __future__ import annotations

import copy
import hashlib
import importlib.util
import os
import sys

from isr.spec.protocols import BUILTIN, BUILTIN_NAMES, ProtocolFileError, ProtocolVersion

# One version per file and content in a process: a file loaded twice (two options naming it, a
# pickle arriving in a process that read the file) is the same object. By path too: the
# version remembers where it came from (result headers), and two copies of a file are two.
_LOADED: dict[tuple[str, str], ProtocolVersion] = {}


def file_sha256(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def load_protocol_file(path: str) -> ProtocolVersion:
    """Import a user's Python file and return the ``ProtocolVersion`` it defines: its
    module-level ``PROTOCOL`` (an instance, or a subclass, which is instantiated), else the one
    ``ProtocolVersion`` instance, else the one subclass it defines. The version remembers the
    file's absolute path and SHA-256 (``source_file``, ``source_sha256``) for result headers.
    Raises ProtocolFileError (one line) for a missing file, a syntax error, an import that
    raises, or no or several versions."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise ProtocolFileError(f"protocol file {path}: no such file") from None
    except OSError as e:
        raise ProtocolFileError(f"protocol file {path}: {e.strerror or e}") from None
    return _build(os.path.abspath(path), data, path)


def rebuilt(path: str, sha: str, data: bytes) -> ProtocolVersion:
    """The user's version of file ``path`` whose content is ``data`` (SHA-256 ``sha``), in a
    process that may never have read the file: what a pickled user's version calls on the
    other side (``ProtocolVersion.rebuild``). A fresh copy, which the pickle's attributes (a
    variant's flags) then update."""
    v = _LOADED.get((path, sha))
    if v is None:
        v = _build(path, data, path)
    return copy.copy(v)


def _build(abspath: str, data: bytes, shown: str) -> ProtocolVersion:
    sha = hashlib.sha256(data).hexdigest()
    if (abspath, sha) in _LOADED:
        return _LOADED[abspath, sha]
    try:
        code = compile(data, abspath, "exec")
    except SyntaxError as e:
        raise ProtocolFileError(
            f"protocol file {shown}, line {e.lineno}: syntax error: {e.msg}"
        ) from None
    except ValueError as e:  # null bytes
        raise ProtocolFileError(f"protocol file {shown}: {e}") from None
    # A module name per content, in sys.modules only while the file runs (what a class
    # statement or a decorator may look up). Out of it afterwards: no pickle may refer to the
    # file's classes or functions by name, which no other process could import; the version
    # pickles through ``rebuild``, and cloudpickle carries the functions it meets by value.
    modname = f"isr_user_protocol_{sha[:16]}"
    spec = importlib.util.spec_from_loader(modname, loader=None, origin=abspath)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    module.__file__ = abspath
    sys.modules[modname] = module
    try:
        exec(code, module.__dict__)
    except Exception as e:
        first = str(e).splitlines()[0] if str(e) else ""
        raise ProtocolFileError(
            f"protocol file {shown}: importing it raised {type(e).__name__}: {first}"
        ) from None
    finally:
        del sys.modules[modname]
    p = _the_version(module, shown)
    if not isinstance(p.name, str) or not p.name.strip() or p.name != p.name.strip():
        raise ProtocolFileError(
            f"protocol file {shown}: the version needs a name (class attribute)"
        )
    if p.name in BUILTIN_NAMES:
        raise ProtocolFileError(
            f"protocol file {shown}: name {p.name!r} is a built-in version; give yours another name"
        )
    p.source_file = abspath
    p.source_sha256 = sha
    p.rebuild = (rebuilt, (abspath, sha, data))
    _LOADED[abspath, sha] = p
    return p


def _the_version(module: object, shown: str) -> ProtocolVersion:
    g = vars(module)
    builtins = set(map(id, BUILTIN))
    if "PROTOCOL" in g:
        p = g["PROTOCOL"]
        if isinstance(p, type) and issubclass(p, ProtocolVersion):
            p = p()
        if not isinstance(p, ProtocolVersion):
            raise ProtocolFileError(
                f"protocol file {shown}: PROTOCOL is a {type(p).__name__}, not a ProtocolVersion"
            )
        if id(p) in builtins:
            raise ProtocolFileError(
                f"protocol file {shown}: PROTOCOL is the built-in {p.name!r}; subclass it instead"
            )
        return p
    instances = {id(v): v for v in g.values() if isinstance(v, ProtocolVersion)}
    mine = [v for k, v in instances.items() if k not in builtins]
    if not mine:
        mine = [
            v()
            for v in g.values()
            if isinstance(v, type)
            and issubclass(v, ProtocolVersion)
            and v.__module__ == g["__name__"]
        ]
    if len(mine) != 1:
        what = "no ProtocolVersion" if not mine else f"{len(mine)} ProtocolVersions"
        raise ProtocolFileError(
            f"protocol file {shown} defines {what}; define one subclass, or set PROTOCOL = ..."
        )
    return mine[0]
