"""Model options shared by every subcommand that builds the ISR spec (check, simulate, ...),
the option types every subcommand uses for numbers, and the one rule that refuses bounds no
exhaustive run can finish (``refuse_hopeless``)."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from dataclasses import fields

from isr.spec import PROTOCOL_NAMES, Config, ConfigError, IsrSpec
from isr.spec.config import ACKS
from isr.spec.protocols import PROTOCOLS, ProtocolFileError, ProtocolVersion
from isr.spec.size import estimate_log10_states

from .errors import UsageError
from .protocol_file import load_protocol_file


# ---- option types ------------------------------------------------------------------------------
# argparse turns the ArgumentTypeError into one usage line and exit 2. Every number a user gives
# goes through one of these: a NaN, an infinity, a negative or absurdly large count is refused
# before anything runs.
def int_in(lo: int, hi: int) -> Callable[[str], int]:
    """An integer option within lo..hi."""

    def parse(text: str) -> int:
        try:
            v = int(text.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text[:40]!r} is not an integer") from None
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"{v} is outside {lo}..{hi:,}")
        return v

    parse.__name__ = f"integer {lo}..{hi}"
    return parse


def seconds_in(lo_exclusive: float, hi: float) -> Callable[[str], float]:
    """A finite number of seconds, > lo_exclusive and <= hi (NaN and infinities refused)."""

    def parse(text: str) -> float:
        try:
            v = float(text.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a number") from None
        if not math.isfinite(v) or not lo_exclusive < v <= hi:
            raise argparse.ArgumentTypeError(
                f"{text[:40]} is not a finite number of seconds in ({lo_exclusive:g}, {hi:g}]"
            )
        return v

    parse.__name__ = "seconds"
    return parse


BIG = 10**12  # counts (states, walks, records to produce): more would not finish anyway
DAY = 86_400.0
positive_int = int_in(1, BIG)
nonnegative_int = int_in(0, BIG)
seed_int = int_in(0, 2**63 - 1)
# A time limit: finite and positive, at most a year. For `isr check --max-seconds` too (its
# module keeps `type=float` and its own `<= 0` check, which lets NaN through: see
# ``check_run_limits``, called for it from ``model_from_args``).
positive_seconds = seconds_in(0.0, 365 * DAY)
MODEL_COUNT = int_in(0, BIG)  # model bounds: parsed as numbers here, judged by refuse_hopeless


# ---- bounds that cannot finish -----------------------------------------------------------------
EXHAUSTIVE_LIMIT = 1e11  # the sequential engines: ~1e4 states/s, so about four months
SPARK_LIMIT = 1e13


def refuse_hopeless(
    cfg: Config,
    engine: str = "bfs",
    per_cell: bool = False,
    version: ProtocolVersion | None = None,
) -> None:
    """UsageError, with the estimate and where to go instead, when an exhaustive run of ``cfg``
    on ``engine`` cannot finish. The one place this rule lives (check, liveness, graph, matrix).
    ``per_cell``: a cell of `isr matrix`, which a time limit ends anyway: only what not even
    Spark could finish is refused (such a cell could only ever print `incomplete`).
    ``version``: as for ``estimate_log10_states``."""
    limit = SPARK_LIMIT if engine == "spark" or per_cell else EXHAUSTIVE_LIMIT
    est = estimate_log10_states(cfg, version)
    if est <= math.log10(limit):
        return
    where = (
        "use `isr simulate` (random walks) instead"
        if engine == "spark" or per_cell
        else "use `isr simulate` (random walks) or `isr check --engine spark`"
        if est <= math.log10(SPARK_LIMIT)
        else "use `isr simulate` (random walks) instead"
    )
    size = f"about 10^{est:.0f} states" if est < 100 else "more than 10^100 states"
    raise UsageError(
        f"replicas {cfg.replicas}, records {cfg.records}, epochs {cfg.epochs}, crashes "
        f"{cfg.crashes}: {size}, beyond what an exhaustive run can finish "
        f"(limit 10^{math.log10(limit):.0f}{' with --engine spark' if engine == 'spark' else ''}"
        f"); {where}"
    )


def check_run_limits(args: argparse.Namespace) -> None:
    """--max-seconds and --max-states where a subcommand has them: a NaN or an infinity would
    switch the limit off, a negative one stop at once."""
    secs = getattr(args, "max_seconds", None)
    if secs is not None and not (math.isfinite(secs) and secs > 0):
        raise UsageError(f"--max-seconds must be a finite number > 0, got {secs}")
    states = getattr(args, "max_states", None)
    if states is not None and not 0 < states <= BIG:
        raise UsageError(f"--max-states must be in 1..{BIG:,}, got {states}")


DEFAULTS = Config()  # the embedded default model: `isr check` with no options

PROTOCOL_FILE_HELP = (
    "a Python file defining your own protocol version (a spec.protocols.ProtocolVersion "
    "subclass; see examples/protocols/my_kip.py); used instead of --protocol"
)


def add_protocol_file_arg(
    p: argparse.ArgumentParser | argparse._ArgumentGroup, help: str = ""
) -> None:
    """``--protocol-file FILE``: the one option every command that builds the spec shares."""
    p.add_argument("--protocol-file", metavar="FILE", default=None, help=help or PROTOCOL_FILE_HELP)


def user_protocol(path: str) -> ProtocolVersion:
    """The version the protocol file at ``path`` defines (cli.protocol_file; one object per
    file content): the one way every command loads a ``--protocol-file`` or a trace header's
    ``protocol_file``. A file that cannot be used is a UsageError (one line, exit 2)."""
    try:
        return load_protocol_file(path)
    except ProtocolFileError as e:
        raise UsageError(str(e)) from None


def protocol_from_args(args: argparse.Namespace) -> ProtocolVersion | None:
    """The version ``--protocol-file`` defines, or None without the option (the built-in one
    ``--protocol`` names, which ``Config.validate`` checks). Resolved once per command, at the
    edge; from there on the object is passed. Both options at once: UsageError."""
    path = getattr(args, "protocol_file", None)
    if not path:
        return None
    named = getattr(args, "protocol", None)
    if named not in (None, DEFAULTS.protocol):
        raise UsageError(
            f"give --protocol {named} or --protocol-file {path}, not both (the file names its "
            "own version)"
        )
    return user_protocol(path)


def add_model_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("model (bounds and protocol options)")
    g.add_argument(
        "--protocol",
        default=DEFAULTS.protocol,
        metavar="NAME",
        help=f"protocol version: {', '.join(PROTOCOL_NAMES)} (default {DEFAULTS.protocol})",
    )
    add_protocol_file_arg(g)
    g.add_argument(
        "--replicas",
        type=MODEL_COUNT,
        default=DEFAULTS.replicas,
        metavar="N",
        help=f"assigned replicas, 2..5 (default {DEFAULTS.replicas})",
    )
    g.add_argument(
        "--records",
        type=MODEL_COUNT,
        default=DEFAULTS.records,
        metavar="N",
        help=f"records producers may write (default {DEFAULTS.records})",
    )
    g.add_argument(
        "--epochs",
        type=MODEL_COUNT,
        default=DEFAULTS.epochs,
        metavar="N",
        help=f"highest leader epoch; the initial leader has epoch 1 (default {DEFAULTS.epochs})",
    )
    g.add_argument(
        "--crashes",
        type=MODEL_COUNT,
        default=DEFAULTS.crashes,
        metavar="N",
        help=f"broker crashes per behaviour (default {DEFAULTS.crashes})",
    )
    g.add_argument(
        "--acks",
        default=DEFAULTS.acks,
        metavar="|".join(ACKS),
        help=f"producer acks; mixed: each write picks all, 1 or 0 (default {DEFAULTS.acks})",
    )
    g.add_argument(
        "--min-isr",
        type=MODEL_COUNT,
        default=DEFAULTS.min_isr,
        metavar="N",
        help=f"min.insync.replicas for acks=all (default {DEFAULTS.min_isr})",
    )
    f = p.add_argument_group("fault modes and design choices (all off by default)")
    f.add_argument(
        "--unclean",
        action="store_true",
        help="unclean leader election (R9): with no live ISR member any live replica may lead",
    )
    f.add_argument(
        "--lose-unflushed",
        action="store_true",
        help="a crash loses the log's unflushed tail; BrokerFlush fsyncs it (R14)",
    )
    f.add_argument(
        "--retries",
        type=MODEL_COUNT,
        default=DEFAULTS.retries,
        metavar="N",
        help="producer retries per behaviour after a lost reply (R6, R15; default 0)",
    )
    f.add_argument(
        "--idempotence",
        action="store_true",
        help="idempotent producer (KIP-98, KIP-360): producer epoch and sequences, checked by the"
        " leader against its producer state (with --retries, acks all)",
    )
    f.add_argument(
        "--retention",
        action="store_true",
        help="retention advances the log start offset; fetches below it reset (R12)",
    )
    f.add_argument(
        "--delete-records",
        type=MODEL_COUNT,
        default=DEFAULTS.delete_records,
        metavar="N",
        help="kraft: the operator's DeleteRecords requests per behaviour, each moving the "
        "leader's log start up to its HW (R12)",
    )
    f.add_argument(
        "--reassignments",
        type=MODEL_COUNT,
        default=DEFAULTS.reassignments,
        metavar="N",
        help="the operator's partition reassignments (KIP-455) per behaviour, a new target "
        "or (kraft) a cancel; the partition starts on brokers 0..R-2, broker R-1 is a spare; "
        "the ZooKeeper-era versions run the ZooKeeper controller's reassignment (R1, R9)",
    )
    f.add_argument(
        "--controller-failovers",
        type=MODEL_COUNT,
        default=DEFAULTS.controller_failovers,
        metavar="N",
        help="controller failovers per behaviour (R9, R18): ZooKeeper era, the deposed "
        "controller's requests linger; kraft, AlterPartition answers lost in a failover",
    )
    f.add_argument(
        "--session-expiries",
        type=MODEL_COUNT,
        default=DEFAULTS.session_expiries,
        metavar="N",
        help="session expiries of running brokers per behaviour: zombies (R7, R8, R18)",
    )
    f.add_argument(
        "--min-isr-changes",
        type=MODEL_COUNT,
        default=DEFAULTS.min_isr_changes,
        metavar="N",
        help="kraft: operator changes of min.insync.replicas per behaviour (KAFKA-16540)",
    )
    f.add_argument(
        "--availability",
        action="store_true",
        help="also check Available: a dead leader can always be replaced (R8, R17)",
    )


def add_property_args(p: argparse.ArgumentParser) -> None:
    """``--invariant NAME`` (alias ``--property``), repeatable: check only these properties."""
    p.add_argument(
        "--invariant",
        "--property",
        dest="properties",
        action="append",
        metavar="NAME",
        help="check only this property (repeatable; default: all)",
    )


def config_from_args(args: argparse.Namespace, version: ProtocolVersion | None = None) -> Config:
    """The Config of the model options (each Config field is the option of its name; one with
    no option keeps its default), for ``version`` (a user's, from ``protocol_from_args``) or
    else the built-in ``--protocol``."""
    bounds = {
        f.name: getattr(args, f.name, f.default) for f in fields(Config) if f.name != "protocol"
    }
    cfg = Config(**bounds, protocol=version.name if version is not None else args.protocol)
    try:
        return cfg.validate(version)
    except ConfigError as e:
        raise UsageError(e.cli) from None


def model_from_args(args: argparse.Namespace, exhaustive: bool = True) -> IsrSpec:
    """The spec of the options, its version resolved here once (``protocol_from_args``).
    ``exhaustive``: the run explores every reachable state (check, liveness, graph), so a
    configuration it cannot finish is refused (``refuse_hopeless``)."""
    check_run_limits(args)
    version = protocol_from_args(args)
    cfg = config_from_args(args, version)
    version = version or PROTOCOLS[cfg.protocol]  # a built-in name, checked by validate
    if exhaustive:
        refuse_hopeless(cfg, getattr(args, "engine", "bfs"), version=version)
    reduction = getattr(args, "reduction", None)
    if reduction is not None and getattr(args, "symmetry", True) is False:
        raise UsageError("--reduction works through the canonical form: drop --no-symmetry")
    try:
        return IsrSpec(cfg, version, reduction=reduction)
    except ValueError as e:  # a reduction not known to be sound for this version
        raise UsageError(str(e)) from None
