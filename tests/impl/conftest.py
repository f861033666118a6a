"""Fixtures for the real-cluster tests (marked ``zookeeper``)."""

from __future__ import annotations

import pytest
from isr.impl.cluster import zk as zkserver
from isr.impl.cluster.manager import Cluster
from isr.impl.core.config import Config


@pytest.fixture
def cluster(tmp_path):
    """A running 3-broker cluster (1 partition, replication 3, min.insync 2, 2 s sessions);
    brought down afterwards. Without ZooKeeper installed it fails saying what to install."""
    try:
        zkserver.find_install()
    except zkserver.ZooKeeperMissing as e:
        pytest.fail(str(e))
    c = Cluster(tmp_path / "cluster")
    cfg = Config(min_insync_replicas=2, replica_lag_time_max_ms=3_000, request_timeout_ms=3_000)
    c.up(brokers=3, partitions=1, replication=3, config=cfg, session_timeout_s=2.0)
    try:
        yield c
    finally:
        c.down()
