"""The conformance adapter for Apache Kafka itself (traces/ADAPTER.md's JSON-lines contract):
`isr conform --adapter apache-kafka[:VERSION]` runs
`python -m isr.traces.conformance.apache_kafka.adapter --version VERSION`.

It drives a real KRaft cluster (cluster.py) with Kafka's own clients (KafkaDriver.java) and
returns a **grey-box** trace (traces/FORMAT.md, "Grey-box traces"): Kafka reports no fetches and
has no Lamport clocks, so the trace holds what can be seen from outside, each with a time on the
one clock of this machine:
- the kit's commands as applied to the processes (`fault` events);
- the controller's decisions from the metadata log (`metadata` events, in the log's order);
- every client operation and its answer (`client` events, the history format of traces/history);
- samples of the partition state through the Admin API (`observe` events);
- the files at rest after the run (`at_rest` events: each replica's log, leader-epoch
  checkpoint, HW checkpoint).

What Kafka cannot be made to do from outside is answered `unsupported` (a coverage gap):
`power_fail` (needs a file system that drops unsynced writes), `partition`, `loss`, `duplicate`,
`jitter`, `partition_coord` (need network namespaces and root), `controller_failover` (one
controller-only process by design: the spec has one controller).
`elect_leader` uses Admin electLeaders(PREFERRED): Kafka elects only the first assigned replica
this way, so the command moves leadership only to a broker that is first in some partition's
assignment (R1: broker i for partition i); for any other broker it does nothing (ADAPTER.md:
a request that cannot apply does nothing).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from .client import Driver, DriverError
from .cluster import KRaftCluster, Settings
from .install import NEWEST, KafkaInstall, KafkaSetupError, ensure
from .metadata import MetadataError, dump, events, parse_records
from .rest import read_at_rest

TOPIC = "t"
UNSUPPORTED = {
    "power_fail": "Kafka's brokers cannot be made to lose unsynced writes without a special file system",
    "partition": "cutting broker-to-broker links needs network namespaces (root); not built",
    "partition_coord": "cutting a broker from the controller needs network namespaces (root); not built",
    "loss": "message loss between brokers needs network namespaces (root); not built",
    "duplicate": "Kafka's TCP connections do not duplicate messages",
    "jitter": "delaying broker-to-broker messages needs network namespaces (root); not built",
    "controller_failover": "one controller-only process by design (the spec has one controller)",
    "retention": "Kafka's retention runs on its own timer (log.retention.check.interval.ms) on "
    "segments past retention.ms: it cannot be made to run now on one broker",
}


def _error_name(java: str) -> str:
    """A Java exception's simple name as the adapter protocol's error (ADAPTER.md)."""
    return {
        "OffsetOutOfRangeException": "OFFSET_OUT_OF_RANGE",
        "NotLeaderOrFollowerException": "NOT_LEADER_FOR_PARTITION",
    }.get(java, java)


class Session:
    """One adapter session: at most one cluster at a time."""

    def __init__(self, version: str, keep: Path | None = None) -> None:
        self.version = version
        self.install: KafkaInstall | None = None
        self.keep = keep
        self.cluster: KRaftCluster | None = None
        self.driver: Driver | None = None
        self.workdir: Path | None = None
        self.trace: list[dict[str, Any]] = []
        self.header: dict[str, Any] = {}
        self.partitions = 1
        self.acks = "all"
        self.idempotent = True
        self.next_value = 0
        self.pause_timers: list[threading.Timer] = []
        self.history: list[dict[str, Any]] = []

    # ---- the wire ---------------------------------------------------------------------------
    def handle(self, cmd: dict[str, Any]) -> dict[str, Any]:
        op = cmd.get("op")
        if op in UNSUPPORTED:
            return {"ok": False, "unsupported": True, "error": UNSUPPORTED[op]}
        fn = getattr(self, f"op_{op}", None)
        if fn is None:
            return {"ok": False, "unsupported": True, "error": f"unknown command {op!r}"}
        out = fn(cmd)
        return {"ok": True, **(out or {})}

    # ---- commands ---------------------------------------------------------------------------
    def op_start(self, cmd: dict[str, Any]) -> dict[str, Any]:
        self.close()
        if cmd.get("protocol", "kraft") not in ("kraft",) and not str(
            cmd.get("protocol")
        ).startswith("kraft"):
            raise Unsupported(
                f"Apache Kafka {self.version} runs KRaft only, not {cmd.get('protocol')}"
            )
        self.install = self.install or ensure(self.version)
        brokers = int(cmd.get("brokers", 3))
        replication = int(cmd.get("replication", min(3, brokers)))
        self.partitions = int(cmd.get("partitions", 1))
        self.acks = str(cmd.get("acks", "all"))
        self.idempotent = self.acks == "all" and bool(cmd.get("idempotence", True))
        min_isr = int(cmd.get("min_insync", 2))
        base = Path(tempfile.mkdtemp(prefix="isr-kafka-"))
        self.workdir = base
        settings = Settings(brokers=brokers)
        if cmd.get("session_timeout_ms"):
            # the kit's default (600 ms) is below a JVM's pauses on a busy 2-core machine
            settings.session_timeout_ms = max(
                int(cmd["session_timeout_ms"]), settings.session_timeout_ms
            )
        self.cluster = KRaftCluster(self.install, base, settings)
        ready = self.cluster.start()
        self.driver = Driver(self.install, self.cluster.bootstrap, base)
        assignments = [
            [(p + j) % brokers for j in range(replication)] for p in range(self.partitions)
        ]
        self.driver.request(
            {
                "op": "create",
                "topic": TOPIC,
                "assignments": assignments,
                "configs": {"min.insync.replicas": str(min_isr)},
            }
        )
        self._wait_leaders(30.0)
        self.trace = []
        self.history = []
        self.next_value = 0
        self.header = {
            "format": "isr-trace",
            "version": 1,
            "observation": "grey-box",
            "protocol": "kraft",
            "source": f"apache-kafka-{self.version}",
            "implementation": {"name": "apache-kafka", "version": self.version},
            "config": {
                "min_insync": min_isr,
                "acks": self.acks,
                "idempotence": self.idempotent,
                "session_timeout_ms": settings.session_timeout_ms,
                "replica_lag_time_max_ms": settings.replica_lag_ms,
                "unclean_election": settings.unclean_election,
            },
            "cluster": {
                "brokers": list(range(brokers)),
                "controller": self.cluster.controller.node_id,
                "assignments": {f"{TOPIC}-{p}": a for p, a in enumerate(assignments)},
            },
            "ready_seconds": round(ready, 3),
            "clock": "unix seconds on the machine that ran every process (one clock)",
        }
        return {"header": self.header}

    def _wait_leaders(self, timeout: float) -> list[dict[str, Any]]:
        assert self.driver
        deadline = time.monotonic() + timeout
        while True:
            with contextlib.suppress(DriverError):
                d = self.driver.request({"op": "describe", "topic": TOPIC})
                if all(p["leader"] >= 0 for p in d["partitions"]):
                    return d["partitions"]
            if time.monotonic() > deadline:
                raise KafkaSetupError("topic t has a partition without a leader after start")
            time.sleep(0.2)

    def _fault(self, op: str, applied: bool, **kw: Any) -> None:
        self.trace.append(
            {"kind": "fault", "op": op, "applied": applied, "time": time.time(), **kw}
        )

    def _c(self) -> KRaftCluster:
        if self.cluster is None:
            raise KafkaSetupError("no cluster: send start first")
        return self.cluster

    def op_produce(self, cmd: dict[str, Any]) -> None:
        assert self.driver
        count = int(cmd.get("count", 1))
        for _ in range(count):
            p = self.next_value % self.partitions
            self.next_value += 1
            value = str(self.next_value)
            t0 = time.time()
            self._client(
                {"type": "invoke", "f": "send", "partition": p, "value": value, "time": t0}
            )
            try:
                ans = self.driver.request(
                    {
                        "op": "produce",
                        "topic": TOPIC,
                        "partition": p,
                        "acks": self.acks,
                        "idempotent": self.idempotent,
                        "values": [value],
                        "delivery_timeout_ms": 6000,
                    },
                    timeout=30,
                )
                r = ans["results"][0]
                done = {
                    "type": r["type"],
                    "f": "send",
                    "partition": p,
                    "value": value,
                    "time": r["time"],
                }
                if "offset" in r:
                    done["offset"] = r["offset"]
                if "error" in r:
                    done["error"] = r["error"]
            except DriverError as e:
                done = {
                    "type": "info",
                    "f": "send",
                    "partition": p,
                    "value": value,
                    "time": time.time(),
                    "error": str(e),
                }
            self._client(done)

    def op_consume(self, cmd: dict[str, Any]) -> None:
        assert self.driver
        for p in range(self.partitions):
            t0 = time.time()
            self._client(
                {"type": "invoke", "f": "poll", "partition": p, "from_offset": 0, "time": t0}
            )
            try:
                ans = self.driver.request(
                    {"op": "poll", "topic": TOPIC, "partition": p, "from": 0, "max_ms": 3000},
                    timeout=30,
                )
                self._client(
                    {
                        "type": "ok",
                        "f": "poll",
                        "partition": p,
                        # (R12: from the log start if DeleteRecords moved it past 0)
                        "from_offset": ans.get("from", 0),
                        "records": [[o, v, e] for o, v, e in ans["records"]],
                        # not "hw": Kafka's consumer does not expose the HW its fetches
                        # carried; the end offset read before polling may be passed by the
                        # records the poll then returns (the HW moved), which the history
                        # checker would call an above-HW read (a harness artefact, seen in
                        # the first campaign: run 13)
                        "end_offset_before": ans["hw"],
                        "complete": ans["complete"],
                        "time": ans["time"],
                    }
                )
            except DriverError as e:
                self._client(
                    {
                        "type": "fail",
                        "f": "poll",
                        "partition": p,
                        "error": str(e),
                        "time": time.time(),
                    }
                )

    def _client(self, op: dict[str, Any]) -> None:
        op = {"process": 0, **op}
        self.history.append(op)
        self.trace.append({"kind": "client", **op})

    def op_crash(self, cmd: dict[str, Any]) -> None:
        b = int(cmd["broker"])
        self._fault("crash", self._c().crash(b), broker=b)

    def op_restart(self, cmd: dict[str, Any]) -> None:
        b = int(cmd["broker"])
        self._fault("restart", self._c().restart(b), broker=b)

    def op_pause(self, cmd: dict[str, Any]) -> None:
        b = int(cmd["broker"])
        ms = int(cmd.get("ms", 900))
        applied = self._c().pause(b)
        self._fault("pause", applied, broker=b, ms=ms)
        if applied:  # it runs on by itself after `ms` (ADAPTER.md)
            t = threading.Timer(ms / 1000, self._auto_resume, args=(b,))
            t.daemon = True
            t.start()
            self.pause_timers.append(t)

    def _auto_resume(self, b: int) -> None:
        c = self.cluster
        t0 = time.time()  # before SIGCONT: the process may run from here
        if c is not None and c.resume(b):
            self.trace.append(
                {
                    "kind": "fault",
                    "op": "resume",
                    "applied": True,
                    "time": time.time(),
                    "broker": b,
                    "auto": True,
                    "started": t0,
                }
            )

    def op_resume(self, cmd: dict[str, Any]) -> None:
        b = int(cmd["broker"])
        t0 = time.time()  # before SIGCONT
        self._fault("resume", self._c().resume(b), broker=b, started=t0)

    def op_controlled_shutdown(self, cmd: dict[str, Any]) -> None:
        b = int(cmd["broker"])
        t0 = time.time()
        applied = self._c().controlled_shutdown(b)
        self._fault("controlled_shutdown", applied, broker=b, started=t0)

    def op_elect_leader(self, cmd: dict[str, Any]) -> None:
        assert self.driver
        b = int(cmd["broker"])
        assign = self.header["cluster"]["assignments"]
        parts = [int(k.rsplit("-", 1)[1]) for k, reps in assign.items() if reps[0] == b]
        if not parts or b not in self._c().alive():
            self._fault("elect_leader", False, broker=b, reason="not a live preferred replica")
            return
        t0 = time.time()
        try:
            ans = self.driver.request(
                {"op": "elect", "topic": TOPIC, "partitions": parts}, timeout=30
            )
            res = ans["results"]
            self._fault("elect_leader", True, broker=b, partitions=parts, results=res, started=t0)
        except DriverError as e:
            self._fault("elect_leader", False, broker=b, partitions=parts, error=str(e), started=t0)

    def op_delete_records(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """The operator's DeleteRecords (R12, KIP-107; ADAPTER.md): Admin deleteRecords up to
        ``offset`` (-1: the HW) on every partition or ``partition``. Kafka's admin client sends
        it to each partition's leader and waits until every replica's log start has followed
        (the low watermark); ``broker`` (a deposed leader) cannot be chosen: a command naming
        one that does not lead the partition does nothing (ADAPTER.md: a request that cannot
        apply does nothing). Traced as a ``delete_records`` fault event with the answers."""
        assert self.driver
        part = cmd.get("partition")
        parts = [p for p in range(self.partitions) if part is None or p == int(part)]
        offset = int(cmd.get("offset", -1))
        b = cmd.get("broker")
        if b is not None:
            with contextlib.suppress(DriverError, KafkaSetupError):
                d = self.driver.request({"op": "describe", "topic": TOPIC}, timeout=15)
                leads = {x["partition"] for x in d["partitions"] if x["leader"] == int(b)}
                parts = [p for p in parts if p in leads]
        if not parts:
            self._fault("delete_records", False, offset=offset, reason="no partition led there")
            return {"results": {}}
        t0 = time.time()
        try:
            ans = self.driver.request(
                {"op": "delete", "topic": TOPIC, "partitions": parts, "offset": offset},
                timeout=40,
            )
        except DriverError as e:
            self._fault("delete_records", False, offset=offset, error=str(e), started=t0)
            return {"results": {f"{TOPIC}-{p}": "ERROR" for p in parts}}
        res = ans["results"]
        self._fault(
            "delete_records", True, partitions=parts, offset=offset, results=res, started=t0
        )
        out = {}
        for p in parts:
            r = res.get(str(p))
            out[f"{TOPIC}-{p}"] = "NONE" if isinstance(r, int) else _error_name(str(r))
        return {"results": out}

    def op_reassign(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """The operator's partition reassignment (KIP-455; ADAPTER.md): Admin
        alterPartitionReassignments of every partition, or ``partition``, to ``replicas``,
        then listPartitionReassignments until it is no longer in progress (at most ``wait_ms``,
        default 30 s: the new replica must catch up and join the ISR). Traced as a ``reassign``
        fault event (the request's time, Kafka's answers, whether it completed in time). A
        target equal to the replica set is no reassignment for the spec (only a new replica
        order) and is not sent."""
        return self._reassign(cmd, [int(b) for b in cmd["replicas"]])

    def op_cancel_reassignment(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Cancel the reassignment in progress (KIP-455; Admin alterPartitionReassignments
        with an empty target: kafka-reassign-partitions --cancel). Traced as a
        ``cancel_reassignment`` fault event; Kafka answers NoReassignmentInProgressException
        when nothing moves (applied false)."""
        return self._reassign(cmd, None)

    def _reassign(self, cmd: dict[str, Any], replicas: list[int] | None) -> dict[str, Any]:
        assert self.driver
        part = cmd.get("partition")
        parts = [p for p in range(self.partitions) if part is None or p == int(part)]
        op = "reassign" if replicas is not None else "cancel_reassignment"
        if replicas is not None:
            with contextlib.suppress(DriverError, KafkaSetupError):
                d = self.driver.request({"op": "describe", "topic": TOPIC}, timeout=15)
                same = {
                    x["partition"] for x in d["partitions"] if set(x["replicas"]) == set(replicas)
                }
                parts = [p for p in parts if p not in same]
        if not parts:
            self._fault(op, False, replicas=replicas, reason="nothing to move")
            return {"results": {}}
        req: dict[str, Any] = {"op": "reassign", "topic": TOPIC, "partitions": parts}
        if replicas is not None:
            req["replicas"] = replicas
        req["wait_ms"] = int(cmd.get("wait_ms", 30_000))
        t0 = time.time()
        try:
            ans = self.driver.request(req, timeout=req["wait_ms"] / 1000 + 40)
        except DriverError as e:
            self._fault(op, False, replicas=replicas, error=str(e), started=t0)
            return {"results": {f"{TOPIC}-{p}": "ERROR" for p in parts}}
        res = ans["results"]
        ok = [p for p in parts if res.get(str(p)) == "ok"]
        self._fault(
            op, bool(ok), partitions=ok, replicas=replicas, results=res, done=ans.get("done"),
            started=t0, answered=ans.get("time"), done_time=ans.get("done_time"),
        )  # fmt: skip
        return {
            "results": {
                f"{TOPIC}-{p}": "NONE"
                if res.get(str(p)) == "ok"
                else _error_name(str(res.get(str(p))))
                for p in parts
            },
            "done": ans.get("done"),
        }

    def op_run(self, cmd: dict[str, Any]) -> None:
        time.sleep(max(0, int(cmd.get("ms", 100))) / 1000)

    def op_heal(self, cmd: dict[str, Any]) -> None:
        c = self._c()
        for b in range(len(c.brokers)):
            t0 = time.time()  # before SIGCONT
            if c.resume(b):
                self._fault("resume", True, broker=b, started=t0)
        self._fault("heal", True)

    def op_observe(self, cmd: dict[str, Any]) -> None:
        self._observe()

    def _observe(self) -> None:
        assert self.driver
        try:
            d = self.driver.request({"op": "describe", "topic": TOPIC}, timeout=15)
            o = self.driver.request(
                {"op": "offsets", "topic": TOPIC, "partitions": self.partitions}, timeout=15
            )
        except DriverError as e:
            self.trace.append({"kind": "observe", "time": time.time(), "error": str(e)})
            return
        hw = {x["partition"]: x for x in o["partitions"]}
        for p in d["partitions"]:
            self.trace.append(
                {
                    "kind": "observe",
                    "time": d["time"],
                    "partition": p["partition"],
                    "leader": p["leader"],
                    "isr": p["isr"],
                    "elr": p["elr"],
                    "hw": hw[p["partition"]]["hw"],
                    "leader_epoch": hw[p["partition"]]["leader_epoch"],
                }
            )

    def _settle(self, timeout: float) -> None:
        """Wait (up to `timeout` s) until every partition has a leader and every live broker of
        its assignment is back in its ISR: the at-rest checks read a healed cluster."""
        assert self.driver
        deadline = time.monotonic() + timeout
        alive = set(self._c().alive())
        while time.monotonic() < deadline:
            with contextlib.suppress(DriverError, KafkaSetupError):
                d = self.driver.request({"op": "describe", "topic": TOPIC}, timeout=10)
                if all(
                    p["leader"] >= 0 and set(p["replicas"]) & alive <= set(p["isr"])
                    for p in d["partitions"]
                ):
                    return
            time.sleep(0.5)

    def op_history(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """The client history (traces/history.py's format): Kafka's own Java clients' sends and
        polls with their answers, one process (the driver)."""
        head = {
            "format": "isr-history",
            "version": 1,
            "acks": self.acks,
            "idempotent": self.idempotent,
            "source": f"apache-kafka-{self.version}",
        }
        return {"header": head, "ops": list(self.history)}

    def op_trace(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Settle, sample the partition state, read the metadata log, then stop every broker
        (SIGKILL: files as a crash leaves them) and read the files at rest."""
        c = self._c()
        assert self.install and self.workdir
        self._settle(20.0)
        self.op_consume({})  # the final read: a lost write is one no read returns (Jepsen)
        with contextlib.suppress(KafkaSetupError):
            self._observe()
        text = dump(
            c.java,
            self.install.classpath(),
            c.metadata_dir,
            self.workdir / "log4j2.yaml",
            self.install.dump_log_segments,
        )
        meta = events(parse_records(text), TOPIC)
        assert self.driver
        starts: dict[int, int] = {}  # R12: each partition's log start at its leader
        with contextlib.suppress(DriverError, KafkaSetupError):
            o = self.driver.request(
                {"op": "offsets", "topic": TOPIC, "partitions": self.partitions, "earliest": True},
                timeout=15,
            )
            starts = {x["partition"]: int(x["log_start"]) for x in o["partitions"]}
        for b in range(len(c.brokers)):
            c.crash(b)
        rest = read_at_rest(c, TOPIC, self.partitions)
        for r in rest:
            # (Kafka writes its log-start-offset-checkpoint only after log.initial.task.delay.ms,
            # 30 s: the leader's answer is the log start every replica of a healed cluster has)
            r["log_start"] = max(r.get("log_start", 0), starts.get(r["partition"], 0))
        evs = sorted(self.trace + meta_with_time(meta), key=_when)
        return {"header": self.header, "events": evs + rest}

    def op_stop(self, cmd: dict[str, Any]) -> None:
        self.close()

    def close(self) -> None:
        for t in self.pause_timers:
            t.cancel()
        self.pause_timers = []
        if self.driver is not None:
            self.driver.close()
            self.driver = None
        if self.cluster is not None:
            self.cluster.close()
            if self.keep is not None and self.workdir is not None:
                dest = self.keep / self.workdir.name
                shutil.copytree(self.workdir, dest, dirs_exist_ok=True)
            if self.workdir is not None:
                shutil.rmtree(self.workdir, ignore_errors=True)
            self.cluster = None


class Unsupported(Exception):
    pass


def meta_with_time(meta: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**m, "time": m["time_ms"] / 1000} for m in meta]


def _when(ev: dict[str, Any]) -> tuple[float, int, int]:
    # the one clock; metadata records keep their log order among themselves (offset)
    return (ev.get("time", 0.0), 0 if ev["kind"] == "metadata" else 1, ev.get("offset", 0))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m isr.traces.conformance.apache_kafka.adapter")
    ap.add_argument("--version", default=NEWEST, help=f"Apache Kafka release (default {NEWEST})")
    ap.add_argument("--keep", type=Path, default=None, help="copy each cluster's folder here")
    args = ap.parse_args(argv)
    s = Session(args.version, args.keep)

    def _term(signum: int, frame: Any) -> None:
        s.close()
        sys.exit(128 + signum)

    signal.signal(signal.SIGTERM, _term)
    signal.signal(signal.SIGINT, _term)
    out = sys.stdout
    sys.stdout = sys.stderr  # nothing but answers on the wire
    try:
        for line in sys.stdin:
            if not line.strip():
                continue
            try:
                cmd = json.loads(line)
                ans = s.handle(cmd)
            except Unsupported as e:
                ans = {"ok": False, "unsupported": True, "error": str(e)}
            except (
                KafkaSetupError,
                MetadataError,
                DriverError,
                OSError,
                ValueError,
                KeyError,
            ) as e:
                ans = {"ok": False, "error": f"{type(e).__name__}: {e}".replace("\n", " ")}
            out.write(json.dumps(ans) + "\n")
            out.flush()
            if isinstance(cmd, dict) and cmd.get("op") == "stop":
                break
    finally:
        s.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
