"""Runs of the reference implementation that the validator once answered wrongly (VALIDATION.md,
"Known gaps"): each was rejected, bad input or unsupported though the implementation is correct.
Each test reproduces one with a concrete simulation run (seed and faults) and wants it accepted.
"""

from __future__ import annotations

from impl.sim.scenarios import Fault, run_random
from impl.sim.world import World
from traces.format import header
from traces.validate import Verdict, validate_events


def verdict(w: World) -> Verdict:
    head = header(
        w.config.protocol,
        "sim",
        config=w.config.to_dict(),
        cluster={
            "brokers": w.ids,
            "assignments": {f"{t}-{p}": list(r) for (t, p), r in w.coord.assignments.items()},
        },
    )
    return validate_events(head, [dict(e) for e in w.trace])


def accepted(w: World) -> None:
    v = verdict(w)
    assert v.verdict == "accepted", (v.reason, v.event, v.mismatches)


# ---- replication below the broker count -----------------------------------------------------
def test_crash_of_a_broker_outside_the_partition_does_not_apply_to_it() -> None:
    """t-0 lives on brokers 0 and 1; broker 2 crashes and restarts. Its BrokerCrash (an event
    without topic, so broker-wide) was sent to t-0 too, where broker 2 holds no replica: bad
    input. It must simply not apply there."""
    w = run_random("kip-320", [Fault(100, "crash", 2, 0, 50)], seed=1, records=6, replication=2)
    assert w.coord.assignments[("t", 0)] == (0, 1)
    assert any(e["action"] == "BrokerCrash" and e["node"] == 2 for e in w.trace)
    accepted(w)
