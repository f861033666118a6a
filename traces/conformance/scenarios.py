"""Scenarios for the conformance kit, taken from the spec itself (issue 6, item 3).

A scenario is a list of adapter commands (traces/ADAPTER.md). The spec-derived ones are shortest
paths of the spec's state graph, one for each spec action and one for each replica role change
(leader/follower/none/crashed), found by breadth-first search from the initial state. Steps the
environment causes become commands (ProducerSend -> produce, BrokerCrash -> crash, BrokerRestart
-> restart, ConsumerFetch -> consume, a lost LeaderAndIsr -> a short partition from the
controller); every other spec step is the implementation's own business, so it becomes time
passing (`run`). Each scenario ends by healing the network, restarting the dead and settling.
Random fault schedules come from hypothesis strategies (``ops_strategy``).
"""

from __future__ import annotations

from collections import deque
from typing import Any

from spec import Config, IsrSpec

Op = dict[str, Any]
Scenario = list[Op]

ENV_OPS = {"ProducerSend", "BrokerCrash", "BrokerRestart", "ConsumerFetch"}


def _role(s: Any, i: int) -> str:
    r = s.replicas[i]
    if not r.alive:
        return "crashed"
    if r.leader == i:
        return "leader"
    return "follower" if r.leader >= 0 else "none"


def spec_targets(
    replicas: int = 3, protocol: str = "kip-320", max_states: int = 60_000
) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """Shortest spec paths: target name -> [(action, args)], one per spec action and per role
    transition ("role:a->b")."""
    spec = IsrSpec(
        Config(replicas=replicas, records=2, epochs=3, crashes=1, min_isr=1, protocol=protocol)
    )
    init = spec.init_states()[0]
    parent: dict[Any, tuple[Any, tuple] | None] = {init: None}
    want = set(spec.action_names)
    found: dict[str, Any] = {}
    q = deque([init])
    while q and len(parent) < max_states:
        s = q.popleft()
        for act, t in spec.successors(s):
            name = spec.action_names[act[0]]
            keys = [name] if name in want and name not in found else []
            for i in range(replicas):
                a, b = _role(s, i), _role(t, i)
                if a != b and f"role:{a}->{b}" not in found:
                    keys.append(f"role:{a}->{b}")
            if t not in parent:
                parent[t] = (s, act)
                q.append(t)
            for k in keys:
                found[k] = (s, act)
    out: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for k, (s, act) in sorted(found.items()):
        path = [act]
        cur = s
        while parent[cur] is not None:
            prev, a = parent[cur]  # type: ignore[misc]
            path.append(a)
            cur = prev
        out[k] = [
            (d["action"], d["args"]) for d in (spec.describe_action(a) for a in reversed(path))
        ]
    return out


def path_to_scenario(path: list[tuple[str, dict[str, Any]]]) -> Scenario:
    ops: Scenario = []
    for name, args in path:
        if name == "ProducerSend":
            ops.append({"op": "produce", "count": 1})
        elif name == "BrokerCrash":
            ops.append({"op": "crash", "broker": args["replica"]})
        elif name == "BrokerRestart":
            ops.append({"op": "restart", "broker": args["replica"]})
        elif name == "ConsumerFetch":
            ops.append({"op": "consume"})
        elif name == "NetworkLoseLeaderAndIsr":
            ops.append({"op": "partition", "a": 0, "b": args["replica"]})
            ops.append({"op": "run", "ms": 100})
            ops.append({"op": "heal"})
        else:
            ops.append({"op": "run", "ms": 60})
    return ops + settle()


def settle(brokers: int = 3) -> Scenario:
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
    }


def spec_scenarios(replicas: int = 3, protocol: str = "kip-320") -> dict[str, Scenario]:
    out = {f"spec:{k}": path_to_scenario(p) for k, p in spec_targets(replicas, protocol).items()}
    out.update({f"directed:{k}": v for k, v in directed().items()})
    return out


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
