"""How a BFS run ends: at the first violation when asked, once every property is decided, at a
limit, or on Ctrl-C; with the progress lines that go with it."""

from __future__ import annotations

import os
import signal

from isr.checker.bfs import Limits, check_bfs
from isr.checker.model import Property, SimpleModel
from isr.checker.progress import Progress, estimate_eta, format_line

from .toys import grid, with_dec


def test_stop_at_first_violation_keeps_the_shortest_counterexample():
    props = [
        Property("SumBelow5", "always", lambda s: s[0] + s[1] < 5),
        Property("XBelow3", "always", lambda s: s[0] < 3),
    ]
    full = check_bfs(grid(30, props))
    first = check_bfs(grid(30, props), stop_at_first_violation=True)
    assert first.stop_reason == "first-violation" and not first.complete
    by = {p.name: p for p in first.properties}
    assert by["XBelow3"].holds is False and by["XBelow3"].counterexample.length == 3
    assert by["SumBelow5"].holds is None and by["SumBelow5"].checked_to_depth == 2
    assert first.exit_code() == 1 and first.stopped_early
    assert first.distinct_states < full.distinct_states
    assert first.distinct_states == by["XBelow3"].found_after_states
    # the full run: both found, each with when it was found
    f = {p.name: p for p in full.properties}
    assert f["XBelow3"].found_after_states < f["SumBelow5"].found_after_states
    assert f["SumBelow5"].counterexample.length == 5


def test_stop_at_first_violation_of_an_action_property():
    res = check_bfs(with_dec(50), stop_at_first_violation=True)
    by = {p.name: p for p in res.properties}
    assert res.stop_reason == "first-violation"
    assert [s.action for s in by["Monotonic"].counterexample.steps] == ["Inc", "Inc", "Inc", "Dec"]
    assert by["ReachesTop"].holds is None  # not reached before the stop: undecided, not failed
    assert res.exit_code() == 1


def test_violation_in_an_initial_state():
    m = grid(3, [Property("Never", "always", lambda s: False)])
    res = check_bfs(m, stop_at_first_violation=True)
    assert res.stop_reason == "first-violation" and res.distinct_states == 1
    assert res.properties[0].counterexample.length == 0


def test_all_decided_without_a_violation_exits_0():
    m = grid(40, [Property("ReachesFive", "sometimes", lambda s: s == (5, 0))])
    res = check_bfs(m)
    assert res.stop_reason == "all-properties-decided" and not res.complete
    assert res.properties[0].holds is True and res.exit_code() == 0


def test_limits_leave_properties_checked_to_a_depth():
    m = grid(2000, [Property("Fine", "always", lambda s: True)])
    res = check_bfs(m, limits=Limits(max_states=1000))
    (p,) = res.properties
    assert p.holds is None and p.checked_to_depth == res.depth
    # every state up to that depth is in the visited set: (d+1)(d+2)/2 of them
    assert res.distinct_states >= (res.depth + 1) * (res.depth + 2) // 2
    assert res.extra["unexplored"] > 0
    assert p.to_json()["checked_to_depth"] == res.depth


def sigint_after(n: int, model: SimpleModel) -> SimpleModel:
    """The model, sending this process SIGINT at its n-th expansion."""
    calls = [0]
    inner = model.next

    def nxt(s):
        calls[0] += 1
        if calls[0] == n:
            os.kill(os.getpid(), signal.SIGINT)
        return inner(s)

    return SimpleModel(model.name, model.action_names, model.init, nxt, model.properties)


def test_ctrl_c_ends_the_search_with_its_partial_result():
    props = [
        Property("Fine", "always", lambda s: True),
        Property("XBelow3", "always", lambda s: s[0] < 3),
    ]
    seen = []

    def reporter(info):
        seen.append(info)

    reporter.interval = 0.0  # type: ignore[attr-defined]
    before = signal.getsignal(signal.SIGINT)
    res = check_bfs(sigint_after(5000, grid(2000, props)), progress=reporter)
    assert res.stop_reason == "interrupted" and not res.complete
    by = {p.name: p for p in res.properties}
    assert by["XBelow3"].holds is False and by["XBelow3"].counterexample.length == 3
    assert by["Fine"].holds is None and by["Fine"].checked_to_depth == res.depth > 0
    assert res.exit_code() == 1
    final = seen[-1]
    assert final["final"] and final["stop_reason"] == "interrupted" and final["queue"] > 0
    assert signal.getsignal(signal.SIGINT) is before  # restored


def test_keyboard_interrupt_from_the_model_is_an_interruption():
    calls = [0]
    inner = grid(2000).next

    def nxt(s):
        calls[0] += 1
        if calls[0] == 3000:
            raise KeyboardInterrupt
        return inner(s)

    m = SimpleModel("grid", ["IncX", "IncY"], lambda: [(0, 0)], nxt)
    res = check_bfs(m)
    assert res.stop_reason == "interrupted" and res.exit_code() == 3


# The level sizes of the default model (kip-320, 3 replicas, 2 records, 2 epochs, 1 crash).
DEFAULT_LEVELS = [1, 6, 20, 63, 182, 469, 1118, 2501, 5191, 10000, 18147, 30508, 46088, 61455]
DEFAULT_LEVELS += [71958, 74380, 69197, 58764, 44894, 30091, 17200, 8216, 3229, 992, 194, 16]


def test_eta_only_once_levels_shrink():
    assert estimate_eta([1, 2, 4], 0, 10.0) is None  # growing: no estimate
    assert estimate_eta([100, 99, 98], 0, 10.0) is None  # flat: none either
    eta = estimate_eta([100, 50, 25], 0, 15.0)  # 150 expanded in 15 s; 25 + about 25 left
    assert eta is not None and 4.5 < eta <= 5.0
    assert estimate_eta([100, 50, 25], 25, 17.5) < eta
    # on the default model, from its widest level on: within 10% of the states left
    levels = DEFAULT_LEVELS
    assert estimate_eta(levels[:16], 0, 1.0) is None  # the widest level: no shrinking yet
    for d in range(16, 24):
        expanded = sum(levels[:d])
        eta = estimate_eta(levels[: d + 1], 0, float(expanded))  # one second per state
        assert abs(eta - sum(levels[d:])) < 0.1 * sum(levels[d:]), d


def test_progress_lines():
    line = format_line(
        {
            "seconds": 3.0,
            "generated": 10,
            "distinct": 5,
            "queue": 2,
            "depth": 1,
            "rate": 1.7,
            "final": False,
            "peak_rss_mib": 50.0,
            "eta_seconds": 120.0,
        }
    )
    assert line.startswith("[progress]") and "peak RSS 50 MiB" in line
    assert "ETA ~2 min (rough estimate)" in line
    got = []
    p = Progress(got.append)
    p.last = 1.0
    p.final(2.0, 10, 5, 3, queue=7, stop_reason="max-seconds")
    assert got[-1]["queue"] == 7 and format_line(got[-1]).startswith("[stopped: max-seconds]")
    p.final(2.0, 10, 5, 3)
    assert format_line(got[-1]).startswith("[done]")


def test_peak_rss_counts_the_workers_it_is_given() -> None:
    """A parallel run's progress line counts its workers' memory (issue 30: "peak RSS 45 MiB"
    was the coordinator's alone while the workers held 913 MB)."""
    import os
    import sys

    from isr.checker.progress import peak_rss_mib

    own = peak_rss_mib()
    assert own is not None and own > 0
    if sys.platform.startswith("linux"):
        # a process counted twice (itself as a "worker") at least doubles; a gone pid adds 0
        assert peak_rss_mib([os.getpid()]) >= 1.9 * own
        assert peak_rss_mib([2**22 + 12345]) == own
