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
        # the operator's DeleteRecords (R12, KIP-107): up to the HW, past it (refused), and a
        # follower down meanwhile that comes back below the leader's log start
        "kafka:delete-records": [
            _start(),
            {"op": "produce", "count": 4},
            {"op": "delete_records", "offset": 2},
            {"op": "crash", "broker": 2},
            {"op": "run", "ms": FENCE_MS},
            {"op": "produce", "count": 3},
            {"op": "delete_records", "offset": -1},
            {"op": "delete_records", "offset": 1000},
            {"op": "restart", "broker": 2},
            {"op": "run", "ms": FENCE_MS},
            {"op": "produce", "count": 2},
            {"op": "consume"},
        ],
        # the operator's partition reassignment (KIP-455): replicas [0, 1] of three brokers,
        # the leader moved off to the spare (broker 2 follows, catches up, joins the ISR; the
        # completion elects broker 1 and broker 0 deletes its replica)
        "kafka:reassign": [
            _start(replication=2),
            {"op": "produce", "count": 4},
            {"op": "reassign", "replicas": [1, 2]},
            {"op": "produce", "count": 3},
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


def kafka_schedule_strategy(max_ops: int = 12):
    """Random fault schedules for a real Kafka cluster (hypothesis): the kit's fault kinds that
    Kafka can be made to perform (crash and restart, pause, Admin election, controlled
    shutdown), with Kafka's timing: pauses and waits from half a second to past the session
    timeout, so that some pauses fence a running broker and some crashes are noticed only
    later. 3 or 4 brokers, replication 2 or 3, 1 or 2 partitions, acks all or 1."""
    from hypothesis import strategies as st

    @st.composite
    def schedule(draw: Any) -> Scenario:
        brokers = draw(st.integers(3, 4))
        rf = draw(st.integers(2, 3))
        start = {
            "op": "start",
            "brokers": brokers,
            "replication": rf,
            "partitions": draw(st.integers(1, 2)),
            "min_insync": draw(st.integers(1, rf)),
            "acks": draw(st.sampled_from(["all", "all", "1"])),
        }
        b = st.integers(0, brokers - 1)
        ms = st.sampled_from([300, 1000, 3000, FENCE_MS])
        op = st.one_of(
            st.builds(lambda n: {"op": "produce", "count": n}, st.integers(1, 5)),
            st.just({"op": "consume"}),
            st.builds(lambda t: {"op": "run", "ms": t}, ms),
            st.builds(lambda x: {"op": "crash", "broker": x}, b),
            st.builds(lambda x: {"op": "restart", "broker": x}, b),
            st.builds(
                lambda x, t: {"op": "pause", "broker": x, "ms": t},
                b,
                st.sampled_from([500, 3000, FENCE_MS, FENCE_MS + 2500]),
            ),
            st.builds(lambda x: {"op": "elect_leader", "broker": x}, b),
            st.builds(lambda x: {"op": "controlled_shutdown", "broker": x}, b),
        )
        ops = draw(st.lists(op, min_size=2, max_size=max_ops))
        end: Scenario = [{"op": "heal"}]
        end += [{"op": "restart", "broker": x} for x in range(brokers)]
        end += [{"op": "run", "ms": FENCE_MS}, {"op": "produce", "count": 2}]
        return [start, *ops, *end]

    return schedule()
