"""Helpers shared by the Spark tests (a uniquely named module, imported by the tests)."""

from __future__ import annotations

from isr.checker.bfs import check_bfs
from isr.checker.result import CheckResult


def cx_len(cx) -> int | None:
    return None if cx is None else cx.length


def summary(res: CheckResult) -> dict:
    """Everything two engines must agree on."""
    return {
        "distinct": res.distinct_states,
        "generated": res.states_generated,
        "depth": res.depth,
        "complete": res.complete,
        "stop_reason": res.stop_reason,
        "deadlocks": res.deadlocks,
        "deadlock_example": cx_len(res.deadlock_example),
        "never_fired": res.actions_never_fired,
        "verdicts": [(p.name, p.holds, cx_len(p.counterexample)) for p in res.properties],
        "exit": res.exit_code(),
    }


def assert_same_as_bfs(model, res: CheckResult, **kwargs) -> CheckResult:
    ref = check_bfs(model, **kwargs)
    assert summary(res) == summary(ref)
    return ref
