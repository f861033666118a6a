"""Model options shared by every subcommand that builds the ISR spec (check, simulate, ...)."""

from __future__ import annotations

import argparse

from spec import PROTOCOL_NAMES, Config, ConfigError, IsrSpec

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
        metavar="all|1",
        help=f"producer acks (default {DEFAULTS.acks})",
    )
    g.add_argument(
        "--min-isr",
        type=int,
        default=DEFAULTS.min_isr,
        metavar="N",
        help=f"min.insync.replicas for acks=all (default {DEFAULTS.min_isr})",
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
    )
    try:
        return cfg.validate()
    except ConfigError as e:
        raise UsageError(str(e)) from None


def model_from_args(args: argparse.Namespace) -> IsrSpec:
    return IsrSpec(config_from_args(args))
