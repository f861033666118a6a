"""Spark engines: a level-synchronous distributed BFS (:mod:`.engine`) and parallel seeded random
walks (:mod:`.simulate`). Generic over :mod:`checker.model`; knows nothing about Kafka.

Layout, one job per module:

* :mod:`.session`    — get or start a SparkContext; every failure to start is one SparkError.
* :mod:`.partition`  — fingerprint partitioning and the per-partition visited set (dedup).
* :mod:`.tasks`      — what runs on executors: expand a frontier partition, dedup a partition.
* :mod:`.summary`    — the small per-level summaries executors send back, and how they merge.
* :mod:`.checkpoint` — write the frontier and visited set after each level; resume from them.
* :mod:`.engine`     — the driver loop (``check_spark``) and counterexample rebuild.
* :mod:`.progress`   — one progress line per level.
"""
