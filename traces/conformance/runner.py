"""The conformance kit: drive an implementation through its adapter, validate what it recorded.

`Adapter` speaks the NDJSON protocol of traces/ADAPTER.md with a child process; `InProcess`
does the same with the reference adapter's session object (tests, no process start-up). A
scenario's verdict is the validator's verdict on the trace the implementation returned.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shlex
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

from .. import format as tformat
from ..mapping import TraceInputError
from ..validate import ACCEPTED, REJECTED, UNSUPPORTED, Verdict, validate_events
from .scenarios import Scenario, ops_strategy, spec_scenarios


class AdapterError(Exception):
    """The adapter failed or broke the protocol (bad input: exit 2)."""


DEFAULT_TIMEOUT = 30.0  # seconds an adapter may take to answer one command (--adapter-timeout)
MAX_ANSWER_BYTES = 256 * 2**20  # the answer to `trace` holds every event of the run


class Adapter:
    """An adapter process. Its answers are read with a deadline per command (``timeout``
    seconds): a hung or silent adapter is an AdapterError naming the command, never a hang.
    Its stderr goes to a temporary file (a pipe nobody drains would block a chatty adapter);
    the last line is quoted when it dies."""

    def __init__(self, command: str, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.command = command
        self.timeout = timeout
        self._buf = b""
        self._err = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()
        try:
            self.proc = subprocess.Popen(
                shlex.split(command),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._err,
                bufsize=0,
            )
        except (OSError, ValueError) as e:  # ValueError: shlex on unbalanced quotes
            self._err.close()
            raise AdapterError(
                f"cannot start adapter {command!r}: {getattr(e, 'strerror', None) or e}"
            ) from None

    def request(self, cmd: dict[str, Any]) -> dict[str, Any]:
        self._send(cmd)
        return decode_answer(self._read_line(str(cmd.get("op"))), cmd, self.command)

    def _send(self, cmd: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write((json.dumps(cmd) + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise AdapterError(f"adapter {self.command!r} exited: {self._stderr()}") from None

    def _read_line(self, op: str) -> bytes:
        """One answer line, within ``timeout`` seconds of asking, at most MAX_ANSWER_BYTES."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + self.timeout
        while b"\n" not in self._buf:
            if len(self._buf) > MAX_ANSWER_BYTES:
                raise AdapterError(
                    f"adapter {self.command!r}: the answer to {op} is longer than "
                    f"{MAX_ANSWER_BYTES:,} bytes"
                )
            left = deadline - time.monotonic()
            ready = select.select([fd], [], [], max(0.0, left))[0] if left > 0 else []
            if not ready:
                raise AdapterError(
                    f"adapter {self.command!r} gave no answer to {op} within "
                    f"{self.timeout:g} s (see --adapter-timeout)"
                )
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise AdapterError(f"adapter {self.command!r} exited: {self._stderr()}")
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        return line

    def _stderr(self) -> str:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=1)
        try:
            self._err.seek(0)
            err = self._err.read()[-4096:].decode("utf-8", "replace")
        except (OSError, ValueError):
            err = ""
        lines = [x for x in err.strip().splitlines() if x.strip()]
        return lines[-1][:300] if lines else f"exit code {self.proc.poll()}"

    def close(self) -> None:
        timeout, self.timeout = self.timeout, min(self.timeout, 5.0)
        with contextlib.suppress(AdapterError):
            self.request({"op": "stop"})
        self.timeout = timeout
        self.proc.terminate()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout, self._err):
            with contextlib.suppress(OSError):
                if f is not None:
                    f.close()


def _field(prefix: str, err: str) -> str:
    """``FIELD: problem`` of a part of the answer, as a field of the whole answer."""
    return f"{prefix}: {err[10:]}" if err.startswith("the line: ") else f"{prefix}.{err}"


def decode_answer(raw: bytes, cmd: dict[str, Any], command: str = "adapter") -> dict[str, Any]:
    """An answer line checked as ADAPTER.md says it is: UTF-8 JSON within the readers' bounds
    (traces/format.py), an object with a boolean ``ok``; the header of ``start`` and the events
    of ``trace`` against the trace schema. Anything else is an AdapterError (exit 2)."""
    op = str(cmd.get("op"))
    where = f"adapter {command!r}, answer to {op}"
    try:
        resp = tformat.load_json_line(raw, where, max_bytes=MAX_ANSWER_BYTES)
    except tformat.TraceFormatError as e:
        raise AdapterError(str(e)) from None
    if not isinstance(resp, dict) or type(resp.get("ok")) is not bool:
        raise AdapterError(f"{where}: not an object with a boolean 'ok'")
    if not resp["ok"]:
        raise AdapterError(f"adapter refused {op}: {str(resp.get('error'))[:300]}")
    if op == "start":
        head = resp.get("header")
        errs = tformat.line_errors(head, "header")
        if errs:
            raise AdapterError(f"{where}: {_field('header', errs[0])}")
        if not isinstance((head.get("cluster") or {}).get("assignments"), dict):
            raise AdapterError(f"{where}: header.cluster.assignments: missing")
    if op == "trace":
        events = resp.get("events")
        if not isinstance(events, list):
            raise AdapterError(f"{where}: events: not a list")
        for i, ev in enumerate(events):
            errs = tformat.event_errors(ev)
            if errs:
                raise AdapterError(f"{where}: {_field(f'events[{i}]', errs[0])}")
    return resp


class InProcess:
    """The reference adapter without a process (for tests)."""

    def __init__(self, mutant: str | None = None) -> None:
        from impl.adapter import Session

        self.session = Session(mutant)

    def request(self, cmd: dict[str, Any]) -> dict[str, Any]:
        resp = self.session.handle(json.loads(json.dumps(cmd)))
        return decode_answer(json.dumps(resp).encode(), cmd, "in-process")

    def close(self) -> None:
        pass


def run_scenario(
    adapter: Any, scenario: Scenario, name: str, seed: int = 0, protocol: str = "kip-320"
) -> Verdict:
    start = {"op": "start", "brokers": 3, "replication": 3, "protocol": protocol, "seed": seed}
    if scenario and scenario[0].get("op") == "start":  # a scenario may set up the cluster
        start.update(scenario[0])
        scenario = scenario[1:]
    head = adapter.request(start)["header"]
    for op in scenario:
        adapter.request(op)
    events = adapter.request({"op": "trace"})["events"]
    if not isinstance(events, list):
        raise AdapterError("trace: 'events' is not a list")
    try:
        return validate_events(head, events, name)
    except TraceInputError as e:
        raise AdapterError(f"{name}: the adapter's trace is malformed: {e}") from None


@dataclass
class ConformReport:
    results: list[tuple[str, Scenario, Verdict]] = field(default_factory=list)
    shortest_failing: tuple[str, Scenario, Verdict] | None = None
    actions: set[str] = field(default_factory=set)
    transitions: set[tuple[str, str]] = field(default_factory=set)
    seconds: float = 0.0

    @property
    def rejected(self) -> list[tuple[str, Scenario, Verdict]]:
        return [r for r in self.results if r[2].verdict == REJECTED]

    def counts(self) -> dict[str, int]:
        c: dict[str, int] = {}
        for _n, _s, v in self.results:
            c[v.verdict] = c.get(v.verdict, 0) + 1
        return c


def conform(
    adapter: Any,
    *,
    random_examples: int = 20,
    seed: int = 0,
    protocol: str = "kip-320",
    spec_paths: bool = True,
    stop_at_first: bool = False,
    shrink: bool = True,
) -> ConformReport:
    t0 = time.perf_counter()
    rep = ConformReport()

    def record(name: str, sc: Scenario, v: Verdict) -> None:
        rep.results.append((name, sc, v))
        rep.actions |= v.fired
        rep.transitions |= v.transitions

    if spec_paths:
        for name, sc in spec_scenarios(3, protocol).items():
            v = run_scenario(adapter, sc, name, seed, protocol)
            record(name, sc, v)
            if stop_at_first and v.verdict == REJECTED:
                break
    if random_examples > 0 and not (stop_at_first and rep.rejected):
        _random(adapter, rep, record, random_examples, seed, protocol, stop_at_first, shrink)
    fails = rep.rejected
    if fails and rep.shortest_failing is None:
        rep.shortest_failing = min(fails, key=lambda r: (len(r[1]), r[0]))
    rep.seconds = time.perf_counter() - t0
    return rep


def _random(adapter, rep, record, n, seed, protocol, stop_at_first, shrink) -> None:
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed

    failing: list[tuple[str, Scenario, Verdict]] = []
    counter = [0]

    phases = [Phase.generate, Phase.shrink] if shrink else [Phase.generate]

    @hseed(seed)
    @settings(
        max_examples=n,
        deadline=None,
        database=None,
        phases=phases,
        suppress_health_check=list(HealthCheck),
        derandomize=False,
    )
    @given(ops_strategy())
    def scenario(ops: Scenario) -> None:
        sc = [*ops, {"op": "heal"}, *({"op": "restart", "broker": b} for b in range(3))]
        sc.append({"op": "run", "ms": 800})
        counter[0] += 1
        name = f"random:{counter[0]}"
        v = run_scenario(adapter, sc, name, seed, protocol)
        if counter[0] <= n:
            record(name, sc, v)
        if v.verdict == REJECTED:
            failing.append((name, sc, v))
            raise AssertionError(v.reason)

    with contextlib.suppress(AssertionError):
        scenario()
    if failing:
        # hypothesis replays the minimal failing example last
        name, sc, v = failing[-1]
        rep.shortest_failing = (f"shrunk:{name}", sc, v)


def mutation_score(
    mutants: list[str], adapter_factory, *, random_examples: int = 10, seed: int = 0
) -> list[tuple[str, str, int, str]]:
    """[(mutant, verdict 'killed'/'survived', scenarios run, reason)]."""
    out = []
    for mu in mutants:
        ad = adapter_factory(mu)
        try:
            rep = conform(
                ad, random_examples=random_examples, seed=seed, stop_at_first=True, shrink=False
            )
        finally:
            ad.close()
        if rep.rejected:
            name, _sc, v = rep.rejected[0]
            out.append((mu, "killed", len(rep.results), f"{name}: {v.reason}"))
        else:
            out.append((mu, "survived", len(rep.results), ""))
    return out


__all__ = [
    "ACCEPTED",
    "DEFAULT_TIMEOUT",
    "REJECTED",
    "UNSUPPORTED",
    "Adapter",
    "AdapterError",
    "ConformReport",
    "InProcess",
    "conform",
    "decode_answer",
    "mutation_score",
    "run_scenario",
]
