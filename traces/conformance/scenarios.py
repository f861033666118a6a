"""Scenarios for the conformance kit, taken from the spec itself (issue 6, item 3).

A scenario is a list of adapter commands (traces/ADAPTER.md). The spec-derived ones are shortest
paths of the spec's state graph, one for each spec action and one for each replica role change
(leader/follower/none/crashed), found by breadth-first search from the initial state (checker.graph.build_graph). Steps the
environment causes become commands (ProducerSend -> produce, BrokerCrash -> crash, BrokerRestart
-> restart, ConsumerFetch -> consume, a lost LeaderAndIsr -> a short partition from the
controller); every other spec step is the implementation's own business, so it becomes time
passing (`run`). Each scenario ends by healing the network, restarting the dead and settling.
The search is the checker's own state graph (checker.graph), not a BFS of the kit's own.
Random fault schedules come from hypothesis strategies (``ops_strategy``).
"""

from __future__ import annotations

import functools
from typing import Any

from isr.checker.graph import WithoutActions, build_graph
from isr.spec import Config, IsrSpec
from isr.spec.protocols import DEFAULT_PROTOCOL, ProtocolVersion, version_of
from isr.traces.validator.partition import _role  # a replica's role: the validator's own definition

Op = dict[str, Any]
Scenario = list[Op]

ENV_OPS = {
    "ProducerSend",
    "BrokerCrash",
    "BrokerRestart",
    "ConsumerFetch",
    "ControllerMoveLeader",
    "ControllerShutdownBroker",
}


MOVES = frozenset({"ControllerMoveLeader", "ControllerShutdownBroker"})


@functools.cache
def spec_targets(
    replicas: int = 3,
    protocol: str | ProtocolVersion = DEFAULT_PROTOCOL,
    max_states: int = 60_000,
    without: frozenset[str] = frozenset(),
) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """Shortest spec paths: target name -> [(action, args)], one per spec action and per role
    transition ("role:a->b"), using no action named in ``without``. ``protocol``: a built-in
    version's name or a version object (a user's).

    The search is the checker's state graph (checker.graph.build_graph, breadth-first, stopped
    once ``max_states`` states are known): a target is the first transition of its kind in
    breadth-first order, and its path the graph's shortest prefix to that transition's source."""
    version = version_of(protocol)
    spec = IsrSpec(
        Config(replicas=replicas, records=2, epochs=3, crashes=1, min_isr=1, protocol=version.name),
        version,
    )
    model = WithoutActions(spec, sorted(without)) if without else spec
    names = spec.action_names
    found: dict[str, tuple[int, Any]] = {}  # target -> (fingerprint of the source, action)

    def look(u: int, s: Any, act: Any, t: Any) -> None:
        name = names[act[0]]
        if name not in found:
            found[name] = (u, act)
        for i in range(replicas):
            a, b = _role(s, i), _role(t, i)
            if a != b and f"role:{a}->{b}" not in found:
                found[f"role:{a}->{b}"] = (u, act)

    sg = build_graph(model, truncate_at=max_states, on_transition=look, edges=False)
    out: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for k, (u, act) in sorted(found.items()):
        path = [a for a, _fp in sg.prefix_to(u)] + [act]
        out[k] = [(d["action"], d["args"]) for d in map(spec.describe_action, path)]
    return out


def spec_transitions(
    protocol: str | ProtocolVersion = DEFAULT_PROTOCOL, replicas: int = 3
) -> set[str]:
    """The replica role changes the spec can make ("a->b"), for ``--require-coverage``."""
    return {k[5:] for k in spec_targets(replicas, protocol) if k.startswith("role:")}


class NoAdapterCommand(ValueError):
    """A spec step that no adapter command causes and the implementation does not take by
    itself (e.g. retention's BrokerDeleteOldSegment: the adapter protocol has no retention)."""


# Spec steps that no adapter command causes, with the reason (traces/ADAPTER.md has no such
# command); every other step is either caused by a command (``step_ops``) or the
# implementation's own business (time passing).
NO_COMMAND = {
    "BrokerDeleteOldSegment": "retention (R12) has an adapter command in the kraft version only "
    "(`retention`): the ZooKeeper-era adapters cannot make a broker delete its oldest segment",
}
# kraft's steps of the log start offset (R12, issue 28 item 3): ADAPTER.md's operator commands
KRAFT_COMMANDS = frozenset({"BrokerDeleteOldSegment"})


def step_ops(
    name: str, args: dict[str, Any], *, lose_unflushed: bool = False, kraft: bool = False
) -> Scenario:
    """The adapter commands that cause one spec step (traces/ADAPTER.md), the one mapping of
    spec steps to commands (spec-derived scenarios and ``isr conform --from-counterexample``).
    Environment steps become their command (ProducerSend -> produce, BrokerCrash -> crash, or
    power_fail when the model's crashes lose the unflushed tail (R14), BrokerRestart -> restart,
    ConsumerFetch -> consume, ConsumerFetchDuringTruncation -> consume at the follower,
    ControllerMoveLeader -> elect_leader, ControllerShutdownBroker ->
    controlled_shutdown, ControllerFailover -> controller_failover (R9),
    CoordinationExpireSession -> a pause past the session timeout (R7, R18), a lost
    LeaderAndIsr -> a short partition from the controller); every other step is the
    implementation's own business and becomes time passing (``run``). Raises NoAdapterCommand
    for a step in ``NO_COMMAND`` (``kraft``: but for ``KRAFT_COMMANDS``, which the kraft
    adapters cause: LeaderDeleteRecords -> delete_records, BrokerDeleteOldSegment ->
    retention). KIP-455's operator steps: OperatorReassignPartition -> reassign (the target's
    brokers), OperatorCancelReassignment -> cancel_reassignment; a removed broker's
    BrokerStopReplica is the implementation's own."""
    if name in NO_COMMAND and not (kraft and name in KRAFT_COMMANDS):
        raise NoAdapterCommand(f"{name}: {NO_COMMAND[name]}")
    if name == "ProducerSend":
        return [{"op": "produce", "count": 1}]
    if name == "BrokerCrash":
        op = "power_fail" if lose_unflushed else "crash"
        return [{"op": op, "broker": args["replica"]}]
    if name == "BrokerRestart":
        return [{"op": "restart", "broker": args["replica"]}]
    if name == "ConsumerFetch":
        if "replica" in args:  # kraft's ConsumerFetch(replica): KIP-392, a follower may serve
            return [{"op": "consume", "broker": args["replica"]}]
        return [{"op": "consume"}]
    if name == "ConsumerFetchDuringTruncation":  # kraft before KAFKA-14704's fix: a read of
        # the follower between its taking of a diverging answer and its truncation (KIP-392);
        # from_counterexample.schedule times it (the follower held with the answer)
        return [{"op": "consume", "broker": args["follower"]}]
    if name == "ControllerMoveLeader":  # preferred/operator election (R9)
        return [{"op": "elect_leader", "broker": args["leader"]}, {"op": "run", "ms": 60}]
    if name == "ControllerShutdownBroker":  # controlled shutdown (R9)
        return [{"op": "controlled_shutdown", "broker": args["replica"]}]
    if name == "ControllerFailover":  # the controller resigns, another takes over (R9)
        return [{"op": "controller_failover"}]
    if name == "CoordinationExpireSession":  # a live broker's session expires: a long pause
        return [{"op": "pause", "broker": args["replica"], "ms": 900}]
    if name == "LeaderDeleteRecords":  # the operator's DeleteRecords (kraft, R12)
        return [
            {"op": "delete_records", "broker": args["leader"], "offset": args["offset"]},
        ]
    if name == "BrokerDeleteOldSegment":  # retention's time has come (R12)
        return [{"op": "retention", "broker": args["replica"]}]
    if name == "OperatorReassignPartition":  # KIP-455 (kraft): the target, a bitmask of
        # spec replicas, which are brokers 0..n-1 (the spare last, as the kit's layout)
        t = int(args["target"])
        return [{"op": "reassign", "replicas": [j for j in range(t.bit_length()) if t >> j & 1]}]
    if name == "OperatorCancelReassignment":
        return [{"op": "cancel_reassignment"}]
    if name == "NetworkLoseLeaderAndIsr":
        return [
            {"op": "partition", "a": 0, "b": args["replica"]},
            {"op": "run", "ms": 100},
            {"op": "heal"},
        ]
    return [{"op": "run", "ms": 60}]


def path_to_scenario(path: list[tuple[str, dict[str, Any]]]) -> Scenario:
    """A spec path as a scenario: each step's commands (``step_ops``), then ``settle``."""
    return [op for name, args in path for op in step_ops(name, args)] + settle()


def settle(brokers: int = 3) -> Scenario:
    """End of faults: heal, restart every broker, settle, then a produce and a consume."""
    return [
        {"op": "heal"},
        *({"op": "restart", "broker": b} for b in range(brokers)),
        {"op": "run", "ms": 800},
        {"op": "produce", "count": 2},
        {"op": "run", "ms": 300},
        {"op": "consume"},
        {"op": "run", "ms": 200},
    ]


def directed() -> dict[str, Scenario]:
    """Hand-written fault patterns the spec's shortest paths do not reach at the
    implementation's timescales (lagging followers, reordering, consumers racing producers)."""
    busy = [{"op": "produce", "count": 3}, {"op": "consume"}]
    return {
        "leader-failover-under-load": [
            *busy,
            {"op": "crash", "broker": 0},
            {"op": "run", "ms": 900},
            *busy,
            {"op": "restart", "broker": 0},
            {"op": "run", "ms": 400},
            *busy,
            *settle(),
        ],
        "lagging-follower-rejoins": [
            {"op": "crash", "broker": 1},
            *busy,
            {"op": "run", "ms": 700},
            *busy,
            {"op": "restart", "broker": 1},
            {"op": "produce", "count": 4},
            {"op": "run", "ms": 30},
            {"op": "crash", "broker": 0},
            {"op": "run", "ms": 900},
            *busy,
            *settle(),
        ],
        "reordered-requests": [
            {"op": "jitter", "max_ms": 400},
            *busy,
            {"op": "crash", "broker": 0},
            {"op": "run", "ms": 900},
            {"op": "restart", "broker": 0},
            *busy,
            {"op": "run", "ms": 600},
            {"op": "crash", "broker": 1},
            {"op": "run", "ms": 900},
            *busy,
            *settle(),
        ],
        # R8: one controller's requests reach a broker in order; a deposed controller's, on
        # its own connection, may arrive after its successor's (a stale controller epoch)
        "stale-controller-under-reordering": [
            {"op": "jitter", "max_ms": 300},
            *busy,
            {"op": "elect_leader", "broker": 1},
            {"op": "controller_failover"},
            {"op": "elect_leader", "broker": 2},
            {"op": "run", "ms": 600},
            *busy,
            *settle(),
        ],
        "epoch-bump-under-reordering": [
            {"op": "start", "session_timeout_ms": 150},
            {"op": "jitter", "max_ms": 300},
            *busy,
            {"op": "crash", "broker": 2},
            *(x for _ in range(8) for x in [*busy, {"op": "run", "ms": 100}]),
            {"op": "restart", "broker": 2},
            *(x for _ in range(4) for x in [*busy, {"op": "run", "ms": 100}]),
            *settle(),
        ],
        "consumers-race-producers": [
            *(x for _ in range(4) for x in busy),
            {"op": "partition", "a": 0, "b": 2},
            *(x for _ in range(4) for x in busy),
            *settle(),
        ],
        **rare(),
    }


def _bounce(b: int, down_ms: int = 900) -> Scenario:
    return [{"op": "crash", "broker": b}, {"op": "run", "ms": down_ms}]


def rare() -> dict[str, Scenario]:
    """Interleavings the shortest spec paths and short random schedules rarely reach (issue
    14): a deep epoch history before a truncation (KIP-279's walk back), a follower far behind
    its leader (the HW capped by the follower's own LEO, R4), a controller that is not the
    leader and a failed compare-and-set of the leader's ISR write (R7, R9), a leader deposed
    while alive (pause past the session, a zombie: R8, KIP-320 fencing), power failures (R14)
    and acks=1 producers (R6)."""
    busy = [{"op": "produce", "count": 2}, {"op": "consume"}]
    # Broker 2 leads a few unreplicated records (cut off from both followers), crashes before
    # the lag time, and comes back after several leader changes between 0 and 1: its last
    # epoch is far behind, and its divergent tail must be walked back.
    deep: Scenario = [
        {"op": "start", "session_timeout_ms": 300},
        *_bounce(0, 500),
        *_bounce(1, 500),
        {"op": "restart", "broker": 0},
        {"op": "restart", "broker": 1},
        {"op": "run", "ms": 600},
        *busy,
        {"op": "partition", "a": 2, "b": 0},
        {"op": "partition", "a": 2, "b": 1},
        {"op": "produce", "count": 2},
        {"op": "run", "ms": 40},
        {"op": "crash", "broker": 2},
        {"op": "heal"},
        {"op": "run", "ms": 600},
    ]
    for k in range(4):
        b = k % 2
        deep += [*busy, *_bounce(b, 500), {"op": "restart", "broker": b}, {"op": "run", "ms": 300}]
    deep += [{"op": "restart", "broker": 2}, {"op": "run", "ms": 400}, *busy]
    far: Scenario = [
        {"op": "start", "brokers": 3, "replication": 3, "min_insync": 1, "fetch_max_records": 4},
        {"op": "crash", "broker": 2},
        *(x for _ in range(10) for x in [{"op": "produce", "count": 6}, {"op": "run", "ms": 50}]),
        {"op": "restart", "broker": 2},
        *(x for _ in range(6) for x in [{"op": "produce", "count": 2}, {"op": "run", "ms": 5}]),
        {"op": "crash", "broker": 1},
        {"op": "run", "ms": 900},
        *busy,
    ]
    # Controller on broker 1 (a follower) after a failover; the leader 0 cut off from it: the
    # controller's ISR write after 2's crash makes 0's own shrink fail its compare-and-set.
    cas: Scenario = [
        {"op": "start", "brokers": 4, "replication": 3, "session_timeout_ms": 150},
        {"op": "controller_failover"},
        *busy,
        {"op": "partition", "a": 0, "b": 1},
        {"op": "crash", "broker": 2},
        {"op": "run", "ms": 900},
        *busy,
        {"op": "run", "ms": 600},
        {"op": "heal"},
        {"op": "run", "ms": 400},
        *busy,
    ]
    zombie: Scenario = [
        {"op": "start", "session_timeout_ms": 200},
        *busy,
        {"op": "pause", "broker": 0, "ms": 700},
        {"op": "run", "ms": 400},
        *busy,
        {"op": "run", "ms": 400},
        *busy,
        {"op": "pause", "broker": 1, "ms": 500},
        {"op": "produce", "count": 2},
        {"op": "run", "ms": 700},
        *busy,
    ]
    power: Scenario = [
        *busy,
        {"op": "power_fail", "broker": 0},
        {"op": "run", "ms": 900},
        *busy,
        {"op": "restart", "broker": 0},
        {"op": "run", "ms": 300},
        {"op": "power_fail", "broker": 1},
        {"op": "power_fail", "broker": 2},
        {"op": "run", "ms": 100},
        {"op": "restart", "broker": 1},
        {"op": "restart", "broker": 2},
        {"op": "run", "ms": 900},
        *busy,
    ]
    acks1: Scenario = [
        {"op": "start", "acks": "1", "min_insync": 1},
        *busy,
        {"op": "partition", "a": 0, "b": 1},
        {"op": "produce", "count": 3},
        {"op": "crash", "broker": 0},
        {"op": "run", "ms": 900},
        *busy,
    ]
    moves: Scenario = [
        *busy,
        {"op": "elect_leader", "broker": 1},
        *busy,
        {"op": "controlled_shutdown", "broker": 1},
        *busy,
    ]
    five: Scenario = [
        {"op": "start", "brokers": 5, "replication": 5, "min_insync": 3, "partitions": 2},
        *busy,
        {"op": "crash", "broker": 0},
        {"op": "loss", "rate": 0.1},
        {"op": "duplicate", "rate": 0.1},
        {"op": "run", "ms": 900},
        *busy,
        {"op": "crash", "broker": 1},
        {"op": "run", "ms": 900},
        *busy,
    ]
    two: Scenario = [
        {"op": "start", "brokers": 2, "replication": 2, "min_insync": 1},
        *busy,
        {"op": "crash", "broker": 0},
        {"op": "run", "ms": 900},
        *busy,
        {"op": "restart", "broker": 0},
        {"op": "run", "ms": 400},
        *busy,
    ]
    # every broker down, the last ISR member back first: elected from "no leader" (R9)
    last: Scenario = [
        {"op": "start", "session_timeout_ms": 200},
        *busy,
        *_bounce(2, 400),
        *_bounce(1, 400),
        *busy,
        *_bounce(0, 400),
        {"op": "restart", "broker": 0},
        {"op": "run", "ms": 400},
        *busy,
    ]
    # KIP-320 fencing, the newer-epoch direction: the controller (broker 3, not a replica)
    # shrinks the ISR with a new epoch; follower 1 learns it, the leader 0 (cut off from the
    # controller) does not, and 1 fetches from 0 with an epoch 0 does not have yet.
    newer: Scenario = [
        {"op": "start", "brokers": 4, "replication": 3, "session_timeout_ms": 200},
        {"op": "controller_failover", "broker": 3},
        *busy,
        {"op": "partition", "a": 3, "b": 0},
        {"op": "crash", "broker": 2},
        {"op": "run", "ms": 300},
        {"op": "produce", "count": 2},
        {"op": "run", "ms": 100},
        {"op": "heal"},
        {"op": "run", "ms": 400},
        *busy,
    ]
    # KIP-279's walk back: three leader epochs on two replicas cut off from each other (the
    # controller on broker 2, outside the partition), each moved by an operator election
    # inside the lag time so the other stays in the ISR: 1 leads epoch 1 alone (z), 0 leads
    # epoch 2 alone (y), 1 leads epoch 3; 0 then asks for epoch 2, is answered epoch 1, which
    # it never had, and must walk back to epoch 0's end. (Bounces did this once; a
    # ZooKeeper-era broker restarts only after its session ended, and the controller then
    # takes it out of the ISR first.)
    bounce = [{"op": "run", "ms": 20}]
    walk: Scenario = [
        {"op": "start", "brokers": 3, "replication": 2, "min_insync": 1},
        {"op": "controller_failover", "broker": 2},
        {"op": "produce", "count": 1},
        {"op": "run", "ms": 100},
        {"op": "partition", "a": 0, "b": 1},
        {"op": "elect_leader", "broker": 1},
        *bounce,
        {"op": "produce", "count": 1},
        *bounce,
        {"op": "elect_leader", "broker": 0},
        *bounce,
        {"op": "produce", "count": 1},
        *bounce,
        {"op": "elect_leader", "broker": 1},
        *bounce,
        {"op": "heal"},
        {"op": "run", "ms": 300},
        *busy,
    ]
    size = {
        "five-brokers": 5,
        "two-brokers": 2,
        "controller-not-leader-failed-cas": 4,
        "fenced-newer-epoch": 4,
    }
    out = {
        "deep-epoch-history": deep,
        "follower-far-behind": far,
        "controller-not-leader-failed-cas": cas,
        "zombie-leader-deposed": zombie,
        "power-failures": power,
        "acks-1": acks1,
        "leader-moves": moves,
        "five-brokers": five,
        "two-brokers": two,
        "last-isr-member-back": last,
        "fenced-newer-epoch": newer,
        "epoch-walk-back": walk,
    }
    return {k: [*sc, *settle(size.get(k, 3))] for k, sc in out.items()}


def logstart_scenarios() -> dict[str, Scenario]:
    """kraft's log start offset (R4, R12; issue 28 item 3), by the operator commands
    ``delete_records`` and ``retention`` (ADAPTER.md): DeleteRecords up to the HW and past it
    (refused), retention on leader and followers, a follower that was down while its leader
    deleted what it would fetch (OFFSET_OUT_OF_RANGE, FollowerHandleOffsetOutOfRange: reset to
    the leader's log start), retention while the HW lags the log end (a dead ISR member holds
    it: only segments below the HW may go, KAFKA-5634), and DeleteRecords sent to a leader
    that an election deposed (the request carries no leader epoch: it applies it)."""
    busy = [{"op": "produce", "count": 3}, {"op": "run", "ms": 200}]
    out = {
        "delete-records": [
            *busy,
            *busy,
            {"op": "delete_records", "offset": -1},
            {"op": "run", "ms": 300},
            {"op": "delete_records", "offset": 1000},  # above the HW: OFFSET_OUT_OF_RANGE
            *busy,
            {"op": "consume"},
        ],
        "retention-everywhere": [
            *busy,
            *busy,
            *({"op": "retention", "broker": b} for b in range(3)),
            {"op": "run", "ms": 300},
            *busy,
            *({"op": "retention", "broker": b} for b in range(3)),
        ],
        "follower-reset-to-log-start": [
            *busy,
            {"op": "crash", "broker": 2},
            {"op": "run", "ms": 900},
            *busy,
            *busy,
            {"op": "delete_records", "offset": -1},
            {"op": "retention", "broker": 0},
            {"op": "retention", "broker": 1},
            {"op": "restart", "broker": 2},
            {"op": "run", "ms": 900},
            *busy,
        ],
        "retention-while-hw-lags": [
            *busy,
            {"op": "crash", "broker": 2},
            {"op": "produce", "count": 3},
            {"op": "retention", "broker": 0},
            {"op": "retention", "broker": 1},
            {"op": "run", "ms": 900},
            {"op": "produce", "count": 2},
            {"op": "retention", "broker": 0},
            {"op": "restart", "broker": 2},
            {"op": "run", "ms": 900},
        ],
        "delete-records-at-deposed-leader": [
            *busy,
            {"op": "elect_leader", "broker": 1},
            {"op": "delete_records", "offset": -1, "broker": 0},
            {"op": "run", "ms": 300},
            *busy,
            {"op": "delete_records", "offset": -1},
        ],
    }
    return {f"logstart:{k}": [*sc, *settle()] for k, sc in out.items()}


IDEMPOTENT_START = {"op": "start", "idempotence": True}


def idempotent_scenarios() -> dict[str, Scenario]:
    """The idempotent producer (R6, R15; issue 28 item 4; the spec's --idempotence), every
    version: the session option ``idempotence`` of ``start`` and ``produce``'s ``lose_reply``
    (ADAPTER.md). Each loses the answer to a batch that was appended and replicated, so the
    producer times out (2 s in the reference) and sends it again with the same header: the
    leader that then holds it must answer DUPLICATE with the original offset and append
    nothing — the same leader, a new one elected meanwhile (it learned the batch as a
    follower), or one whose producer state was rebuilt from its log by a restart."""
    busy = [{"op": "produce", "count": 2}, {"op": "run", "ms": 100}]
    lost = [{"op": "produce", "count": 1, "lose_reply": True}, {"op": "run", "ms": 100}]
    tail = [{"op": "run", "ms": 2500}, *busy, {"op": "consume"}]
    return {
        "idempotent:lost-reply-duplicate": [IDEMPOTENT_START, *busy, *lost, *tail],
        "idempotent:lost-reply-new-leader": [
            IDEMPOTENT_START,
            *busy,
            *lost,
            {"op": "crash", "broker": 0},
            {"op": "run", "ms": 900},
            *tail,
            {"op": "restart", "broker": 0},
            {"op": "run", "ms": 900},
            *busy,
        ],
        "idempotent:lost-reply-moved-leader": [
            IDEMPOTENT_START,
            *busy,
            *lost,
            {"op": "elect_leader", "broker": 1},
            *tail,
        ],
        "idempotent:lost-reply-restart-all": [
            IDEMPOTENT_START,
            *busy,
            *lost,
            *({"op": "crash", "broker": b} for b in (1, 2, 0)),
            {"op": "run", "ms": 900},
            *({"op": "restart", "broker": b} for b in (0, 1, 2)),
            {"op": "run", "ms": 900},
            *tail,
        ],
        "idempotent:retries-while-leaders-change": [
            IDEMPOTENT_START,
            *busy,
            {"op": "produce", "count": 3, "lose_reply": True},
            {"op": "crash", "broker": 0},
            {"op": "produce", "count": 2},
            {"op": "run", "ms": 900},
            {"op": "restart", "broker": 0},
            {"op": "crash", "broker": 1},
            {"op": "run", "ms": 2500},
            {"op": "restart", "broker": 1},
            {"op": "run", "ms": 900},
            *tail,
        ],
    }


def reassign_scenarios() -> dict[str, Scenario]:
    """kraft's partition reassignment (KIP-455; R1, R7, R9; issue 28 item 1), by the operator
    commands ``reassign`` and ``cancel_reassignment`` (ADAPTER.md), on three brokers with
    replication factor 2 (broker 2 the spare, as the spec's ``--reassignments`` layout): a
    follower moved to the spare (it follows, catches up, joins the ISR, which completes the
    move: the removed follower stops and deletes its log), the leader moved off (the
    completion elects another ISR member and bumps the leader epoch; the removed leader's
    pending change is cleared), a move at min ISR 2 with a follower down (the ISR [0, 2]
    must wait for broker 1: completing with ISR [2] alone is KAFKA-15665), a cancel before the
    spare caught up, a move there and back, and the spare crashing and restarting before it
    is added (its restart registers a new broker epoch that its fetches carry)."""
    start = {"op": "start", "brokers": 3, "replication": 2}
    busy = [{"op": "produce", "count": 3}, {"op": "run", "ms": 200}]
    out = {
        "follower-to-spare": [
            start,
            *busy,
            {"op": "reassign", "replicas": [0, 2]},
            {"op": "run", "ms": 300},
            *busy,
            {"op": "consume"},
        ],
        "leader-off": [
            start,
            *busy,
            {"op": "reassign", "replicas": [1, 2]},
            {"op": "run", "ms": 300},
            *busy,
            {"op": "consume"},
        ],
        "min-isr-2-waits": [
            {**start, "min_insync": 2},
            *busy,
            {"op": "crash", "broker": 1},
            {"op": "run", "ms": 900},
            {"op": "reassign", "replicas": [1, 2]},
            {"op": "run", "ms": 300},
            {"op": "produce", "count": 2},
            {"op": "run", "ms": 300},
            {"op": "restart", "broker": 1},
            {"op": "run", "ms": 900},
            *busy,
        ],
        "cancel": [
            start,
            *busy,
            {"op": "crash", "broker": 2},
            {"op": "reassign", "replicas": [1, 2]},
            {"op": "run", "ms": 100},
            {"op": "cancel_reassignment"},
            {"op": "restart", "broker": 2},
            {"op": "run", "ms": 300},
            *busy,
        ],
        "there-and-back": [
            start,
            *busy,
            {"op": "reassign", "replicas": [0, 2]},
            {"op": "run", "ms": 300},
            *busy,
            {"op": "reassign", "replicas": [0, 1]},
            {"op": "run", "ms": 300},
            *busy,
            {"op": "consume"},
        ],
        "spare-restarts": [
            start,
            *busy,
            {"op": "crash", "broker": 2},
            {"op": "run", "ms": 100},
            {"op": "restart", "broker": 2},
            {"op": "run", "ms": 100},
            {"op": "reassign", "replicas": [1, 2]},
            {"op": "run", "ms": 300},
            *busy,
        ],
    }
    return {f"reassign:{k}": [*sc, *settle()] for k, sc in out.items()}


def spec_scenarios(
    replicas: int = 3, protocol: str | ProtocolVersion = DEFAULT_PROTOCOL
) -> dict[str, Scenario]:
    out = {f"spec:{k}": path_to_scenario(p) for k, p in spec_targets(replicas, protocol).items()}
    # The shortest paths often move a live leader (elect_leader, controlled_shutdown); an
    # adapter without those commands still gets each target, by crashes and elections only.
    for k, p in spec_targets(replicas, protocol, without=MOVES).items():
        if out.get(f"spec:{k}") != (sc := path_to_scenario(p)):
            out[f"spec:{k}:crash-only"] = sc
    out.update({f"directed:{k}": v for k, v in directed().items()})
    return out


# Fault kinds of random schedules (ADAPTER.md): each maps to the commands it draws from.
FAULT_KINDS = (
    "crash",
    "power_fail",
    "pause",
    "partition",
    "partition_coord",
    "jitter",
    "loss",
    "duplicate",
    "controller_failover",
    "elect_leader",
    "controlled_shutdown",
)
# kraft's operator commands of the log start offset (R12, ADAPTER.md): probed, and drawn into
# random schedules, for kraft only (the ZooKeeper-era versions have no DeleteRecords)
KRAFT_FAULT_KINDS = ("delete_records", "retention", "reassign")
START_PROBE = {"brokers": 3, "replication": 3}


def probe_ops(kind: str) -> Scenario:
    """Commands that tell whether an adapter supports a fault kind (after a ``start``)."""
    return {
        "partition": [{"op": "partition", "a": 0, "b": 1}, {"op": "heal"}],
        "jitter": [{"op": "jitter", "max_ms": 10}, {"op": "heal"}],
        "power_fail": [{"op": "power_fail", "broker": 2}],
        "pause": [{"op": "pause", "broker": 2, "ms": 10}, {"op": "resume", "broker": 2}],
        "partition_coord": [{"op": "partition_coord", "broker": 2}],
        "loss": [{"op": "loss", "rate": 0.0}],
        "duplicate": [{"op": "duplicate", "rate": 0.0}],
        "controller_failover": [{"op": "controller_failover"}],
        "elect_leader": [{"op": "elect_leader", "broker": 1}],
        "controlled_shutdown": [{"op": "controlled_shutdown", "broker": 2}],
        "delete_records": [{"op": "delete_records", "offset": -1}],
        "retention": [{"op": "retention", "broker": 1}],
        # (the probe cluster's replicas are all its brokers: a target of the same set changes
        # nothing, KIP-455)
        "reassign": [{"op": "reassign", "replicas": [0, 1, 2]}],
    }.get(kind, [])


def _kind_ops(kind: str, b: Any, brokers: int = 3, rf: int = 3) -> Any:
    from hypothesis import strategies as st

    # KIP-455 (kraft): targets of ``rf`` brokers among the first rf + 1, so that each of the
    # (at most two) partitions, on brokers 0..rf-1 and 1..rf (R1), has one spare broker, as
    # the spec's --reassignments layout; every partition, or one; or a cancel
    spread = min(brokers, rf + 1)
    target = st.lists(st.integers(0, spread - 1), min_size=rf, max_size=rf, unique=True)

    ms = st.sampled_from([50, 200, 500, 900, 1500])
    rate = st.sampled_from([0.05, 0.2, 0.5])
    return {
        "crash": st.one_of(
            st.builds(lambda x: {"op": "crash", "broker": x}, b),
            st.builds(lambda x: {"op": "restart", "broker": x}, b),
        ),
        "power_fail": st.one_of(
            st.builds(lambda x: {"op": "power_fail", "broker": x}, b),
            st.builds(lambda x: {"op": "restart", "broker": x}, b),
        ),
        "pause": st.builds(lambda x, t: {"op": "pause", "broker": x, "ms": t}, b, ms),
        "partition": st.builds(lambda x, y: {"op": "partition", "a": x, "b": y}, b, b),
        "partition_coord": st.builds(lambda x: {"op": "partition_coord", "broker": x}, b),
        "jitter": st.builds(
            lambda t: {"op": "jitter", "max_ms": t}, st.sampled_from([50, 200, 400])
        ),
        "loss": st.builds(lambda r: {"op": "loss", "rate": r}, rate),
        "duplicate": st.builds(lambda r: {"op": "duplicate", "rate": r}, rate),
        "controller_failover": st.just({"op": "controller_failover"}),
        "elect_leader": st.builds(lambda x: {"op": "elect_leader", "broker": x}, b),
        "controlled_shutdown": st.builds(lambda x: {"op": "controlled_shutdown", "broker": x}, b),
        # R12 (kraft): DeleteRecords to the HW, to an offset (maybe past the HW: refused), or
        # sent to any broker (a deposed leader applies it); a broker's retention runs now
        "delete_records": st.builds(
            lambda o, x: {"op": "delete_records", "offset": o, **({"broker": x} if x >= 0 else {})},
            st.sampled_from([-1, -1, 1, 3, 6]),
            st.one_of(st.just(-1), b),
        ),
        "retention": st.builds(lambda x: {"op": "retention", "broker": x}, b),
        "reassign": st.one_of(
            st.builds(
                lambda t, p: {
                    "op": "reassign",
                    "replicas": t,
                    **({"partition": p} if p >= 0 else {}),
                },
                target,
                st.sampled_from([-1, -1, 0, 1]),
            ),
            st.just({"op": "cancel_reassignment"}),
        ),
    }[kind]


def schedule_strategy(kinds: list[str] | None = None, max_ops: int = 24, swarm: bool = True):
    """Random fault schedules, swarm-tested (Groce et al. 2012): each schedule first draws a
    cluster (2..5 brokers, replication, min.insync.replicas, acks, 1-2 partitions) and a
    non-empty subset of ``kinds`` (the fault kinds the adapter supports), then up to
    ``max_ops`` commands among produce/consume/time/heal and those kinds only, so a rare
    combination is not drowned by every other fault. Ends with heal, restart-all and settle."""
    from hypothesis import strategies as st

    pool = list(kinds if kinds is not None else FAULT_KINDS)

    @st.composite
    def schedule(draw: Any) -> Scenario:
        brokers = draw(st.integers(2, 5))
        rf = draw(st.integers(2, brokers))
        start = {
            "op": "start",
            "brokers": brokers,
            "replication": rf,
            "partitions": draw(st.integers(1, 2)),
            "min_insync": draw(st.integers(1, rf)),
            "acks": draw(st.sampled_from(["all", "all", "1"])),
            "session_timeout_ms": draw(st.sampled_from([300, 600])),
        }
        chosen = (
            sorted(draw(st.sets(st.sampled_from(pool), min_size=1))) if swarm and pool else pool
        )
        b = st.integers(0, brokers - 1)
        base = [
            st.builds(lambda n: {"op": "produce", "count": n}, st.integers(1, 4)),
            st.just({"op": "consume"}),
            st.just({"op": "heal"}),
            st.builds(lambda t: {"op": "run", "ms": t}, st.sampled_from([20, 100, 400, 900])),
        ]
        op = st.one_of(*base, *(_kind_ops(k, b, brokers, rf) for k in chosen))
        ops = draw(st.lists(op, min_size=1, max_size=max_ops))
        return [start, *ops, *settle(brokers)]

    return schedule()


def ops_strategy(brokers: int = 3, max_ops: int = 14):
    """Hypothesis strategy of random fault schedules (R8: crash, restart, partition, reorder)."""
    from hypothesis import strategies as st

    b = st.integers(0, brokers - 1)
    op = st.one_of(
        st.builds(lambda n: {"op": "produce", "count": n}, st.integers(1, 4)),
        st.just({"op": "consume"}),
        st.builds(lambda x: {"op": "crash", "broker": x}, b),
        st.builds(lambda x: {"op": "restart", "broker": x}, b),
        st.builds(lambda x, y: {"op": "partition", "a": x, "b": y}, b, b),
        st.just({"op": "heal"}),
        st.builds(lambda ms: {"op": "jitter", "max_ms": ms}, st.sampled_from([50, 200, 400])),
        st.builds(lambda ms: {"op": "run", "ms": ms}, st.sampled_from([20, 100, 400, 900])),
    )
    return st.lists(op, min_size=1, max_size=max_ops)
