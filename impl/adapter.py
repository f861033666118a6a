"""The conformance adapter of the reference implementation (traces/ADAPTER.md).

    python -m isr.impl.adapter [--mutant NAME]

Reads one JSON command per line on stdin, answers one JSON object per line on stdout. It runs
the implementation in the deterministic simulation (virtual time, so `run` is instant) and
returns the trace events the implementation recorded. Imports `impl/` only, like an adapter for
any other implementation would. Every fault and move of ``impl/sim/world.py`` has a command
(R8: crash, power failure, pause, loss, duplication, reordering, partitions; R9: controller
failover); a command the simulation cannot do (a broker cut off from the coordination service)
or a World without the method (``elect_leader``, ``controlled_shutdown`` before the impl-moves
branch) is answered ``{"ok": false, "unsupported": true}``.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .core import messages as m
from .core.config import DEFAULT_PROTOCOL
from .mutants import KRAFT_MUTANTS
from .mutants import MUTANTS as _MUTANTS
from .sim.world import Net, Unsupported, World, sim_config

MUTANTS = {**_MUTANTS, **KRAFT_MUTANTS}  # --mutant: every version's

# kraft (issue 18): faults whose mechanisms impl/ does not have for that version (impl/README.md)
KRAFT_REFUSED = {
    "partition": "the kraft spec has no lost fetches or AlterPartitions yet",
    "partition_coord": "KRaft has no coordination session to partition",
    "loss": "the kraft spec has no lost fetches or AlterPartitions yet",
    "duplicate": "the kraft spec has no duplicated fetches yet",
    "controller_failover": "the KRaft quorum controller's failover is not modelled",
}


# A producer's answer that proves nothing was appended (a definite failure, ``fail`` in the
# history); any other outcome of an attempt (a time-out, NotEnoughReplicasAfterAppend) may
# have appended the record: if the send then fails it is indeterminate (``info``).
NOT_APPENDED = {m.NOT_LEADER, m.NOT_ENOUGH_REPLICAS}


class HistoryRecorder:
    """The client history of a run (traces/FORMAT.md, "Client history"; checked by
    traces/history.py): every record sent by the World's producer (process ``producer``) and
    every poll of its consumer (process ``consumer``) as an invoke and its completion, with the
    simulation's virtual time in seconds. It wraps the two clients' methods of this World only.

    * a send is ``ok`` with its offset when acknowledged; when the producer gives up it is
      ``fail`` if every attempt was answered with an error that appends nothing (NOT_LEADER,
      NOT_ENOUGH_REPLICAS), else ``info`` (a time-out or NotEnoughReplicasAfterAppend may have
      appended it, R6, R15);
    * a poll is ``ok`` with the records, the HW and the offset it read from, or ``fail`` with
      the error; a poll still unanswered when the next poll of its partition starts is closed
      as ``info`` and its late answer is dropped (the consumer reads that offset again)."""

    def __init__(self, w: World, acks: str) -> None:
        self.w = w
        self.acks = acks
        self.ops: list[dict[str, Any]] = []
        # the kit's faults on the ops' clock (the header's ``faults``): a lost write acknowledged
        # before a power failure is within Kafka's contract (R14; traces/history.py lost_power)
        self.faults: list[dict[str, Any]] = []
        self.maybe_appended: dict[int, bool] = {}  # producer correlation id -> some attempt may
        self.polls: dict[Any, tuple[int, int]] = {}  # tp -> (correlation id, from offset) open
        prod, cons = w.producer, w.consumer
        send, on_resp, retry = prod.send, prod.on_response, prod._retry
        poll, on_cons = cons.poll, cons.on_response

        def send_(tp: Any, records: list[tuple[str, str]]) -> list[Any]:
            for rid, _v in records:
                self._op("producer", "invoke", "send", tp, value=rid, acks=self.acks)
            return send(tp, records)

        def on_response_(resp: m.ProduceResponse) -> list[Any]:
            p = prod.pending.get(resp.correlation_id)
            if p is not None and resp.error not in NOT_APPENDED:
                self.maybe_appended[resp.correlation_id] = True
            out = on_resp(resp)
            if p is not None and resp.error == m.NONE:
                for k, (rid, _v) in enumerate(p.records):
                    self._op(
                        "producer", "ok", "send", p.tp, value=rid, offset=resp.base_offset + k,
                        acks=self.acks,
                    )  # fmt: skip
            return out

        def retry_(corr: int, err: str) -> list[Any]:
            p = prod.pending.get(corr)
            if err not in NOT_APPENDED:
                self.maybe_appended[corr] = True
            out = retry(corr, err)
            if p is not None and corr not in prod.pending:  # the producer gave up
                ty = "info" if self.maybe_appended.get(corr) else "fail"
                for rid, _v in p.records:
                    self._op("producer", ty, "send", p.tp, value=rid, error=err, acks=self.acks)
            return out

        def poll_(tp: Any, replica: int | None = None) -> list[Any]:
            out = poll(tp, replica)
            if out:
                old = self.polls.pop(tp, None)
                if old is not None:
                    self._op("consumer", "info", "poll", tp, error="no answer")
                start = cons.positions.get(tp, 0)
                self.polls[tp] = (cons._corr, start)
                self._op("consumer", "invoke", "poll", tp, from_offset=start)
            return out

        def on_cons_(resp: m.ConsumeResponse) -> int:
            tp = (resp.topic, resp.partition)
            mine = self.polls.get(tp)
            if mine is None or mine[0] != resp.correlation_id:
                return 0  # the answer to a poll given up (closed as info)
            del self.polls[tp]
            if resp.error != m.NONE or resp.base_offset != mine[1]:
                self._op("consumer", "fail", "poll", tp, error=resp.error, from_offset=mine[1])
                return on_cons(resp)
            recs = [[resp.base_offset + k, e[1], e[0]] for k, e in enumerate(resp.entries)]
            self._op(
                "consumer", "ok", "poll", tp, records=recs, hw=resp.high_watermark,
                from_offset=mine[1],
            )  # fmt: skip
            return on_cons(resp)

        prod.send, prod.on_response, prod._retry = send_, on_response_, retry_  # type: ignore[method-assign]
        cons.poll, cons.on_response = poll_, on_cons_  # type: ignore[method-assign]

    def _op(self, process: str, ty: str, f: str, tp: Any, **kw: Any) -> None:
        self.ops.append(
            {"process": process, "type": ty, "f": f, "partition": tp[1], "time": self.w.now / 1000}
            | kw
        )

    def header(self) -> dict[str, Any]:
        return {
            "format": "isr-history",
            "version": 1,
            "acks": self.acks,
            "idempotent": self.w.producer.producer_id >= 0,
            "source": "isr.impl.adapter",
        } | ({"faults": list(self.faults)} if self.faults else {})

    def fault(self, event: str) -> None:
        self.faults.append({"time": self.w.now / 1000, "event": event})


class Session:
    def __init__(self, mutant: str | None) -> None:
        self.mutant = MUTANTS[mutant] if mutant else None
        self.w: World | None = None
        self.sent = 0
        self.history: HistoryRecorder | None = None

    def handle(self, cmd: dict[str, Any]) -> dict[str, Any]:
        op = cmd.get("op")
        fn = getattr(self, f"op_{op}", None) if isinstance(op, str) else None
        if fn is None:
            return _unsupported(f"unknown op {op!r}")
        if op not in ("start", "stop") and self.w is None:
            return {"ok": False, "error": "no cluster: send start first"}
        if self.w is not None and self.w.kraft and op in KRAFT_REFUSED:
            return _unsupported(f"the kraft simulation refuses {op}: {KRAFT_REFUSED[op]}")
        try:
            return fn(cmd) or {"ok": True}
        except Unsupported as e:
            return _unsupported(str(e))

    @property
    def world(self) -> World:
        assert self.w is not None
        return self.w

    def op_start(self, c: dict[str, Any]) -> dict[str, Any]:
        brokers = int(c.get("brokers", 3))
        replication = int(c.get("replication", min(3, brokers)))
        if not 2 <= replication <= brokers <= 5:
            return {"ok": False, "error": "need 2 <= replication <= brokers <= 5"}
        acks = str(c.get("acks", "all"))
        if acks not in ("all", "1"):
            return {"ok": False, "error": f"acks must be 'all' or '1', not {acks!r}"}
        cfg = sim_config(
            c.get("protocol", DEFAULT_PROTOCOL),
            min_insync_replicas=min(int(c.get("min_insync", 2)), replication),
            # small fetches, so that a follower far behind needs several (its HW is then
            # capped by its own LEO, R4): the kit's scenarios produce tens of records, not 500s
            replica_fetch_max_records=int(c.get("fetch_max_records", 8)),
        )
        kw: dict[str, Any] = {}
        if self.mutant:
            kw = {
                "broker_cls": self.mutant.broker_cls,
                "controller_cls": self.mutant.controller_cls,
            }
        self.w = World(
            brokers,
            int(c.get("partitions", 1)),
            replication,
            cfg,
            seed=int(c.get("seed", 0)),
            session_timeout_ms=int(c.get("session_timeout_ms", 600)),
            full_log_in_trace=False,
            **kw,
        )
        self.sent = 0
        self.world.producer.acks = -1 if acks == "all" else 1
        if c.get("idempotence"):
            # the idempotent producer (Kafka's default since 3.0; the spec's --idempotence):
            # acks=all, retries without end, its own events traced (FORMAT.md)
            if acks != "all":
                return {"ok": False, "error": "idempotence needs acks 'all'"}
            self.world.producer.producer_id = 1
            self.world.producer.max_retries = 1_000_000
        self.history = HistoryRecorder(self.world, acks)
        self.world.run_until(100)
        w = self.world
        header = {
            "format": "isr-trace",
            "version": 1,
            "protocol": cfg.protocol,
            "source": "adapter",
            "observed": [
                "alive",
                "role",
                "leader",
                "leader_epoch",
                "isr",
                "hw",
                "hw_checkpoint",
                "leo",
                "log",
                "remote_leo",
                "coord",
                *(["producer"] if c.get("idempotence") else []),
            ],
            "log_encoding": "delta",
            "config": cfg.to_dict(),
            "cluster": {
                "brokers": w.ids,
                "assignments": {
                    f"{t}-{p}": list(r) for (t, p), r in sorted(w.coord.assignments.items())
                },
            },
        }
        if w.protocol_flags():
            header["protocol_flags"] = w.protocol_flags()
        return {"ok": True, "header": header}

    def op_produce(self, c: dict[str, Any]) -> None:
        w = self.world
        for _ in range(int(c.get("count", 1))):
            tps = sorted(w.coord.assignments)
            if c.get("lose_reply"):  # R15: its (first successful) answer is lost
                w.lose_replies.add(f"m{self.sent}")
            w.produce(tps[self.sent % len(tps)], f"m{self.sent}")
            self.sent += 1
            w.run_until(w.now + 10)

    def op_consume(self, c: dict[str, Any]) -> None:
        """A poll of every partition from its leader, or (``broker``, kraft: KIP-392) from that
        replica of it, a follower serving below its own HW."""
        w = self.world
        w._refresh_metadata()
        b = c.get("broker") if w.kraft else None  # (before kraft: the leader serves alone)
        for tp in sorted(w.coord.assignments):
            replica = None if b is None or int(b) not in w.coord.assignments[tp] else int(b)
            w._apply("consumer", w.consumer.poll(tp, replica))
        w.run_until(w.now + 10)

    def op_crash(self, c: dict[str, Any]) -> None:
        self._fault(f"kill {int(c['broker'])}")
        self.world.crash(int(c["broker"]))

    def op_restart(self, c: dict[str, Any]) -> None:
        self._fault(f"restart {int(c['broker'])}")
        self.world.restart(int(c["broker"]))

    def op_power_fail(self, c: dict[str, Any]) -> None:
        """R14: the broker dies and loses what it had not fsynced."""
        self._fault(f"power {int(c['broker'])}")
        self.world.crash(int(c["broker"]), lose_unflushed=True)

    def _fault(self, event: str) -> None:
        if self.history is not None:
            self.history.fault(event)

    def op_pause(self, c: dict[str, Any]) -> None:
        """A stop-the-world pause (GC, SIGSTOP) of ``ms``; past the session timeout its session
        expires and it resumes as a zombie (R7, R8, R18)."""
        self.world.pause(int(c["broker"]), int(c.get("ms", 1000)))

    def op_resume(self, c: dict[str, Any]) -> None:
        """End a pause now (messages and timers held for it run at the original end)."""
        w = self.world
        b = int(c["broker"])
        node = w.nodes[b]
        if node.alive and node.paused_until > w.now:
            node.paused_until = w.now
            w.at(w.now, w._resume, b)
            w.run_until(w.now)

    def op_partition(self, c: dict[str, Any]) -> None:
        self.world.net.blocked.add(frozenset((int(c["a"]), int(c["b"]))))

    def op_partition_coord(self, c: dict[str, Any]) -> dict[str, Any]:
        # The simulation's coordination service is reached without faults (impl/sim/world.py).
        return _unsupported("the simulation does not partition a broker from the coordination")

    def op_loss(self, c: dict[str, Any]) -> None:
        self.world.net.loss = float(c.get("rate", 0.1))

    def op_duplicate(self, c: dict[str, Any]) -> None:
        self.world.net.duplicate = float(c.get("rate", 0.1))

    def op_controller_failover(self, c: dict[str, Any]) -> dict[str, Any]:
        """R9: the controller resigns (its /controller node goes) and another running broker
        takes over with a new controller epoch; the old one stays up as a plain broker."""
        w = self.world
        old = w.coord.controller
        others = [b for b in w.ids if b != old and w._usable(b) and b in w.coord.sessions]
        want = c.get("broker")
        if want is not None and int(want) in others:
            others = [int(want)]  # the requested successor wins /controller
        if old < 0 or not others:  # nobody to take over: nothing happens (ADAPTER.md)
            return {"ok": True, "controller": old}
        # Only the successor may take /controller in this election: the others are held
        # back as a paused process would be (World._usable), for this one step.
        held = {b: w.nodes[b].paused_until for b in w.ids if b != others[0]}
        for b in held:
            w.nodes[b].paused_until = max(w.nodes[b].paused_until, w.now + 1)
        w.coord.controller = -1
        w.nodes[old].controller = None
        try:
            w._membership_changed()
        finally:
            for b, t in held.items():
                w.nodes[b].paused_until = t
        w.run_until(w.now + 10)
        return {"ok": True, "controller": w.coord.controller}

    def op_elect_leader(self, c: dict[str, Any]) -> dict[str, Any] | None:
        return self._move("elect_leader", int(c["broker"]))

    def op_controlled_shutdown(self, c: dict[str, Any]) -> dict[str, Any] | None:
        """R9: leadership moves off the broker and it leaves the ISRs, then it stops (an
        orderly stop: World.stop where the World has it, else a process crash)."""
        b = int(c["broker"])
        got = self._move("controlled_shutdown", b)
        if got is not None:
            return got
        w = self.world
        w.run_until(w.now + 200)  # the moves land and reach the brokers before it stops
        getattr(w, "stop", w.crash)(b)
        return None

    def _move(self, name: str, broker: int) -> dict[str, Any] | None:
        """A leader move of the spec (ControllerMoveLeader, ControllerShutdownBroker) if this
        World has it (the impl-moves branch adds World.elect_leader / controlled_shutdown)."""
        fn = getattr(self.world, name, None)
        if fn is None:
            return _unsupported(f"World.{name} is not implemented")
        fn(broker)
        self.world.run_until(self.world.now + 10)
        return None

    def op_delete_records(self, c: dict[str, Any]) -> dict[str, Any]:
        """The operator's DeleteRecords (kraft, R12; spec LeaderDeleteRecords): every partition,
        or ``partition``, up to ``offset`` (-1: its HW), sent to its leader or to ``broker``
        (a deposed leader not yet told applies it too). ``results``: the error per partition
        (``NONE``, ``OFFSET_OUT_OF_RANGE`` above the HW, ``NOT_LEADER_FOR_PARTITION``,
        ``NOT_AVAILABLE`` for a broker that is down)."""
        w = self.world
        if not w.kraft:
            return _unsupported("delete_records: the log start moves in the kraft version only")
        part = c.get("partition")
        b = c.get("broker")
        results = {}
        for tp in sorted(w.coord.assignments):
            if part is not None and tp[1] != int(part):
                continue
            err = w.delete_records(tp, int(c.get("offset", -1)), None if b is None else int(b))
            results[f"{tp[0]}-{tp[1]}"] = err
        w.run_until(w.now + 10)
        return {"ok": True, "results": results}

    def op_retention(self, c: dict[str, Any]) -> dict[str, Any] | None:
        """Retention runs now on ``broker`` with every segment past retention.ms: it deletes
        the deletable ones, oldest first, those wholly below the HW (kraft, R12; spec
        BrokerDeleteOldSegment)."""
        w = self.world
        if not w.kraft:
            return _unsupported("retention: the log start moves in the kraft version only")
        w.delete_old_segments(int(c["broker"]))
        w.run_until(w.now + 10)
        return None

    def op_reassign(self, c: dict[str, Any]) -> dict[str, Any]:
        """The operator's partition reassignment (kraft, KIP-455; kafka-reassign-partitions,
        ``Admin.alterPartitionReassignments``; the spec's OperatorReassignPartition): every
        partition, or ``partition``, moves to the replica set ``replicas``. The controller
        records it (target + current), the new replicas follow and fetch, and it completes when
        the target is in the ISR: the removed replicas stop and delete their logs. A target
        equal to the current one changes nothing. ``results``: per partition, ``NONE`` or
        ``NOT_CONTROLLER`` (no controller running: the request is lost)."""
        return self._reassign(c, [int(b) for b in c["replicas"]])

    def op_cancel_reassignment(self, c: dict[str, Any]) -> dict[str, Any]:
        """Cancel the reassignment in progress (kraft, KIP-455; kafka-reassign-partitions
        --cancel, a null target; the spec's OperatorCancelReassignment) of every partition, or
        ``partition``: back to the replicas without the adding ones. Nothing in progress:
        nothing happens."""
        return self._reassign(c, None)

    def _reassign(self, c: dict[str, Any], replicas: list[int] | None) -> dict[str, Any]:
        w = self.world
        if not w.kraft:
            return _unsupported("reassign: partition reassignment is built in the kraft version")
        if replicas is not None and (
            len(set(replicas)) != len(replicas) or not set(replicas) <= set(w.ids)
        ):
            return {"ok": False, "error": f"replicas {replicas}: distinct brokers of the cluster"}
        part = c.get("partition")
        results = {}
        for tp in sorted(w.coord.assignments):
            if part is not None and tp[1] != int(part):
                continue
            ok = w.reassign(tp, replicas)
            results[f"{tp[0]}-{tp[1]}"] = "NONE" if ok else "NOT_CONTROLLER"
        w.run_until(w.now + 10)
        return {"ok": True, "results": results}

    def op_jitter(self, c: dict[str, Any]) -> None:
        self.world.net.max_delay_ms = max(1, int(c.get("max_ms", 200)))

    def op_heal(self, c: dict[str, Any]) -> None:
        self.world.net = Net()  # partitions, jitter, loss and duplication end

    def op_run(self, c: dict[str, Any]) -> None:
        w = self.world
        w.run_until(w.now + int(c.get("ms", 100)))

    def op_trace(self, c: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "events": self.world.trace}

    def op_history(self, c: dict[str, Any]) -> dict[str, Any]:
        """The client history since ``start`` (optional command, traces/ADAPTER.md): the
        header's settings and every send and poll as ops (traces/FORMAT.md, "Client history")."""
        assert self.history is not None
        return {"ok": True, "header": self.history.header(), "ops": self.history.ops}

    def op_stop(self, c: dict[str, Any]) -> dict[str, Any]:
        self.w = None
        return {"ok": True, "bye": True}


def _unsupported(why: str) -> dict[str, Any]:
    return {"ok": False, "unsupported": True, "error": why}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m isr.impl.adapter")
    ap.add_argument("--mutant", choices=sorted(MUTANTS), help="run a deliberately broken version")
    a = ap.parse_args(argv)
    s = Session(a.mutant)
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            cmd = json.loads(line)
            resp = s.handle(cmd)
        except Exception as e:  # the adapter answers every line, even a bad one
            resp = {"ok": False, "error": f"{type(e).__name__}: {e}"}
        sys.stdout.write(json.dumps(resp, separators=(",", ":")) + "\n")
        sys.stdout.flush()
        if resp.get("bye"):
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())
