"""The Spark barrier engine on two "hosts": each executor's workers hold half the search.

    sudo python bench/spark_two_hosts.py [--model '{"replicas": 3, ...}'] [--store disk]
                                         [--reduction dead-state] [--out FILE.json]

Two network namespaces stand for two machines (Linux only, needs root and iproute2): a bridge on
this host joins them and the driver, ``10.233.N.1`` (driver), ``.2`` (master and worker A), ``.3``
(worker B), each Spark worker with one core, so the run's two barrier tasks land one per "host"
and talk to each other over the bridge, never over loopback. While the check runs, a sampler
sums, per namespace, the proportional set size (PSS) of the Python processes in it (the task
that is the worker, and PySpark's daemon), and separately of the JVMs. Reported: the result
(states, verdicts, seconds), each namespace's peak Python PSS, and the fingerprints each worker
owns (``fp mod 2``). The namespaces, the bridge and every daemon are removed at the end, also on
failure. The memory of the search adds up across the machines: each holds its own half.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DEFAULT = {"protocol": "kip-320", "replicas": 3, "records": 2, "epochs": 2, "crashes": 1}


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=30)


def pss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def kind(pid: int) -> str:
    try:
        exe = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
    except OSError:
        return ""
    return "python" if "python" in exe else "java" if "java" in exe else ""


def pids_in(ns: str) -> list[int]:
    out = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def wait_for(path: Path, text: str, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if path.exists() and text in path.read_text(errors="replace"):
            return
        time.sleep(0.3)
    raise SystemExit(f"{text!r} not in {path} after {seconds} s:\n{path.read_text()[-2000:]}")


@contextlib.contextmanager
def two_hosts(work: Path):
    pid = os.getpid()
    net = f"10.233.{pid % 250}"
    bridge = f"isrbr{pid % 10000}"
    names = [f"isr2h-a-{pid}", f"isr2h-b-{pid}"]
    links = [f"isr2a{pid % 10000}", f"isr2b{pid % 10000}"]
    procs: list[subprocess.Popen] = []
    import pyspark

    home = str(Path(pyspark.__file__).parent)
    try:
        ip("link", "add", bridge, "type", "bridge")
        ip("addr", "add", f"{net}.1/24", "dev", bridge)
        ip("link", "set", bridge, "up")
        for i, (ns, link) in enumerate(zip(names, links, strict=True)):
            ip("netns", "add", ns)
            ip("link", "add", link, "type", "veth", "peer", "name", link + "n")
            ip("link", "set", link + "n", "netns", ns)
            ip("link", "set", link, "master", bridge)
            ip("link", "set", link, "up")
            ip("-n", ns, "addr", "add", f"{net}.{i + 2}/24", "dev", link + "n")
            ip("-n", ns, "link", "set", link + "n", "up")
            ip("-n", ns, "link", "set", "lo", "up")
        master = f"{net}.2"
        url = f"spark://{master}:7077"
        daemons = [
            (
                names[0],
                master,
                "master",
                ["org.apache.spark.deploy.master.Master"]
                + ["--host", master, "--port", "7077", "--webui-port", "0"],
            ),
        ]
        for i, ns in enumerate(names):
            host = f"{net}.{i + 2}"
            daemons.append(
                (
                    ns,
                    host,
                    f"worker-{i}",
                    ["org.apache.spark.deploy.worker.Worker", "--host", host]
                    + ["--cores", "1", "--memory", "2g", "--webui-port", "0"]
                    + ["--work-dir", str(work / f"work-{i}"), url],
                )
            )
        for ns, host, name, argv in daemons:
            env = {
                **os.environ,
                "SPARK_HOME": home,
                "SPARK_LOCAL_IP": host,
                "SPARK_DAEMON_MEMORY": "256m",
                "PYSPARK_PYTHON": sys.executable,
            }
            log = open(work / f"{name}.log", "wb")  # noqa: SIM115 - the daemon's stdout
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
            wait_for(work / f"{name}.log", text, 120)
        yield {"url": url, "names": names, "driver": f"{net}.1"}
    finally:
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
            with contextlib.suppress(Exception):
                p.wait(timeout=30)
        for ns in names:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30)
        for link in links:
            subprocess.run(["ip", "link", "del", link], capture_output=True, timeout=30)
        subprocess.run(["ip", "link", "del", bridge], capture_output=True, timeout=30)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=json.dumps(DEFAULT))
    ap.add_argument("--store", default="disk", choices=["memory", "disk"])
    ap.add_argument("--reduction", default="dead-state")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    if os.geteuid() != 0:
        raise SystemExit("needs root (ip netns)")
    from isr.checker.spark.barrier import check_spark_barrier
    from isr.checker.spark.session import configure
    from isr.spec import Config, IsrSpec

    cfg = {**DEFAULT, **json.loads(args.model)}
    model = IsrSpec(Config(**cfg), reduction=args.reduction or None)
    with tempfile.TemporaryDirectory(prefix="isr-two-hosts-") as tmp, two_hosts(Path(tmp)) as c:
        configure(driver_host=c["driver"])
        peaks = {ns: {"python": 0, "java": 0} for ns in c["names"]}
        done = threading.Event()

        def sample() -> None:
            while not done.wait(0.5):
                for ns in c["names"]:
                    sums = {"python": 0, "java": 0}
                    for p in pids_in(ns):
                        k = kind(p)
                        if k:
                            sums[k] += pss(p)
                    for k, v in sums.items():
                        peaks[ns][k] = max(peaks[ns][k], v)

        threading.Thread(target=sample, daemon=True).start()
        t = time.perf_counter()
        res = check_spark_barrier(model, master=c["url"], tasks=2, store=args.store)
        wall = time.perf_counter() - t
        done.set()
    report = {
        "model": cfg,
        "reduction": args.reduction,
        "store": args.store,
        "distinct_states": res.distinct_states,
        "complete": res.complete,
        "verdicts": {p.name: p.holds for p in res.properties},
        "wall_s": round(wall, 1),
        "expanded_per_worker": res.extra["parallel"]["expanded"],
        "peak_pss_mib": {
            ns.rsplit("-", 2)[1]: {k: round(v / 2**20, 1) for k, v in d.items()}
            for ns, d in peaks.items()
        },
    }
    print(json.dumps(report, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
