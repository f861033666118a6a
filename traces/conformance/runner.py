"""The conformance kit: drive an implementation through its adapter, validate what it recorded.

`Adapter` speaks the NDJSON protocol of traces/ADAPTER.md with a child process; `InProcess`
does the same with a session object given by the caller (tests, no process start-up). A
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
from pathlib import Path
from typing import Any

from isr.spec.protocols import DEFAULT_PROTOCOL

from .. import format as tformat
from .. import history as thistory
from ..validator.validate import (
    ACCEPTED,
    BAD_INPUT,
    INCOMPLETE,
    REJECTED,
    UNSUPPORTED,
    Verdict,
    validate_events,
)
from .scenarios import (
    FAULT_KINDS,
    KRAFT_FAULT_KINDS,
    START_PROBE,
    Scenario,
    idempotent_scenarios,
    logstart_scenarios,
    probe_ops,
    reassign_scenarios,
    schedule_strategy,
    spec_scenarios,
)


class AdapterError(Exception):
    """The adapter failed or broke the protocol (bad input: exit 2)."""


class CommandUnsupported(AdapterError):
    """The adapter answered ``{"ok": false, "unsupported": true}``: a coverage gap, not a pass."""


GREYBOX_SCHEMA = Path(__file__).resolve().parent.parent / "schema" / "greybox.schema.json"


class CommandRefused(AdapterError):
    """The adapter answered ``{"ok": false, "error": ...}`` (without ``unsupported``)."""


DEFAULT_TIMEOUT = 30.0  # seconds an adapter may take to answer one command (--adapter-timeout)
MAX_ANSWER_BYTES = 256 * 2**20  # the answer to `trace` holds every event of the run


class Adapter:
    """An adapter process. Its answers are read with a deadline per command (``timeout``
    seconds): a hung or silent adapter is an AdapterError naming the command, never a hang.
    Its stderr goes to a file, never to a pipe nobody reads (an adapter logging more than a pipe
    buffer would block); the report names the file, and its last line is quoted when the
    adapter dies."""

    def __init__(
        self,
        command: str,
        stderr_path: str | Path | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.command = command
        self.timeout = timeout
        self._buf = b""
        self.stderr_path = Path(stderr_path) if stderr_path else _temp_stderr()
        self._temp = stderr_path is None
        self.stderr_file = open(self.stderr_path, "ab")  # noqa: SIM115 - closed in close()
        try:
            self.proc = subprocess.Popen(
                shlex.split(command),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self.stderr_file,
                bufsize=0,
            )
        except (OSError, ValueError) as e:  # ValueError: shlex on unbalanced quotes
            self.stderr_file.close()
            if self._temp:
                with contextlib.suppress(OSError):
                    self.stderr_path.unlink()
            why = getattr(e, "strerror", None) or str(e)
            raise AdapterError(f"cannot start adapter {command!r}: {why}") from None

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
            self.stderr_file.flush()
            with open(self.stderr_path, "rb") as f:
                f.seek(0, os.SEEK_END)
                f.seek(max(0, f.tell() - 4096))
                err = f.read().decode("utf-8", "replace")
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
        for f in (self.proc.stdin, self.proc.stdout):
            with contextlib.suppress(OSError):
                if f is not None:
                    f.close()
        self.stderr_file.close()
        with contextlib.suppress(OSError):
            if self._temp and self.stderr_path.stat().st_size == 0:
                self.stderr_path.unlink()  # nothing logged: no file left behind


def _temp_stderr() -> Path:
    fd, name = tempfile.mkstemp(prefix="isr-adapter-", suffix=".stderr")
    os.close(fd)
    return Path(name)


def _check_answer(cmd: dict[str, Any], resp: Any) -> None:
    """An answer that is not ``ok``: unsupported (a coverage gap) or an error (exit 2)."""
    if not isinstance(resp, dict):
        raise AdapterError(f"adapter answered {cmd.get('op')} with a non-object")
    if resp.get("ok"):
        return
    if resp.get("unsupported"):
        raise CommandUnsupported(f"{cmd.get('op')}: {resp.get('error') or 'unsupported'}")
    raise CommandRefused(f"adapter refused {cmd.get('op')}: {resp.get('error')}")


def _field(prefix: str, err: str) -> str:
    """``FIELD: problem`` of a part of the answer, as a field of the whole answer."""
    return f"{prefix}: {err[10:]}" if err.startswith("the line: ") else f"{prefix}.{err}"


def decode_answer(raw: bytes, cmd: dict[str, Any], command: str = "adapter") -> dict[str, Any]:
    """An answer line checked as ADAPTER.md says it is: UTF-8 JSON within the readers' bounds
    (traces/format.py), an object with a boolean ``ok`` (not ok: unsupported, a coverage gap, or
    an error); the header of ``start`` against the trace schema, the events of ``trace`` a list.
    Each event is checked against the schema by the scenario runner (``schema_problem``), so
    that a trace breaking it is reported as an encoding mismatch of that scenario."""
    op = str(cmd.get("op"))
    where = f"adapter {command!r}, answer to {op}"
    try:
        resp = tformat.load_json_line(raw, where, max_bytes=MAX_ANSWER_BYTES)
    except tformat.TraceFormatError as e:
        raise AdapterError(str(e)) from None
    if not isinstance(resp, dict) or type(resp.get("ok")) is not bool:
        raise AdapterError(f"{where}: not an object with a boolean 'ok'")
    _check_answer(cmd, resp)
    if op == "start":
        head = resp.get("header")
        grey = isinstance(head, dict) and head.get("observation") == "grey-box"
        errs = (
            tformat.line_errors(head, "header", GREYBOX_SCHEMA)
            if grey
            else tformat.line_errors(head, "header")
        )
        if errs:
            raise AdapterError(f"{where}: {_field('header', errs[0])}")
        if not isinstance((head.get("cluster") or {}).get("assignments"), dict):
            raise AdapterError(f"{where}: header.cluster.assignments: missing")
    if op == "trace" and not isinstance(resp.get("events"), list):
        raise AdapterError(f"{where}: events: not a list")
    if op == "history" and not isinstance(resp.get("ops"), list):
        raise AdapterError(f"{where}: ops: not a list")
    return resp


class InProcess:
    """An adapter without a process (tests): ``session`` is any object whose ``handle(cmd)``
    answers one command of traces/ADAPTER.md as a dict, e.g. the reference implementation's
    ``impl.adapter.Session``. Commands and answers still go through JSON, as over a pipe; the kit
    itself imports no implementation."""

    def __init__(self, session: Any) -> None:
        self.session = session

    def request(self, cmd: dict[str, Any]) -> dict[str, Any]:
        resp = self.session.handle(json.loads(json.dumps(cmd)))
        return decode_answer(json.dumps(resp).encode(), cmd, "in-process")

    def close(self) -> None:
        pass


@dataclass
class Outcome:
    """What one scenario produced besides its verdict: the trace (kept for a failing one, to
    be written with the command that re-validates it) and the command the adapter did not
    support, if any (a coverage gap)."""

    header: dict[str, Any] | None = None
    events: list[dict[str, Any]] | None = None
    unsupported: str = ""
    supported: set[str] = field(default_factory=set)  # commands the adapter answered ok
    history: thistory.HistoryResult | None = None  # the client history's check, if any
    history_doc: dict[str, Any] | None = None  # the history itself: {"header", "ops"}


# A scenario whose trace the validator accepted but whose client history has an anomaly is
# rejected with a reason starting so (report.classify: a failure of kind "history").
HISTORY_REASON = "client history: "


def check_history(adapter: Any, name: str, out: Outcome | None = None) -> Any:
    """The adapter's client history (the optional ``history`` command, ADAPTER.md) checked by
    traces/history.py (a HistoryResult): None when the adapter does not support the command
    (answered unsupported, or refused it: an adapter written before the command existed),
    the problem (a str) when the history breaks its format (an encoding failure of the
    scenario). ``out`` keeps the history itself (``history_doc``), to be written with --out."""
    try:
        resp = adapter.request({"op": "history"})
    except (CommandUnsupported, CommandRefused):
        return None
    head = resp.get("header") or {}
    if out is not None:
        out.history_doc = {"header": head, "ops": resp.get("ops")}
    try:
        h = thistory.parse(head, resp.get("ops"), f"{name} history")
    except thistory.HistoryError as e:
        return str(e)
    return thistory.check(h)


def run_scenario(
    adapter: Any, scenario: Scenario, name: str, seed: int = 0, protocol: str = DEFAULT_PROTOCOL
) -> Verdict:
    return run_scenario_full(adapter, scenario, name, seed, protocol)[0]


def run_scenario_full(
    adapter: Any,
    scenario: Scenario,
    name: str,
    seed: int = 0,
    protocol: str = DEFAULT_PROTOCOL,
    spec_protocol: Any = None,
    start_options: dict[str, Any] | None = None,
) -> tuple[Verdict, Outcome]:
    """Run one scenario; the verdict is the validator's on the trace the adapter returned, or
    ``unsupported`` (a coverage gap) when the adapter does not support one of its commands, or
    ``bad-input`` when the trace breaks the trace schema (an encoding mismatch). The adapter
    runs ``protocol``; the trace is validated against ``spec_protocol`` when given (a user's
    version object, ``isr conform --protocol-file``), else against the version its header
    names."""
    start = {"op": "start", "brokers": 3, "replication": 3, "protocol": protocol, "seed": seed}
    start.update(start_options or {})  # a session option of every scenario (--idempotence)
    if scenario and scenario[0].get("op") == "start":  # a scenario may set up the cluster
        start.update(scenario[0])
        scenario = scenario[1:]
    if str(start.get("acks", "all")) != "all":
        start.pop("idempotence", None)  # (idempotence needs acks=all: the plain producer)
    out = Outcome()
    try:
        head = adapter.request(start).get("header")
        for op in scenario:
            adapter.request(op)
            out.supported.add(op.get("op", ""))
    except CommandUnsupported as e:
        out.unsupported = str(e).split(":", 1)[0]
        return Verdict(name, UNSUPPORTED, reason=f"adapter does not support {e}"), out
    events = adapter.request({"op": "trace"}).get("events")
    if not isinstance(events, list):
        raise AdapterError("trace: 'events' is not a list")
    if not isinstance(head, dict):
        raise AdapterError("start: 'header' is not an object")
    out.header, out.events = head, events
    hist = check_history(adapter, name, out)
    if isinstance(hist, str):
        return Verdict(name, BAD_INPUT, events=len(events), reason=hist), out
    out.history = hist
    if isinstance(head, dict) and head.get("observation") == "grey-box":
        # an implementation seen from outside (Apache Kafka): traces/validator/greybox.py
        from ..validator.greybox import validate_run

        for k, ev in enumerate(events):
            errs = tformat.line_errors(ev, "event", GREYBOX_SCHEMA)
            if errs:
                return Verdict(
                    name, BAD_INPUT, events=len(events), reason=f"event {k}: {errs[0]}"
                ), out
        return _with_history(validate_run(head, events, name), hist), out
    bad = schema_problem(head, events)
    if bad:
        return Verdict(name, BAD_INPUT, events=len(events), reason=bad), out
    v = validate_events(head, events, name, protocol=spec_protocol)
    return _with_history(v, hist), out


def _with_history(v: Verdict, hist: Any) -> Verdict:
    """An accepted trace whose client history has an anomaly fails, of kind history."""
    if v.verdict == ACCEPTED and hist is not None and not hist.valid:
        v.verdict = REJECTED
        v.reason = HISTORY_REASON + history_line(hist)
        v.mismatches = [
            f"{k}: {a.count}, first {a.examples[0]}"
            for k, a in hist.anomalies.items()
            if k in hist.violations and a.examples
        ]
    return v


def history_line(h: thistory.HistoryResult) -> str:
    """``lost 1, gaps 2`` (violations), or the counts reported as allowed."""
    viol = h.violations
    if viol:
        return ", ".join(f"{k} {n}" for k, n in viol.items())
    allowed = [f"{k} {a.count} (allowed)" for k, a in h.anomalies.items() if a.count]
    return ", ".join(allowed) or "no anomaly"


def history_json(h: thistory.HistoryResult) -> dict[str, Any]:
    """A scenario's history check in the conform report: counts, violations, first examples."""
    return {
        "valid": h.valid,
        "violations": h.violations,
        "counts": h.counts(),
        "examples": {k: a.examples[:2] for k, a in h.anomalies.items() if a.examples},
        "sends_ok": h.stats.get("sends_ok", 0),
        "records_read": h.stats.get("records_read", 0),
    }


def schema_problem(head: dict[str, Any], events: list[Any]) -> str:
    """The first line of the trace that breaks traces/schema, naming the field (ADAPTER.md)."""
    errs = tformat.line_errors(head, "header")
    if errs:
        return f"header: {errs[0]}"
    for k, ev in enumerate(events):
        errs = tformat.event_errors(ev)
        if errs:
            act = ev.get("action") if isinstance(ev, dict) else None
            return f"event {k} ({act}): {'; '.join(errs[:2])}"
    return ""


# ---- report -------------------------------------------------------------------------------
FAILED = (REJECTED, BAD_INPUT)


@dataclass
class ConformReport:
    results: list[tuple[str, Scenario, Verdict]] = field(default_factory=list)
    shortest_failing: tuple[str, Scenario, Verdict] | None = None
    actions: set[str] = field(default_factory=set)
    transitions: set[tuple[str, str]] = field(default_factory=set)
    seconds: float = 0.0
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    gaps: dict[str, int] = field(default_factory=dict)  # unsupported command -> scenarios
    supported: set[str] = field(default_factory=set)  # commands some scenario ran
    stderr_path: str = ""
    histories: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> history_json
    # KIP-279's truncation branches the accepted traces took (separating.branches_in_trace),
    # for a version that walks back (walks_back): coverage in the spec's terms (issue 27)
    branches: set[str] = field(default_factory=set)
    walks_back: bool = False

    @property
    def undecided(self) -> list[tuple[str, Scenario, Verdict]]:
        """Scenarios the validator could not decide (over its cap): never a pass."""
        return [r for r in self.results if r[2].verdict == INCOMPLETE]

    @property
    def rejected(self) -> list[tuple[str, Scenario, Verdict]]:
        """Failing scenarios: rejected by the validator, or a trace breaking the schema."""
        return [r for r in self.results if r[2].verdict in FAILED]

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
    protocol: str = DEFAULT_PROTOCOL,
    spec_paths: bool = True,
    stop_at_first: bool = False,
    shrink: bool = True,
    swarm: bool = True,
    max_ops: int = 24,
    spec_protocol: Any = None,
    scenarios: dict[str, Scenario] | None = None,
    start_options: dict[str, Any] | None = None,
) -> ConformReport:
    """Run the spec-derived, directed and separating scenarios (``default_scenarios``; or
    ``scenarios`` instead, e.g. Apache
    Kafka's, whose timing is seconds), then ``random_examples`` random fault
    schedules (swarm testing: each draws a subset of the fault kinds the adapter supports,
    ``scenarios.ops_strategy``). ``spec_protocol``: the version object the traces are
    validated against and the scenarios derived from (a user's; default: the built-in
    ``protocol``, which the adapter runs). ``start_options``: added to every scenario's
    ``start`` (``{"idempotence": true}``: ``isr conform --idempotence``, ADAPTER.md)."""
    t0 = time.perf_counter()
    rep = ConformReport(stderr_path=str(getattr(adapter, "stderr_path", "") or ""))
    from isr.spec.protocols import PROTOCOLS

    from .separating import branches_in_trace

    spec_p = spec_protocol or PROTOCOLS.get(protocol)
    walks_back = bool(spec_p is not None and spec_p.walks_back and not spec_p.split_fetch)
    rep.walks_back = walks_back

    def record(name: str, sc: Scenario, v: Verdict, out: Outcome) -> None:
        rep.results.append((name, sc, v))
        if out.history is not None:
            rep.histories[name] = history_json(out.history)
        if v.verdict == ACCEPTED:  # coverage counts only what an accepted trace exercised
            rep.actions |= v.fired
            rep.transitions |= v.transitions
            if walks_back and out.events:  # KIP-279's truncation branches (issue 27)
                rep.branches |= branches_in_trace(spec_p, out.events)
        if v.verdict in FAILED or v.verdict == INCOMPLETE:
            rep.outcomes[name] = out
        if out.unsupported:
            rep.gaps[out.unsupported] = rep.gaps.get(out.unsupported, 0) + 1
        rep.supported |= out.supported

    if spec_paths or scenarios is not None:
        chosen = (
            scenarios if scenarios is not None else default_scenarios(spec_protocol or protocol)
        )
        for name, sc in chosen.items():
            v, out = run_scenario_full(
                adapter, sc, name, seed, protocol, spec_protocol, start_options
            )
            record(name, sc, v, out)
            if stop_at_first and v.verdict in FAILED:
                break
    if random_examples > 0 and not (stop_at_first and rep.rejected):
        kinds = supported_kinds(adapter, protocol, seed, rep) if swarm else None
        _random(
            adapter, rep, record, random_examples, seed, protocol, stop_at_first, shrink, kinds,
            max_ops, spec_protocol, start_options,
        )  # fmt: skip
    fails = rep.rejected
    if fails and rep.shortest_failing is None:
        rep.shortest_failing = min(fails, key=lambda r: (len(r[1]), r[0]))
    rep.seconds = time.perf_counter() - t0
    return rep


def default_scenarios(protocol: Any) -> dict[str, Scenario]:
    """The kit's default set for an implementation of ``protocol`` (a built-in version's name
    or a version object): the spec-derived and directed scenarios, then the separating ones
    (the shipped counterexamples of each weaker version the claimed one survives:
    traces/conformance/separating.py, issue 27)."""
    from .separating import separating_scenarios

    name = getattr(protocol, "name", protocol)
    # (kraft's operator commands: R12's log start, KIP-455's reassignment)
    extra = {**logstart_scenarios(), **reassign_scenarios()} if name == "kraft" else {}
    return {
        **spec_scenarios(3, protocol),
        **extra,
        # (R6, R15: the idempotent producer, every version: the spec's --idempotence)
        **idempotent_scenarios(),
        **separating_scenarios(name),
    }


def supported_kinds(adapter: Any, protocol: str, seed: int, rep: ConformReport) -> list[str]:
    """The fault kinds the adapter supports; an unsupported one is a coverage gap of the
    report, and random schedules leave it out. What the scenarios so far did not tell is tried
    once on a fresh cluster (a start per kind: few, on a real cluster)."""
    out = []
    for kind in FAULT_KINDS + (KRAFT_FAULT_KINDS if protocol == "kraft" else ()):
        probe = probe_ops(kind)
        ops = {op["op"] for op in probe}
        if ops & set(rep.gaps):
            continue
        if not probe or ops <= rep.supported:
            out.append(kind)
            continue
        try:
            adapter.request({"op": "start", "protocol": protocol, "seed": seed, **START_PROBE})
            for op in probe:
                adapter.request(op)
            out.append(kind)
        except CommandUnsupported:
            op = probe[0]["op"]
            rep.gaps[op] = rep.gaps.get(op, 0) + 1
    return out


def _random(
    adapter, rep, record, n, seed, protocol, stop_at_first, shrink, kinds, max_ops, spec_protocol,
    start_options=None,
):  # fmt: skip
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed

    failing: list[tuple[str, Scenario, Verdict, Outcome]] = []
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
    @given(schedule_strategy(kinds, max_ops=max_ops))
    def scenario(sc: Scenario) -> None:
        counter[0] += 1
        name = f"random:{counter[0]}"
        v, out = run_scenario_full(adapter, sc, name, seed, protocol, spec_protocol, start_options)
        if counter[0] <= n:
            record(name, sc, v, out)
        if v.verdict in FAILED:
            failing.append((name, sc, v, out))
            raise AssertionError(v.reason)

    with contextlib.suppress(AssertionError):
        scenario()
    if failing:
        # hypothesis replays the minimal failing example last
        name, sc, v, out = failing[-1]
        rep.shortest_failing = (f"shrunk:{name}", sc, v)
        rep.outcomes[f"shrunk:{name}"] = out
        if out.history is not None:
            rep.histories[f"shrunk:{name}"] = history_json(out.history)


def mutation_score(
    mutants: list[str],
    adapter_factory,
    *,
    random_examples: int = 10,
    seed: int = 0,
    protocol: str | None = None,
) -> list[tuple[str, str, int, str, list[str]]]:
    """[(mutant, verdict 'killed'/'survived', scenarios run, reason, separating)]: the kit at
    its defaults stops at a mutant's first failing scenario (usually a spec path, which comes
    first); ``separating`` lists, besides, every separating scenario of ``protocol``
    (traces/conformance/separating.py) that rejects the mutant, so that the report names the
    story of the weaker version whose bug the mutant brings back (issue 27)."""
    from .separating import separating_scenarios

    seps = separating_scenarios(protocol or DEFAULT_PROTOCOL)
    out = []
    for mu in mutants:
        ad = adapter_factory(mu)
        try:
            extra = {} if protocol is None else {"protocol": protocol}
            rep = conform(
                ad,
                random_examples=random_examples,
                seed=seed,
                stop_at_first=True,
                shrink=False,
                **extra,
            )
            killers = []
            for name, sc in seps.items():
                v, _out = run_scenario_full(ad, sc, name, seed, protocol or DEFAULT_PROTOCOL)
                if v.verdict in FAILED:
                    killers.append(name)
        finally:
            ad.close()
        if rep.rejected:
            name, _sc, v = rep.rejected[0]
            out.append((mu, "killed", len(rep.results), f"{name}: {v.reason}", killers))
        else:
            out.append((mu, "survived", len(rep.results), "", killers))
    return out


__all__ = [
    "ACCEPTED",
    "DEFAULT_TIMEOUT",
    "HISTORY_REASON",
    "REJECTED",
    "UNSUPPORTED",
    "Adapter",
    "AdapterError",
    "CommandRefused",
    "CommandUnsupported",
    "ConformReport",
    "InProcess",
    "Outcome",
    "check_history",
    "conform",
    "decode_answer",
    "default_scenarios",
    "history_json",
    "mutation_score",
    "run_scenario",
    "run_scenario_full",
]
