"""Spark away from loopback, and Spark that cannot start.

A standalone master and one worker run inside a network namespace this test makes (`ip netns`,
a veth pair on a private /24); the driver (`isr simulate --engine spark`) runs outside it, so the
executor reaches the driver over the veth link, never over loopback: the driver's default host
must be its address on the route to the master. Needs root and iproute2 (CI runs as root).
The namespace and every daemon are removed even when the test fails.

Failures to start are one line on stderr and exit 2, within seconds: no Java, a master nobody
listens on.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[3]
SIM = ["simulate", "--protocol", "hw-truncation", "--replicas", "2", "--records", "1"]
SIM += ["--crashes", "2", "--walks", "40", "--depth", "12", "--seed", "3"]


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=30)


def _spark_home() -> str:
    import pyspark

    return str(Path(pyspark.__file__).parent)


def _wait_for(path: Path, text: str, seconds: float, procs: list[subprocess.Popen]) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if path.exists() and text in path.read_text(errors="replace"):
            return
        dead = [p for p in procs if p.poll() is not None]
        assert not dead, f"a Spark daemon exited: {path.read_text(errors='replace')[-2000:]}"
        time.sleep(0.3)
    raise AssertionError(f"{text!r} not in {path} after {seconds} s")


@pytest.fixture
def netns_cluster(tmp_path):
    """spark://10.231.X.2:7077 with one worker, both inside namespace ``isr-<pid>``; the host
    end of the veth pair is 10.231.X.1."""
    pid = os.getpid()
    ns, host_if, ns_if = f"isr-{pid}", f"isrh{pid % 100000}", f"isrn{pid % 100000}"
    net = f"10.231.{pid % 250}"
    host_ip, ns_ip = f"{net}.1", f"{net}.2"
    procs: list[subprocess.Popen] = []
    try:
        _ip("netns", "add", ns)
        _ip("link", "add", host_if, "type", "veth", "peer", "name", ns_if)
        _ip("link", "set", ns_if, "netns", ns)
        _ip("addr", "add", f"{host_ip}/24", "dev", host_if)
        _ip("link", "set", host_if, "up")
        _ip("-n", ns, "addr", "add", f"{ns_ip}/24", "dev", ns_if)
        _ip("-n", ns, "link", "set", ns_if, "up")
        _ip("-n", ns, "link", "set", "lo", "up")  # the executor's own Python workers
        home = _spark_home()
        env = {
            **os.environ,
            "SPARK_HOME": home,
            "SPARK_LOCAL_IP": ns_ip,
            "SPARK_DAEMON_MEMORY": "256m",
            "PYSPARK_PYTHON": sys.executable,
        }
        url = f"spark://{ns_ip}:7077"
        daemons = {
            "master": ["org.apache.spark.deploy.master.Master", "--host", ns_ip]
            + ["--port", "7077", "--webui-port", "0"],
            "worker": ["org.apache.spark.deploy.worker.Worker", "--host", ns_ip, "--cores", "2"]
            + ["--memory", "1g", "--webui-port", "0", "--work-dir", str(tmp_path / "work"), url],
        }
        for name, argv in daemons.items():
            log = open(tmp_path / f"{name}.log", "wb")  # noqa: SIM115 - the daemon's stdout
            procs.append(
                subprocess.Popen(
                    ["ip", "netns", "exec", ns, f"{home}/bin/spark-class", *argv],
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,
                )
            )
            log.close()
            text = "Starting Spark master at" if name == "master" else "Successfully registered"
            _wait_for(tmp_path / f"{name}.log", text, 120, procs)
        yield {"url": url, "host_ip": host_ip, "ns": ns, "logs": tmp_path}
    finally:
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=30)
        subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30)
        subprocess.run(["ip", "link", "del", host_if], capture_output=True, timeout=30)
        left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        assert ns not in left, "the namespace was not removed"


def _isr(*argv: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "isr.cli", *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def test_simulate_on_a_cluster_in_another_network_namespace(netns_cluster):
    ref = _isr(*SIM, "--format", "json", "--quiet")
    run = _isr(*SIM, "--engine", "spark", "--master", netns_cluster["url"], "--format", "json")
    assert run.returncode == ref.returncode == 1, run.stderr[-3000:]
    out, want = json.loads(run.stdout), json.loads(ref.stdout)
    assert out["distinct_states"] == want["distinct_states"]
    assert [(p["name"], p["holds"]) for p in out["properties"]] == [
        (p["name"], p["holds"]) for p in want["properties"]
    ]
    # the driver listened on the veth address (the web UI is announced there), not loopback
    assert f"web UI at http://{netns_cluster['host_ip']}:" in run.stderr
    assert "127.0.0.1" not in run.stderr.split("(log:")[0]
    # and the executor ran inside the namespace: the worker launched it
    worker_log = (netns_cluster["logs"] / "worker.log").read_text(errors="replace")
    assert "Asked to launch executor" in worker_log
    assert "note:" in run.stderr  # 40 walks are far too few for Spark to pay off


def test_unreachable_master_is_one_line_and_exit_2():
    t0 = time.monotonic()
    run = _isr(*SIM, "--engine", "spark", "--master", "spark://127.0.0.1:9", timeout=60)
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1 and "cannot reach the Spark master" in run.stderr
    assert time.monotonic() - t0 < 30


def test_no_java_is_one_line_and_exit_2(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env["PATH"] = str(tmp_path)  # an empty directory: no java anywhere on PATH
    run = _isr(*SIM, "--engine", "spark", env=env, timeout=60)
    assert run.returncode == 2, run.stderr
    assert run.stderr.count("\n") == 1 and "Java" in run.stderr, run.stderr


def test_spark_flags_are_checked_before_anything_starts():
    from isr.checker.spark.session import SparkOptions, driver_addresses, parse_conf

    assert parse_conf(["spark.executor.memory=2g", "spark.a=b=c"]) == {
        "spark.executor.memory": "2g",
        "spark.a": "b=c",
    }
    for bad in (["nokey"], ["=x"], ["executor.memory=2g"]):
        with pytest.raises(ValueError):
            parse_conf(bad)
    assert driver_addresses("local[*]", SparkOptions()) == ("127.0.0.1", "127.0.0.1")
    assert driver_addresses("spark://127.0.0.1:7077", SparkOptions()) == ("127.0.0.1",) * 2
    opts = SparkOptions(driver_host="10.9.8.7", bind_address="0.0.0.0")
    assert driver_addresses("spark://10.9.8.1:7077", opts) == ("10.9.8.7", "0.0.0.0")
    for argv in (["--spark-conf", "spark.x=1"], ["--no-spark-ui"], ["--driver-host", "h"]):
        run = _isr(*SIM, *argv, timeout=60)
        assert run.returncode == 2 and "goes with --engine spark" in run.stderr
    run = _isr(*SIM, "--engine", "spark", "--spark-conf", "oops", timeout=60)
    assert run.returncode == 2 and run.stderr.count("\n") == 1
