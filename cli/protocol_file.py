"""Reading a user's protocol version from a Python file (``--protocol-file``, issue 15).

The spec does no I/O: this module reads and imports the file and hands the ``ProtocolVersion``
it defines to spec.protocols.register_protocol, which makes its name usable as Config.protocol.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys

from isr.spec.protocols import BUILTIN, BUILTIN_NAMES, ProtocolFileError, ProtocolVersion


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
    shown = path
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise ProtocolFileError(f"protocol file {shown}: no such file") from None
    except OSError as e:
        raise ProtocolFileError(f"protocol file {shown}: {e.strerror or e}") from None
    sha = hashlib.sha256(data).hexdigest()
    try:
        code = compile(data, path, "exec")
    except SyntaxError as e:
        raise ProtocolFileError(
            f"protocol file {shown}, line {e.lineno}: syntax error: {e.msg}"
        ) from None
    except ValueError as e:  # null bytes
        raise ProtocolFileError(f"protocol file {shown}: {e}") from None
    # A stable module name per content, kept in sys.modules: the version's class pickles by
    # reference, and forked workers inherit the module.
    modname = f"isr_user_protocol_{sha[:16]}"
    spec = importlib.util.spec_from_loader(modname, loader=None, origin=os.path.abspath(path))
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    module.__file__ = os.path.abspath(path)
    sys.modules[modname] = module
    try:
        exec(code, module.__dict__)
    except Exception as e:
        del sys.modules[modname]
        first = str(e).splitlines()[0] if str(e) else ""
        raise ProtocolFileError(
            f"protocol file {shown}: importing it raised {type(e).__name__}: {first}"
        ) from None
    p = _the_version(module, shown)
    if not isinstance(p.name, str) or not p.name.strip() or p.name != p.name.strip():
        raise ProtocolFileError(
            f"protocol file {shown}: the version needs a name (class attribute)"
        )
    if p.name in BUILTIN_NAMES:
        raise ProtocolFileError(
            f"protocol file {shown}: name {p.name!r} is a built-in version; give yours another name"
        )
    p.source_file = os.path.abspath(path)
    p.source_sha256 = sha
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


def ship_by_value(p: ProtocolVersion) -> None:
    """Make Spark's task serializer (cloudpickle) carry the classes of ``p``'s file by value, so
    that executors, which never read the file, can rebuild the version from the task closure.
    The file's module is named after its content, so an executor can never mix two versions of
    one file. Called only for ``--engine spark`` (pyspark is imported here, not before)."""
    from pyspark import cloudpickle

    module = sys.modules.get(type(p).__module__)
    if module is not None and module.__name__.startswith("isr_user_protocol_"):
        cloudpickle.register_pickle_by_value(module)
