"""Cluster lifecycle for the CLI, the tests and the benchmark: ZooKeeper plus one process per
broker, with their pids, ports and data dirs kept in ``<dir>/cluster.json``.

Layout of ``<dir>``: ``cluster.json``, ``zookeeper/`` (its own data dir and log),
``broker-<id>/`` (``log/`` segments and checkpoints, ``broker.log`` stdout/stderr),
``traces/broker-<id>.ndjson`` and ``traces/runtime.ndjson``, ``metrics/broker-<id>.json``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from isr.traces.format import TraceWriter, header, last_clock

from ..core.config import SIM_ONLY_PROTOCOLS, Config
from ..core.placement import assign
from ..core.trace import event
from . import wire, zkcoord
from . import zk as zkserver

ROOT = Path(__file__).resolve().parents[2]  # the directory holding the `impl` package


RETRY_ELECT_S = 2.0  # an election still pending after this is asked for again


def _pending_elections(
    d: dict[str, Any], topic: str, broker: int | None, partition: int | None
) -> list[str]:
    """The partitions of ``d`` (a coordination view) an election of ``broker`` (None: each
    preferred replica) would still move, each as "t-0: leader 0, ISR [0, 1, 2]"."""
    out = []
    for name, p in d["partitions"].items():
        if partition is not None and name != f"{topic}-{partition}":
            continue
        st = p["state"]
        want = p["replicas"][0] if broker is None else broker
        if st is None or want not in p["replicas"]:
            continue
        movable = want in st["isr"] and want in d["live"] and st["leader"] in d["live"]
        if movable and st["leader"] != want:
            out.append(f"{name}: leader {st['leader']}, ISR {st['isr']}")
    return out


class ClusterError(RuntimeError):
    pass


class BrokerDown(ClusterError):
    """A broker started but did not come up (it exited, or never registered): issue 17."""


def _read_exactly(sk: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = sk.recv(n - len(buf))
        if not chunk:
            raise ClusterError("connection closed before the answer")
        buf += chunk
    return buf


class Cluster:
    def __init__(self, directory: str | Path) -> None:
        self.dir = Path(directory).resolve()
        self.state_path = self.dir / "cluster.json"
        self.state: dict[str, Any] = {}
        if self.state_path.exists():
            self.state = json.loads(self.state_path.read_text())

    @property
    def secret(self) -> bytes | None:
        """The cluster's secret (issue 17), made at ``up``: frames of members and the
        ZooKeeper ACLs. None for a cluster started before there was one."""
        p = self.dir / wire.SECRET_FILE
        return wire.load_secret(p) if p.exists() else None

    def zk(self) -> Any:
        return zkcoord.connect(self.zk_hosts, secret=self.secret)

    @property
    def running(self) -> bool:
        return bool(self.state)

    @property
    def zk_hosts(self) -> str:
        return f"127.0.0.1:{self.state['zk']['port']}"

    def _save(self) -> None:
        tmp = self.state_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.state, indent=1))
        os.replace(tmp, self.state_path)

    # ---- lifecycle ----------------------------------------------------------------------------
    def up(
        self,
        brokers: int = 3,
        partitions: int = 1,
        replication: int = 3,
        config: Config | None = None,
        topic: str = "t",
        session_timeout_s: float = 3.0,
        wait_s: float = 60.0,
    ) -> None:
        if self.running:
            raise ClusterError(
                f"a cluster is already running in {self.dir} (isr cluster down first)"
            )
        config = config or Config()
        if config.protocol in SIM_ONLY_PROTOCOLS:
            raise ClusterError(SIM_ONLY_PROTOCOLS[config.protocol])
        self.dir.mkdir(parents=True, exist_ok=True)
        wire.new_secret(self.dir)  # before any process that needs it starts
        (self.dir / "traces").mkdir(exist_ok=True)
        (self.dir / "metrics").mkdir(exist_ok=True)
        pid, port = zkserver.start(self.dir / "zookeeper")
        self.state = {
            "zk": {"pid": pid, "port": port},
            "brokers": {},
            "topic": topic,
            "partitions": partitions,
            "replication": replication,
            "config": config.to_dict(),
            "session_timeout_s": session_timeout_s,
        }
        self._save()
        try:
            for b in range(brokers):
                self.state["brokers"][str(b)] = {"port": zkserver.free_port(), "pid": None}
            ids = list(range(brokers))
            for b in ids:
                self.start_broker(b)
            zk = self.zk()
            try:
                # Create the topic once every broker is registered, so the first leaders are the
                # preferred replicas (R1) and every replica starts in the ISR.
                deadline = time.monotonic() + wait_s
                while zkcoord.live_brokers(zk) != set(ids):
                    for b in ids:
                        if not self.pid_alive(self.state["brokers"][str(b)]["pid"]):
                            raise BrokerDown(
                                f"broker {b} exited while starting: {self._last_log_line(b)}"
                            )
                    if time.monotonic() > deadline:
                        raise BrokerDown("brokers did not register; see broker-*/broker.log")
                    time.sleep(0.1)
                zkcoord.create_topic(zk, topic, assign(ids, partitions, replication))
            finally:
                zk.stop()
                zk.close()
            self.wait_ready(wait_s)
        except BaseException:
            self.down()
            raise

    def start_broker(self, b: int) -> int:
        info = self.state["brokers"][str(b)]
        d = self.dir / f"broker-{b}"
        d.mkdir(exist_ok=True)
        cmd = [
            sys.executable,
            "-m",
            "isr.impl.cluster.broker",
            "--id", str(b),
            "--port", str(info["port"]),
            "--dir", str(d),
            "--zk", self.zk_hosts,
            "--config", json.dumps(self.state["config"]),
            "--session-timeout", str(self.state["session_timeout_s"]),
            "--trace-dir", str(self.dir / "traces"),
            "--metrics", str(self.dir / "metrics" / f"broker-{b}.json"),
            "--secret-file", str(self.dir / wire.SECRET_FILE),
        ]  # fmt: skip
        if os.environ.get("ISR_BROKER_PROFILE_DIR"):  # bench: cProfile every broker
            cmd += [
                "--profile",
                str(Path(os.environ["ISR_BROKER_PROFILE_DIR"]) / f"broker-{b}.prof"),
            ]
        env = dict(os.environ)
        env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
        log = open(d / "broker.log", "ab")  # noqa: SIM115 - handed to the child
        proc = subprocess.Popen(
            cmd,
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        log.close()
        info["pid"] = proc.pid
        self._save()
        return proc.pid

    def broker_ids(self) -> list[int]:
        return sorted(int(b) for b in self.state.get("brokers", {}))

    def pid_alive(self, pid: int | None) -> bool:
        if not pid:
            return False
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done == pid:
                return False
        except ChildProcessError:
            pass
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        # A zombie of a process we did not reap still answers signal 0.
        try:
            with open(f"/proc/{pid}/stat") as f:
                return f.read().split()[2] != "Z"
        except OSError:
            return False

    def kill(self, b: int, between_steps: bool = False) -> None:
        """SIGKILL (R8 crash), recorded in traces/runtime.ndjson as BrokerCrash.

        A SIGKILL lands anywhere, also inside a step: between the write of an appended record and
        the trace line describing it, say; the restarted broker then recovers a log its trace
        does not explain and the validator rejects the run. ``between_steps`` asks the broker
        first (SIGUSR1) to stop itself between two steps, with no coordination write in flight
        (the spec's crash); if it has not stopped within 5 s it is stopped wherever it is.

        The crash is a step of the broker that its session's end makes visible through ZooKeeper
        (the controller's membership watch), so its clock is published there before the kill
        (traces/FORMAT.md, "Clocks"): the broker is frozen first (SIGSTOP) so that its trace file
        stops growing, the crash takes the next clock after its last event, /isr/clock is raised
        to it, and only then the process dies and its session can expire."""
        info = self._broker(b)
        pid = info.get("pid")
        if not self.pid_alive(pid):
            raise ClusterError(f"broker {b} is not running")
        tdir = self.dir / "traces"
        if between_steps:
            os.kill(pid, signal.SIGUSR1)
            deadline = time.monotonic() + 5
            while not self._stopped(pid) and time.monotonic() < deadline:
                time.sleep(0.01)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGSTOP)
        try:
            clock = (
                max(last_clock(tdir / f"broker-{b}.ndjson"), last_clock(tdir / "runtime.ndjson"))
                + 1
            )
            try:
                self._publish_clock(clock)
            except Exception as e:  # ZooKeeper unreachable: crash anyway, ordering not promised
                print(f"warning: could not publish the crash clock: {e!r}", file=sys.stderr)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for _ in range(100):
            if not self.pid_alive(pid):
                break
            time.sleep(0.02)
        info["pid"] = None
        self._save()
        w = TraceWriter(
            tdir / "runtime.ndjson", header(self.state["config"]["protocol"], "runtime")
        )
        w.write(
            event(
                clock,
                b,
                "BrokerCrash",
                {"replica": b},
                now_ms=int(time.monotonic() * 1000),
                state={"alive": False},
            )
        )
        w.close()

    def pause(self, b: int) -> None:
        """Freeze broker ``b`` (SIGSTOP): it stops fetching, answering and heartbeating, as a
        long GC pause or a stalled host (R7: the leader drops it from the ISR once it lags; its
        coordination session expires after the session timeout). Not a crash: its memory and
        its log stay, and ``resume`` lets it run on where it stopped."""
        pid = self._broker(b).get("pid")
        if not self.pid_alive(pid):
            raise ClusterError(f"broker {b} is not running")
        os.kill(pid, signal.SIGSTOP)

    def resume(self, b: int) -> None:
        """Let a paused broker run on (SIGCONT); nothing if it is not running."""
        pid = self._broker(b).get("pid")
        if self.pid_alive(pid):
            os.kill(pid, signal.SIGCONT)

    @staticmethod
    def _stopped(pid: int) -> bool:
        try:
            with open(f"/proc/{pid}/stat") as f:
                return f.read().rsplit(")", 1)[1].split()[0] in ("T", "t", "Z", "X")
        except (OSError, IndexError):
            return True

    def _publish_clock(self, clock: int) -> None:
        zk = self.zk()
        try:
            zkcoord.raise_clock(zk, clock)
        finally:
            zk.stop()
            zk.close()

    # ---- leadership moves without a crash (R9) ------------------------------------------------
    def _op(self, b: int, frame: dict[str, Any], timeout_s: float = 20.0) -> dict[str, Any]:
        """One runtime request to broker ``b`` over its TCP port, and its answer."""
        info = self._broker(b)
        with socket.create_connection(("127.0.0.1", info["port"]), timeout=timeout_s) as sk:
            sk.sendall(wire.encode({**frame, "id": 1}, self.secret))
            head = _read_exactly(sk, wire.LEN.size)
            (n,) = wire.LEN.unpack(head)
            return json.loads(_read_exactly(sk, n))

    def controller_id(self) -> int:
        zk = self.zk()
        try:
            data, _ = zk.get("/controller")
            return int(json.loads(data)["brokerid"])
        finally:
            zk.stop()
            zk.close()

    def elect_leader(
        self, broker: int | None = None, partition: int | None = None, wait_s: float = 20.0
    ) -> dict[str, Any]:
        """Preferred-replica election (``broker`` None) or an operator's election of ``broker``
        (R9, the spec's ControllerMoveLeader), of partition ``partition`` of the topic or of every
        partition: asked of the controller, then waited for until the coordination service shows
        it (each partition led by the wanted broker, or found not movable: the wanted broker not
        a live ISR member). Returns the coordination view.

        The controller takes the request only for partitions it finds movable at that moment,
        and answers before it acts; a broker just restarted may be in ZooKeeper's ISR before the
        controller has handled its registration, so a request sent then changes nothing. Kafka's
        admin client retries an election that did not happen; so does this: the request is sent
        again every ``RETRY_ELECT_S`` while the election is still pending (issue 30: it waited
        20 s for one that would never come, then printed the raw view)."""
        topic = self.state["topic"]
        parts = None if partition is None else [[topic, partition]]
        deadline = time.monotonic() + wait_s
        pending: list[str] = []
        d: dict[str, Any] = {}
        while time.monotonic() < deadline:
            self._ask_election(broker, parts)
            resend = min(deadline, time.monotonic() + RETRY_ELECT_S)
            while time.monotonic() < resend:
                d = self.describe()
                pending = _pending_elections(d, topic, broker, partition)
                if not pending:
                    return d
                time.sleep(0.1)
        who = "preferred replicas" if broker is None else f"broker {broker}"
        raise ClusterError(
            f"the election of {who} did not happen within {wait_s:.0f} s: {'; '.join(pending)}"
        )

    def _ask_election(self, broker: int | None, parts: list[list[Any]] | None) -> None:
        for _attempt in range(3):  # the controller may change under us
            ctl = self.controller_id()
            ans = self._op(ctl, {"op": "elect_leader", "broker": broker, "partitions": parts})
            if ans.get("op") != "error":
                return
            time.sleep(0.5)
        raise ClusterError(f"no controller took the election request: {ans.get('error', ans)}")

    def controlled_shutdown(
        self, b: int, stop: bool = True, retries: int = 3, backoff_s: float = 0.5
    ) -> list[list[Any]]:
        """Controlled shutdown of broker ``b`` (R9, the spec's ControllerShutdownBroker): it asks
        the controller to move leadership off it and take it out of the ISRs, and answers once
        that has landed; then (``stop``) it is stopped between two steps (recorded as the spec's
        BrokerCrash, as ``kill``: a process stop keeps its log). Returns the partitions it still
        led (no other live ISR member to take over), as Kafka's answer does. ClusterError if no
        controller answered after ``retries`` (the broker is then left running)."""
        if not self.pid_alive(self._broker(b).get("pid")):
            raise ClusterError(f"broker {b} is not running")
        for attempt in range(retries + 1):
            # Kafka's controlled.shutdown.max.retries: the controller may be moving (the one
            # named in /controller not yet active) or unreachable for a moment
            ans = self._op(b, {"op": "shutdown"})
            if ans.get("op") != "error" and ans.get("error") in (None, "NONE"):
                break
            if attempt < retries:
                time.sleep(backoff_s)
        else:
            raise ClusterError(f"controlled shutdown of broker {b} failed: {ans}")
        if stop:
            self.kill(b, between_steps=True)
        return list(ans.get("remaining", []))

    def restart(self, b: int, wait_s: float = 60.0) -> None:
        """Start broker ``b`` again and wait until it is up: its log recovered (R13) and its
        registration made (its metrics file names the new process). A broker that exits
        first, or is not up in ``wait_s``, is a ``BrokerDown`` naming the last line of its
        log (issue 17: never "restarted" for a broker that did not come back)."""
        info = self._broker(b)
        if self.pid_alive(info.get("pid")):
            raise ClusterError(f"broker {b} is running (kill it first)")
        pid = self.start_broker(b)
        self.wait_broker_up(b, pid, wait_s)

    def wait_broker_up(self, b: int, pid: int, wait_s: float = 60.0) -> None:
        metrics = self.dir / "metrics" / f"broker-{b}.json"
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if not self.pid_alive(pid):
                raise BrokerDown(f"broker {b} exited while starting: {self._last_log_line(b)}")
            with contextlib.suppress(OSError, ValueError):
                if json.loads(metrics.read_text()).get("pid") == pid:
                    return
            time.sleep(0.1)
        raise BrokerDown(f"broker {b} not up after {wait_s:.0f} s: {self._last_log_line(b)}")

    def _last_log_line(self, b: int) -> str:
        p = self.dir / f"broker-{b}" / "broker.log"
        try:
            lines = [ln for ln in p.read_text(errors="replace").splitlines() if ln.strip()]
        except OSError:
            return f"no log at {p}"
        return f"{lines[-1].strip()} (see {p})" if lines else f"empty log {p}"

    def _broker(self, b: int) -> dict[str, Any]:
        if not self.running:
            raise ClusterError(f"no cluster in {self.dir} (isr cluster up first)")
        info = self.state["brokers"].get(str(b))
        if info is None:
            raise ClusterError(f"no broker {b}; brokers are {self.broker_ids()}")
        return info

    def down(self) -> None:
        for b in self.broker_ids():
            pid = self.state["brokers"][str(b)].get("pid")
            if self.pid_alive(pid):
                os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        for b in self.broker_ids():
            pid = self.state["brokers"][str(b)].get("pid")
            while self.pid_alive(pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            if self.pid_alive(pid):
                os.kill(pid, signal.SIGKILL)
        if self.state.get("zk", {}).get("pid"):
            zkserver.stop(self.state["zk"]["pid"])
        self.state = {}
        self.state_path.unlink(missing_ok=True)

    # ---- views --------------------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        zk = self.zk()
        try:
            return zkcoord.describe(zk)
        finally:
            zk.stop()
            zk.close()

    def metrics(self) -> dict[int, dict[str, Any]]:
        out = {}
        for b in self.broker_ids():
            p = self.dir / "metrics" / f"broker-{b}.json"
            if p.exists() and self.pid_alive(self.state["brokers"][str(b)].get("pid")):
                with contextlib.suppress(ValueError, OSError):
                    out[b] = json.loads(p.read_text())
                    # how old this broker's own view is (it rewrites the file periodically)
                    out[b]["age_s"] = round(max(0.0, time.time() - p.stat().st_mtime), 1)
        return out

    def wait_ready(self, timeout_s: float = 60.0, full_isr: bool = True) -> dict[str, Any]:
        """Until every partition has a live leader (and, with ``full_isr``, a full ISR)."""
        deadline = time.monotonic() + timeout_s
        d: dict[str, Any] = {}
        while time.monotonic() < deadline:
            d = self.describe()
            parts = d["partitions"].values()
            ok = parts and all(
                p["state"] is not None
                and p["state"]["leader"] in d["live"]
                and (not full_isr or len(p["state"]["isr"]) == len(p["replicas"]))
                for p in parts
            )
            if ok:
                return d
            time.sleep(0.2)
        raise ClusterError(f"cluster not ready after {timeout_s}s: {json.dumps(d)}")
