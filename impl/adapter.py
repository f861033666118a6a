"""The conformance adapter of the reference implementation (traces/ADAPTER.md).

    python -m impl.adapter [--mutant NAME]

Reads one JSON command per line on stdin, answers one JSON object per line on stdout. It runs
the implementation in the deterministic simulation (virtual time, so `run` is instant) and
returns the trace events the implementation recorded. Imports `impl/` only, like an adapter for
any other implementation would.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .mutants import MUTANTS
from .sim.world import Net, World, sim_config


class Session:
    def __init__(self, mutant: str | None) -> None:
        self.mutant = MUTANTS[mutant] if mutant else None
        self.w: World | None = None
        self.sent = 0

    def handle(self, cmd: dict[str, Any]) -> dict[str, Any]:
        op = cmd.get("op")
        fn = getattr(self, f"op_{op}", None)
        if fn is None:
            return {"ok": False, "error": f"unknown op {op!r}"}
        if op not in ("start", "stop") and self.w is None:
            return {"ok": False, "error": "no cluster: send start first"}
        return fn(cmd) or {"ok": True}

    @property
    def world(self) -> World:
        assert self.w is not None
        return self.w

    def op_start(self, c: dict[str, Any]) -> dict[str, Any]:
        cfg = sim_config(
            c.get("protocol", "kip-320"), min_insync_replicas=int(c.get("min_insync", 2))
        )
        kw: dict[str, Any] = {}
        if self.mutant:
            kw = {
                "broker_cls": self.mutant.broker_cls,
                "controller_cls": self.mutant.controller_cls,
            }
        self.w = World(
            int(c.get("brokers", 3)),
            int(c.get("partitions", 1)),
            int(c.get("replication", 3)),
            cfg,
            seed=int(c.get("seed", 0)),
            session_timeout_ms=int(c.get("session_timeout_ms", 600)),
            full_log_in_trace=False,
            **kw,
        )
        self.sent = 0
        self.world.run_until(100)
        w = self.world
        header = {
            "format": "isr-trace",
            "version": 1,
            "protocol": cfg.protocol,
            "source": "adapter",
            "observed": [
                "alive",
                "role",
                "leader",
                "leader_epoch",
                "isr",
                "hw",
                "hw_checkpoint",
                "leo",
                "log",
                "remote_leo",
                "coord",
            ],
            "log_encoding": "delta",
            "config": cfg.to_dict(),
            "cluster": {
                "brokers": w.ids,
                "assignments": {
                    f"{t}-{p}": list(r) for (t, p), r in sorted(w.coord.assignments.items())
                },
            },
        }
        return {"ok": True, "header": header}

    def op_produce(self, c: dict[str, Any]) -> None:
        w = self.world
        for _ in range(int(c.get("count", 1))):
            tps = sorted(w.coord.assignments)
            w.produce(tps[self.sent % len(tps)], f"m{self.sent}")
            self.sent += 1
            w.run_until(w.now + 10)

    def op_consume(self, c: dict[str, Any]) -> None:
        w = self.world
        w._refresh_metadata()
        for tp in sorted(w.coord.assignments):
            w._apply("consumer", w.consumer.poll(tp))
        w.run_until(w.now + 10)

    def op_crash(self, c: dict[str, Any]) -> None:
        self.world.crash(int(c["broker"]))

    def op_restart(self, c: dict[str, Any]) -> None:
        self.world.restart(int(c["broker"]))

    def op_partition(self, c: dict[str, Any]) -> None:
        self.world.net.blocked.add(frozenset((int(c["a"]), int(c["b"]))))

    def op_jitter(self, c: dict[str, Any]) -> None:
        self.world.net.max_delay_ms = max(1, int(c.get("max_ms", 200)))

    def op_heal(self, c: dict[str, Any]) -> None:
        self.world.net = Net()

    def op_run(self, c: dict[str, Any]) -> None:
        w = self.world
        w.run_until(w.now + int(c.get("ms", 100)))

    def op_trace(self, c: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "events": self.world.trace}

    def op_stop(self, c: dict[str, Any]) -> dict[str, Any]:
        self.w = None
        return {"ok": True, "bye": True}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m impl.adapter")
    ap.add_argument("--mutant", choices=sorted(MUTANTS), help="run a deliberately broken version")
    a = ap.parse_args(argv)
    s = Session(a.mutant)
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            cmd = json.loads(line)
            resp = s.handle(cmd)
        except Exception as e:  # the adapter answers every line, even a bad one
            resp = {"ok": False, "error": f"{type(e).__name__}: {e}"}
        sys.stdout.write(json.dumps(resp, separators=(",", ":")) + "\n")
        sys.stdout.flush()
        if resp.get("bye"):
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())
