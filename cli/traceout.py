"""`--trace-out FILE --trace-format ndjson|itf`: the counterexample writer every command shares.

`isr check`, `isr simulate` and `isr liveness` write their first counterexample (or lasso) the
same way; only the format differs: our NDJSON (traces/counterexample/) or Apalache's ITF JSON
(traces/counterexample/itf.py), which TLA+ tools read. `isr replay` and `isr explain` take both.
"""

from __future__ import annotations

import argparse
import sys

from isr.checker.result import CheckResult, Counterexample
from isr.spec.protocols import protocol_source
from isr.traces.counterexample import itf

from .errors import UsageError


def add_trace_args(p: argparse.ArgumentParser, what: str = "counterexample") -> None:
    p.add_argument(
        "--trace-out",
        metavar="FILE",
        help=f"write the first {what} to FILE (replay it with `isr replay FILE`, view it with "
        "`isr explain FILE`)",
    )
    p.add_argument(
        "--trace-format",
        choices=itf.FORMATS,
        default="ndjson",
        help="format of --trace-out: ndjson (default) or itf (Apalache's Informal Trace Format)",
    )


def full_states(cx: Counterexample) -> list[dict]:
    """Whole states along a counterexample: the engine's own (:attr:`Counterexample.states`),
    rebuilt from the changes only for a counterexample read back from JSON."""
    return cx.whole_states()


def write_trace(path: str, fmt: str, model, res: CheckResult, what: str = "counterexample") -> None:
    """Write the first counterexample (or liveness lasso, with its ``loop_start``) of ``res`` in
    ``fmt``. No counterexample: a note on stderr, nothing written."""
    prop = next((p for p in res.properties if p.counterexample is not None), None)
    if prop is None:
        print(f"isr: no {what} to write to {path}", file=sys.stderr)
        return
    cx = prop.counterexample
    steps = [{"action": s.action, "args": s.args, "changed": s.changed} for s in cx.steps]
    header = {
        "model": model.name,
        "config": model.config.to_json(),
        **protocol_source(model.protocol),  # a replay refuses a changed file
        "property": prop.name,
        "kind": prop.kind,
    }
    if cx.loop_start is not None:
        header["loop_start"] = cx.loop_start
    try:
        itf.write_as(fmt, path, header, full_states(cx), steps)
    except OSError as e:
        raise UsageError(f"cannot write {path}: {e.strerror}") from None
