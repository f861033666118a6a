"""The accumulator that carries per-partition level summaries to the driver.

Its value is a dict ``{(level, partition): summary}``; adding overwrites by key, so a task that
Spark runs again (a lost executor, a recomputed cache block) cannot count twice."""

from __future__ import annotations

from typing import Any

from pyspark.accumulators import AccumulatorParam


class SummaryTable(AccumulatorParam):
    def zero(self, value: dict[Any, Any]) -> dict[Any, Any]:
        return {}

    def addInPlace(self, a: dict[Any, Any], b: dict[Any, Any]) -> dict[Any, Any]:
        a.update(b)
        return a


def summary_accumulator(sc: Any) -> Any:
    return sc.accumulator({}, SummaryTable())


def take_level(acc: Any, level: int) -> list[Any]:
    """The summaries of ``level`` (one per partition), removed from the driver's table."""
    table = acc.value
    mine = {k: v for k, v in table.items() if k[0] == level}
    acc.value = {k: v for k, v in table.items() if k[0] != level}
    return [mine[k] for k in sorted(mine)]
