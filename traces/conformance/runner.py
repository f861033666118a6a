"""The conformance kit: drive an implementation through its adapter, validate what it recorded.

`Adapter` speaks the NDJSON protocol of traces/ADAPTER.md with a child process; `InProcess`
does the same with the reference adapter's session object (tests, no process start-up). A
scenario's verdict is the validator's verdict on the trace the implementation returned.
"""

from __future__ import annotations

import contextlib
import json
import shlex
import subprocess
import time
from dataclasses import dataclass, field
from typing import Any

from ..mapping import TraceInputError
from ..validate import ACCEPTED, REJECTED, UNSUPPORTED, Verdict, validate_events
from .scenarios import Scenario, ops_strategy, spec_scenarios


class AdapterError(Exception):
    """The adapter failed or broke the protocol (bad input: exit 2)."""


class Adapter:
    def __init__(self, command: str) -> None:
        self.command = command
        try:
            self.proc = subprocess.Popen(
                shlex.split(command),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                bufsize=1,
            )
        except OSError as e:
            raise AdapterError(f"cannot start adapter {command!r}: {e.strerror}") from None

    def request(self, cmd: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(json.dumps(cmd) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise AdapterError(f"adapter {self.command!r} exited: {self._stderr()}") from None
        line = self.proc.stdout.readline()
        if not line:
            raise AdapterError(f"adapter {self.command!r} exited: {self._stderr()}")
        try:
            resp = json.loads(line)
        except json.JSONDecodeError:
            raise AdapterError(f"adapter answered a non-JSON line: {line[:80]!r}") from None
        if not resp.get("ok"):
            raise AdapterError(f"adapter refused {cmd.get('op')}: {resp.get('error')}")
        return resp

    def _stderr(self) -> str:
        try:
            err = self.proc.stderr.read() if self.proc.stderr else ""
        except OSError:
            err = ""
        lines = [x for x in err.strip().splitlines() if x.strip()]
        return lines[-1] if lines else f"exit code {self.proc.poll()}"

    def close(self) -> None:
        with contextlib.suppress(AdapterError):
            self.request({"op": "stop"})
        self.proc.terminate()
        self.proc.wait(timeout=5)


class InProcess:
    """The reference adapter without a process (for tests)."""

    def __init__(self, mutant: str | None = None) -> None:
        from impl.adapter import Session

        self.session = Session(mutant)

    def request(self, cmd: dict[str, Any]) -> dict[str, Any]:
        resp = self.session.handle(json.loads(json.dumps(cmd)))
        if not resp.get("ok"):
            raise AdapterError(f"adapter refused {cmd.get('op')}: {resp.get('error')}")
        return resp

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
    "REJECTED",
    "UNSUPPORTED",
    "Adapter",
    "AdapterError",
    "ConformReport",
    "InProcess",
    "conform",
    "mutation_score",
    "run_scenario",
]
