"""The conformance kit's spec-derived scenarios come from the checker's state graph
(checker.graph.build_graph) and are exactly the ones its former hand-written BFS produced: the
digests below were taken from that BFS before the change (issue 15)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from isr.checker.graph import build_graph
from isr.traces.conformance import scenarios
from isr.traces.conformance.scenarios import MOVES, spec_scenarios, spec_targets

from ..checker.toys import grid


def digest(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()


def test_the_scenario_set_is_unchanged():
    kip320 = spec_scenarios(3, "kip-320")
    # 49 and 47 before R8's in-order delivery: without leader moves no request can go stale or
    # be lost at these bounds any more (the three ":crash-only" targets of
    # BrokerIgnoreStaleRequest, NetworkLoseLeaderAndIsr and leader->follower are gone), and the
    # directed "stale-controller-under-reordering" joined
    # (the digests moved, the counts did not, when a re-elected leader kept its followers' LEOs
    # and a restarted leader stopped being elected over another ISR member: issue 25; the
    # shortest path to some targets changed); 48 once a restarted follower still in the ISR
    # was sent nothing before KIP-380 (a missed bounce, issue 25; the directed
    # "epoch-walk-back" moved by operator elections, not bounces)
    assert len(kip320) == 48
    assert digest(kip320) == "7462e421c2867f89604a0a3344810b66da511cd66b50674226b5e9a440c34a61"
    hw = spec_scenarios(3, "hw-truncation")
    assert len(hw) == 45
    assert digest(hw) == "ec7bd6bb8ad7d961513245610e1743a16e1eef965817c28bb7dda996f209988b"
    assert all(
        not any(a in MOVES for a, _args in p)
        for p in spec_targets(3, "kip-320", without=MOVES).values()
    )


def test_no_search_of_its_own():
    src = Path(scenarios.__file__).read_text(encoding="utf-8")
    assert "build_graph(" in src and "deque" not in src and "popleft" not in src


def test_truncated_graph_and_transition_hook():
    seen = []
    sg = build_graph(grid(3), truncate_at=5, on_transition=lambda u, s, a, t: seen.append((s, t)))
    assert sg.truncated and 5 <= len(sg.states) < 16
    assert seen[:2] == [((0, 0), (1, 0)), ((0, 0), (0, 1))]
    full = build_graph(grid(3), edges=False)
    assert not full.truncated and len(full.states) == 16 and full.graph.number_of_edges() == 0
    assert len(full.prefix_to(max(full.dist, key=full.dist.get))) == 6
