from __future__ import annotations

from isr.checker.bfs import check_bfs
from isr.spec import Config, IsrSpec


def verdicts(properties=None, **kw) -> dict:
    """{property: (holds, shortest counterexample length or None)} of one exhaustive run."""
    res = check_bfs(IsrSpec(Config(**kw)), properties=properties)
    assert res.complete or res.stop_reason == "all-properties-decided"
    return {
        p.name: (p.holds, p.counterexample.length if p.counterexample else None)
        for p in res.properties
        if p.kind != "eventually"  # liveness is `isr liveness`'s, BFS leaves it undecided
    }


SMALL = dict(replicas=2, records=1, epochs=2)
