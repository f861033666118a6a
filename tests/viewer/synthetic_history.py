"""A small synthetic chaos history for the timeline's tests: two producers on two partitions
for 6 s, broker 1 killed at 2.0 s and restarted at 3.0 s (sends in between fail or time out),
leadership moved at 4.0 s, then one consumer reading everything back, which finds another
record at the offsets of two acknowledged writes (``LOST``: two lost writes)."""

from __future__ import annotations

from typing import Any

LOST = ("p0-10", "p1-70")  # acknowledged, then read back as another record
FAULTS = [
    {"time": 2.0, "event": "kill 1"},
    {"time": 3.0, "event": "restart 1"},
    {"time": 4.0, "event": "elect 2"},
]


def history() -> dict[str, Any]:
    """The history document (header keys, ``faults`` and ``ops``)."""
    ops: list[dict[str, Any]] = []
    logs: dict[int, list[str]] = {0: [], 1: []}
    t = 0.0
    for i in range(100):
        t = round(i * 0.06, 3)
        for k in (0, 1):
            rid, part = f"p{k}-{i}", (i + k) % 2
            ops.append(
                {
                    "process": f"p{k}",
                    "type": "invoke",
                    "f": "send",
                    "partition": part,
                    "value": rid,
                    "time": t + 0.001 * k,
                }
            )
            if 2.0 <= t < 3.0 and i % 3 == 0:
                ops.append(
                    {
                        "process": f"p{k}",
                        "type": "info",
                        "f": "send",
                        "partition": part,
                        "value": rid,
                        "error": "REQUEST_TIMED_OUT",
                        "time": t + 0.05,
                    }
                )
            elif 2.0 <= t < 3.0:
                ops.append(
                    {
                        "process": f"p{k}",
                        "type": "fail",
                        "f": "send",
                        "partition": part,
                        "value": rid,
                        "error": "NOT_ENOUGH_REPLICAS",
                        "time": t + 0.03,
                    }
                )
            else:
                off = len(logs[part])
                logs[part].append(rid)
                ops.append(
                    {
                        "process": f"p{k}",
                        "type": "ok",
                        "f": "send",
                        "partition": part,
                        "value": rid,
                        "offset": off,
                        "leader_epoch": 0 if t < 4 else 1,
                        "time": t + 0.02 + 0.001 * k,
                    }
                )
    t += 0.5
    for part in (0, 1):
        recs = [[o, f"other-{o}" if rid in LOST else rid] for o, rid in enumerate(logs[part])]
        ops.append(
            {
                "process": "consumer",
                "type": "invoke",
                "f": "poll",
                "partition": part,
                "from_offset": 0,
                "time": t,
            }
        )
        ops.append(
            {
                "process": "consumer",
                "type": "ok",
                "f": "poll",
                "partition": part,
                "from_offset": 0,
                "hw": len(recs),
                "records": recs,
                "time": t + 0.1,
            }
        )
        t += 0.2
    return {
        "format": "isr-history",
        "version": 1,
        "acks": "all",
        "idempotent": True,
        "source": "tests/viewer/synthetic_history.py",
        "faults": FAULTS,
        "ops": ops,
    }
