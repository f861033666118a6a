"""One SparkContext for the whole Spark test set: local[2], two partitions, no UI."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def spark():
    from isr.checker.spark.session import code_roots, start_context

    sc = start_context(
        "local[2]",
        "isr-tests",
        code_roots(),
        {
            "spark.default.parallelism": "2",
            "spark.sql.shuffle.partitions": "2",
            "spark.driver.memory": "1g",
        },
    )
    yield sc
    sc.stop()
