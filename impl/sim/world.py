"""The simulated world: a seeded scheduler in virtual time running the unchanged core.

Everything random (delays, loss, duplication, reordering) draws from one ``random.Random(seed)``,
so a seed replays exactly. Faults (R8): crash (process, or power failure dropping unflushed data),
orderly stop, restart, pause (a zombie that resumes with stale beliefs), message loss, delay,
duplication, reordering (random delays), and network partitions between node pairs. Leadership
moves without a crash (R9): preferred-replica or operator election (``elect_leader``) and
controlled shutdown (``controlled_shutdown``). The coordination service is
reliable and reached without faults (not modelled: ZooKeeper partitions).
"""

from __future__ import annotations

import heapq
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core import messages as m
from ..core.clients import ConsumerClient, ProducerClient
from ..core.config import DEFAULT_PROTOCOL, Config
from ..core.controller import Controller
from ..core.messages import TP
from ..core.placement import assign
from ..core.replica import Broker
from ..core.trace import event
from .coord import MemCoord
from .store import MemStore

# Versions with the KRaft controller's broker registration and AlterPartition checks.
KRAFT_PROTOCOLS = ("kraft",)


class Unsupported(ValueError):
    """A fault the simulation refuses under this protocol version (a mechanism not built)."""


@dataclass
class Net:
    """Network fault settings, changeable during a run."""

    min_delay_ms: int = 1
    max_delay_ms: int = 5
    loss: float = 0.0
    duplicate: float = 0.0
    blocked: set[frozenset[Any]] = field(default_factory=set)  # partitioned node pairs


@dataclass
class Node:
    broker: Broker | None
    store: MemStore
    controller: Controller | None = None
    alive: bool = True
    generation: int = 0  # bumped on crash: drops the dead incarnation's timers and messages
    paused_until: int = -1
    session_expiry: int = -1  # pending session expiry time after a crash/pause


class World:
    def __init__(
        self,
        brokers: int = 3,
        partitions: int = 1,
        replication: int = 3,
        config: Config | None = None,
        seed: int = 0,
        session_timeout_ms: int = 600,
        topic: str = "t",
        full_log_in_trace: bool = True,
        broker_cls: type[Broker] = Broker,
        controller_cls: type[Controller] = Controller,
    ) -> None:
        self.broker_cls = broker_cls  # a mutant (impl/mutants.py) may replace either class
        self.controller_cls = controller_cls
        self.config = config or sim_config()
        self.rng = random.Random(seed)
        self.seed = seed
        self.now = 0
        self._seq = 0
        self._q: list[tuple[int, int, str, tuple[Any, ...]]] = []
        self.net = Net()
        self.session_timeout_ms = session_timeout_ms
        self.full_log = full_log_in_trace
        self.coord = MemCoord()
        # kraft: the broker epoch each broker registered with (KIP-380/903): 1, + 1 per restart
        self.kraft = self.config.protocol in KRAFT_PROTOCOLS
        self.broker_epochs: dict[int, int] = {}
        # kraft: AlterPartitions in flight, by sender and partition (one per leader's partition)
        self._alters: dict[tuple[int, TP], tuple[Any, int]] = {}
        self._bounced: set[int] = set()  # restarted within their session, for the next controller
        # the time the last LeaderAndIsr on each (controller, broker) channel arrives (R8: FIFO)
        self._channel_free: dict[tuple[Any, Any], int] = {}
        self.trace: list[dict[str, Any]] = []
        self.ids = list(range(brokers))
        self.nodes: dict[int, Node] = {}
        self.timers: dict[tuple[Any, str], int] = {}
        self.topic = topic
        self.producer = ProducerClient("producer", acks=-1, request_timeout_ms=2_000)
        self.consumer = ConsumerClient("consumer")
        self.history: dict[str, Any] = {"sent": [], "acked": {}, "refused": {}}
        # R15: records whose next successful produce answer the network loses (the kit's
        # ``produce`` with ``lose_reply``): the producer times out and retries
        self.lose_replies: set[str] = set()
        self.created: dict[TP, tuple[int, ...]] = {}
        for b in self.ids:
            self.nodes[b] = Node(None, MemStore())
            self._boot(b)
        self.create_topic(topic, partitions, replication)

    def create_topic(self, topic: str, partitions: int, replication: int) -> None:
        """Write the R1 assignment (/brokers/topics/[t]); the controller's watch fires."""
        new = {(topic, i): reps for i, reps in assign(self.ids, partitions, replication).items()}
        self.coord.assignments.update(new)
        # the trace header's assignments: as created (KIP-455 may move the replica sets since)
        self.created.update(new)
        c = self.coord.controller
        if c >= 0 and self.nodes[c].controller is not None:
            self._apply(c, self.nodes[c].controller.on_topics_changed(self.now, new))

    # ---- scheduling ---------------------------------------------------------------------------
    def _push(self, at: int, kind: str, *payload: Any) -> None:
        self._seq += 1
        heapq.heappush(self._q, (at, self._seq, kind, payload))

    def at(self, t: int, fn: Any, *args: Any) -> None:
        """Schedule a scenario step (a fault, a produce) at virtual time ``t``."""
        self._push(t, "call", fn, args)

    def run_until(self, t: int, max_events: int = 2_000_000) -> None:
        n = 0
        while self._q and self._q[0][0] <= t and n < max_events:
            at, _s, kind, payload = heapq.heappop(self._q)
            self.now = max(self.now, at)
            self._dispatch(kind, payload)
            n += 1
        self.now = max(self.now, t)

    def _dispatch(self, kind: str, payload: tuple[Any, ...]) -> None:
        if kind == "call":
            fn, args = payload
            fn(*args)
        elif kind == "msg":
            self._deliver(*payload)
        elif kind == "timer":
            self._fire(*payload)
        elif kind == "expire":
            self._expire(*payload)

    # ---- node lifecycle -----------------------------------------------------------------------
    def _boot(self, b: int) -> None:
        node = self.nodes[b]
        for key in sorted(k for k in self._alters if k[0] == b):
            # kraft: its previous incarnation's AlterPartitions come first
            self._handle_alter(b, *self._alters[key])
        clock0 = node.broker.clock.value if node.broker else 0
        node.broker = self.broker_cls(
            b,
            self.config,
            node.store.restored(),
            clock_start=clock0,
            full_log_in_trace=self.full_log,
            # a previous incarnation's answers (a leader answering a fetch of it, KAFKA-15221)
            # are for a connection that died with it: never taken by this one's fetchers
            corr_start=node.generation << 32,
        )
        node.alive, node.controller = True, None
        if not (self.kraft and clock0 > 0):
            self.coord.down.discard(b)  # (kraft: at its registration, below)
        if self.kraft:
            self.broker_epochs[b] = self.broker_epochs.get(b, 0) + 1
            node.broker.broker_epoch = self.broker_epochs[b]
        if clock0 > 0:
            # A restarting broker opens its coordination session before it recovers its logs
            # (as Kafka's startup does): its BrokerRestart comes after whatever the service
            # saw while it was down (a controller's reaction to its expired session).
            self._coord_sync(b)
        self._apply(b, node.broker.start(self.now))
        fenced_live = False
        if self.kraft and clock0 > 0:
            fenced_live = self._fence_before_register(b)
            self.coord.down.discard(b)
            # kraft (KIP-841, KIP-903): the restarted broker registers with the controller, gets
            # its new broker epoch and is unfenced (the spec's BrokerRegister)
            br = node.broker
            for tp in sorted(br.partitions):
                self.trace.append(
                    event(
                        br.clock.tick(),
                        b,
                        "BrokerRegister",
                        {"replica": b, "broker_epoch": self.broker_epochs[b]},
                        now_ms=self.now,
                        tp=tp,
                        state=br._state(br.partitions[tp]),
                    )
                )
            self._register_unclean(b)
        self._register(b, bounced=clock0 > 0 and not fenced_live)
        ctl = self._running_controller()
        if fenced_live and ctl is not None and b in self.coord.sessions and b not in ctl.live:
            # the controller that handled its fence sees it come back (a new incarnation: told
            # its state, never resuming a leadership of the old one)
            c = self.coord.controller
            self._coord_sync(c)
            self._apply(c, ctl.on_brokers_changed(self.now, set(self.coord.sessions)))

    def _fence_before_register(self, b: int) -> bool:
        """kraft: broker ``b``'s new incarnation is about to register while its previous one's
        session still holds (a restart inside the session timeout). Kafka's controller handles
        the registration and the unclean shutdown in one batch (``ClusterControlManager.
        registerBroker`` -> ``ReplicationControlManager.handleBrokerUncleanShutdown`` ->
        ``generateLeaderAndIsrUpdates`` with ``b`` to remove, over every partition whose ISR
        holds it): ``b`` leaves the ISR *whatever its leadership*, and a partition it led gets
        a leader from the rest (``PartitionChangeBuilder``; leader -1 with none), all before
        ``b`` is unfenced. This controller learnt of the crash at once (``fence_at_crash``) but
        acts on a session's end only, so it makes those changes here, with ``b`` still fenced
        (``coord.down``), before the BrokerRegister events: the spec's ControllerElectLeader /
        ControllerShrinkIsr of a fenced broker, then BrokerRegister with nothing left to
        remove. Without it a leader that registered kept its ISR membership (the spec's
        BrokerRegister keeps a recorded leader in the ISR, barred) and was re-elected from an
        ISR Kafka no longer has it in (docs/conformance.md, random kraft item 3). A controller
        co-located with ``b`` restarted with it: the quorum's next controller is elected now,
        with ``b`` fenced. True if a running controller handled the fence (it learns of the
        registration from ``on_brokers_changed`` then, not as a bounce)."""
        if b not in self.coord.sessions:
            return False  # its session ended: the controller handled that as a failure already
        node = self.nodes[b]
        if self.coord.controller == b and node.controller is None:
            self.coord.controller = -1  # (it resigns: its process restarted)
        ctl = self._running_controller()
        if ctl is None:
            handled = self._membership_changed(fenced=b)
        else:
            self._coord_sync(b)
            self._coord_sync(self.coord.controller)
            self._apply(self.coord.controller, ctl.on_broker_fenced(self.now, b))
            handled = True
        if self.coord.controller >= 0:
            # the registration comes after those decisions (its events' Lamport clock)
            self._coord_sync(self.coord.controller)
            self._coord_sync(b)
        return handled

    def _register_unclean(self, b: int) -> None:
        """kraft: the registration of broker ``b``'s new incarnation is handled as an unclean
        shutdown in the same batch (Kafka 4.x: ``registerBroker`` → ``handleBrokerUncleanShutdown``,
        ``MemCoord.register_unclean``): it is barred from elections, leaves the ELRs and every
        ISR it is neither the last member nor the recorded leader of. A running controller
        learns the partition changes now and tells their leaders (BrokerApplyPartitionChange);
        one that is paused or not yet elected reads them from the coordination service when it
        resyncs or activates."""
        self._coord_sync(b)  # the controller's reaction comes after the BrokerRegister events
        changed = self.coord.register_unclean(b)
        ctl = self._running_controller()
        if ctl is not None:
            c = self.coord.controller
            self._coord_sync(c)
            self._apply(c, ctl.on_partitions_changed(self.now, changed, dict(self.coord.states)))

    def _coord_sync(self, b: int) -> None:
        """Broker ``b`` interacts with the coordination service (registers, writes, is notified
        by a watch, or dies so that its session will end). The service is one sequential object,
        so a Lamport clock threaded through it orders every event caused by what a broker saw
        there after its cause: an election after the crash that prompted it, a controller's
        read after the write it reads (FORMAT.md, "Clocks")."""
        br = self.nodes[b].broker
        if br is None:
            return
        c = max(self.coord.clock, br.clock.value)
        br.clock.value = self.coord.clock = c

    def _register(self, b: int, bounced: bool = False) -> None:
        node = self.nodes[b]
        node.session_expiry = -1
        self._coord_sync(b)
        c = self.coord.controller
        if bounced and b in self.coord.sessions:
            ctl = self.nodes[c].controller if c >= 0 else None
            if c != b and ctl is not None and self._usable(c):
                self._coord_sync(c)
                self._apply(c, ctl.on_broker_bounced(self.now, b))
            else:
                # the next controller learns it on activation, a paused one when it resumes
                self._bounced.add(b)
        if b not in self.coord.sessions:
            if bounced and not self._controller_running():
                # back in a new session while no controller runs (or it is paused: it missed
                # the broker leaving, so it would not see it come back): the controller must
                # not let it resume a leadership recorded before its crash (mark_bounced)
                self._bounced.add(b)
            self.coord.sessions.add(b)
            self._membership_changed()
        elif self.coord.controller == b and node.controller is None:
            # The controller came back within its session: it resigns and /controller is
            # contested again (controller epoch + 1), as a new process would.
            self.coord.controller = -1
            self._membership_changed()
        elif self.coord.controller < 0:  # nobody running could take /controller until now
            self._membership_changed()

    def _controller_running(self) -> bool:
        c = self.coord.controller
        return c >= 0 and self.nodes[c].controller is not None and self._usable(c)

    def crash(self, b: int, lose_unflushed: bool = False) -> None:
        node = self.nodes[b]
        if not node.alive:
            return
        br = node.broker
        assert br is not None
        self.trace.append(
            event(
                br.clock.tick(),
                b,
                "BrokerCrash",
                {"replica": b, "lose_unflushed": True} if lose_unflushed else {"replica": b},
                now_ms=self.now,
                state={"alive": False},
            )
        )
        for tp, p in sorted(br.partitions.items()):
            if p.alter_answered:
                # KIP-455: a change a completion left pending is gone with its memory (the
                # spec's LeaderClearPendingAlterPartition of a crashed leader)
                self.trace.append(
                    event(br.clock.tick(), b, "LeaderClearPendingAlterPartition", {"leader": b},
                          now_ms=self.now, tp=tp, state={"alive": False})
                )  # fmt: skip
        self._coord_sync(b)  # its session will end: whoever reacts to that comes after
        node.alive, node.controller = False, None
        self.coord.down.add(b)
        node.generation += 1
        self.coord.shutting_down.discard(b)  # (kraft) the process stopped: shutdown over
        if self.kraft:  # its connections close: fetchers to it learn it (kraft has no timeout)
            for x in self.ids:
                if x != b and self.nodes[x].alive and self.nodes[x].broker is not None:
                    gen = self.nodes[x].generation
                    self.at(self.now, self._disconnect, x, b, gen, br.clock.value)
        if lose_unflushed:
            node.store.power_failure()
        self._schedule_expiry(b)

    def restart(self, b: int, missed_bounce: bool = False) -> None:
        """Start broker ``b`` again. ``missed_bounce``: within its previous session, unseen by
        the controller (ZooKeeper era before KIP-380: the re-registration landed between the old
        node's deletion and the controller's read of /brokers/ids, KAFKA-1120), which re-elects
        what it led and sends it nothing else."""
        node = self.nodes[b]
        if node.alive:
            return
        if not self.kraft and b in self.coord.sessions and not missed_bounce:
            # A ZooKeeper-era broker cannot register while its previous incarnation's session
            # holds /brokers/ids/[id] (Kafka 1.1-3.x KafkaZkClient.registerBroker ->
            # checkedEphemeralCreate fails with NODEEXISTS and the startup aborts): it comes back
            # after that session has ended. Folded here: the session ends now and the
            # controller handles the failure (ISR removal, election) before the restart, as
            # when the restart came just after the expiry. Kafka before KIP-380 (2.2) could also
            # miss a bounce (KAFKA-1120); this runtime never does (a subset the spec allows).
            node.session_expiry = -1  # (its scheduled expiry finds it ended)
            self._expire(b, -1)
        node.generation += 1
        self._boot(b)

    def _refuse_kraft(self, fault: str, why: str) -> None:
        if self.kraft:
            raise Unsupported(f"the kraft simulation refuses {fault}: {why}")

    def pause(self, b: int, duration_ms: int) -> None:
        node = self.nodes[b]
        if not node.alive or node.paused_until > self.now:
            return
        node.paused_until = self.now + duration_ms
        br = node.broker
        assert br is not None
        self.trace.append(
            event(
                br.clock.tick(),
                b,
                "BrokerPause",
                {"replica": b, "duration_ms": duration_ms},
                now_ms=self.now,
            )
        )
        self._coord_sync(b)  # its session may end: whoever reacts to that comes after
        self._schedule_expiry(b)
        self.at(node.paused_until, self._resume, b)

    def stop(self, b: int) -> None:
        """An orderly stop (R8): the process ends like a crash that keeps its log (the spec's
        BrokerCrash; the OS page cache is flushed by the kernel, as for a process crash) and
        closes its coordination session at once, so the controller reacts without waiting for
        the session timeout (Kafka's shutdown closes its ZooKeeper session)."""
        node = self.nodes[b]
        if not node.alive:
            return
        self.crash(b)
        node.session_expiry = self.now
        self._expire(b, self.now)

    # ---- leadership moves without a crash (R9) ------------------------------------------------
    def _running_controller(self) -> Controller | None:
        c = self.coord.controller
        if c < 0 or not self._usable(c):
            return None
        return self.nodes[c].controller

    def elect_leader(self, broker: int | None = None, tp: TP | None = None) -> bool:
        """R9: preferred-replica election (``broker`` None: each partition's preferred replica,
        R1) or an operator's election of ``broker``, for ``tp`` or every partition: the
        controller moves leadership away from a live leader to a live ISR member (the spec's
        ControllerMoveLeader; partitions where that is not possible stay as they are). The
        request reaches the controller at once (an admin client's request is not subject to the
        simulated network). False if no controller is running to act on it (it is lost)."""
        ctl = self._running_controller()
        if ctl is None:
            return False
        c = self.coord.controller
        self._coord_sync(c)
        self._apply(c, ctl.elect_leader(self.now, broker, None if tp is None else [tp]))
        return True

    def controlled_shutdown(self, broker: int) -> list[TP] | None:
        """R9: broker ``broker`` asks the controller for a controlled shutdown: leadership moves
        off it (a new leader from the live ISR minus it) and it leaves the ISR of the partitions
        it follows, by the spec's ControllerShutdownBroker. The broker keeps running (a zombie
        leader until it applies the LeaderAndIsr); stopping it is a separate step (``stop``,
        ``crash``). Returns the partitions it still leads (no other live ISR member), or None if
        the broker is not running or no controller is there to ask."""
        ctl = self._running_controller()
        if not self._usable(broker) or ctl is None:
            return None
        if self.kraft:  # KIP-841: the controller's shutting-down set (survives its failover)
            self.coord.shutting_down.add(broker)
        c = self.coord.controller
        self._coord_sync(broker)  # the request: the controller's decisions come after it
        self._coord_sync(c)
        self._apply(c, ctl.controlled_shutdown(self.now, broker))
        return ctl.unmovable(broker)

    def _resume(self, b: int) -> None:
        node = self.nodes[b]
        if (
            self.kraft
            and node.alive
            and node.paused_until <= self.now
            and b not in self.coord.sessions
        ):
            # kraft (KIP-841): fenced while paused (its heartbeats stopped); a fenced broker
            # comes back only by restarting and registering anew (the spec's
            # ControllerFenceBroker; one unfenced with its old broker epoch is not modelled)
            self.crash(b)
            self.restart(b)
            return
        if node.alive and node.paused_until <= self.now:
            self._register(b)  # a new session if the old one expired: a zombie comes back
            if node.controller is not None and self.coord.controller == b:
                # a controller paused inside its session sees the watches it missed now,
                # including brokers that restarted meanwhile (a bounce it could not see)
                self._coord_sync(b)
                for x in sorted(self._bounced):
                    self._apply(b, node.controller.on_broker_bounced(self.now, x))
                self._bounced.clear()
                self._membership_changed()

    def _schedule_expiry(self, b: int) -> None:
        node = self.nodes[b]
        node.session_expiry = self.now + self.session_timeout_ms
        self._push(node.session_expiry, "expire", b, node.session_expiry)

    def _expire(self, b: int, when: int) -> None:
        node = self.nodes[b]
        if node.session_expiry != when:
            return  # the broker came back in time
        node.session_expiry = -1
        if b in self.coord.sessions:
            self.coord.sessions.discard(b)
            node.controller = None
            self._membership_changed()

    def _membership_changed(self, fenced: int = -1) -> bool:
        """Watches fire: controller election (R9), then the controller sees the live set.
        ``fenced``: a broker whose registration is pending (kraft, ``_fence_before_register``),
        not live to the controller yet. True if a controller is running after it."""
        live = set(self.coord.sessions) - {fenced}
        # a paused process cannot take /controller either (it takes no steps)
        running = {b for b in self.nodes if self._usable(b)}
        if self.coord.elect_controller(running):
            c = self.coord.controller
            for n in self.nodes.values():
                n.controller = None
            node = self.nodes[c]
            assert node.broker is not None
            self._coord_sync(c)
            node.controller = self.controller_cls(
                c, self.config, self.coord.controller_epoch, node.broker.clock
            )
            if self.kraft:
                node.controller.shutting_down = set(self.coord.shutting_down)
                node.controller.barred = self.coord.unclean  # (the quorum's, read as it is)
                node.controller.down = self.coord.down
                # KIP-455: the reassignments in progress, from the metadata
                node.controller.reassigning = dict(self.coord.reassigning)
                node.controller.moved = set(self.coord.moved)
            effs = node.controller.activate(
                self.now,
                live,
                dict(self.coord.assignments),
                dict(self.coord.states),
                frozenset(self._bounced),
            )
            self._bounced.clear()
            self._apply(c, effs)
        elif self.coord.controller >= 0:
            node = self.nodes[self.coord.controller]
            if node.controller is not None and self._usable(self.coord.controller):
                self._coord_sync(self.coord.controller)
                self._apply(
                    self.coord.controller, node.controller.on_brokers_changed(self.now, live)
                )
        return self._running_controller() is not None

    def _usable(self, b: int) -> bool:
        node = self.nodes[b]
        return node.alive and node.paused_until <= self.now

    # ---- effects ------------------------------------------------------------------------------
    def _apply(self, src: int | str, effects: list[Any]) -> None:
        clock = self._clock_of(src)
        answers: list[m.CasResult] = []
        for e in effects:
            if isinstance(e, m.Send):
                self._send(src, e.dst, e.msg, clock)
            elif isinstance(e, m.SetTimer):
                gen = self.nodes[src].generation if isinstance(src, int) else 0
                self._seq += 1
                self.timers[(src, e.key)] = self._seq
                self._push(self.now + e.delay_ms, "timer", src, e.key, self._seq, gen)
            elif isinstance(e, m.Trace):
                self.trace.append(e.event)
            elif isinstance(e, m.CasWrite):
                if isinstance(src, int):
                    self._coord_sync(src)
                if self.kraft and e.purpose == "isr" and isinstance(src, int):
                    # kraft: the AlterPartition reaches the controller after a network delay;
                    # its check and the leader's taking of the answer are one step there (the
                    # spec's ControllerHandleAlterPartition)
                    delay = self.rng.randint(self.net.min_delay_ms, self.net.max_delay_ms)
                    gen = self.nodes[src].generation
                    self._alters[(src, e.tp)] = (e, gen)
                    self.at(self.now + delay, self._handle_alter, src, e, gen)
                    continue
                res = self.coord.cas(e)
                ctl = self.nodes[src].controller if isinstance(src, int) else None
                if e.purpose == "isr" and isinstance(src, int):
                    # A leader's ISR write and its answer are one step here: the change is
                    # traced when it lands (after the rest of the step that proposed it), so
                    # no crash or later reader of the coordination service comes between the
                    # write and its LeaderShrinkIsr/LeaderExpandIsr event.
                    answers.append(res)
                    continue
                if res.ok and ctl is not None:
                    self._apply(src, ctl.on_write_committed(self.now, res))
                    if isinstance(src, int):
                        self._coord_sync(src)  # the decision's event precedes later readers
                gen = self.nodes[src].generation if isinstance(src, int) else 0
                # the answer belongs to this controller incarnation (a paused one may have been
                # replaced, and re-elected, before it arrives)
                cep = ctl.epoch if ctl is not None else -1
                self._push(self.now + 1, "timer", src, ("cas", e.purpose, res, cep), 0, gen)
            elif isinstance(src, int):
                self.nodes[src].store.apply(e)
        if answers:
            br = self.nodes[src].broker if isinstance(src, int) else None
            assert br is not None and isinstance(src, int)
            self._apply(src, br.on_cas_results(answers, self.now))
            self._coord_sync(src)

    def _clock_of(self, src: int | str) -> int:
        if isinstance(src, int):
            br = self.nodes[src].broker
            return br.clock.value if br else 0
        if src == "producer" and self.producer.idempotent:
            return self.producer.clock.value  # its requests carry its clock (FORMAT.md)
        return 0

    def _handle_alter(self, l: int, e: m.CasWrite, gen: int) -> None:
        """kraft: the controller handles leader ``l``'s AlterPartition (``MemCoord``'s
        partition-epoch check, then ``Controller.alter_partition_error``) and the leader takes the answer, if its incarnation is the sender (a paused one when it
        resumes); for a sender that crashed meanwhile the controller's decision is logged on its
        behalf (state: not alive). Handled at the latest before the sender restarts (the
        controller takes requests in order: this one before its registration)."""
        if self._alters.get((l, e.tp)) != (e, gen):
            return
        del self._alters[(l, e.tp)]
        self._coord_sync(l)
        down = frozenset(b for b, n in self.nodes.items() if not n.alive)
        co = self.coord

        def error(st: m.PartitionState, w: m.CasWrite) -> str:
            return self.controller_cls.alter_partition_error(
                st, w, self.broker_epochs, co.sessions, co.shutting_down, down
            )

        cls = self.controller_cls

        def eligible(r: int) -> bool:  # (the controller's acceptable leaders, KIP-455's build)
            return r in co.sessions and r not in co.shutting_down | co.unclean | co.down

        def complete(st: m.PartitionState, new: m.PartitionState, reps, adding, removing):
            return cls.complete_reassignment(st, new, reps, adding, removing, eligible)

        before = co.assignments.get(e.tp)
        res = co.alter_partition(e, error, self.config.min_insync_replicas, complete)
        completed = res.ok and co.assignments.get(e.tp) != before  # (KIP-455)
        ctl = self._running_controller()
        if completed and ctl is not None:
            # the record completed a reassignment: the controller tells the new replica set
            # and stops the removed brokers (after the leader takes the answer, below)
            c = self.coord.controller
            self._coord_sync(c)
            effs = ctl.on_reassignment_completed(
                self.now, e.tp, co.states[e.tp], co.assignments[e.tp]
            )
            self.at(self.now, self._apply, c, effs)
        elif res.ok and ctl is not None and e.tp in co.states:
            # the controller wrote it: its own view is current at once (Kafka's controller is
            # the metadata log's one writer), not at its next resync; a controlled shutdown
            # decided in between would otherwise act on the ISR before the expansion
            ctl.adopt({e.tp: co.states[e.tp]})
        node = self.nodes[l]
        br = node.broker
        assert br is not None
        live = node.alive and node.generation == gen
        if live and node.paused_until <= self.now:
            self._answer_alter(l, res, gen)
            return
        # the sender crashed, or is paused: the decision is logged now, on its behalf (the
        # spec's step applies the answer to a live leader at once; a paused one takes it,
        # unlogged, when it resumes)
        args: dict[str, Any] = {"leader": l, "accepted": res.ok}
        if not res.ok:
            args["error"] = res.error
        if not node.alive:
            # Logged on a dead broker's clock, the decision could sort before events that came
            # before it in time but are not causally before it (a follower's fetch to this
            # leader before its crash), in an order no spec run has (the fetch after the crash
            # that fenced it). Raising a Lamport clock keeps every causal order: lift it above
            # every clock now, so the merged trace keeps this decision after them.
            br.clock.merge(max(n.broker.clock.value for n in self.nodes.values() if n.broker))
        self.trace.append(
            event(br.clock.tick(), l, "ControllerHandleAlterPartition", args, now_ms=self.now,
                  tp=e.tp, state={"alive": live})
        )  # fmt: skip
        if completed and not node.alive:
            # KIP-455: the change a completion leaves pending dies with the crashed leader's
            # memory (the spec's LeaderClearPendingAlterPartition of a crashed leader)
            self.trace.append(
                event(br.clock.tick(), l, "LeaderClearPendingAlterPartition", {"leader": l},
                      now_ms=self.now, tp=e.tp, state={"alive": False})
            )  # fmt: skip
        self._coord_sync(l)
        if live:
            self.at(node.paused_until, self._answer_alter, l, res, gen, True)

    def _answer_alter(self, l: int, res: m.CasResult, gen: int, logged: bool = False) -> None:
        node = self.nodes[l]
        if node.alive and node.generation == gen and node.broker is not None:
            effs = node.broker.on_cas_results([res], self.now)
            if logged:
                effs = [
                    x for x in effs
                    if not (isinstance(x, m.Trace)
                            and x.event["action"] == "ControllerHandleAlterPartition")
                ]  # fmt: skip
            self._apply(l, effs)
            self._coord_sync(l)

    def _disconnect(self, b: int, peer: int, gen: int, clock: int) -> None:
        """kraft: broker ``b`` learns its connection to ``peer`` closed; its clock merges the
        peer's crash (so its next fetch is ordered after the crash in the merged trace)."""
        node = self.nodes[b]
        if node.alive and node.generation == gen and node.broker is not None:
            node.broker.clock.merge(clock)
            self._apply(b, node.broker.on_disconnect(peer, self.now))

    def _send(self, src: int | str, dst: int | str, msg: Any, clock: int) -> None:
        if dst == "producer" and self.lose_replies and isinstance(msg, m.ProduceResponse):
            p = self.producer.pending.get(msg.correlation_id)
            lost = {rid for rid, _v in p.records} & self.lose_replies if p else set()
            if lost and msg.error == m.NONE:
                self.lose_replies -= lost  # R15: this one answer is lost (the record's first)
                return
        if self.kraft and (self.net.blocked or self.net.loss or self.net.duplicate):
            self._refuse_kraft(
                "message loss, duplication and network partitions",
                "the kraft spec has no lost or duplicated fetches or AlterPartitions yet",
            )
        if frozenset((src, dst)) in self.net.blocked:
            self._note_loss(src, dst, msg, clock)
            return
        # R8: the controller's LeaderAndIsr travel on one queue per broker, retried until sent
        # (Kafka's ControllerChannelManager): never lost on a live connection, never reordered
        channel = (src, dst) if isinstance(msg, m.LeaderAndIsr) and not self.kraft else None
        lost = src != dst and self.rng.random() < self.net.loss  # (drawn for every message)
        if lost and channel is None:
            self._note_loss(src, dst, msg, clock)
            return
        if (
            self.kraft
            and isinstance(dst, int)
            and isinstance(src, int)
            and not self.nodes[dst].alive
            and isinstance(msg, m.FetchRequest)
        ):
            # kraft: a fetch to a broker that is down: connection refused, never a message
            peer = self.nodes[dst].broker
            gen = self.nodes[src].generation
            self.at(self.now + 1, self._disconnect, src, dst, gen, peer.clock.value if peer else 0)
            return
        copies = 2 if src != dst and self.rng.random() < self.net.duplicate else 1
        for _ in range(copies):
            delay = self.rng.randint(self.net.min_delay_ms, self.net.max_delay_ms)
            gen = self.nodes[dst].generation if isinstance(dst, int) else 0
            at = self.now + delay
            if channel is not None:  # in order behind what the channel already carries
                at = max(at, self._channel_free.get(channel, 0))
                self._channel_free[channel] = at
            self._push(at, "msg", src, dst, msg, clock, gen)

    def _note_loss(self, src: int | str, dst: int | str, msg: Any, clock: int) -> None:
        if isinstance(msg, m.LeaderAndIsr):
            for lp in msg.partitions:
                self.trace.append(
                    event(
                        clock,
                        "network",
                        "NetworkLoseLeaderAndIsr",
                        {"replica": dst, "epoch": lp.leader_epoch},
                        now_ms=self.now,
                        tp=(lp.topic, lp.partition),
                    )
                )

    def _deliver(self, src: int | str, dst: int | str, msg: Any, clock: int, gen: int) -> None:
        if dst == "producer":
            if self.producer.idempotent:  # its events are ordered after the answer's cause
                self.producer.clock.merge(clock)
            self._producer_step(self.producer.on_response, msg)
            return
        if dst == "consumer":
            self.consumer.on_response(msg)
            return
        assert isinstance(dst, int)
        node = self.nodes[dst]
        if not node.alive or node.generation != gen:
            return  # the connection died with the process
        if node.paused_until > self.now:
            self._push(node.paused_until, "msg", src, dst, msg, clock, gen)
            return
        assert node.broker is not None
        self._apply(dst, node.broker.on_message(src, msg, clock, self.now))

    def _fire(self, src: int | str, key: Any, token: int, gen: int) -> None:
        if isinstance(key, tuple):  # a coordination answer
            _c, _purpose, res, cep = key
            assert isinstance(src, int)
            node = self.nodes[src]
            if not node.alive or node.generation != gen:
                return
            if node.paused_until > self.now:
                self._push(node.paused_until, "timer", src, key, token, gen)
                return
            if node.controller is not None and node.controller.epoch == cep:
                # (a leader's ISR write is answered at once, in _apply)
                self._apply(src, node.controller.on_cas_results(self.now, [res]))
            return
        if self.timers.get((src, key)) != token:
            return  # replaced by a later timer with the same key
        if src == "producer":
            self._refresh_metadata()
            self._producer_step(self.producer.on_timer, key)
            return
        assert isinstance(src, int)
        node = self.nodes[src]
        if not node.alive or node.generation != gen:
            return
        if node.paused_until > self.now:
            self._push(node.paused_until, "timer", src, key, token, gen)
            return
        if key == "resync":
            if node.controller is not None:
                self._coord_sync(src)  # it reads the partition states
                if self.kraft and self.coord.moved:  # KIP-455: and replica sets it missed
                    ctl = node.controller
                    for tp in sorted(self.coord.moved):
                        if tp not in ctl.in_flight:
                            ctl.adopt_assignment(
                                tp, self.coord.assignments[tp],
                                *self.coord.reassigning.get(tp, ((), ())),
                            )  # fmt: skip
                effs = node.controller.on_resync(self.now, dict(self.coord.states))
                self._apply(src, effs)
            return
        assert node.broker is not None
        self._apply(src, node.broker.on_timer(key, self.now))

    # ---- clients ------------------------------------------------------------------------------
    def _refresh_metadata(self) -> None:
        leaders = self.coord.leaders()
        self.producer.metadata = dict(leaders)
        self.consumer.metadata = dict(leaders)

    def produce(self, tp: TP, rid: str, value: str = "") -> None:
        self._refresh_metadata()
        self.history["sent"].append(rid)
        self._producer_step(self.producer.send, tp, [(rid, value or rid)])

    def _producer_step(self, fn: Any, *args: Any) -> None:
        """A step of the producer client: its effects, and (idempotent) its own trace events,
        ProducerCompleteBatch and ProducerBumpEpoch, recorded before what it sends next."""
        pr = self.producer
        pr.now_ms = self.now
        effs = fn(*args)
        self.trace.extend(pr.events)
        pr.events.clear()
        self._apply("producer", effs)

    def consume_all(self, rounds: int = 50) -> dict[tuple[TP, int], str]:
        """Read every partition from offset 0 until nothing new arrives (R5)."""
        for _ in range(rounds):
            self._refresh_metadata()
            for tp in sorted(self.coord.assignments):
                self._apply("consumer", self.consumer.poll(tp))
            self.run_until(self.now + 20)
        return self.consumer.seen

    # ---- views --------------------------------------------------------------------------------
    def leader_of(self, tp: TP) -> int:
        st = self.coord.states.get(tp)
        return st[0].leader if st else -1

    def broker(self, b: int) -> Broker:
        br = self.nodes[b].broker
        assert br is not None
        return br

    def protocol_flags(self) -> dict[str, bool]:
        """What this implementation declares it does differently from the spec's version (the
        trace header's ``protocol_flags``, traces/FORMAT.md). kraft: the leader-epoch cache is
        derived from the log (impl/core/log.py: no epoch without a record, no checkpoint file of
        its own), where the spec's kraft keeps it as its own state, as Kafka does; the
        validator checks such a trace against kraft with ``epoch_cache`` off. Its controller
        also does what the spec's kraft did before issue 25 read Kafka 4.x: the fence apart from
        the ISR removal and the election (``atomic_fence``), a paused broker restarted rather
        than unfenced (``unfence_on_heartbeat``); and it learns of a crash at once, from the
        coordination service, where Kafka's learns of it at the session timeout
        (``fence_at_crash``). As Kafka 4.x it handles every new incarnation's registration as
        an unclean shutdown (``unclean_shutdown_on_register``, ``_register_unclean``) and
        elects the last known leader (``elect_last_known_leader``), the spec's defaults."""
        if self.config.protocol != "kraft":
            return {}
        return {
            "epoch_cache": False,
            "atomic_fence": False,
            "unfence_on_heartbeat": False,
            "fence_at_crash": True,
        }

    def trace_header(self, **extra: Any) -> dict[str, Any]:
        """The header line of this run's trace (traces/FORMAT.md): protocol, configuration,
        brokers and replica assignments, seed."""
        from isr.traces.format import header

        assignments = {f"{t}-{p}": list(r) for (t, p), r in sorted(self.created.items())}
        flags = self.protocol_flags()
        if flags:
            extra = {"protocol_flags": flags, **extra}
        return header(
            self.config.protocol,
            "sim",
            config=self.config.to_dict(),
            cluster={"brokers": self.ids, "assignments": assignments},
            **{"seed": self.seed, **extra},
        )

    def write_trace(self, path: str) -> None:
        """The run as one NDJSON trace (traces/FORMAT.md); already in a causal order."""
        from isr.traces.format import TraceWriter

        head = self.trace_header()
        head["log_encoding"] = "delta+full" if self.full_log else "delta"
        # (TraceWriter appends, for a broker process restarting; a whole run replaces the file)
        Path(path).unlink(missing_ok=True)
        w = TraceWriter(path, head, flush_every=1000)
        for ev in self.trace:
            w.write(ev)
        w.close()

    def heal(self) -> None:
        """End of faults: reconnect, stop loss, restart the dead."""
        self.net = Net()
        for b, node in self.nodes.items():
            if not node.alive:
                self.restart(b)

    # ---- partition reassignment (kraft, KIP-455) ----------------------------------------------
    def reassign(self, tp: TP, replicas: list[int] | None) -> bool:
        """The operator's AlterPartitionReassignments for ``tp`` (kraft): ``replicas`` the
        target replica set, or None to cancel the reassignment in progress. It reaches the
        controller at once (an admin request is not subject to the simulated network); the
        controller decides it after what it must repair first (``Controller.reassign``). False
        if no controller is running to take it (it is lost)."""
        ctl = self._running_controller()
        if ctl is None or tp not in self.coord.assignments:
            return False
        c = self.coord.controller
        self._coord_sync(c)
        self._apply(c, ctl.reassign(self.now, tp, None if replicas is None else tuple(replicas)))
        return True

    # ---- the log start offset (kraft, R12; impl/core/logstart.py) -----------------------------
    def delete_records(self, tp: TP, offset: int, broker: int | None = None) -> str:
        """The operator's DeleteRecords for ``tp`` up to ``offset`` (-1: the HW), sent to the
        leader the admin client's metadata names, or to ``broker`` (a deposed leader not yet
        told applies it too: the spec's LeaderDeleteRecords). It reaches the broker at once (an
        admin request is not subject to the simulated network). The error answered, or
        ``NOT_AVAILABLE`` if the broker is not running."""
        b = self.leader_of(tp) if broker is None else broker
        if b < 0 or b not in self.nodes or not self._usable(b):
            return "NOT_AVAILABLE"
        effects, err = self.broker(b).delete_records(tp, offset, self.now)
        self._apply(b, effects)
        return err

    def delete_old_segments(self, b: int, tp: TP | None = None) -> bool:
        """Retention on broker ``b`` runs now and finds every segment past its retention
        (retention.ms elapsed): the deletable ones go (BrokerDeleteOldSegment). False if the
        broker is not running."""
        if not self._usable(b):
            return False
        self._apply(b, self.broker(b).delete_old_segments(self.now, tp))
        return True

    def lost_acked(self) -> list[tuple[str, TP, int]]:
        """acks=all records acknowledged but not at their offset in the current leader's log."""
        lost = []
        for rid, (tp, off) in sorted(self.producer.acked.items()):
            leader = self.leader_of(tp)
            log = self.broker(leader).partitions[tp].log if leader >= 0 else None
            if log is not None and off < log.log_start:
                continue  # deleted (kraft's DeleteRecords or retention, R12), not lost
            if log is None or off >= log.leo or log.entry(off)[1] != rid:
                lost.append((rid, tp, off))
        return lost


def sim_config(protocol: str = DEFAULT_PROTOCOL, **kw: Any) -> Config:
    """Timings scaled for virtual time: faults matter within a few simulated seconds."""
    base: dict[str, Any] = {
        "protocol": protocol,
        "replica_lag_time_max_ms": 400,
        "replica_fetch_backoff_ms": 20,
        "replica_fetch_wait_max_ms": 50,
        "hw_checkpoint_interval_ms": 100,
        "isr_check_interval_ms": 50,
        "request_timeout_ms": 300,
        "controller_resync_ms": 200,
    }
    base.update(kw)
    return Config(**base)
