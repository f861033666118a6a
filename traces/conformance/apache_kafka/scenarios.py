"""Directed scenarios for Apache Kafka: Kafka's timing is seconds (a fence waits for the broker
session timeout, 4 s in cluster.py's Settings; a restarted broker registers after its JVM
starts), so these wait as long as the story needs. Each is one fresh cluster.

`faults` is the CI scenario: kills, restarts, an election, a controlled shutdown and a pause
long enough to fence a running broker, with acks=all writes throughout."""

from __future__ import annotations

from typing import Any

Scenario = list[dict[str, Any]]

FENCE_MS = 6500  # more than the session timeout (4 s) and the controller's next fence check


def _start(**kw: Any) -> dict[str, Any]:
    return {"op": "start", "brokers": 3, "replication": 3, "min_insync": 2, "acks": "all", **kw}


def kafka_scenarios() -> dict[str, Scenario]:
    return {
        "kafka:faults": [
            _start(),
            {"op": "produce", "count": 5},
            {"op": "crash", "broker": 0},  # the leader: a fence, an election (R9)
            {"op": "run", "ms": FENCE_MS},
            {"op": "produce", "count": 5},
            {"op": "restart", "broker": 0},  # a new incarnation registers, rejoins the ISR
            {"op": "run", "ms": FENCE_MS},
            {"op": "elect_leader", "broker": 0},  # preferred-replica election back to 0
            {"op": "run", "ms": 1500},
            {"op": "produce", "count": 3},
            {"op": "pause", "broker": 1, "ms": FENCE_MS},  # fenced while running; unfenced after
            {"op": "produce", "count": 3},
            {"op": "run", "ms": FENCE_MS},
            {"op": "controlled_shutdown", "broker": 2},
            {"op": "produce", "count": 3},
            {"op": "restart", "broker": 2},
            {"op": "run", "ms": FENCE_MS},
            {"op": "consume"},
        ],
        # a paused leader is fenced and deposed while it runs on (a zombie), then comes back
        "kafka:zombie-leader": [
            _start(),
            {"op": "produce", "count": 3},
            {"op": "pause", "broker": 0, "ms": FENCE_MS + 2000},
            {"op": "produce", "count": 4},
            {"op": "run", "ms": FENCE_MS},
            {"op": "produce", "count": 2},
            {"op": "consume"},
        ],
        # acks=1: the leader's crash may lose acknowledged writes (allowed by acks=1, R6)
        "kafka:acks1-leader-crash": [
            _start(acks="1", min_insync=1),
            {"op": "produce", "count": 6},
            {"op": "crash", "broker": 0},
            {"op": "run", "ms": FENCE_MS},
            {"op": "produce", "count": 3},
            {"op": "restart", "broker": 0},
            {"op": "run", "ms": FENCE_MS},
            {"op": "consume"},
        ],
        # the last ISR member's controlled shutdown (min.insync 1): Kafka leaves no leader
        "kafka:last-replica-shutdown": [
            _start(min_insync=1),
            {"op": "produce", "count": 3},
            {"op": "controlled_shutdown", "broker": 2},
            {"op": "controlled_shutdown", "broker": 1},
            {"op": "produce", "count": 2},
            {"op": "controlled_shutdown", "broker": 0},
            {"op": "run", "ms": 2000},
            {"op": "restart", "broker": 0},
            {"op": "restart", "broker": 1},
            {"op": "restart", "broker": 2},
            {"op": "run", "ms": FENCE_MS},
            {"op": "consume"},
        ],
        # every broker killed at once, then restarted: unclean-shutdown handling (KIP-966)
        "kafka:all-crash": [
            _start(),
            {"op": "produce", "count": 4},
            {"op": "crash", "broker": 1},
            {"op": "crash", "broker": 2},
            {"op": "crash", "broker": 0},
            {"op": "run", "ms": FENCE_MS},
            {"op": "restart", "broker": 0},
            {"op": "restart", "broker": 1},
            {"op": "restart", "broker": 2},
            {"op": "run", "ms": FENCE_MS},
            {"op": "produce", "count": 2},
            {"op": "consume"},
        ],
    }
