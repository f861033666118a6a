"""Start and stop Debian's ZooKeeper on loopback with its own data dir (R18).

Debian's ``zookeeper`` package ships ``/usr/share/java/zookeeper.jar`` whose manifest Class-Path
names its dependencies, so ``java -cp zookeeper.jar org.apache.zookeeper.server.ZooKeeperServerMain
<cfg>`` runs a standalone server without the init scripts (which want /var/lib/zookeeper).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

JAR_CANDIDATES = ["/usr/share/java/zookeeper.jar", "/usr/share/zookeeper/zookeeper.jar"]
MAIN = "org.apache.zookeeper.server.ZooKeeperServerMain"


class ZooKeeperMissing(RuntimeError):
    pass


def find_install() -> tuple[str, str]:
    """(java, jar) or ZooKeeperMissing with what to install."""
    java = shutil.which("java")
    jar = next((j for j in JAR_CANDIDATES if os.path.exists(j)), None)
    if java is None or jar is None:
        raise ZooKeeperMissing(
            "ZooKeeper not found: install Debian's package (apt-get install zookeeper) "
            f"which provides {JAR_CANDIDATES[0]}, and a Java runtime"
        )
    return java, jar


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


def start(
    data_dir: str | Path, port: int | None = None, timeout_s: float = 30.0
) -> tuple[int, int]:
    """Start a standalone server in the background; returns (pid, port) once it accepts."""
    java, jar = find_install()
    d = Path(data_dir)
    (d / "data").mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    cfg = d / "zoo.cfg"
    cfg.write_text(
        "\n".join(
            [
                "tickTime=500",
                f"dataDir={d / 'data'}",
                f"clientPort={port}",
                "clientPortAddress=127.0.0.1",
                "admin.enableServer=false",
                "maxClientCnxns=200",
                "minSessionTimeout=1000",
                "maxSessionTimeout=20000",
                "4lw.commands.whitelist=ruok,srvr",
                "",
            ]
        )
    )
    log = open(d / "zookeeper.log", "ab")  # noqa: SIM115 - handed to the child
    proc = subprocess.Popen(
        [java, "-Xmx256m", "-Dzookeeper.log.dir=" + str(d), "-cp", jar, MAIN, str(cfg)],
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    log.close()
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"ZooKeeper exited at start; see {d / 'zookeeper.log'}")
        if port_open(port):
            return proc.pid, port
        time.sleep(0.1)
    stop(proc.pid)
    raise RuntimeError(f"ZooKeeper did not open port {port} within {timeout_s}s")


def stop(pid: int, timeout_s: float = 10.0) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not _alive(pid):
            return
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    _alive(pid)


def _alive(pid: int) -> bool:
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return False
    except ChildProcessError:
        pass  # not our child: fall back to signal 0
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
