"""Get or start the SparkContext an engine runs on, and fail in one line when Spark cannot run.

Executors must import the same code as the driver (the model's module and :mod:`checker`):
the driver's own source roots are put on the executors' ``PYTHONPATH`` and the executors run the
driver's Python. That is enough on one machine and on a cluster whose nodes see the same paths
(a shared or identical checkout); otherwise install the project on every node.

Why the start is guarded (every failure becomes a :class:`SparkError`, one line for the user):
- no Java, no pyspark: checked before anything is launched;
- a ``spark://`` master that does not answer: probed over TCP first, because Spark itself retries
  the registration three times 20 s apart (hard-coded in its standalone client) and prints a
  page of Java stack traces meanwhile;
- a master that answers but never gives us an executor (no worker, or workers that cannot reach
  the driver back): a watchdog kills the driver JVM when the start-up budget runs out, and
  cancels the running jobs if every executor is lost for longer than that budget mid-run;
- the driver JVM's own output goes to a log file (named in the error), not the terminal.

Process-wide settings (``--spark-conf``, driver host and bind address, the web UI, the start-up
budget) are set once by the command line with :func:`configure`; the engines need not pass them.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import SparkError  # re-exported (the engines' errors: checker.errors)

DEFAULT_MASTER = "local[*]"
LOOPBACK = "127.0.0.1"
DEFAULT_BUDGET = 60.0  # seconds for Spark to start and give us an executor


@dataclass
class SparkOptions:
    """What the command line may set: extra configuration, where the driver listens, the web UI,
    and how long start-up (and a run without executors) may take before giving up."""

    conf: dict[str, str] = field(default_factory=dict)
    driver_host: str | None = None
    bind_address: str | None = None
    ui: bool = True
    budget: float = DEFAULT_BUDGET
    announce: bool = True  # print the web UI's address on stderr


_options = SparkOptions()


def configure(**changes: Any) -> SparkOptions:
    """Set the process-wide Spark options (fields of :class:`SparkOptions`); returns them."""
    global _options
    _options = replace(_options, **changes)
    return _options


def options() -> SparkOptions:
    return _options


def parse_conf(pairs: list[str] | None) -> dict[str, str]:
    """``KEY=VALUE`` strings (``--spark-conf``) as a dict; ValueError names a malformed one."""
    out: dict[str, str] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip() or not key.strip().startswith("spark."):
            raise ValueError(f"--spark-conf wants KEY=VALUE with a spark.* key, not {pair!r}")
        out[key.strip()] = value
    return out


def code_roots(*objects: Any) -> list[str]:
    """Directories on the driver's ``sys.path`` holding user code (not the stdlib or
    site-packages), plus the roots of the packages that define ``objects``."""
    prefixes = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    roots: list[str] = []

    def add(path: Path) -> None:
        s = str(path)
        if s not in roots and path.is_dir():
            roots.append(s)

    for obj in objects:
        module = sys.modules.get(getattr(type(obj), "__module__", "") or "")
        top = sys.modules.get((getattr(module, "__name__", "") or "").split(".")[0])
        file = getattr(top, "__file__", None)
        if file:
            add(Path(file).resolve().parent.parent)
    import isr  # the project's one top-level package

    add(Path(isr.__file__).resolve().parent.parent)
    for entry in sys.path:
        p = Path(entry or ".").resolve()
        if not p.is_dir() or any(p == pre or pre in p.parents for pre in prefixes):
            continue
        if "site-packages" in p.parts or "dist-packages" in p.parts:
            continue
        add(p)
    return roots


def _prepare_env(sc: Any, roots: list[str]) -> None:
    """Make tasks created from now on see ``roots`` and the driver's interpreter."""
    current = [p for p in sc.environment.get("PYTHONPATH", "").split(os.pathsep) if p]
    merged = roots + [p for p in current if p not in roots]
    sc.environment["PYTHONPATH"] = os.pathsep.join(merged)
    sc.pythonExec = os.environ.get("PYSPARK_PYTHON", sys.executable)


# ---------------------------------------------------------------------------- checks


def find_java() -> str | None:
    """The java Spark's launcher would run: ``$JAVA_HOME/bin/java``, else ``java`` on PATH."""
    home = os.environ.get("JAVA_HOME")
    if home:
        exe = Path(home) / "bin" / "java"
        return str(exe) if exe.is_file() and os.access(exe, os.X_OK) else None
    return shutil.which("java")


def master_endpoints(master: str) -> list[tuple[str, int]]:
    """(host, port) of each master of a ``spark://h1:p1,h2:p2`` URL; [] for other masters."""
    if not master.startswith("spark://"):
        return []
    out = []
    for part in master[len("spark://") :].split(","):
        host, _, port = part.rpartition(":")
        if not host or not port.isdigit():
            raise SparkError(f"bad Spark master URL {master!r}: want spark://HOST:PORT")
        out.append((host.strip("[]"), int(port)))
    return out


def probe_master(master: str, timeout: float) -> None:
    """Raise SparkError unless some master of ``master`` accepts a TCP connection."""
    endpoints = master_endpoints(master)
    errors = []
    for host, port in endpoints:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                return
        except OSError as e:
            errors.append(f"{host}:{port}: {e.strerror or e}")
    if endpoints:
        raise SparkError(f"cannot reach the Spark master ({'; '.join(errors)})")


def route_address(host: str, port: int) -> str:
    """This machine's address on the route to ``host`` (no packet is sent): where a remote
    cluster's executors can reach the driver back."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect((host, port))
            return s.getsockname()[0]
        except OSError:
            return LOOPBACK


def driver_addresses(master: str, opts: SparkOptions) -> tuple[str, str]:
    """(spark.driver.host, spark.driver.bindAddress). Loopback for local masters (nothing
    outside this machine needs to reach the driver); for a cluster, the address on the route to
    the master, unless given."""
    endpoints = master_endpoints(master)
    if opts.driver_host:
        host = opts.driver_host
    elif endpoints and endpoints[0][0] not in ("localhost", LOOPBACK):
        host = route_address(*endpoints[0])
    else:
        host = LOOPBACK
    return host, opts.bind_address or host


# ---------------------------------------------------------------------------- start


def spark_conf(master: str, app: str, roots: list[str], extra: dict[str, str] | None = None):
    from pyspark import SparkConf

    opts = _options
    host, bind = driver_addresses(master, opts)
    conf = (
        SparkConf()
        .setMaster(master)
        .setAppName(app)
        .set("spark.ui.enabled", "true" if opts.ui else "false")
        .set("spark.ui.showConsoleProgress", "false")
        .set("spark.driver.host", host)
        .set("spark.driver.bindAddress", bind)
        .set("spark.python.worker.reuse", "true")
        .set("spark.pyspark.python", sys.executable)
        .set("spark.pyspark.driver.python", sys.executable)
        .set("spark.executorEnv.PYTHONPATH", os.pathsep.join(roots))
        # The barrier engine's stage needs all its slots at once; while a cluster's executors
        # are still registering, Spark re-checks every 15 s by default: look every second.
        .set("spark.scheduler.barrier.maxConcurrentTasksCheck.interval", "1s")
        .set("spark.scheduler.barrier.maxConcurrentTasksCheck.maxFailures", "120")
    )
    for key, value in {**(extra or {}), **opts.conf}.items():
        conf.set(key, value)
    return conf


def _check_can_start(master: str, budget: float) -> None:
    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise SparkError("pyspark is not installed (pip install pyspark)") from None
    if find_java() is None:
        where = "JAVA_HOME/bin/java" if os.environ.get("JAVA_HOME") else "no java on PATH"
        raise SparkError(f"Spark needs Java 17 and none was found ({where})")
    probe_master(master, timeout=min(5.0, budget))


def _launch_gateway(conf: Any, log_path: str) -> Any:
    """The driver JVM, its stdout and stderr in ``log_path``."""
    from pyspark.java_gateway import launch_gateway

    log = open(log_path, "ab")  # noqa: SIM115 - the JVM keeps writing to it for its lifetime
    try:
        return launch_gateway(conf, popen_kwargs={"stdout": log, "stderr": log})
    finally:
        log.close()  # the child holds its own descriptor


def _reset_pyspark() -> None:
    """Forget a gateway that failed, so that a later start in this process launches anew."""
    from pyspark import SparkContext

    SparkContext._gateway = None
    SparkContext._jvm = None
    SparkContext._active_spark_context = None


def start_context(master: str | None, app: str, roots: list[str], extra=None):
    """Start a new SparkContext, or raise SparkError (one line) within the start-up budget."""
    master = master or DEFAULT_MASTER
    opts = _options
    deadline = time.monotonic() + opts.budget
    _check_can_start(master, opts.budget)
    from pyspark import SparkContext

    os.environ["SPARK_LOCAL_IP"] = driver_addresses(master, opts)[1]
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    fd, log_path = tempfile.mkstemp(prefix="isr-spark-", suffix=".log")
    os.close(fd)
    conf = spark_conf(master, app, roots, extra)
    killed = threading.Event()
    gateway = None
    try:
        gateway = _launch_gateway(conf, log_path)
        proc = getattr(gateway, "proc", None)

        def kill() -> None:
            killed.set()
            if proc is not None:
                proc.kill()

        timer = threading.Timer(max(0.1, deadline - time.monotonic()), kill)
        timer.daemon = True
        timer.start()
        try:
            sc = SparkContext(conf=conf, gateway=gateway)
            if master_endpoints(master):
                _wait_for_executor(sc, deadline, killed)
        finally:
            timer.cancel()
    except SparkError:
        _reset_pyspark()
        raise
    except Exception as e:  # Py4J, PySpark and OS errors alike: the log has the details
        _reset_pyspark()
        if killed.is_set():
            raise SparkError(
                f"Spark did not start within {opts.budget:g} s on {master} "
                f"(no executor registered; can the workers reach this driver?); log: {log_path}"
            ) from None
        raise SparkError(
            f"Spark did not start on {master}: {_first_line(e)}; log: {log_path}"
        ) from None
    sc.setLogLevel("ERROR")
    _prepare_env(sc, roots)
    sc._isr_log = log_path  # spark_context removes it after a clean run
    if opts.ui and opts.announce and sc.uiWebUrl:
        print(f"spark: {master}, web UI at {sc.uiWebUrl} (log: {log_path})", file=sys.stderr)
    return sc


def _wait_for_executor(sc: Any, deadline: float, killed: threading.Event) -> None:
    """Block until the cluster gave us an executor; the watchdog ends the wait at the deadline."""
    while executor_count(sc) == 0:
        if killed.is_set() or time.monotonic() >= deadline:
            killed.set()
            with suppress(Exception):  # the JVM may be gone already
                sc.stop()
            raise RuntimeError("no executor")
        time.sleep(0.2)


def executor_count(sc: Any) -> int:
    """Executors registered now (the driver is not counted)."""
    try:
        infos = sc.statusTracker().getExecutorInfos()
    except Exception:  # a stopped context
        return 0
    return max(0, len(infos) - 1)


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    line = next((x.strip() for x in text if x.strip()), type(e).__name__)
    return line[:300]


class _ExecutorWatchdog:
    """Cancel the jobs when a cluster has had no executor for ``grace`` seconds: Spark would
    otherwise wait for resources forever."""

    def __init__(self, sc: Any, grace: float) -> None:
        self.sc, self.grace = sc, grace
        self.fired = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="isr-spark-watchdog")

    def __enter__(self) -> _ExecutorWatchdog:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        since = None
        while not self._stop.wait(0.5):
            if executor_count(self.sc) > 0:
                since = None
                continue
            since = since or time.monotonic()
            if time.monotonic() - since >= self.grace:
                self.fired = True
                with suppress(Exception):  # the JVM may be gone already
                    self.sc.cancelAllJobs()
                return


@contextmanager
def spark_context(master: str | None, app: str, *ship: Any) -> Iterator[Any]:
    """The active SparkContext if there is one with a compatible master (it is left running),
    else a new one that is stopped on exit. Errors of Spark itself (a lost cluster, the JVM
    gone) come out as SparkError."""
    from pyspark import SparkContext

    roots = code_roots(*ship)
    active = SparkContext._active_spark_context
    if active is not None:
        if master is not None and active.master != master:
            raise SparkError(
                f"a SparkContext on {active.master} is already running in this process; "
                f"cannot also connect to {master}"
            )
        _prepare_env(active, roots)
        yield active
        return
    sc = start_context(master, app, roots)
    cluster = bool(master_endpoints(sc.master))
    log = getattr(sc, "_isr_log", "")
    clean = False
    try:
        with _ExecutorWatchdog(sc, _options.budget) if cluster else _nothing() as dog:
            try:
                yield sc
            except Exception as e:
                if dog is not None and dog.fired:
                    raise SparkError(
                        f"the Spark cluster at {sc.master} lost every executor for "
                        f"{_options.budget:g} s; the run was cancelled; log: {log}"
                    ) from None
                if _is_spark_failure(e):
                    raise SparkError(f"Spark failed: {_first_line(e)}; log: {log}") from None
                raise
        clean = True
    finally:
        with suppress(Exception):  # the JVM may be gone already
            sc.stop()
        if clean and log:
            with suppress(OSError):
                os.unlink(log)  # kept only when something went wrong


@contextmanager
def _nothing() -> Iterator[None]:
    yield None


def _is_spark_failure(e: BaseException) -> bool:
    """Py4J / PySpark errors and a dead JVM connection: the cluster's fault, not the model's."""
    mod = type(e).__module__ or ""
    return mod.startswith(("py4j", "pyspark")) or isinstance(e, ConnectionError)


def small_model_note(distinct_states: int, seconds: float, cores: int) -> str | None:
    """A note when the run was too small for Spark to pay off (see BREAK_EVEN)."""
    if distinct_states >= BREAK_EVEN_STATES:
        return None
    return (
        f"note: {distinct_states:,} distinct states took {seconds:.1f} s on Spark "
        f"({cores} cores); Spark's fixed costs (start-up, about "
        f"{LEVEL_SECONDS:g} s per BFS level) outweigh its parallelism below about "
        f"{BREAK_EVEN_STATES:,} distinct states on {BREAK_EVEN_CORES} cores: the default engine "
        "is faster here"
    )


# Measured on this project's 2-core machine (bench/spark_scaling.py; checker/spark/README.md):
# sequential 110 µs per distinct state; Spark with 2 executors about 72 µs per distinct state
# plus about 0.88 s per level and 10 s start-up. 45 s of fixed cost over the 38 µs saved per
# state gives the break-even. More executors lower it roughly in proportion.
LEVEL_SECONDS = 0.88
BREAK_EVEN_STATES = 1_200_000
BREAK_EVEN_CORES = 2
