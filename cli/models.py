"""Model options shared by every subcommand that builds the ISR spec (check, simulate, ...)."""

from __future__ import annotations

import argparse

from spec import PROTOCOL_NAMES, Config, ConfigError, IsrSpec
from spec.config import ACKS

from .errors import UsageError

DEFAULTS = Config()  # the embedded default model: `isr check` with no options


def add_model_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("model (bounds and protocol options)")
    g.add_argument(
        "--protocol",
        default=DEFAULTS.protocol,
        metavar="NAME",
        help=f"protocol version: {', '.join(PROTOCOL_NAMES)} (default {DEFAULTS.protocol})",
    )
    g.add_argument(
        "--replicas",
        type=int,
        default=DEFAULTS.replicas,
        metavar="N",
        help=f"assigned replicas, 2..5 (default {DEFAULTS.replicas})",
    )
    g.add_argument(
        "--records",
        type=int,
        default=DEFAULTS.records,
        metavar="N",
        help=f"records producers may write (default {DEFAULTS.records})",
    )
    g.add_argument(
        "--epochs",
        type=int,
        default=DEFAULTS.epochs,
        metavar="N",
        help=f"highest leader epoch; the initial leader has epoch 1 (default {DEFAULTS.epochs})",
    )
    g.add_argument(
        "--crashes",
        type=int,
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
        type=int,
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
        type=int,
        default=DEFAULTS.retries,
        metavar="N",
        help="producer retries per behaviour after a lost reply (R6, R15; default 0)",
    )
    f.add_argument(
        "--idempotence",
        action="store_true",
        help="idempotent producer: the leader drops a retry of a record it holds (with --retries)",
    )
    f.add_argument(
        "--retention",
        action="store_true",
        help="retention advances the log start offset; fetches below it reset (R12)",
    )
    f.add_argument(
        "--controller-failovers",
        type=int,
        default=DEFAULTS.controller_failovers,
        metavar="N",
        help="controller failovers per behaviour; the deposed one's requests linger (R9, R18)",
    )
    f.add_argument(
        "--session-expiries",
        type=int,
        default=DEFAULTS.session_expiries,
        metavar="N",
        help="session expiries of running brokers per behaviour: zombies (R7, R8, R18)",
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


def config_from_args(args: argparse.Namespace) -> Config:
    cfg = Config(
        replicas=args.replicas,
        records=args.records,
        epochs=args.epochs,
        crashes=args.crashes,
        acks=args.acks,
        min_isr=args.min_isr,
        protocol=args.protocol,
        unclean=args.unclean,
        lose_unflushed=args.lose_unflushed,
        retries=args.retries,
        idempotence=args.idempotence,
        retention=args.retention,
        controller_failovers=args.controller_failovers,
        availability=args.availability,
        session_expiries=args.session_expiries,
    )
    try:
        return cfg.validate()
    except ConfigError as e:
        raise UsageError(str(e)) from None


def model_from_args(args: argparse.Namespace) -> IsrSpec:
    return IsrSpec(config_from_args(args))
