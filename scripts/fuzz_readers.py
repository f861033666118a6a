"""Seeded fuzz of every reader: hostile mutations of the golden samples through the CLI.

    python scripts/fuzz_readers.py [--cases 2000] [--seed 0] [--timeout 20] [--json out.json]

Targets: `isr validate` (every golden trace in traces/samples, the per-broker cluster run as a
directory), `isr replay` and `isr explain` (counterexamples written by `isr check --trace-out`),
and the conformance kit's reading of an adapter's answers (recorded answers of the reference
adapter, mutated, fed through a pipe to traces.conformance.runner.Adapter). Each case must end
with an exit code its command documents, one stderr line on exit 2, and no traceback or hang.
Prints the cases run per target and the problems grouped by the place they come from; exits 1
if there is any. The mutations are those of tests/cli/hostile_inputs.py (shared with the quick
version in tests/cli/test_hostile_input.py).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import seed as hseed  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.cli.hostile_inputs import (  # noqa: E402
    Hang,
    make_counterexamples,
    mutate,
    problem,
    run_cli,
    time_limit,
    trace_samples,
)


# ---- the adapter's answers --------------------------------------------------------------------
def record_answers() -> tuple[list, list[bytes]]:
    """One spec scenario run against the reference adapter in-process: its commands and the raw
    answer lines (what a real adapter process would write)."""
    from isr.impl.adapter import Session
    from isr.traces.conformance.scenarios import spec_scenarios

    _name, sc = next(iter(spec_scenarios(3, "kip-320").items()))
    start = {"op": "start", "brokers": 3, "replication": 3, "protocol": "kip-320", "seed": 0}
    cmds = [start, *sc, {"op": "trace"}]
    s = Session(None)
    return sc, [json.dumps(s.handle(json.loads(json.dumps(c)))).encode() for c in cmds]


class _FakeProc:
    """Stands in for the adapter's Popen: stdout is a real pipe fed by a thread (so a reader with
    a deadline sees a real file descriptor), stdin goes nowhere."""

    def __init__(self, answers: bytes, stall: bool) -> None:
        r, w = os.pipe()
        self.stdout = os.fdopen(r, "rb", buffering=0)
        self.stdin = open(os.devnull, "wb")  # noqa: SIM115
        self.stderr = None
        self.pid = -1
        self.returncode = None
        self._w = w
        self._lock = threading.Lock()

        def feed() -> None:
            try:
                os.write(w, answers)
            except OSError:  # the reader is gone (closed the pipe): nothing left to feed
                return
            if not stall:
                self._close_writer()

        threading.Thread(target=feed, daemon=True).start()

    def _close_writer(self) -> None:
        """Once only: a second close could hit a descriptor number reused meanwhile."""
        with self._lock:
            if self._w is not None:
                os.close(self._w)
                self._w = None

    def poll(self):
        return self.returncode

    def terminate(self) -> None:
        pass

    kill = terminate

    def wait(self, timeout=None):
        return 0

    def close(self) -> None:
        for f in (self.stdout, self.stdin):
            f.close()
        self._close_writer()


def run_adapter_case(scenario, answers: bytes, stall: bool, timeout: float):
    """The runner reading ``answers``; returns (problem or None, place)."""
    from isr.traces.conformance import runner

    ad = object.__new__(runner.Adapter)
    ad.command = "fuzz-adapter"
    proc = _FakeProc(answers, stall)
    ad.proc = proc
    if hasattr(runner, "DEFAULT_TIMEOUT"):  # the reader with a deadline (after issue 17)
        ad.timeout = 2.0
        ad._buf = b""
        ad._err = tempfile.TemporaryFile()  # noqa: SIM115
    try:
        with time_limit(timeout):
            runner.run_scenario(ad, scenario, "fuzz")
        return None, ""
    except runner.AdapterError:
        return None, ""
    except Hang:
        return "hang", "hang"
    except Exception as e:
        from tests.cli.hostile_inputs import _where

        return f"traceback at {_where(e)}: {e!r}"[:300], _where(e)
    finally:
        proc.close()
        if hasattr(ad, "_err"):
            ad._err.close()


# ---- the driver --------------------------------------------------------------------------------
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=2000, help="cases per target (default 2000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds per case before a hang")
    ap.add_argument("--targets", default="validate,replay,explain,adapter")
    ap.add_argument("--json", metavar="FILE", help="write the figures as JSON")
    a = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="isr-fuzz-"))
    stats: dict[str, dict] = {}
    places: dict[str, collections.Counter] = {}
    examples: dict[str, dict[str, str]] = {}
    try:
        traces = trace_samples()
        cxs = make_counterexamples(tmp / "cx")
        cluster = [p for p in traces if p.parent.name == "cluster-kip320-produce"]
        singles = [p for p in traces if p not in cluster]

        def record(target: str, what: str, prob: str | None, place: str, code) -> None:
            s = stats.setdefault(target, {"cases": 0, "problems": 0, "codes": {}, "kinds": {}})
            s["cases"] += 1
            s["codes"][str(code)] = s["codes"].get(str(code), 0) + 1
            if prob:
                s["problems"] += 1
                kind = prob.split()[0]  # traceback, hang, exit (undocumented code), stderr
                s["kinds"][kind] = s["kinds"].get(kind, 0) + 1
                key = place or prob[:120]
                places.setdefault(target, collections.Counter())[key] += 1
                examples.setdefault(target, {}).setdefault(key, f"{what}: {prob}")

        def cli_target(target: str, sources: list[Path], argv_of) -> None:
            @hseed(a.seed)
            @settings(
                max_examples=a.cases,
                deadline=None,
                database=None,
                phases=[Phase.generate],
                suppress_health_check=list(HealthCheck),
            )
            @given(st.data())
            def case(data) -> None:
                src = data.draw(st.sampled_from(sources))
                what, mutated = mutate(src.read_bytes(), data.draw)
                work = tmp / "case"
                shutil.rmtree(work, ignore_errors=True)
                work.mkdir()
                if src in cluster:  # a run of several files: mutate one of them
                    for p in cluster:
                        (work / p.name).write_bytes(p.read_bytes())
                    (work / src.name).write_bytes(mutated)
                    path = work
                else:
                    path = work / src.name
                    path.write_bytes(mutated)
                o = run_cli(argv_of(path, work), timeout=a.timeout)
                record(target, f"{src.name} {what}", problem(target, o), o.where, o.code)

            case()

        targets = a.targets.split(",")
        t0 = time.perf_counter()
        if "validate" in targets:
            cli_target("validate", singles + cluster, lambda p, _w: ["validate", str(p), "--quiet"])
        if "replay" in targets:
            cli_target("replay", cxs, lambda p, _w: ["replay", str(p)])
        if "explain" in targets:
            cli_target(
                "explain", cxs, lambda p, w: ["explain", str(p), "--html", str(w / "out.html")]
            )
        if "adapter" in targets:
            scenario, answers = record_answers()
            base = tmp / "answers.ndjson"
            base.write_bytes(b"\n".join(answers) + b"\n")

            @hseed(a.seed)
            @settings(
                max_examples=a.cases,
                deadline=None,
                database=None,
                phases=[Phase.generate],
                suppress_health_check=list(HealthCheck),
            )
            @given(st.data())
            def adapter_case(data) -> None:
                what, mutated = mutate(base.read_bytes(), data.draw)
                stall = data.draw(st.integers(0, 19)) == 0  # the adapter stops answering
                prob, place = run_adapter_case(scenario, mutated, stall, a.timeout)
                record("adapter", what + (" +stall" if stall else ""), prob, place, "-")

            adapter_case()
        seconds = time.perf_counter() - t0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    total = sum(s["cases"] for s in stats.values())
    bad = sum(s["problems"] for s in stats.values())
    kinds: collections.Counter = collections.Counter()
    for s in stats.values():
        kinds.update(s["kinds"])
    print(
        f"fuzz_readers: seed {a.seed}, {total} cases in {seconds:.0f} s, {bad} with a problem "
        f"({', '.join(f'{k}: {n}' for k, n in sorted(kinds.items())) or 'none'})"
    )
    for t, s in stats.items():
        print(
            f"  {t:9} {s['cases']:6} cases, {s['problems']:5} problems {s['kinds']}, "
            f"exit codes {s['codes']}"
        )
        for place, n in places.get(t, collections.Counter()).most_common():
            print(f"      {n:5}  {place}")
            print(f"             e.g. {examples[t][place][:220]}")
    n_places = sum(len(c) for c in places.values())
    print(f"distinct places: {n_places}")
    if a.json:
        Path(a.json).write_text(
            json.dumps(
                {
                    "seed": a.seed,
                    "cases": total,
                    "problems": bad,
                    "kinds": dict(kinds),
                    "places": {t: dict(c) for t, c in places.items()},
                    "targets": stats,
                },
                indent=1,
            )
        )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
