"""Get or start the SparkContext an engine runs on.

Executors must import the same code as the driver (the model's module and :mod:`checker`):
the driver's own source roots are put on the executors' ``PYTHONPATH`` and the executors run the
driver's Python. That is enough on one machine and on a loopback standalone cluster; on a cluster
of several machines, install the project on every node (or ship it with ``--py-files``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

DEFAULT_MASTER = "local[*]"


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
    import checker  # the engine's own package

    add(Path(checker.__file__).resolve().parent.parent)
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


def spark_conf(master: str, app: str, roots: list[str], extra: dict[str, str] | None = None):
    from pyspark import SparkConf

    conf = (
        SparkConf()
        .setMaster(master)
        .setAppName(app)
        .set("spark.ui.enabled", "false")
        .set("spark.ui.showConsoleProgress", "false")
        .set("spark.driver.host", "127.0.0.1")
        .set("spark.driver.bindAddress", "127.0.0.1")
        .set("spark.python.worker.reuse", "true")
        .set("spark.pyspark.python", sys.executable)
        .set("spark.pyspark.driver.python", sys.executable)
        .set("spark.executorEnv.PYTHONPATH", os.pathsep.join(roots))
    )
    for key, value in (extra or {}).items():
        conf.set(key, value)
    return conf


def start_context(master: str | None, app: str, roots: list[str], extra=None):
    """Start a new SparkContext (loopback only)."""
    from pyspark import SparkContext

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    sc = SparkContext(conf=spark_conf(master or DEFAULT_MASTER, app, roots, extra))
    sc.setLogLevel("ERROR")
    _prepare_env(sc, roots)
    return sc


@contextmanager
def spark_context(master: str | None, app: str, *ship: Any) -> Iterator[Any]:
    """The active SparkContext if there is one with a compatible master (it is left running),
    else a new one that is stopped on exit."""
    from pyspark import SparkContext

    roots = code_roots(*ship)
    active = SparkContext._active_spark_context
    if active is not None:
        if master is not None and active.master != master:
            raise RuntimeError(
                f"a SparkContext on {active.master} is already running in this process; "
                f"cannot also connect to {master}"
            )
        _prepare_env(active, roots)
        yield active
        return
    sc = start_context(master, app, roots)
    try:
        yield sc
    finally:
        sc.stop()
