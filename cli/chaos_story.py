"""`isr chaos --story [FILE]`: the spec's counterexample as the real cluster's fault schedule
(issue 27, item 5; impl/cluster/story.py plays it).

Without FILE the story is the shortest loss of an acknowledged record (NoAckedLoss, R6) the
checker finds for the cluster's protocol at small bounds (the run's replication up to 3
replicas, its min.insync.replicas, one record, two leader epochs, one crash); a version with no
such loss there (kip-320) is given the seeds' story instead, the one hw-truncation fails on,
so that a run shows the fix surviving the fault order that breaks the older design. With FILE,
a counterexample written by `isr check --trace-out` (NDJSON or ITF) of a ZooKeeper-era version.

Each spec step becomes what causes it on the cluster, by role (spec replica r is role r: role 0
the partition's leader when a round starts, impl/cluster/story.py):

* BrokerCrash / BrokerRestart / ControllerShutdownBroker / ControllerMoveLeader: the command;
* LeaderShrinkIsr(leader, f) and ControllerShrinkIsr(f): the implementation's own step, forced
  from outside by freezing f (a long pause: it stops fetching, R7) until the ISR lacks it; f
  stays frozen until the round ends, as the story leaves it out of the ISR;
* ControllerElectLeader(l): the controller's own step, waited for (the leader becomes l);
* CoordinationExpireSession(r): a freeze past the session timeout;
* BrokerBecomeLeader / BrokerBecomeFollower: a moment for the broker to apply the request;
* ProducerSend, fetches, checkpoints, consumer reads: nothing; the producers write all along
  and the brokers take their own steps;
* NetworkLoseLeaderAndIsr: refused (StoryError): the cluster has no way to drop one request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from isr.traces import counterexample as cxfile
from isr.traces.counterexample import itf

from .errors import UsageError

SEEDS_PROTOCOL = "hw-truncation"
LOSS = "NoAckedLoss"
SESSION_S = 3.5  # past the cluster's ZooKeeper session timeout (impl/cluster: 3 s)
APPLY_S = 0.3  # a LeaderAndIsr's application and the producers' first writes to it


class StoryError(UsageError):
    """A counterexample the real cluster cannot play: one line, exit 2."""


@dataclass
class ClusterStory:
    protocol: str  # the version the counterexample is of
    property: str
    steps: list[tuple[str, dict[str, Any]]]
    ops: list[dict[str, Any]]
    why: str  # how the story was chosen, for the report

    def describe(self) -> str:
        from .story import call  # a step as the spec names it, as every page prints it

        told = " -> ".join(call(a, args) for a, args in self.steps)
        return f"{self.protocol}'s {self.property} counterexample, {len(self.steps)} steps ({self.why}): {told}"


def step_ops(action: str, args: dict[str, Any], n: int) -> list[dict[str, Any]]:
    """The cluster operations that cause one spec step (see the module docstring)."""
    if action == "NetworkLoseLeaderAndIsr":
        raise StoryError(f"step {n} ({action}): the real cluster cannot drop one request")
    if action == "BrokerCrash":
        return [{"op": "kill", "role": args["replica"]}]
    if action == "BrokerRestart":
        return [{"op": "restart", "role": args["replica"]}]
    if action == "ControllerShutdownBroker":
        return [{"op": "shutdown", "role": args["replica"]}]
    if action == "ControllerMoveLeader":
        return [
            {"op": "elect", "role": args["leader"]},
            {"op": "wait_leader", "role": args["leader"]},
        ]
    if action in ("LeaderShrinkIsr", "ControllerShrinkIsr"):
        f = args.get("follower", args.get("replica"))
        return [{"op": "pause", "role": f}, {"op": "wait_out_of_isr", "role": f}]
    if action == "ControllerElectLeader":
        return [{"op": "wait_leader", "role": args["leader"]}]
    if action == "CoordinationExpireSession":
        return [{"op": "pause", "role": args["replica"]}, {"op": "sleep", "s": SESSION_S}]
    if action in ("BrokerBecomeLeader", "BrokerBecomeFollower"):
        return [{"op": "sleep", "s": APPLY_S}]
    return []


def to_ops(steps: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """The story's operations; a pause of a broker already frozen is dropped."""
    ops: list[dict[str, Any]] = []
    frozen: set[int] = set()
    for n, (action, args) in enumerate(steps, 1):
        for op in step_ops(action, args, n):
            if op["op"] == "pause":
                if op["role"] in frozen:
                    continue
                frozen.add(op["role"])
            elif op["op"] in ("kill", "shutdown"):
                frozen.discard(op["role"])
            ops.append(op)
    if not any(op["op"] != "sleep" for op in ops):
        raise StoryError(
            "the counterexample has no step the cluster can cause (no crash, pause or election)"
        )
    return ops


def _search(protocol: str, replicas: int, min_isr: int) -> list[tuple[str, dict[str, Any]]] | None:
    """The shortest NoAckedLoss counterexample of ``protocol`` at the story bounds, or None."""
    from isr.api import check

    r = check(
        protocol=protocol,
        replicas=replicas,
        records=1,
        epochs=2,
        crashes=1,
        min_isr=min(min_isr, replicas),
        properties=[LOSS],
        stop_at_first_violation=True,
        max_seconds=60,
    )
    cx = r.properties[0].counterexample
    if r.properties[0].holds is not False or cx is None:
        return None
    return [(s.action, dict(s.args)) for s in cx.steps]


def derive(protocol: str, replication: int, min_insync: int) -> ClusterStory:
    """The story for a cluster running ``protocol`` (see the module docstring)."""
    from isr.spec.protocols import PROTOCOLS

    p = PROTOCOLS.get(protocol)
    if p is None or p.split_fetch:
        raise StoryError(f"--story: no story for protocol {protocol!r} (a ZooKeeper-era version)")
    replicas = max(2, min(replication, 3))
    steps = _search(protocol, replicas, min_insync)
    why = f"the checker's shortest for {protocol} at {replicas} replicas, min.insync.replicas {min_insync}"
    told = protocol
    if steps is None:
        told = SEEDS_PROTOCOL
        steps = _search(SEEDS_PROTOCOL, replicas, min_insync)
        why = f"{protocol} has none at these bounds: the seeds' story it must survive"
        if steps is None:
            raise StoryError(
                f"--story: {SEEDS_PROTOCOL} loses nothing at {replicas} replicas either"
            )
    return ClusterStory(told, LOSS, steps, to_ops(steps), why)


def from_file(path: str) -> ClusterStory:
    """The story of a counterexample file."""
    try:
        trace = itf.read_any(path)
    except cxfile.TraceFileError as e:
        raise StoryError(str(e)) from None
    h = trace.header
    protocol = str(h.get("config", {}).get("protocol") or h.get("protocol") or "?")
    from isr.spec.protocols import PROTOCOLS

    p = PROTOCOLS.get(protocol)
    if p is not None and p.split_fetch:
        raise StoryError(f"{path}: a {protocol} counterexample; the cluster is ZooKeeper-era")
    steps = [(s["action"], dict(s.get("args", {}))) for s in trace.steps]
    prop = str(h.get("property") or h.get("violated") or "?")
    return ClusterStory(protocol, prop, steps, to_ops(steps), f"from {path}")
