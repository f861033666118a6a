"""Bounds and options of one model: a value passed in, never a module global."""

from __future__ import annotations

from dataclasses import asdict, dataclass

PROTOCOL_NAMES = ("hw-truncation", "kip-101", "kip-279", "kip-320")
ACKS = ("all", "1")

MIN_REPLICAS, MAX_REPLICAS = 2, 5


class ConfigError(ValueError):
    """An impossible configuration; the message is one line for the user."""


@dataclass(frozen=True)
class Config:
    """The bounds that make the state space finite, and the protocol options.

    replicas  R, the assigned replicas of the one partition (2..5); replica 0 is the preferred
              leader by R1 placement and leads at epoch 1 in the initial state.
    records   how many distinct records producers may write (ids 1..records); refused writes
              use up an id too.
    epochs    the highest leader epoch the controller may reach (the initial leader has epoch 1,
              so ``epochs=2`` allows one election or controller ISR change).
    crashes   how many broker crashes may happen in a behaviour (each may be followed by a restart).
    acks      the producers' acks setting: "all" or "1" (R6).
    min_isr   min.insync.replicas for acks=all writes (R6).
    protocol  the truncation/fencing rule: one of PROTOCOL_NAMES.
    """

    replicas: int = 3
    records: int = 2
    epochs: int = 2
    crashes: int = 1
    acks: str = "all"
    min_isr: int = 1
    protocol: str = "kip-320"

    def validate(self) -> Config:
        if not MIN_REPLICAS <= self.replicas <= MAX_REPLICAS:
            raise ConfigError(
                f"--replicas must be between {MIN_REPLICAS} and {MAX_REPLICAS}, got {self.replicas}"
            )
        if self.records < 0:
            raise ConfigError(f"--records must be >= 0, got {self.records}")
        if self.epochs < 1:
            raise ConfigError(
                f"--epochs must be >= 1 (the initial leader has epoch 1), got {self.epochs}"
            )
        if self.crashes < 0:
            raise ConfigError(f"--crashes must be >= 0, got {self.crashes}")
        if self.acks not in ACKS:
            raise ConfigError(f"--acks must be one of {', '.join(ACKS)}, got {self.acks!r}")
        if not 1 <= self.min_isr <= self.replicas:
            raise ConfigError(
                f"--min-isr must be between 1 and the replica count {self.replicas}, got {self.min_isr}"
            )
        if self.protocol not in PROTOCOL_NAMES:
            raise ConfigError(
                f"unknown protocol {self.protocol!r}; `isr protocols` lists: {', '.join(PROTOCOL_NAMES)}"
            )
        return self

    def to_json(self) -> dict:
        return asdict(self)
