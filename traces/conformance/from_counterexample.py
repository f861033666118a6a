"""A counterexample of the spec as a conformance scenario (issue 27, item 1).

`isr conform --from-counterexample FILE` reads a counterexample written by `isr check
--trace-out FILE` (NDJSON, traces/counterexample.py, or ITF, traces/itf.py) and turns its story
into an adapter schedule (traces/ADAPTER.md), so that an implementation is asked to perform the
run the spec says a weaker version fails on:

* each spec step an adapter command causes becomes that command, by the one mapping of spec
  steps to commands the spec-derived scenarios use (``scenarios.step_ops``: ProducerSend ->
  produce, BrokerCrash -> crash, BrokerRestart -> restart, ConsumerFetch -> consume,
  ControllerMoveLeader -> elect_leader, ControllerShutdownBroker -> controlled_shutdown, a lost
  LeaderAndIsr -> a short partition, ...);
* each step the implementation takes by itself (an election after a session expired, a
  LeaderAndIsr applied, a fetch, a truncation, an ISR change) becomes time passing, ``run``.
  The adapter protocol has no command that waits for an observable condition (a leader at
  epoch E, an ISR, an offset reached), so a step of the implementation's own is a bounded
  ``run`` of ``OWN_STEP_MS`` (the implementation gets that long to take it), and the story ends
  with ``scenarios.settle`` (heal, restart every broker, run, produce, consume);
* a step no adapter command causes (``scenarios.NO_COMMAND``) and a model setting the adapter
  protocol cannot ask for (unclean election, acks=0) are bad input: one line naming the step
  or the setting (``StoryError``, exit 2), never a pass.

The verdict of the scenario is the validator's on the trace the implementation recorded, as for
every scenario; ``Story.property`` is the property the counterexample broke, for the report.
The conversion keeps the order of the story's environment steps but cannot force the order in
which the implementation takes its own steps (the order of LeaderAndIsr deliveries, a write
reaching a leader that has not yet learned it was deposed): ``Story.notes`` says, per step,
whether a command caused it or the implementation was left to take it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from isr.spec.protocols import PROTOCOLS

from .. import counterexample as cxfile
from .. import itf
from .scenarios import NoAdapterCommand, Scenario, settle, step_ops

OWN_STEP_MS = 60  # the `run` a step of the implementation's own becomes (step_ops' default)


class StoryError(ValueError):
    """A counterexample that cannot become a scenario: one line for the user (exit 2)."""


def family(protocol: str) -> str:
    """The protocol family of a registered version: ``kraft`` for the versions whose fetch is a
    request and a delayed response (``split_fetch``, spec/protocols/kraft.py: a KRaft cluster's
    events), ``zookeeper`` for every ZooKeeper-era version. A counterexample of one family is
    no story for an implementation of the other (its steps and state are another model's)."""
    p = PROTOCOLS.get(protocol)
    if p is None:
        raise StoryError(f"unknown protocol {protocol!r}; known: {', '.join(PROTOCOLS)}")
    return "kraft" if p.split_fetch else "zookeeper"


@dataclass
class Story:
    """A counterexample converted: the scenario (its first command ``start``), the version and
    property the counterexample is of, its length, and per spec step how the schedule takes it."""

    protocol: str
    property: str
    steps: int
    scenario: Scenario
    notes: list[str] = field(default_factory=list)
    caused: int = 0  # spec steps an adapter command causes
    own: int = 0  # spec steps left to the implementation (`run`)

    @property
    def label(self) -> str:
        """``kip-101 StrongIsr (10 steps)``: how the report names the story."""
        return f"{self.protocol} {self.property} ({self.steps} steps)"

    def to_json(self) -> dict[str, Any]:
        return {
            "protocol": self.protocol,
            "property": self.property,
            "steps": self.steps,
            "caused": self.caused,
            "own": self.own,
            "commands": len(self.scenario),
            "notes": self.notes,
        }


def read(path: str) -> cxfile.CounterexampleTrace:
    """The counterexample in ``path`` (NDJSON or ITF, by content), or StoryError (one line)."""
    try:
        trace = itf.read_any(path)
    except cxfile.TraceFileError as e:
        raise StoryError(str(e)) from None
    if not trace.steps:
        raise StoryError(f"{path}: the counterexample has no step")
    return trace


def start_command(config: dict[str, Any], protocol: str) -> dict[str, Any]:
    """The ``start`` of a story: one broker per spec replica (replica i is broker i), one
    partition replicated on all of them, the model's min.insync.replicas and acks. A setting the
    adapter protocol cannot ask for is a StoryError."""
    if config.get("unclean"):
        raise StoryError(
            "the counterexample's model elects unclean leaders (--unclean): the adapter "
            "protocol has no unclean-election setting"
        )
    acks = str(config.get("acks", "all"))
    if acks not in ("all", "1"):
        raise StoryError(
            f"the counterexample's model has acks {acks}: the adapter protocol's producers use "
            "acks all or 1"
        )
    n = int(config.get("replicas", 3))
    return {
        "op": "start",
        "brokers": n,
        "replication": n,
        "partitions": 1,
        "min_insync": int(config.get("min_isr", 1)),
        "acks": acks,
    }


def to_story(trace: cxfile.CounterexampleTrace, claimed: str) -> Story:
    """The scenario of ``trace`` for an implementation of ``claimed``: refused (StoryError) when
    the counterexample is of another protocol family, or a step has no adapter command."""
    head = trace.header
    cfg = head.get("config") or {}
    proto = str(cfg.get("protocol") or "")
    if family(proto) != family(claimed):
        raise StoryError(
            f"the counterexample is of {proto} ({family(proto)} family); --protocol {claimed} "
            f"is of the {family(claimed)} family: its steps are another model's"
        )
    lose = bool(cfg.get("lose_unflushed"))
    ops: Scenario = [start_command(cfg, claimed)]
    story = Story(proto, str(head.get("property") or "?"), len(trace.steps), ops)
    for step in trace.steps:
        name, args = step.get("action"), step.get("args") or {}
        where = f"step {step.get('index')} ({name})"
        if not name:
            raise StoryError(f"{where}: the step names no action")
        try:
            cmds = step_ops(str(name), args, lose_unflushed=lose)
        except (NoAdapterCommand, KeyError) as e:
            why = str(e) if isinstance(e, NoAdapterCommand) else f"argument {e} missing"
            raise StoryError(f"{where}: no adapter command: {why}") from None
        ops += cmds
        shown = ", ".join(f"{k}={v}" for k, v in args.items())
        if all(c["op"] == "run" for c in cmds):
            story.own += 1
            story.notes.append(
                f"{step.get('index')}. {name}({shown}): the implementation's own step, "
                f"run {OWN_STEP_MS} ms"
            )
        else:
            story.caused += 1
            story.notes.append(
                f"{step.get('index')}. {name}({shown}): " + ", ".join(c["op"] for c in cmds)
            )
    ops += settle(int(cfg.get("replicas", 3)))
    return story


def load_story(path: str, claimed: str) -> Story:
    """``read`` then ``to_story``."""
    return to_story(read(path), claimed)
