"""Bounds and options of one model: a value passed in, never a module global."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, replace

from .protocols import BUILTIN_NAMES, DEFAULT_PROTOCOL, PROTOCOLS, ProtocolVersion

PROTOCOL_NAMES = BUILTIN_NAMES  # the built-in versions, from the one registry (spec.protocols)
ACKS = ("all", "1", "0", "mixed")

MIN_REPLICAS, MAX_REPLICAS = 2, 5


class ConfigError(ValueError):
    """An impossible configuration; the message is one line for the user. It names Config's
    fields as the Python API spells them (``records``, ``min_isr``); ``cli`` is the same line
    with the command line's flags (``--records``, ``--min-isr``), which the CLI prints."""

    def __init__(self, message: str) -> None:
        # written once with flags ({records} -> "records" here, "--records" for the CLI)
        super().__init__(_FLAG.sub(lambda m: m[1], message))
        self.cli = _FLAG.sub(lambda m: "--" + m[1].replace("_", "-"), message)


_FLAG = re.compile(r"\{([a-z_]+)\}")


def did_you_mean(word: str, choices: list[str] | tuple[str, ...]) -> str:
    """`` (did you mean X?)`` for the choice closest to a mistyped ``word`` (case and dashes
    ignored: ``kip320`` -> kip-320, ``StrongISR`` -> StrongIsr), or ``""``."""
    import difflib

    def norm(x: str) -> str:
        return x.lower().replace("-", "").replace("_", "").replace(".", "")

    by_norm = {norm(c): c for c in choices}
    if norm(word) in by_norm:
        return f" (did you mean {by_norm[norm(word)]}?)"
    close = difflib.get_close_matches(norm(word), list(by_norm), n=1, cutoff=0.75)
    return f" (did you mean {by_norm[close[0]]}?)" if close else ""


@dataclass(frozen=True)
class Config:
    """The bounds that make the state space finite, and the protocol options.

    replicas  R, the assigned replicas of the one partition (2..5); replica 0 is the preferred
              leader by R1 placement and leads at epoch 1 in the initial state. With
              ``reassignments``: R brokers, the partition on 0..R-2 at first.
    records   how many distinct records producers may write (ids 1..records); refused writes
              use up an id too.
    epochs    the highest leader epoch the controller may reach (the initial leader has epoch 1,
              so ``epochs=2`` allows one election or controller ISR change).
    crashes   how many broker crashes may happen in a behaviour (each may be followed by a restart).
    acks      the producers' acks setting (R6): "all", "1", "0", or "mixed" (each write picks one).
    min_isr   min.insync.replicas for acks=all writes (R6).
    protocol  the protocol version's name: a built-in one (spec.protocols.PROTOCOLS), or a
              user's version's (--protocol-file), whose object is then given beside this
              Config (``validate(version)``, ``IsrSpec(config, version)``).

    The fault modes (each OFF by default; with all off the model is the fault-free one):
    unclean               R9: with no live ISR member, any live replica may lead with ISR = {it}.
    lose_unflushed        R14: a crash keeps only the flushed prefix of the log; flushing is an
                          action (BrokerFlush).
    retries               R6/R15: how many producer retries a behaviour may make (0 = none); a
                          retry after a lost reply may duplicate a record.
    idempotence           the idempotent producer (KIP-98, KIP-360; Kafka's default since
                          3.0): producer epoch and sequences, checked by the leader against
                          the producer state it derives from its log; needs acks all. A
                          design choice, not a fault.
    retention             R12: retention advances a replica's log start offset; a fetch below the
                          leader's log start resets the follower to it. kraft too: retention
                          of any replica, the leader-epoch cache truncated from the start, the
                          follower taking up its leader's log start (issue 28 item 3).
    controller_failovers  R9/R18: how many controller failovers a behaviour may make; requests
                          of a deposed controller stay in flight (zombie), fenced by its epoch.
                          kraft: how many AlterPartition answers a failover (or a dropped
                          connection) may lose after the change was recorded, and the deposed
                          controller's answers where a variant has them (issue 28 item 2).
    session_expiries      R7/R8/R9/R18: how many times a live broker's coordination session may
                          expire while its process runs on (a pause: a zombie). The controller
                          treats it as dead; it keeps acting on stale beliefs until it
                          registers a new session (BrokerRenewSession).
    availability          also state the Available property (R8, R17): a dead leader can always
                          be replaced by the version's election rule.
    min_isr_changes       R6/R9 (kraft only): how many times the operator may change
                          min.insync.replicas (OperatorSetMinIsr, KAFKA-16540); 0 = never.
    delete_records        R12 (kraft only): how many DeleteRecords requests of the operator a
                          leader may apply (LeaderDeleteRecords: its log start moved up to at
                          most its HW); 0 = never.
    reassignments         KIP-455: how many AlterPartitionReassignments of the operator (a
                          new target, OperatorReassignPartition, or, kraft only, a cancel,
                          OperatorCancelReassignment) a behaviour may make; 0 = never. With
                          N > 0 the partition starts on brokers 0..R-2 (replication factor
                          R-1) and broker R-1 is a spare (issue 28 item 1). The ZooKeeper-era
                          versions run the ZooKeeper controller's reassignment (since 0.8;
                          spec/actions/zk_reassignment.py); not majority-quorum.
    """

    replicas: int = 3
    records: int = 2
    epochs: int = 2
    crashes: int = 1
    acks: str = "all"
    min_isr: int = 1
    protocol: str = DEFAULT_PROTOCOL
    unclean: bool = False
    lose_unflushed: bool = False
    retries: int = 0
    idempotence: bool = False
    retention: bool = False
    controller_failovers: int = 0
    availability: bool = False
    session_expiries: int = 0
    min_isr_changes: int = 0
    delete_records: int = 0
    reassignments: int = 0

    def validate(self, version: ProtocolVersion | None = None) -> Config:
        """This Config, or ConfigError. ``version``: the version object it is for, when not
        the built-in one named ``protocol`` (a user's version, or a variant)."""
        if not MIN_REPLICAS <= self.replicas <= MAX_REPLICAS:
            raise ConfigError(
                f"{{replicas}} must be between {MIN_REPLICAS} and {MAX_REPLICAS}, got {self.replicas}"
            )
        if self.records < 0:
            raise ConfigError(f"{{records}} must be >= 0, got {self.records}")
        if self.epochs < 1:
            raise ConfigError(
                f"{{epochs}} must be >= 1 (the initial leader has epoch 1), got {self.epochs}"
            )
        if self.crashes < 0:
            raise ConfigError(f"{{crashes}} must be >= 0, got {self.crashes}")
        if self.acks not in ACKS:
            raise ConfigError(f"{{acks}} must be one of {', '.join(ACKS)}, got {self.acks!r}")
        if not 1 <= self.min_isr <= self.replicas:
            raise ConfigError(
                f"{{min_isr}} must be between 1 and the replica count {self.replicas}, got {self.min_isr}"
            )
        if version is not None and version.name != self.protocol:
            raise ConfigError(
                f"{{protocol}} {self.protocol!r} is not the version given ({version.name!r})"
            )
        if version is None and self.protocol not in PROTOCOLS:
            raise ConfigError(
                f"unknown protocol {self.protocol!r}"
                f"{did_you_mean(self.protocol, PROTOCOL_NAMES)}; `isr protocols` lists: "
                f"{', '.join(PROTOCOL_NAMES)}"
            )
        if self.retries < 0:
            raise ConfigError(f"{{retries}} must be >= 0, got {self.retries}")
        if self.controller_failovers < 0:
            raise ConfigError(
                f"{{controller_failovers}} must be >= 0, got {self.controller_failovers}"
            )
        if self.session_expiries < 0:
            raise ConfigError(f"{{session_expiries}} must be >= 0, got {self.session_expiries}")
        if (version or PROTOCOLS[self.protocol]).split_fetch and self.session_expiries:
            raise ConfigError(
                f"{{protocol}} {self.protocol} does not model ZooKeeper session expiry (a KRaft"
                " broker's lost heartbeats are ControllerFenceBroker)"
            )
        if self.min_isr_changes < 0:
            raise ConfigError(f"{{min_isr_changes}} must be >= 0, got {self.min_isr_changes}")
        if self.min_isr_changes and not (version or PROTOCOLS[self.protocol]).split_fetch:
            raise ConfigError(
                f"{{min_isr_changes}} needs a kraft protocol (KAFKA-16540 is the KRaft"
                f" controller's), got {self.protocol}"
            )
        if self.delete_records < 0:
            raise ConfigError(f"{{delete_records}} must be >= 0, got {self.delete_records}")
        if self.delete_records and not (version or PROTOCOLS[self.protocol]).split_fetch:
            raise ConfigError(
                f"{{delete_records}} is modelled for the kraft protocols only (the ZooKeeper-era"
                f" versions have --retention), got {self.protocol}"
            )
        if self.reassignments < 0:
            raise ConfigError(f"{{reassignments}} must be >= 0, got {self.reassignments}")
        proto = version or PROTOCOLS[self.protocol]
        if self.reassignments and proto.majority_quorum:
            raise ConfigError(
                f"{{reassignments}} is modelled for the ISR versions (the kraft ones and the"
                f" ZooKeeper-era ones), not for {self.protocol}"
            )
        if (
            self.reassignments
            and not proto.split_fetch
            and (self.controller_failovers or self.session_expiries)
        ):
            raise ConfigError(
                "{reassignments} in the ZooKeeper-era versions is not modelled with"
                " {controller_failovers} or {session_expiries} yet (a new controller resuming a"
                " reassignment from ZooKeeper; leader -1 is the marker a renewed session uses)"
            )
        if self.reassignments and self.idempotence:
            raise ConfigError(
                "{reassignments} with {idempotence} is not modelled yet (a removed leader's"
                " purgatory and the producer's batches waiting there)"
            )
        if self.reassignments and self.min_isr > self.replicas - 1:
            raise ConfigError(
                f"{{min_isr}} must be at most the replication factor {self.replicas - 1} with"
                f" {{reassignments}} (R brokers, R-1 replicas), got {self.min_isr}"
            )
        if self.idempotence and not self.retries:
            raise ConfigError("{idempotence} needs {retries} > 0 (there is nothing to deduplicate)")
        if self.idempotence and self.acks != "all":
            raise ConfigError(
                '{idempotence} needs {acks} all (Kafka: "Must set acks to all in order to use the'
                ' idempotent producer", ProducerConfig)'
            )
        return self

    @property
    def fault_modes(self) -> tuple[str, ...]:
        """The names of the fault modes that are on (see FAULT_MODES)."""
        return tuple(m.name for m in FAULT_MODES if m.is_on(self))

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class FaultMode:
    """A fault mode as the CLI and the verdict table name it: the Config fields it sets."""

    name: str
    requirement: str
    description: str
    settings: tuple[tuple[str, object], ...]

    def is_on(self, cfg: Config) -> bool:
        return all(getattr(cfg, k) == v for k, v in self.settings)

    def apply(self, cfg: Config) -> Config:
        return replace(cfg, **dict(self.settings))


FAULT_MODES: tuple[FaultMode, ...] = (
    FaultMode(
        "unclean",
        "R9",
        "unclean leader election: with no live ISR member any live replica may lead",
        (("unclean", True),),
    ),
    FaultMode("acks-1", "R6", "producers use acks=1 (acknowledged on append)", (("acks", "1"),)),
    FaultMode(
        "lose-unflushed",
        "R14",
        "a crash loses the unflushed tail of the log (BrokerFlush writes it to disk)",
        (("lose_unflushed", True),),
    ),
    FaultMode(
        "retries",
        "R6, R15",
        "the producer may retry a write whose reply it did not get (one retry)",
        (("retries", 1),),
    ),
    FaultMode(
        "retention",
        "R12",
        "retention advances the log start offset; fetches below it are out of range",
        (("retention", True),),
    ),
    FaultMode(
        "controller-failover",
        "R9, R18",
        "the controller may fail over once; the deposed one's requests stay in flight",
        (("controller_failovers", 1),),
    ),
    FaultMode(
        "session-expiry",
        "R7, R8, R9, R18",
        "a live broker's session may expire once (a pause): the controller replaces it, the "
        "zombie acts on until it registers again",
        (("session_expiries", 1),),
    ),
)
FAULT_MODE_NAMES = tuple(m.name for m in FAULT_MODES)
