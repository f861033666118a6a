"""Well-formedness of trace events before any mapping onto the spec (issue 17, item 2).

An event that contradicts itself or its header is bad input (exit 2), never a step the
validator explains: ``node`` must name a broker of the cluster (a non-negative int, not a bool,
a string, a list or a float; ``"network"`` for a lost message, ``"controller"`` for a decision
of a controller that is no broker), every observed key the header declares must be present on a
broker's partition state and well-typed, ``log_start`` is an offset at most the LEO (R12: a
non-zero one is compared with the spec's, which only a run with retention or DeleteRecords
moves: ``mapping.derive_config``) and a ``ProducerSend``'s ``args.leader`` is its ``node`` (R5: the
leader appends, FORMAT.md). VALIDATION.md, "Well-formed events".
"""

from __future__ import annotations

from typing import Any

from .mapping import Event, TraceInputError

# Keys every live broker's partition state carries when the header declares them (FORMAT.md,
# "State"); ``log`` only with ``log_encoding`` delta+full; ``remote_leo`` only on a leader's;
# ``coord`` only on the controller's decisions; ``isr`` and ``remote_leo`` on a leader's.
BROKER_KEYS = ("alive", "role", "leader", "leader_epoch", "hw", "hw_checkpoint", "leo")
# on a leader's state only (a follower's ISR view is not compared, VALIDATION.md decision 5)
LEADER_KEYS = ("isr", "remote_leo")
CONTROLLER_ACTIONS = frozenset(
    {"ControllerElectLeader", "ControllerShrinkIsr", "ControllerMoveLeader",
     "ControllerShutdownBroker", "OperatorReassignPartition", "OperatorCancelReassignment"}
)  # fmt: skip
ROLES = ("leader", "follower", "none")
NETWORK_ACTIONS = frozenset({"NetworkLoseLeaderAndIsr"})
# the idempotent producer's own steps (FORMAT.md): node "producer", the client
PRODUCER_ACTIONS = frozenset({"ProducerCompleteBatch", "ProducerBumpEpoch"})


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _nat(x: Any) -> bool:
    return _is_int(x) and x >= 0


class EventChecker:
    """Checks each event of one run against its header; raises ``TraceInputError``."""

    def __init__(self, header: dict[str, Any]) -> None:
        cl = header.get("cluster") or {}
        brokers = cl.get("brokers")
        if brokers is None:
            brokers = sorted({b for reps in (cl.get("assignments") or {}).values() for b in reps})
        if not isinstance(brokers, list) or not all(_nat(b) for b in brokers):
            raise TraceInputError(f"the header's cluster.brokers is not a list of ids: {brokers!r}")
        self.brokers = frozenset(brokers)
        obs = header.get("observed")
        if obs is None:
            obs = []
        if not isinstance(obs, list) or not all(isinstance(k, str) for k in obs):
            raise TraceInputError(f"the header's observed is not a list of names: {obs!r}")
        self.observed = frozenset(obs)
        self.full_log = header.get("log_encoding") == "delta+full"

    def check(self, idx: int, ev: Event) -> None:
        def bad(why: str) -> TraceInputError:
            return TraceInputError(f"event {idx} ({ev.get('action')}): {why}")

        if not isinstance(ev, dict) or not isinstance(ev.get("action"), str):
            raise TraceInputError(f"event {idx}: not an event object with an action")
        act = ev["action"]
        node = ev.get("node")
        if act in NETWORK_ACTIONS and node == "network":
            pass
        elif act in CONTROLLER_ACTIONS and node == "controller":
            pass  # a controller that is no broker (an adapter's abstract controller, ADAPTER.md)
        elif act in PRODUCER_ACTIONS:
            if node != "producer":
                raise bad(f'{act} is the producer\'s step: node must be "producer", not {node!r}')
            a = ev.get("args")
            if (
                "topic" not in ev
                or not isinstance(a, dict)
                or not isinstance(a.get("record"), (str, int))
            ):
                raise bad(f"{act} names no partition or no record")
        elif not _nat(node):
            raise bad(f"node {node!r} is not a broker id (a non-negative integer)")
        elif node not in self.brokers:
            raise bad(f"node {node} is not a broker of the cluster {sorted(self.brokers)}")
        args = ev.get("args", {})
        if not isinstance(args, dict):
            raise bad("args is not an object")
        for k in ("replica", "leader", "follower"):
            if k in args and not (_is_int(args[k]) and (args[k] >= 0 or k == "leader")):
                raise bad(f"args.{k} {args[k]!r} is not a broker id")
            if k in args and args[k] >= 0 and args[k] not in self.brokers:
                raise bad(f"args.{k} {args[k]} is not a broker of the cluster")
        if act == "ProducerSend" and args.get("leader", node) != node:
            raise bad(f"args.leader {args.get('leader')} is not the node {node} that appended")
        phase = args.get("phase") if act == "FollowerFetch" else None
        if phase == "serve" and args.get("leader", node) != node:
            raise bad(f"a serve's args.leader {args.get('leader')} is not its node {node}")
        if phase == "apply" and args.get("follower", node) != node:
            raise bad(f"an apply's args.follower {args.get('follower')} is not its node")
        for k in ("epoch", "offset", "count"):
            if k in args and not (_is_int(args[k]) and args[k] >= (-1 if k == "epoch" else 0)):
                raise bad(f"args.{k} {args[k]!r} is not an integer in range")
        st = ev.get("state")
        if st is None:
            if self.observed and _nat(node) and "topic" in ev:
                # the header promises the observed state on every broker's partition event:
                # one without it would let a step through unobserved (issue 27 item 6)
                raise bad(f"no state, but the header declares observed {sorted(self.observed)}")
            return
        if not isinstance(st, dict):
            raise bad("state is not an object")
        self._state(st, act, bool(ev.get("impl")), "topic" in ev, bad)

    def _state(self, st: dict[str, Any], act: str, impl: bool, part: bool, bad: Any) -> None:
        if act in CONTROLLER_ACTIONS:
            if "coord" in self.observed and not isinstance(st.get("coord"), dict):
                raise bad("the header declares coord, the controller's event has none")
            co = st.get("coord")
            if isinstance(co, dict):
                if not (_is_int(co.get("leader")) and co["leader"] >= -1):
                    raise bad(f"coord.leader {co.get('leader')!r} is not a broker id or -1")
                if not _nat(co.get("leader_epoch")):
                    raise bad(f"coord.leader_epoch {co.get('leader_epoch')!r} is not an int")
                if not self._isr_ok(co.get("isr")):
                    raise bad(f"coord.isr {co.get('isr')!r} is not a list of brokers")
                for k in ("replicas", "adding", "removing"):  # (KIP-455, kraft)
                    if k in co and not self._isr_ok(co[k]):
                        raise bad(f"coord.{k} {co[k]!r} is not a list of distinct brokers")
            return
        if "alive" in st and not isinstance(st["alive"], bool):
            raise bad(f"state.alive {st['alive']!r} is not a boolean")
        if not part or st.get("alive") is False or not st:
            return  # a crashed broker observes nothing but its death
        missing = [k for k in BROKER_KEYS if k in self.observed and k not in st]
        if self.full_log and "log" in self.observed and "log" not in st:
            missing.append("log")
        if st.get("role") == "leader" and act != "BrokerRestart":
            missing += [k for k in LEADER_KEYS if k in self.observed and k not in st]
        if missing:
            raise bad(f"the header declares {missing} observed, the event omits them")
        for k in ("hw", "hw_checkpoint", "leo", "flushed"):
            if k in st and not _nat(st[k]):
                raise bad(f"state.{k} {st[k]!r} is not a non-negative integer")
        if "log_start" in st and not _nat(st["log_start"]):
            raise bad(f"state.log_start {st['log_start']!r} is not a non-negative integer")
        if "log_start" in st and "leo" in st and st["log_start"] > st["leo"]:
            raise bad(f"state.log_start {st['log_start']} is above the LEO {st['leo']}")
        if "leader_epoch" in st and not (_is_int(st["leader_epoch"]) and st["leader_epoch"] >= -1):
            raise bad(f"state.leader_epoch {st['leader_epoch']!r} is not an epoch")
        if "leader" in st and not (
            st["leader"] is None or (_is_int(st["leader"]) and st["leader"] >= -1)
        ):
            raise bad(f"state.leader {st['leader']!r} is not a broker id or -1")
        if "role" in st and st["role"] not in ROLES:
            raise bad(f"state.role {st['role']!r} is not one of {list(ROLES)}")
        if "isr" in st and not self._isr_ok(st["isr"]):
            raise bad(f"state.isr {st['isr']!r} is not a list of distinct brokers")
        rl = st.get("remote_leo")
        if rl is not None and not (
            isinstance(rl, dict)
            and all(_is_int(v) and v >= -1 for v in rl.values())
            and all(k.isdigit() and int(k) in self.brokers for k in rl)
        ):
            raise bad(f"state.remote_leo {rl!r} is not a map of broker id to LEO or -1")
        for k in ("log", "log_append"):
            if k in st and not (
                isinstance(st[k], list)
                and all(
                    isinstance(e, list) and len(e) in (2, 4) and all(_is_int(x) for x in e[1:])
                    for e in st[k]
                )
            ):
                raise bad(
                    f"state.{k} is not a list of [record id, leader epoch] pairs (or, for an"
                    " idempotent producer's batch, [record id, leader epoch, producer epoch,"
                    " sequence])"
                )
        start = st.get("log_start", 0)  # (the log from the log start, R12)
        if "log" in st and "leo" in st and len(st["log"]) != st["leo"] - start:
            raise bad(
                f"state.log has {len(st['log'])} entries, the LEO is {st['leo']}"
                + (f" and the log start {start}" if start else "")
            )
        if "log_truncate" in st and not _nat(st["log_truncate"]):
            raise bad(f"state.log_truncate {st['log_truncate']!r} is not an offset")

    def _isr_ok(self, isr: Any) -> bool:
        return (
            isinstance(isr, list)
            and all(_nat(b) and b in self.brokers for b in isr)
            and len(set(isr)) == len(isr)
        )
