"""Scripted and random scenarios for the simulation (R8, R9, R13, R17; KIP-101's data-loss run;
leadership moved away from a live leader)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core.controller import Controller
from ..core.replica import Broker
from .world import World, sim_config

TP0 = ("t", 0)


def run_until_acked(w: World, rid: str, limit_ms: int = 5_000) -> bool:
    end = w.now + limit_ms
    while w.now < end:
        if rid in w.producer.acked:
            return True
        w.run_until(w.now + 1)
    return rid in w.producer.acked


def kip101_scenario(protocol: str, seed: int = 0) -> World:
    """KIP-101 scenario 1: the follower B restarts and truncates to its lagging HW checkpoint, then
    the leader A dies before B fetches again, and B is elected. Under ``hw-truncation`` the
    acknowledged record m2 is lost; with leader epochs (kip-101 and later) B keeps its log."""
    w = World(
        brokers=2,
        partitions=1,
        replication=2,
        seed=seed,
        config=sim_config(protocol, min_insync_replicas=1),
    )
    w.run_until(200)
    a, b = w.leader_of(TP0), 1 - w.leader_of(TP0)
    w.produce(TP0, "m1")
    assert run_until_acked(w, "m1")
    w.run_until(w.now + 300)  # B learns HW=1 and checkpoints it
    w.produce(TP0, "m2")
    assert run_until_acked(w, "m2")  # A's HW=2 from B's fetch at 2; B's HW is still 1
    w.crash(b)
    # back with the controller not having seen it go (a missed bounce, KAFKA-1120: Kafka
    # 0.10-2.1): still in the ISR, sent nothing
    w.restart(b, missed_bounce=True)
    w.crash(a)  # the leader dies before B fetches again
    w.run_until(w.now + 2_000)  # A's session expires; the controller elects B
    return w


def leader_move_scenario(
    protocol: str, how: str = "elect", seed: int = 0, broker_cls: type[Broker] = Broker
) -> World:
    """A deposed leader that is alive and keeps acting on its stale view (R9, R10, R6).

    Broker 0 leads t-0 and is the controller. An operator election moves leadership to broker 1
    (0 becomes a live follower); a record is committed. Then broker 1 is cut off from brokers 0
    and 2, a record "x" is sent to it, and at the same instant leadership is moved away from it:
    ``how="elect"`` by a preferred-replica election (back to 0, ControllerMoveLeader),
    ``how="shutdown"`` by broker 1's controlled shutdown (ControllerShutdownBroker). The
    LeaderAndIsr to 1 is lost: 1 takes "x" as a zombie leader, at its old epoch, but cannot
    commit it (its followers left). The cut heals 20 ms later. After the election, at the
    controller's next re-send broker 1 becomes a follower, answers "x" NotLeader (the producer
    retries it at the new leader) and truncates it. After the controlled shutdown the
    controller sends broker 1 nothing (as Kafka): "x" times out in its purgatory (the producer
    retries it at the new leader), then broker 1 stops and comes back as a follower."""
    assert how in ("elect", "shutdown")
    cfg = sim_config(protocol, min_insync_replicas=2)
    w = World(3, 1, 3, cfg, seed=seed, broker_cls=broker_cls)
    w.run_until(100)
    assert w.leader_of(TP0) == 0 and w.coord.controller == 0
    assert w.elect_leader(1)  # the operator's election: 1 leads, 0 is a deposed live leader
    w.run_until(200)
    w.produce(TP0, "m1")
    assert run_until_acked(w, "m1")
    w.net.blocked |= {frozenset((1, 0)), frozenset((1, 2))}
    w.produce(TP0, "x")  # in flight to broker 1 when the move happens
    if how == "elect":
        assert w.elect_leader()  # preferred replica: 0
    else:
        assert w.controlled_shutdown(1) == []
    w.run_until(w.now + 20)
    w.net.blocked.clear()
    run_until_acked(w, "x")
    if how == "shutdown":
        w.stop(1)
        w.run_until(w.now + 300)
        w.restart(1)
    w.run_until(w.now + 1_500)
    return w


@dataclass(frozen=True)
class Fault:
    at_ms: int
    # crash | restart | power | pause | partition | loss | duplicate, or crash-all | power-all
    # (every broker at once, restarted in turn); power = a power failure (R14: the unflushed
    # tail is lost), crash = a process crash (the page cache survives). Leadership moves (R9):
    # elect = an operator's election of the target, preferred = a preferred-replica election
    # of every partition, shutdown = the target's controlled shutdown, its orderly stop
    # ``duration_ms`` later (a zombie meanwhile) and its restart at 4 x ``duration_ms``.
    kind: str
    target: int
    other: int = 0
    duration_ms: int = 100


def random_faults(
    seed: int,
    records: int,
    kinds: tuple[str, ...] = ("crash", "restart", "partition", "duplicate", "loss"),
) -> list[Fault]:
    """0-2 faults of ``kinds`` at random times within a run of ``records`` records (25 ms
    apart), on random brokers: the batch of bench/validate_throughput.py."""
    import random

    rng = random.Random(seed)
    return [
        Fault(rng.randint(0, 25 * records), rng.choice(kinds), rng.randint(0, 2),
              rng.randint(0, 2), rng.randint(10, 100))
        for _ in range(rng.randint(0, 2))
    ]  # fmt: skip


def run_random(
    protocol: str,
    faults: list[Fault],
    seed: int = 0,
    records: int = 40,
    brokers: int = 3,
    replication: int = 3,
    partitions: int = 1,
    broker_cls: type[Broker] = Broker,
    **config: Any,
) -> World:
    """Produce ``records`` acks=all records at a steady pace while ``faults`` happen, then heal
    and let the cluster settle. The caller checks ``w.lost_acked()`` and friends."""
    cfg = sim_config(protocol, **config)
    w = World(brokers, partitions, replication, cfg, seed=seed, broker_cls=broker_cls)
    w.run_until(100)
    for i in range(records):
        w.at(100 + 25 * i, w.produce, ("t", i % partitions), f"r{i}")
    for f in faults:
        t = 100 + f.at_ms
        tgt = f.target % brokers
        if f.kind in ("crash", "power"):
            w.at(t, w.crash, tgt, f.kind == "power")
            w.at(t + f.duration_ms * 4, w.restart, tgt)
        elif f.kind in ("crash-all", "power-all"):
            for k in range(brokers):  # the target comes back first, the others 50 ms apart
                b = (tgt + k) % brokers
                w.at(t, w.crash, b, f.kind == "power-all")
                w.at(t + f.duration_ms * 4 + 50 * k, w.restart, b)
        elif f.kind == "restart":
            w.at(t, w.crash, tgt)
            w.at(t, w.restart, tgt)
        elif f.kind == "pause":
            w.at(t, w.pause, tgt, f.duration_ms * 4)
        elif f.kind == "partition":
            pair = frozenset((tgt, f.other % brokers))
            w.at(t, w.net.blocked.add, pair)
            w.at(t + f.duration_ms * 4, w.net.blocked.discard, pair)
        elif f.kind == "loss":
            w.at(t, setattr, w.net, "loss", 0.3)
            w.at(t + f.duration_ms, setattr, w.net, "loss", 0.0)
        elif f.kind == "duplicate":
            w.at(t, setattr, w.net, "duplicate", 0.3)
            w.at(t + f.duration_ms, setattr, w.net, "duplicate", 0.0)
        elif f.kind == "elect":
            w.at(t, w.elect_leader, tgt)
        elif f.kind == "preferred":
            w.at(t, w.elect_leader, None)
        elif f.kind == "shutdown":
            w.at(t, w.controlled_shutdown, tgt)
            w.at(t + f.duration_ms, w.stop, tgt)
            w.at(t + f.duration_ms * 4, w.restart, tgt)
        else:
            raise ValueError(f"unknown fault kind {f.kind!r}")
    end = 100 + 25 * records + 1_500
    w.run_until(end)
    w.at(end, w.heal)
    w.run_until(end + 3_000)
    return w


def kraft_divergence_scenario(seed: int = 0, broker_cls: type[Broker] = Broker) -> World:
    """kraft: a follower with a divergent suffix truncates on the leader's DivergingEpoch answer.

    Records are committed at epoch 0 on brokers 0 (leader), 1, 2. Both followers pause (a GC
    pause within their session: they stay in the ISR); "x" reaches leader 0 (the ISR is full,
    so it is appended and waits for acks=all); then 0 crashes before its answers to their
    fetches reach them (the connections close: they are dropped). The followers resume, broker
    1 is elected at epoch 1 when 0's session ends and takes "y". Broker 0 restarts as a
    follower with "x" at the offset where 1 has "y": its fetch (last fetched epoch 0, offset one
    past "x") is answered with the diverging epoch 0 and its end offset, it truncates "x" and
    fetches "y". (Not crashes of the followers: a new incarnation's registration is handled as
    an unclean shutdown, which takes it out of the ISR, so 0 would stay the only candidate.)
    ``broker_cls`` lets a mutant (``count-diverging-fetch``) count that fetch's offset."""
    w = World(3, 1, 3, sim_config("kraft"), seed=seed, broker_cls=broker_cls)
    tp = ("t", 0)
    w.run_until(100)
    for i in range(3):
        w.produce(tp, f"c{i}")
        w.run_until(w.now + 60)
    t = w.now
    w.at(t, w.pause, 1, 150)
    w.at(t, w.pause, 2, 150)
    w.at(t + 20, w.produce, tp, "x")
    w.at(t + 60, w.crash, 0)
    w.run_until(t + 1_500)
    w.produce(tp, "y")
    w.run_until(w.now + 300)
    w.at(w.now, w.restart, 0)
    w.run_until(w.now + 2_000)
    return w


def kraft_stale_fetch_scenario(seed: int = 0, broker_cls: type[Broker] = Broker) -> World:
    """kraft, KAFKA-15221's setting: a fetch sent by a follower's previous incarnation is handled
    after its restarted incarnation's first fetch. Follower 1's idle fetch is parked at leader 0
    (a long max wait, no produce); broker 1 crashes and restarts at once (broker epoch 2),
    fetches again and is counted with epoch 2; when the parked fetch's max wait is over the
    leader handles it: broker epoch 1 is older than the one it counted, STALE_BROKER_EPOCH."""
    w = World(3, 1, 3, sim_config("kraft", replica_fetch_wait_max_ms=400), seed=seed,
              broker_cls=broker_cls)  # fmt: skip
    tp = ("t", 0)
    w.run_until(100)
    w.produce(tp, "a")
    w.run_until(700)  # committed; every follower's fetch now idle, parked at the leader
    w.crash(1)
    w.restart(1)
    w.run_until(2_000)
    w.produce(tp, "b")
    w.run_until(3_000)
    return w


def kraft_elr_scenario(seed: int = 0) -> World:
    """kraft, KIP-966's eligible leader replicas. min.insync.replicas 2 on brokers 0 (leader),
    1, 2. Broker 2 crashes: the controller removes it (ISR {0, 1}, at min ISR: no ELR). Broker 1
    pauses (a GC pause within its session) while "d" is written: the leader shrinks it out for
    lagging, the ISR falls to {0}, below min ISR, so 1 joins the ELR and the HW stops. Leader 0
    crashes; broker 2 restarts, but it is not eligible (it left while the ISR was at min ISR, it
    lacks "d", and its registration is an unclean shutdown's). When 0's session ends the
    controller elects 1 from the ELR with ISR {1} (it has everything below the HW, which could
    not advance without min ISR). 0 restarts and follows. (A restarted broker leaves the ELR:
    every new incarnation's registration is handled as an unclean shutdown, so the ELR member
    elected here is one that never restarted.)"""
    w = World(3, 1, 3, sim_config("kraft"), seed=seed)
    tp = ("t", 0)
    w.run_until(100)
    for i in range(3):
        w.produce(tp, f"c{i}")
        w.run_until(w.now + 60)
    w.crash(2)
    w.run_until(w.now + 1_000)
    w.pause(1, 560)
    w.run_until(w.now + 10)
    w.produce(tp, "d")
    w.run_until(w.now + 480)  # 1 lags past replica.lag.time.max.ms: shrunk out, into the ELR
    w.crash(0)
    w.run_until(w.now + 20)
    w.restart(2)
    w.run_until(w.now + 1_500)
    w.restart(0)
    w.run_until(w.now + 1_500)
    return w


def kraft_stale_expansion_scenario(
    seed: int = 0, controller_cls: type[Controller] = Controller
) -> World:
    """kraft, KIP-903's story (KAFKA-14139): a follower re-added to the ISR on a fetch of its
    previous incarnation. Brokers 0 (leader) and 1, min.insync.replicas 2: "m0" is committed
    on both. Follower 1's idle fetch (offset 1, broker epoch 1) is parked at leader 0 when 1
    loses power: it had not fsynced "m0". It restarts at once and registers (broker epoch 2):
    its registration is an unclean shutdown's, which takes it out of the ISR (ISR {0}); it is
    held (paused) before it fetches. When the parked fetch's max wait is over, leader 0 handles
    it (a fetch stuck in the leader's queue) and proposes adding 1 back with broker epoch 1.
    The controller refuses (KIP-903: INELIGIBLE_REPLICA, broker epoch mismatch); without the
    check (``no-broker-epoch-check``) it accepts, and a preferred election then makes the
    empty broker 1 leader: "m0", acknowledged, is gone."""
    w = World(2, 1, 2, sim_config("kraft", min_insync_replicas=2), seed=seed,
              session_timeout_ms=2_000, controller_cls=controller_cls)  # fmt: skip
    tp = ("t", 0)
    w.run_until(100)
    w.produce(tp, "m0")
    w.run_until(300)
    # the moment 1's next idle fetch is parked at 0 (its max wait, 50 ms, just begun)
    before = set(w.broker(0)._parked)
    while not set(w.broker(0)._parked) - before:
        before = set(w.broker(0)._parked)
        w.run_until(w.now + 1)
    w.run_until(w.now + 2)
    w.crash(1, lose_unflushed=True)
    w.restart(1)
    w.pause(1, 1_000)
    w.run_until(w.now + 200)
    w.elect_leader(1)
    w.run_until(w.now + 1_500)
    w.produce(tp, "m1")
    w.run_until(w.now + 1_000)
    return w
