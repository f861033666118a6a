"""A real Apache Kafka KRaft cluster on loopback: one controller-only process and N broker-only
processes (no combined mode: the spec has one controller, R9), each with its own storage.

Every JVM is started in a new session with ``PR_SET_PDEATHSIG`` = SIGKILL, so it dies with the
Python process that started it, even when that process is SIGKILLed (a killed test, a killed
adapter); `close()` kills and reaps them all on a normal end, an error or Ctrl-C. Nothing outside
the cluster's work folder is written or deleted.

Timeouts are lowered for speed but kept above the GC and scheduling pauses of four JVMs on a busy
2-core machine (a lower session timeout fences live brokers spuriously there).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from .install import KafkaInstall, KafkaSetupError, java_bin

CONTROLLER_ID = 3000  # a node id no broker uses (brokers are 0..n-1, as in the spec)

# Fast start on 2 cores: small heaps, C1 only, the serial collector, class-data sharing.
JVM_FLAGS = [
    "-Xms48m",
    "-Xmx320m",
    "-XX:TieredStopAtLevel=1",
    "-XX:+UseSerialGC",
    "-Xshare:auto",
    "-XX:-UsePerfData",
    "-Djava.awt.headless=true",
]

LOG4J2 = """Configuration:
  Appenders:
    Console:
      name: STDOUT
      target: SYSTEM_OUT
      PatternLayout: {pattern: "[%d{ISO8601}{UTC}] %p %m (%c)%n"}
  Loggers:
    Root: {level: INFO, AppenderRef: [{ref: STDOUT}]}
    Logger:
      - {name: state.change.logger, level: INFO}
      - {name: kafka.cluster.Partition, level: INFO}
      - {name: org.apache.kafka.clients, level: WARN}
      - {name: org.apache.kafka.common.network, level: WARN}
      - {name: kafka.server.ReplicaFetcherThread, level: INFO}
"""

PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:  # runs in the child between fork and exec
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def free_ports(n: int) -> list[int]:
    """`n` distinct free TCP ports on 127.0.0.1 (bound then released: a small race, reported as
    a start failure naming the port if another program takes one meanwhile)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


@dataclass
class Node:
    node_id: int
    role: str  # "controller" | "broker"
    port: int
    data: Path
    config: Path
    log: Path
    proc: subprocess.Popen[bytes] | None = None
    paused: bool = False
    starts: int = 0

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


@dataclass
class Settings:
    """What a run may choose; everything else is Kafka's default for the release."""

    brokers: int = 3
    session_timeout_ms: int = 4000  # broker.session.timeout.ms (Kafka: 9000)
    heartbeat_ms: int = 500  # broker.heartbeat.interval.ms (Kafka: 2000)
    replica_lag_ms: int = 4000  # replica.lag.time.max.ms (Kafka: 30000)
    unclean_election: bool = False  # Kafka's default
    extra: dict[str, str] = field(default_factory=dict)


class KRaftCluster:
    def __init__(self, install: KafkaInstall, workdir: Path, settings: Settings) -> None:
        self.install = install
        self.workdir = Path(workdir)
        self.settings = settings
        self.java = java_bin()
        self.cluster_id = _kafka_uuid()
        ports = free_ports(settings.brokers + 1)
        self.controller = self._node(CONTROLLER_ID, "controller", ports[0])
        self.brokers = [self._node(i, "broker", ports[i + 1]) for i in range(settings.brokers)]
        self.started_at = 0.0
        self.ready_seconds = 0.0

    # ---- layout -------------------------------------------------------------------------------
    def _node(self, node_id: int, role: str, port: int) -> Node:
        d = self.workdir / f"node-{node_id}"
        return Node(node_id, role, port, d / "data", d / "server.properties", d / "server.log")

    @property
    def bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{b.port}" for b in self.brokers)

    @property
    def metadata_dir(self) -> Path:
        return self.controller.data / "__cluster_metadata-0"

    def _properties(self, n: Node) -> str:
        s = self.settings
        c = self.controller
        props = {
            "process.roles": n.role,
            "node.id": str(n.node_id),
            "controller.quorum.bootstrap.servers": f"127.0.0.1:{c.port}",
            "controller.listener.names": "CONTROLLER",
            "log.dirs": str(n.data),
            "broker.session.timeout.ms": str(s.session_timeout_ms),
            "broker.heartbeat.interval.ms": str(s.heartbeat_ms),
            "replica.lag.time.max.ms": str(s.replica_lag_ms),
            "unclean.leader.election.enable": str(s.unclean_election).lower(),
            "auto.create.topics.enable": "false",
            # the cluster runs one topic; fewer threads than the defaults keep 4 JVMs on 2 cores
            "num.network.threads": "2",
            "num.io.threads": "2",
            "background.threads": "2",
            "num.recovery.threads.per.data.dir": "1",
            "log.cleaner.enable": "false",
            "offsets.topic.replication.factor": "1",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
            "auto.leader.rebalance.enable": "false",  # elections only when the kit asks (R9)
            "controlled.shutdown.enable": "true",
            # R12: the log start offsets at rest (DeleteRecords) are read from this file,
            # written every minute by default; the kit's runs are shorter
            "log.flush.start.offset.checkpoint.interval.ms": "500",
        }
        if n.role == "controller":
            props["listeners"] = f"CONTROLLER://127.0.0.1:{n.port}"
            props["listener.security.protocol.map"] = "CONTROLLER:PLAINTEXT"
        else:
            props["listeners"] = f"PLAINTEXT://127.0.0.1:{n.port}"
            props["advertised.listeners"] = f"PLAINTEXT://127.0.0.1:{n.port}"
            props["listener.security.protocol.map"] = "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT"
            props["inter.broker.listener.name"] = "PLAINTEXT"
        props.update(s.extra)
        return "".join(f"{k}={v}\n" for k, v in props.items())

    def _jvm(self, main: str, *args: str, log: Path, driver: bool = False) -> list[str]:
        return [
            self.java,
            *JVM_FLAGS,
            f"-Dlog4j2.configurationFile={self.workdir / 'log4j2.yaml'}",
            f"-Dkafka.logs.dir={log.parent}",
            "-cp",
            self.install.classpath(driver=driver),
            main,
            *args,
        ]

    # ---- lifecycle ----------------------------------------------------------------------------
    def format(self) -> None:
        """Write each node's configuration and format its storage (the controller as a standalone
        voter, brokers with no initial controllers): four tool runs, two at a time."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        (self.workdir / "log4j2.yaml").write_text(LOG4J2)
        nodes = [self.controller, *self.brokers]
        procs = []
        for n in nodes:
            n.config.parent.mkdir(parents=True, exist_ok=True)
            n.config.write_text(self._properties(n))
            extra = ["--standalone"] if n.role == "controller" else ["--no-initial-controllers"]
            cmd = self._jvm(
                "kafka.tools.StorageTool",
                "format",
                "-t",
                self.cluster_id,
                "-c",
                str(n.config),
                *extra,
                log=n.log,
            )
            out = open(n.config.parent / "format.log", "wb")  # noqa: SIM115 - closed below
            procs.append((n, out, self._spawn(cmd, out)))
        for n, out, p in procs:
            try:
                rc = p.wait(timeout=120)
            except subprocess.TimeoutExpired:
                p.kill()
                rc = -9
            out.close()
            if rc != 0:
                tail = (n.config.parent / "format.log").read_text(errors="replace").strip()
                last = tail.splitlines()[-1] if tail else f"exit {rc}"
                raise KafkaSetupError(f"formatting node {n.node_id}'s storage failed: {last[:300]}")

    def _spawn(self, cmd: list[str], out) -> subprocess.Popen[bytes]:  # type: ignore[no-untyped-def]
        return subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )

    def start_node(self, n: Node) -> None:
        if n.running:
            return
        n.log.parent.mkdir(parents=True, exist_ok=True)
        out = open(n.log, "ab")  # noqa: SIM115 - the child holds it; closed when reaped
        n.proc = self._spawn(self._jvm("kafka.Kafka", str(n.config), log=n.log), out)
        out.close()
        n.paused = False
        n.starts += 1

    def start(self, ready_timeout: float = 90.0) -> float:
        """Format, start every node, wait until every broker reports started. Returns the
        seconds from the first format to ready."""
        t0 = time.monotonic()
        self.started_at = time.time()
        self.format()
        self.start_node(self.controller)
        for b in self.brokers:
            self.start_node(b)
        deadline = time.monotonic() + ready_timeout
        for n in [self.controller, *self.brokers]:
            self.wait_started(n, deadline)
        self.ready_seconds = time.monotonic() - t0
        return self.ready_seconds

    def wait_started(self, n: Node, deadline: float) -> None:
        """Until the node's log says "Kafka Server started" once per start of its process."""
        marker = b"Kafka Server started"
        while True:
            if not n.running:
                raise KafkaSetupError(
                    f"node {n.node_id} exited while starting: {self.last_line(n)}"
                )
            with contextlib.suppress(FileNotFoundError):
                if n.log.read_bytes().count(marker) >= n.starts:
                    return
            if time.monotonic() > deadline:
                raise KafkaSetupError(
                    f"node {n.node_id} did not start in time: {self.last_line(n)}"
                )
            time.sleep(0.2)

    def last_line(self, n: Node) -> str:
        with contextlib.suppress(OSError):
            lines = [ln for ln in n.log.read_text(errors="replace").splitlines() if ln.strip()]
            errs = [ln for ln in lines if " ERROR " in ln or "Exception" in ln]
            return (errs or lines or ["(no output)"])[-1][:300]
        return "(no log)"

    # ---- faults (ADAPTER.md commands) -------------------------------------------------------
    def crash(self, b: int) -> bool:
        """SIGKILL: memory lost, disk and the OS page cache kept."""
        n = self.brokers[b]
        if not n.running:
            return False
        if n.paused:
            os.kill(n.proc.pid, signal.SIGCONT)  # type: ignore[union-attr]
        n.proc.kill()  # type: ignore[union-attr]
        n.proc.wait()  # type: ignore[union-attr]
        n.paused = False
        return True

    def restart(self, b: int) -> bool:
        n = self.brokers[b]
        if n.running:
            return False
        self.start_node(n)
        return True

    def pause(self, b: int) -> bool:
        n = self.brokers[b]
        if not n.running or n.paused:
            return False
        os.kill(n.proc.pid, signal.SIGSTOP)  # type: ignore[union-attr]
        n.paused = True
        return True

    def resume(self, b: int) -> bool:
        n = self.brokers[b]
        if not n.running or not n.paused:
            return False
        os.kill(n.proc.pid, signal.SIGCONT)  # type: ignore[union-attr]
        n.paused = False
        return True

    def controlled_shutdown(self, b: int, timeout: float = 60.0) -> bool:
        """SIGTERM: Kafka's controlled shutdown (the broker asks the controller to move its
        leaderships and to take it out of the ISRs, then stops)."""
        n = self.brokers[b]
        if not n.running:
            return False
        self.resume(b)
        n.proc.terminate()  # type: ignore[union-attr]
        try:
            n.proc.wait(timeout=timeout)  # type: ignore[union-attr]
        except subprocess.TimeoutExpired:
            n.proc.kill()  # type: ignore[union-attr]
            n.proc.wait()  # type: ignore[union-attr]
        return True

    def alive(self) -> list[int]:
        return [b.node_id for b in self.brokers if b.running and not b.paused]

    def close(self) -> None:
        """Kill and reap every JVM this cluster started. Idempotent."""
        for n in [*self.brokers, self.controller]:
            if n.proc is not None and n.proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(n.proc.pid, signal.SIGCONT)
                n.proc.kill()
            if n.proc is not None:
                with contextlib.suppress(Exception):
                    n.proc.wait(timeout=10)

    def pids(self) -> list[int]:
        return [n.proc.pid for n in [*self.brokers, self.controller] if n.proc is not None]


def _kafka_uuid() -> str:
    """A Kafka cluster id: 16 random bytes, URL-safe base64 without padding (Uuid.toString)."""
    import base64

    while True:  # Kafka refuses an id that starts with "-" (it would read as an option)
        u = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not u.startswith("-"):
            return u
