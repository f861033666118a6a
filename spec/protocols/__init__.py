"""The protocol versions: one module per version, each extending its predecessor as the TLA+
modules do (``Kip320.tla`` EXTENDS ``Kip279.tla``), and the one registry every other list of
names is derived from or tested against (spec.config, spec.symbolic, impl.core.truncation, cli).

    hw_truncation ─┬─ original_design
                   └─ kip_101 ── kip_279 ─┬─ kip_320 ─┬─ kip_966
                                          │           └─ majority_quorum
                                          └─ kip_320_first_try

A user's own version is a Python file defining a ``ProtocolVersion`` subclass (see
examples/protocols/my_kip.py); ``load_protocol_file`` imports it and ``register_protocol`` makes
its name usable as ``Config.protocol``. Reading the file is the one I/O of the spec, and it
happens only when a command line asks for it (``--protocol-file``).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys

from .base import ProtocolVersion
from .hw_truncation import HW_TRUNCATION, HwTruncation
from .kip_101 import KIP_101, Kip101
from .kip_279 import KIP_279, Kip279
from .kip_320 import KIP_320, Kip320
from .kip_320_first_try import KIP_320_FIRST_TRY, Kip320FirstTry
from .kip_966 import KIP_966, Kip966
from .majority_quorum import MAJORITY_QUORUM, MajorityQuorum
from .original_design import ORIGINAL_DESIGN, OriginalDesign

DEFAULT_PROTOCOL = "kip-320"

BUILTIN: tuple[ProtocolVersion, ...] = (
    HW_TRUNCATION,
    ORIGINAL_DESIGN,
    KIP_101,
    KIP_279,
    KIP_320_FIRST_TRY,
    KIP_320,
    KIP_966,
    MAJORITY_QUORUM,
)
BUILTIN_NAMES: tuple[str, ...] = tuple(p.name for p in BUILTIN)

# The one registry: the built-in versions, then any user version registered in this process.
PROTOCOLS: dict[str, ProtocolVersion] = {p.name: p for p in BUILTIN}


class ProtocolFileError(ValueError):
    """A protocol file that cannot be used; the message is one line for the user."""


def get_protocol(name: str) -> ProtocolVersion:
    """The registered version called ``name`` (KeyError with the known names otherwise)."""
    try:
        return PROTOCOLS[name]
    except KeyError:
        raise KeyError(f"unknown protocol {name!r}; known: {', '.join(PROTOCOLS)}") from None


def register_protocol(p: ProtocolVersion) -> ProtocolVersion:
    """Make a user's version usable by name. A built-in name cannot be taken; registering the
    same file again (same name and content) is a no-op."""
    old = PROTOCOLS.get(p.name)
    if old is not None and old is not p:
        if p.name in BUILTIN_NAMES:
            raise ProtocolFileError(
                f"protocol name {p.name!r} is a built-in version; give yours another name"
            )
        if old.source_sha256 != p.source_sha256:
            raise ProtocolFileError(f"another protocol named {p.name!r} is already loaded")
    PROTOCOLS[p.name] = p
    return p


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


def protocol_source(name: str) -> dict[str, str]:
    """For result headers: ``{"protocol_file", "protocol_sha256"}`` of a user's version, empty
    for a built-in one."""
    p = PROTOCOLS.get(name)
    if p is None or p.source_file is None:
        return {}
    return {"protocol_file": p.source_file, "protocol_sha256": p.source_sha256 or ""}


__all__ = [
    "BUILTIN",
    "BUILTIN_NAMES",
    "DEFAULT_PROTOCOL",
    "HW_TRUNCATION",
    "KIP_101",
    "KIP_279",
    "KIP_320",
    "KIP_320_FIRST_TRY",
    "KIP_966",
    "MAJORITY_QUORUM",
    "ORIGINAL_DESIGN",
    "PROTOCOLS",
    "HwTruncation",
    "Kip101",
    "Kip279",
    "Kip320",
    "Kip320FirstTry",
    "Kip966",
    "MajorityQuorum",
    "OriginalDesign",
    "ProtocolFileError",
    "ProtocolVersion",
    "file_sha256",
    "get_protocol",
    "load_protocol_file",
    "protocol_source",
    "register_protocol",
]
