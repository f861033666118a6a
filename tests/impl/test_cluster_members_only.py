"""Only members speak (issue 17, item 4), on a real cluster: a forged control frame (no HMAC)
and a forged ZooKeeper write are refused, a controller epoch not recorded in ZooKeeper is not
believed, and a fuzzed frame stream kills nothing and leaves no traceback in the logs."""

from __future__ import annotations

import json
import os
import random
import socket
import stat
import time
from typing import Any

import pytest
from isr.impl.cluster import wire, zkcoord
from isr.impl.core import messages as m
from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError

pytestmark = pytest.mark.zookeeper


def _conn(cluster, b: int) -> socket.socket:
    port = cluster.state["brokers"][str(b)]["port"]
    return socket.create_connection(("127.0.0.1", port), timeout=20)


def _status_after(sk: socket.socket, key: bytes | None = None) -> dict[str, Any]:
    """A status op on the same connection: the broker handles a connection's frames in order,
    so its answer comes after every frame sent before it was handled."""
    sk.sendall(wire.encode({"op": "status", "id": 9}, key))
    buf = b""
    while len(buf) < 4:
        chunk = sk.recv(4 - len(buf))
        assert chunk, "connection closed without an answer"
        buf += chunk
    (n,) = wire.LEN.unpack(buf)
    data = b""
    while len(data) < n:
        chunk = sk.recv(n - len(data))
        assert chunk, "connection closed mid-answer"
        data += chunk
    return json.loads(data)


def _frame(msg: Any, src: int = 0, epoch_key: bytes | None = None) -> bytes:
    return wire.encode({"src": src, "clock": 0, "msg": m.to_wire(msg)}, epoch_key)


def _role(cluster, b: int) -> tuple[str, int]:
    with _conn(cluster, b) as sk:
        row = _status_after(sk)["status"]["partitions"][0]
    return row["role"], row["leader_epoch"]


def test_members_only(cluster) -> None:
    secret_file = cluster.dir / wire.SECRET_FILE
    assert stat.S_IMODE(os.stat(secret_file).st_mode) == 0o600
    tp = ("t", 0)
    victim = 1
    log_dir = cluster.dir / f"broker-{victim}" / "log" / "t-0"
    deadline = time.monotonic() + 30  # until the victim applied its first LeaderAndIsr
    while not log_dir.is_dir() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert log_dir.is_dir()

    # 1. a forged StopReplica(delete) without the cluster's HMAC is dropped
    stop = m.StopReplica(controller_id=0, controller_epoch=1, partitions=(tp,), delete=True)
    with _conn(cluster, victim) as sk:
        sk.sendall(_frame(stop) + _frame(stop, src=2))
        wrong = wire.encode({"src": 0, "clock": 0, "msg": m.to_wire(stop)}, b"not the secret")
        sk.sendall(wrong)
        _status_after(sk)
    assert log_dir.is_dir(), "a forged StopReplica deleted the replica"

    # 2. a signed request claiming controller epoch 10**6 (ZooKeeper records far less) is
    # dropped: the broker still follows the real controller's next LeaderAndIsr
    role0, epoch0 = _role(cluster, victim)
    forged = m.StopReplica(controller_id=0, controller_epoch=10**6, partitions=(tp,))
    with _conn(cluster, victim) as sk:
        sk.sendall(_frame(forged, epoch_key=cluster.secret))
        _status_after(sk)
    cluster.elect_leader(broker=victim)
    deadline = time.monotonic() + 30
    while _role(cluster, victim) != ("leader", epoch0 + 1) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _role(cluster, victim) == ("leader", epoch0 + 1), (role0, epoch0)

    # 3. ZooKeeper: anyone may read, nobody without the secret may write partition state
    zk = KazooClient(hosts=cluster.zk_hosts)
    zk.start(timeout=15)
    try:
        path = zkcoord.state_path(tp)
        data, st = zk.get(path)
        bad = json.loads(data) | {"leader": 2, "isr": [2]}
        with pytest.raises(NoAuthError):
            zk.set(path, json.dumps(bad).encode(), version=st.version)
        with pytest.raises(NoAuthError):
            zk.delete(f"/brokers/ids/{victim}")
        with pytest.raises(NoAuthError):
            zk.set("/controller_epoch", b"1000000")
    finally:
        zk.stop()
        zk.close()

    # 4. a fuzzed frame stream: 300 frames of garbage, JSON of every shape, wrong messages
    rng = random.Random(17)
    frames: list[bytes] = []
    for k in range(300):
        kind = k % 6
        if kind == 0:
            body = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
        elif kind == 1:
            body = json.dumps(rng.choice([[], 1, "x", None, [1, {"a": 2}], 1.5])).encode()
        elif kind == 2:
            body = json.dumps(
                {"src": rng.choice([0, "c", None, [], 1.5, True]), "msg": {}}
            ).encode()
        elif kind == 3:
            msg = {"@": rng.choice(["LeaderAndIsr", "ProduceRequest", "Nope", "FetchRequest"])}
            msg |= {"x": rng.randrange(9)}
            body = json.dumps({"src": rng.choice([0, "client"]), "clock": 1, "msg": msg}).encode()
        elif kind == 4:
            pr = {"@": "ProduceRequest", "client_id": 5, "correlation_id": "a", "topic": [],
                  "partition": "0", "acks": 7, "records": [[1]]}  # fmt: skip
            body = json.dumps({"src": "client", "clock": 0, "msg": pr}).encode()
        else:
            body = b'{"op": "elect_leader", "broker": 2}'
        frames.append(wire.LEN.pack(len(body)) + body)
    for b in cluster.broker_ids():
        for i in range(0, 300, 25):  # a malformed frame closes the connection: reconnect
            with _conn(cluster, b) as sk:
                try:
                    for f in frames[i : i + 25]:
                        sk.sendall(f)
                    sk.shutdown(socket.SHUT_WR)
                    while sk.recv(65536):  # until the broker closes it (or answers nothing)
                        pass
                except OSError:
                    pass  # reset by the broker closing it mid-send
        with _conn(cluster, b) as sk:
            sk.sendall(wire.LEN.pack(wire.MAX_FRAME + 1))
        with _conn(cluster, b) as sk:
            assert _status_after(sk)["status"]["broker"] == b  # still serving
    for b in cluster.broker_ids():
        assert cluster.pid_alive(cluster.state["brokers"][str(b)]["pid"])
    cluster.wait_ready(30)
    for b in cluster.broker_ids():
        text = (cluster.dir / f"broker-{b}" / "broker.log").read_text(errors="replace")
        assert "Traceback" not in text, text[-3000:]
        assert text.count("WARNING") < 30, text[-3000:]  # once per kind and peer, not per frame
