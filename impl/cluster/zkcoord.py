"""The R18 layout in ZooKeeper through kazoo.

- /brokers/ids/[id]: ephemeral, {"host", "port"} (registration, R7's session)
- /brokers/topics/[topic]: {"partitions": {"0": [replicas...]}} (assignment, R1)
- /brokers/topics/[topic]/partitions/[p]/state: {leader, leader_epoch, isr, controller_epoch},
  written with compare-and-set on the znode version (R9, R18)
- /controller: ephemeral {"brokerid"}; /controller_epoch: incremented at every election (R9)
- /admin/reassign_partitions, /admin/preferred_replica_election, /admin/delete_topics: created,
  not acted on (not modelled).
- /isr/clock: not Kafka's: the coordination service's Lamport clock, a decimal integer (empty =
  0), only ever raised (``raise_clock``: read value and version, write the max, retry on
  BadVersion). See traces/FORMAT.md, "Clocks", for who raises and who reads it.
"""

from __future__ import annotations

import json
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError
from kazoo.security import ACL, make_acl, make_digest_acl

from ..core.messages import TP, CasResult, CasWrite, PartitionState

PATHS = [
    "/brokers/ids",
    "/brokers/topics",
    "/admin/reassign_partitions",
    "/admin/preferred_replica_election",
    "/admin/delete_topics",
    "/isr/clock",
]
CLOCK = "/isr/clock"


def state_path(tp: TP) -> str:
    return f"/brokers/topics/{tp[0]}/partitions/{tp[1]}/state"


ZK_USER = "isr"


def acls(secret: bytes) -> list[ACL]:
    """Every node the cluster creates: anyone may read (clients find leaders, ``status``),
    only a holder of the cluster's secret may write, delete or change it (issue 17)."""
    return [
        make_digest_acl(ZK_USER, secret.decode(), all=True),
        make_acl("world", "anyone", read=True),
    ]


def connect(hosts: str, timeout_s: float = 3.0, secret: bytes | None = None) -> KazooClient:
    """A session; with the cluster's ``secret`` it authenticates (digest) and creates nodes
    with ``acls`` (without it: reads, and writes to nodes created without a secret)."""
    if secret is None:
        zk = KazooClient(hosts=hosts, timeout=timeout_s)
    else:
        zk = KazooClient(
            hosts=hosts,
            timeout=timeout_s,
            auth_data=[("digest", f"{ZK_USER}:{secret.decode()}")],
            default_acl=acls(secret),
        )
    zk.start(timeout=15)
    for p in PATHS:
        zk.ensure_path(p)
    return zk


def read_controller_epoch(zk: KazooClient) -> int:
    """The controller epoch ZooKeeper records (R9): the latest election's; 0 before any."""
    try:
        data, _ = zk.get("/controller_epoch")
    except NoNodeError:
        return 0
    try:
        return int(data or b"0")
    except ValueError:
        return 0


def read_clock(zk: KazooClient) -> int:
    """The coordination service's Lamport clock (0 if it was never raised)."""
    try:
        data, _ = zk.get(CLOCK)
    except NoNodeError:
        return 0
    return int(data or b"0")


def raise_clock(zk: KazooClient, clock: int) -> int:
    """Raise /isr/clock to at least ``clock`` (compare-and-set on the znode version, retried
    when another writer got in first); returns the value it holds afterwards."""
    while True:
        try:
            data, stat = zk.get(CLOCK)
        except NoNodeError:
            try:
                zk.create(CLOCK, str(clock).encode(), makepath=True)
                return clock
            except NodeExistsError:
                continue
        cur = int(data or b"0")
        if cur >= clock:
            return cur
        try:
            zk.set(CLOCK, str(clock).encode(), version=stat.version)
            return clock
        except BadVersionError:
            continue


def encode_state(st: PartitionState) -> bytes:
    return json.dumps(
        {
            "leader": st.leader,
            "leader_epoch": st.leader_epoch,
            "isr": list(st.isr),
            "controller_epoch": st.controller_epoch,
        }
    ).encode()


def decode_state(data: bytes) -> PartitionState:
    d = json.loads(data)
    return PartitionState(d["leader"], d["leader_epoch"], tuple(d["isr"]), d["controller_epoch"])


def read_state(zk: KazooClient, tp: TP) -> tuple[PartitionState, int] | None:
    try:
        data, stat = zk.get(state_path(tp))
    except NoNodeError:
        return None
    return decode_state(data), stat.version


def cas(zk: KazooClient, w: CasWrite) -> CasResult:
    path = state_path(w.tp)
    try:
        if w.expected_version == -1:
            zk.create(path, encode_state(w.state), makepath=True)
            return CasResult(w.tp, True, w.state, 0)
        stat = zk.set(path, encode_state(w.state), version=w.expected_version)
        return CasResult(w.tp, True, w.state, stat.version)
    except (BadVersionError, NodeExistsError, NoNodeError):
        cur = read_state(zk, w.tp)
        return CasResult(w.tp, False, cur[0] if cur else None, cur[1] if cur else -1)


def live_brokers(zk: KazooClient) -> set[int]:
    return {int(c) for c in zk.get_children("/brokers/ids")}


def broker_czxids(zk: KazooClient) -> dict[int, int]:
    """Live brokers with the creation zxid of their registration (KIP-380's broker epoch): a
    broker whose czxid changed registered again, so it restarted."""
    out = {}
    for c in zk.get_children("/brokers/ids"):
        st = zk.exists(f"/brokers/ids/{c}")
        if st is not None:
            out[int(c)] = st.czxid
    return out


def restarted_brokers(zk: KazooClient, czxids: dict[int, int]) -> set[int]:
    """The brokers whose registration says a new process made it (``restart``), not a running
    broker back in a new session."""
    out = set()
    for b in czxids:
        try:
            data, _ = zk.get(f"/brokers/ids/{b}")
        except NoNodeError:
            continue
        if json.loads(data).get("restart"):
            out.add(b)
    return out


def bounced_leaders(zk: KazooClient, tps: list[TP], czxids: dict[int, int]) -> set[int]:
    """Recorded leaders registered after the partition state naming them was written: they
    restarted since (within their session, or before any controller saw them go), so that
    leadership is void and must be re-elected."""
    out = set()
    for tp in tps:
        try:
            data, stat = zk.get(state_path(tp))
        except NoNodeError:
            continue
        leader = decode_state(data).leader
        if leader in czxids and czxids[leader] > stat.mzxid:
            out.add(leader)
    return out


def broker_address(zk: KazooClient, b: int) -> tuple[str, int] | None:
    try:
        data, _ = zk.get(f"/brokers/ids/{b}")
    except NoNodeError:
        return None
    d = json.loads(data)
    return d["host"], int(d["port"])


def assignments(zk: KazooClient) -> dict[TP, tuple[int, ...]]:
    out: dict[TP, tuple[int, ...]] = {}
    for t in zk.get_children("/brokers/topics"):
        try:
            data, _ = zk.get(f"/brokers/topics/{t}")
        except NoNodeError:
            continue
        if not data:
            continue
        for p, reps in json.loads(data)["partitions"].items():
            out[(t, int(p))] = tuple(reps)
    return out


def states(zk: KazooClient, tps: list[TP]) -> dict[TP, tuple[PartitionState, int]]:
    out = {}
    for tp in tps:
        sv = read_state(zk, tp)
        if sv is not None:
            out[tp] = sv
    return out


def create_topic(zk: KazooClient, topic: str, assignment: dict[int, tuple[int, ...]]) -> None:
    data = json.dumps({"partitions": {str(p): list(r) for p, r in assignment.items()}}).encode()
    try:
        zk.create(f"/brokers/topics/{topic}", data, makepath=True)
    except NodeExistsError:
        zk.set(f"/brokers/topics/{topic}", data)


def try_become_controller(zk: KazooClient, broker_id: int) -> int | None:
    """Create the ephemeral /controller; on success bump /controller_epoch (CAS) and return it."""
    try:
        zk.create("/controller", json.dumps({"brokerid": broker_id}).encode(), ephemeral=True)
    except NodeExistsError:
        return None
    while True:
        try:
            data, stat = zk.get("/controller_epoch")
        except NoNodeError:
            try:
                zk.create("/controller_epoch", b"1")
                return 1
            except NodeExistsError:
                continue
        epoch = int(data or b"0") + 1
        try:
            zk.set("/controller_epoch", str(epoch).encode(), version=stat.version)
            return epoch
        except BadVersionError:
            continue


def leaders(zk: KazooClient) -> dict[TP, int]:
    tps = list(assignments(zk))
    return {tp: st.leader for tp, (st, _v) in states(zk, tps).items()}


def describe(zk: KazooClient) -> dict[str, Any]:
    asg = assignments(zk)
    st = states(zk, list(asg))
    return {
        "live": sorted(live_brokers(zk)),
        "partitions": {
            f"{t}-{p}": {
                "replicas": list(asg[(t, p)]),
                "state": (
                    None
                    if (t, p) not in st
                    else {
                        "leader": st[(t, p)][0].leader,
                        "leader_epoch": st[(t, p)][0].leader_epoch,
                        "isr": list(st[(t, p)][0].isr),
                        "version": st[(t, p)][1],
                    }
                ),
            }
            for (t, p) in sorted(asg)
        },
    }
