"""A fault schedule told as a story, played on the real cluster (``isr chaos --story``, R17).

Random kills rarely reproduce a data loss whose window is a few milliseconds wide: in the
seeds' protocol (hw-truncation) a leader that is alone in the ISR loses the records it
acknowledged since its last HW checkpoint when it crashes and is elected again, but a random
schedule that restarts each broker before the next kill lets the follower catch up and rejoin
the ISR long before the leader dies (issue 27, item 5: 0 records lost in 5 runs). A story is the
order of faults a spec counterexample shows, as operations on *roles*: role 0 is the leader of
partition 0 when a round starts, roles 1.. its other replicas in the order the coordination
service lists them. This module knows nothing of the spec: cli/chaos_story.py turns a
counterexample into these operations.

Operations (one dict each):

* ``{"op": "pause", "role": r}``: freeze the broker (SIGSTOP), so that it stops fetching;
* ``{"op": "kill", "role": r}``, ``{"op": "restart", "role": r}``: a crash and a restart;
* ``{"op": "shutdown", "role": r}``: a controlled shutdown, then the stop;
* ``{"op": "elect", "role": r}``: an operator's election of that broker;
* ``{"op": "wait_out_of_isr", "role": r}``: until the coordination service's ISR of the
  partition lacks the broker (the leader's shrink, or the controller's after a session expiry);
* ``{"op": "wait_leader", "role": r}``: until the coordination service names it leader;
* ``{"op": "sleep", "s": x}``: time for the brokers' own steps.

A wait that is not met within its time ends the round early ("not reached"), never the run:
the implementation did not take that step, which the report says. After each round every
paused broker runs on, every stopped one restarts, and the round ends once the partition has
a live leader and a full ISR again.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from .manager import Cluster, ClusterError

READY_S = 60.0  # a round starts on a ready cluster (a live leader, a full ISR)
WAIT_S = 30.0  # a wait's limit: past the session timeout and replica.lag.time.max.ms here
# the waits: the partition's coordination state it waits for, and what the report says if not
WAITS: dict[str, tuple[Any, str]] = {
    "wait_out_of_isr": (lambda st, b: b not in st["isr"], "never left the ISR"),
    "wait_leader": (lambda st, b: st["leader"] == b, "never became leader"),
}
OPS = ("pause", "kill", "restart", "shutdown", "elect", "wait_out_of_isr", "wait_leader", "sleep")


@dataclass
class Round:
    """One playing of the story: its roles (broker ids), how far it got, the acknowledgements
    before and after."""

    roles: list[int]
    done: int = 0  # operations performed
    not_reached: str = ""  # the wait that was not met, if any
    acked_before: int = 0
    acked_after: int = 0
    log: list[str] = field(default_factory=list)
    unready: str = ""  # the cluster was not ready again after this round (then no more rounds)
    # (time.monotonic(), "kill 2"): every fault op done and every broker resumed or restarted
    # when the round ends, for the run's timeline (the history's ``faults``)
    events: list[tuple[float, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "roles": self.roles,
            "operations_done": self.done,
            "not_reached": self.not_reached or None,
            "acknowledged_before": self.acked_before,
            "acknowledged_after": self.acked_after,
            "log": self.log,
            "unready_after": self.unready or None,
        }


def check_story(ops: list[dict[str, Any]]) -> None:
    """ValueError for an operation this module cannot play (one line for the user)."""
    for k, op in enumerate(ops):
        if op.get("op") not in OPS:
            raise ValueError(f"story operation {k}: unknown op {op.get('op')!r}")
        if op["op"] != "sleep" and not isinstance(op.get("role"), int):
            raise ValueError(f"story operation {k} ({op['op']}): no role")


def roles_now(cluster: Cluster) -> list[int]:
    """Role 0: partition 0's leader now; then its other replicas as listed."""
    d = cluster.describe()
    topic = cluster.state["topic"]
    p = d["partitions"][f"{topic}-0"]
    leader = p["state"]["leader"] if p["state"] else -1
    reps = list(p["replicas"])
    return ([leader] if leader in reps else []) + [b for b in reps if b != leader]


def _partition0(cluster: Cluster) -> dict[str, Any] | None:
    d = cluster.describe()
    return d["partitions"][f"{cluster.state['topic']}-0"]["state"]


def _wait(cluster: Cluster, ok: Any, wait_s: float) -> bool:
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        st = _partition0(cluster)
        if st is not None and ok(st):
            return True
        time.sleep(0.05)
    return False


def play_round(
    cluster: Cluster,
    ops: list[dict[str, Any]],
    *,
    between_steps: bool,
    acked: Any,
    wait_s: float = WAIT_S,
) -> Round:
    """Play ``ops`` once on roles taken now (blocking; run it in an executor). ``acked()``: the
    count of acknowledged records so far, for the report."""
    rnd = Round(roles=roles_now(cluster), acked_before=acked())
    paused: set[int] = set()
    stopped: set[int] = set()
    try:
        for op in ops:
            kind = op["op"]
            if kind == "sleep":
                time.sleep(float(op["s"]))
                rnd.done += 1
                continue
            role = op["role"]
            if role >= len(rnd.roles):
                rnd.not_reached = f"{kind} of role {role}: the partition has {len(rnd.roles)}"
                break
            b = rnd.roles[role]
            if kind == "pause":
                cluster.pause(b)
                paused.add(b)
            elif kind == "kill":
                if b in paused:  # a frozen broker's kill: it dies where it stopped
                    cluster.resume(b)
                    paused.discard(b)
                cluster.kill(b, between_steps)
                stopped.add(b)
            elif kind == "restart":
                cluster.restart(b)
                stopped.discard(b)
            elif kind == "shutdown":
                cluster.controlled_shutdown(b)
                stopped.add(b)
            elif kind == "elect":
                cluster.elect_leader(b, partition=0)
            elif kind in WAITS:
                test, missed = WAITS[kind]
                if not _wait(cluster, lambda st, b=b, test=test: test(st, b), wait_s):
                    rnd.not_reached = f"broker {b} (role {role}) {missed}"
                    break
            rnd.done += 1
            rnd.log.append(f"{kind} {b}")
            if kind not in WAITS:
                rnd.events.append((time.monotonic(), f"{kind} {b}"))
    except ClusterError as e:
        rnd.not_reached = f"{ops[rnd.done]['op']}: {e}"
    finally:
        time.sleep(0.5)  # the producers meet the partition as the story left it
        rnd.acked_after = acked()
        for b in paused:
            cluster.resume(b)
            rnd.events.append((time.monotonic(), f"resume {b}"))
        for b in stopped:
            cluster.restart(b)
            rnd.events.append((time.monotonic(), f"restart {b}"))
    return rnd


async def play(
    cluster: Cluster,
    ops: list[dict[str, Any]],
    t_end: float,
    *,
    between_steps: bool,
    acked: Any,
    log: Any = None,
) -> list[Round]:
    """Rounds of the story until ``t_end`` (at least one), each starting on a ready cluster."""
    loop = asyncio.get_running_loop()
    rounds: list[Round] = []
    while not rounds or time.monotonic() < t_end:
        try:
            await loop.run_in_executor(None, cluster.wait_ready, READY_S)
        except ClusterError as e:  # the last round left the partition short of its ISR
            if log:
                log(f"story: the cluster is not ready for another round: {e}")
            if rounds:
                rounds[-1].unready = str(e)
            break
        rnd = await loop.run_in_executor(
            None, lambda: play_round(cluster, ops, between_steps=between_steps, acked=acked)
        )
        rounds.append(rnd)
        if log:
            how = f"not reached: {rnd.not_reached}" if rnd.not_reached else "played"
            log(
                f"story round {len(rounds)} on brokers {rnd.roles}: {', '.join(rnd.log)} "
                f"({how}; {rnd.acked_after} acknowledged so far)"
            )
    return rounds
