"""A counterexample of the spec as a conformance scenario (issue 27, item 1).

`isr conform --from-counterexample FILE` reads a counterexample written by `isr check
--trace-out FILE` (NDJSON, traces/counterexample/, or ITF, traces/counterexample/itf.py) and turns its story
into an adapter schedule (traces/ADAPTER.md), so that an implementation is asked to perform the
run the spec says a weaker version fails on:

* each spec step an adapter command causes becomes that command, by the one mapping of spec
  steps to commands the spec-derived scenarios use (``scenarios.step_ops``: ProducerSend ->
  produce, BrokerCrash -> crash, BrokerRestart -> restart, ConsumerFetch -> consume,
  ControllerMoveLeader -> elect_leader, ControllerShutdownBroker -> controlled_shutdown, a lost
  LeaderAndIsr -> a short partition, ...);
* each step the implementation takes by itself (an election after a session expired, a
  LeaderAndIsr applied, a fetch, a truncation, an ISR change) becomes time passing, ``run``.
  The adapter protocol has no command that waits for an observable condition (a leader at
  epoch E, an ISR, an offset reached), so a step of the implementation's own is a bounded
  ``run`` of ``OWN_STEP_MS`` (the implementation gets that long to take it), and the story ends
  with ``scenarios.settle`` (heal, restart every broker, run, produce, consume);
* a step no adapter command causes (``scenarios.NO_COMMAND``) and a model setting the adapter
  protocol cannot ask for (unclean election, acks=0) are bad input: one line naming the step
  or the setting (``StoryError``, exit 2), never a pass.

The verdict of the scenario is the validator's on the trace the implementation recorded, as for
every scenario; ``Story.property`` is the property the counterexample broke, for the report.
The conversion keeps the order of the story's environment steps but cannot force the order in
which the implementation takes its own steps (the order of LeaderAndIsr deliveries, a write
reaching a leader that has not yet learned it was deposed): ``Story.notes`` says, per step,
whether a command caused it or the implementation was left to take it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from isr.spec.protocols import PROTOCOLS, ProtocolVersion

from .. import counterexample as cxfile
from ..counterexample import itf
from .scenarios import NoAdapterCommand, Scenario, settle, step_ops

OWN_STEP_MS = 60  # the `run` a step of the implementation's own becomes (step_ops' default)

# Environment steps (an adapter command causes them) that the schedule wants at a quiescent
# point: no LeaderAndIsr in flight, so that the command meets the views the story had.
# NetworkLoseLeaderAndIsr is left where it is: it is about a request in flight.
MOVABLE = frozenset(
    {
        "ProducerSend",
        "ConsumerFetch",
        "BrokerCrash",
        "BrokerRestart",
        "ControllerMoveLeader",
        "ControllerShutdownBroker",
        "ControllerFailover",
        "CoordinationExpireSession",
    }
)


class StoryError(ValueError):
    """A counterexample that cannot become a scenario: one line for the user (exit 2)."""


def family(protocol: str | ProtocolVersion) -> str:
    """The protocol family of a registered version: ``kraft`` for the versions whose fetch is a
    request and a delayed response (``split_fetch``, spec/protocols/kraft.py: a KRaft cluster's
    events), ``zookeeper`` for every ZooKeeper-era version. A counterexample of one family is
    no story for an implementation of the other (its steps and state are another model's).
    ``protocol``: a built-in version's name or a version object (a user's)."""
    p = protocol if isinstance(protocol, ProtocolVersion) else PROTOCOLS.get(protocol)
    if p is None:
        raise StoryError(f"unknown protocol {protocol!r}; known: {', '.join(PROTOCOLS)}")
    return "kraft" if p.split_fetch else "zookeeper"


@dataclass
class Story:
    """A counterexample converted: the scenario (its first command ``start``), the version and
    property the counterexample is of, its length, and per spec step how the schedule takes it."""

    protocol: str
    property: str
    steps: int
    scenario: Scenario
    notes: list[str] = field(default_factory=list)
    caused: int = 0  # spec steps an adapter command causes
    own: int = 0  # spec steps left to the implementation (`run`)
    reordered: bool = False  # ``normalize`` moved environment steps
    approximate: list[int] = field(default_factory=list)  # steps still awkward (1-based)

    @property
    def label(self) -> str:
        """``kip-101 StrongIsr (10 steps)``: how the report names the story."""
        return f"{self.protocol} {self.property} ({self.steps} steps)"

    def to_json(self) -> dict[str, Any]:
        return {
            "protocol": self.protocol,
            "property": self.property,
            "steps": self.steps,
            "caused": self.caused,
            "own": self.own,
            "commands": len(self.scenario),
            "reordered": self.reordered,
            "approximate": self.approximate,
            "notes": self.notes,
        }


Path = list[tuple[str, dict[str, Any]]]


def _quiet(state: dict[str, Any]) -> bool:
    """No controller request in flight (ZooKeeper family): every live broker has applied what
    the controller decided, as after an adapter command and a ``run``."""
    return not state.get("leader_and_isr_in_flight")


def _awkward(name: str, state: dict[str, Any], args: dict[str, Any]) -> bool:
    """An environment step the adapter cannot cause as the story has it: taken while a
    controller request is in flight, or a write to a replica the coordination does not name
    leader (the adapter's producer finds the leader itself)."""
    if name not in MOVABLE:
        return False
    if not _quiet(state):
        return True
    coord = state.get("coordination") or {}
    return name == "ProducerSend" and coord.get("leader") != args.get("leader")


class Replayer:
    """Re-runs spec paths (action name and arguments per step) from a counterexample's initial
    state with the spec itself, as `isr replay` does: the states, or None where a step is not
    a transition of the spec."""

    def __init__(
        self,
        config: dict[str, Any],
        initial: dict[str, Any],
        prop: str,
        version: ProtocolVersion | None = None,
    ) -> None:
        from isr.spec import Config, IsrSpec

        self.model = IsrSpec(Config(**config), version)  # validates
        self.init = next(
            (s for s in self.model.init_states() if self.model.state_to_json(s) == initial), None
        )
        self.prop = next((p for p in self.model.properties if p.name == prop), None)

    def run(self, path: Path) -> list[Any] | None:
        if self.init is None:
            return None
        run = self.model.follow(self.init, [{"action": n, "args": a} for n, a in path])
        return None if run is None else [self.init, *(t for _a, t in run)]

    def breaks(self, path: Path, states: list[Any]) -> bool:
        """Whether the path's end breaks the story's property (an invariant in the last state,
        an action property by the last step)."""
        p = self.prop
        if p is None:
            return False
        if p.kind == "always":
            return not p.check(states[-1])
        if p.kind == "action" and len(states) > 1:
            step = self.model.follow(states[-2], [{"action": path[-1][0], "args": path[-1][1]}])
            assert step is not None  # (states came from run: the last step is a transition)
            return not p.check(states[-2], step[0][0], states[-1])
        return False


def _essence(state: dict[str, Any]) -> dict[str, Any]:
    """A state without the controller's zkVersion bookkeeping (which of two back-to-back moves'
    requests was current when applied): the logs, HWs, views, coordination and client history
    a reordering must keep."""
    out = {k: v for k, v in state.items() if k != "zk_version_current"}
    if "leader_and_isr_in_flight" in out:
        out["leader_and_isr_in_flight"] = [
            {k: v for k, v in r.items() if k != "version_current"}
            for r in out["leader_and_isr_in_flight"]
        ]
    return out


def normalize(path: Path, rp: Replayer, max_rounds: int = 64) -> Path:
    """The story reordered so that its environment steps fall where an adapter can cause them
    (``_awkward`` false: no controller request in flight, a write at the coordination's
    leader), by moving one step at a time (an awkward one first, else any step out of its way)
    to the nearest position that makes fewer steps awkward, keeping only reorderings that are
    still behaviours of the spec breaking the same property in the same last state (up to the
    zkVersion bookkeeping, ``_essence``; re-run with the spec: the steps commute, so the result
    is the same counterexample told in another order). A step no move
    helps stays where it was (``Story.notes`` then says the schedule only approximates it).
    Both families."""

    def cost(p: Path, states: list[Any]) -> int:
        js = [rp.model.state_to_json(s) for s in states]
        return sum(_awkward(n, js[i], a) for i, (n, a) in enumerate(p))

    states = rp.run(path)
    if states is None or not rp.breaks(path, states):
        return path
    # a reordering must reach the same state (the steps commute) and break the same property
    end = _essence(rp.model.state_to_json(states[-1]))
    best = cost(path, states)

    def same(st: list[Any]) -> bool:
        return _essence(rp.model.state_to_json(st[-1])) == end and rp.breaks(path, st)

    def eager() -> bool:
        """The implementation's own steps as early as they can be (it takes them at once), so
        that what the story does later with the environment finds them done."""
        nonlocal path, states, best
        moved = False
        for i in range(len(path)):
            if path[i][0] in MOVABLE:
                continue
            for j in range(i):
                cand = path[:i] + path[i + 1 :]
                cand.insert(j, path[i])
                st = rp.run(cand)
                if st is not None and same(st) and (c := cost(cand, st)) <= best:
                    path, states, best, moved = cand, st, c, True
                    break
        return moved

    for _ in range(max_rounds):
        if best == 0:
            break
        eager()
        improved = False
        # an awkward step moved, or (failing that) any step moved out of its way
        js = [rp.model.state_to_json(s) for s in states]
        bad = [i for i, (n, a) in enumerate(path) if _awkward(n, js[i], a)]
        order = bad + [i for i in range(len(path)) if i not in bad]
        for i in order:
            for j in sorted(range(len(path)), key=lambda j: (abs(j - i), j)):
                if j == i:
                    continue
                cand = path[:i] + path[i + 1 :]
                cand.insert(j, path[i])
                st = rp.run(cand)
                if st is None or not same(st):
                    continue
                c = cost(cand, st)
                if c < best:
                    path, states, best, improved = cand, st, c, True
                    break
            if improved:
                break
        if not improved:
            break
    return _writes_before_the_window(path, rp, same)


WINDOW = "ConsumerFetchDuringTruncation"


def window_steps(path: Path) -> list[tuple[int, int, int, int]]:
    """The truncation windows of a kraft story (KAFKA-14704's): for each
    ConsumerFetchDuringTruncation(f, l) at index k right after the LeaderHandleFetch(l, f) that
    answered f's fetch, (i, k, f, l) with i the index of the step from which the
    implementation sends that fetch by itself: f's last BrokerBecomeFollower (or
    BrokerRestart) before the fetch's FollowerSendFetch(f, l), else that send."""
    out = []
    for k, (name, args) in enumerate(path):
        if name != WINDOW or k == 0:
            continue
        f, ld = int(args["follower"]), int(args["leader"])
        prev, pargs = path[k - 1]
        if prev != "LeaderHandleFetch" or (pargs.get("leader"), pargs.get("follower")) != (ld, f):
            continue
        sends = [
            j
            for j, (n, a) in enumerate(path[: k - 1])
            if n == "FollowerSendFetch" and (a.get("follower"), a.get("leader")) == (f, ld)
        ]
        if not sends:
            continue
        i = sends[-1]
        for j in range(i - 1, -1, -1):
            n, a = path[j]
            if n in ("BrokerBecomeFollower", "BrokerRestart") and a.get("replica") == f:
                i = j
                break
            if actor(n, a) == f:
                break
        out.append((i, k, f, ld))
    return out


def _writes_before_the_window(path: Path, rp: Replayer, same: Any) -> Path:
    """kraft: a write at leader l between the step from which follower f sends its fetch and
    l's answer to it, in a story whose consumer reads inside f's handling of that answer
    (``window_steps``), told before that step: the schedule holds l while f's fetch waits for
    it (``schedule``), which would hold the write behind the fetch. Kept only if the reordered
    path is still the same counterexample (a write at l and f's own steps commute)."""
    for i, k, _f, ld in window_steps(path):
        for j in range(i + 1, k - 1):
            name, args = path[j]
            if name != "ProducerSend" or args.get("leader") != ld:
                continue
            cand = path[:j] + path[j + 1 :]
            cand.insert(i, path[j])
            st = rp.run(cand)
            if st is not None and same(st):
                path = cand
                i += 1
    return path


def read(path: str, version: ProtocolVersion | None = None) -> cxfile.CounterexampleTrace:
    """The counterexample in ``path`` (NDJSON or ITF, by content), or StoryError (one line).
    ``version``: the user's version its header names (its ``protocol_file``), else None."""
    try:
        trace = itf.read_any(path, version)
    except cxfile.TraceFileError as e:
        raise StoryError(str(e)) from None
    if not trace.steps:
        raise StoryError(f"{path}: the counterexample has no step")
    return trace


def start_command(config: dict[str, Any], protocol: str) -> dict[str, Any]:
    """The ``start`` of a story: one broker per spec replica (replica i is broker i), one
    partition replicated on all of them (with --reassignments on all but the last, the spare), the model's min.insync.replicas and acks. A setting the
    adapter protocol cannot ask for is a StoryError."""
    if config.get("unclean"):
        raise StoryError(
            "the counterexample's model elects unclean leaders (--unclean): the adapter "
            "protocol has no unclean-election setting"
        )
    acks = str(config.get("acks", "all"))
    if acks not in ("all", "1"):
        raise StoryError(
            f"the counterexample's model has acks {acks}: the adapter protocol's producers use "
            "acks all or 1"
        )
    n = int(config.get("replicas", 3))
    # KIP-455 (--reassignments): the partition starts on brokers 0..n-2, broker n-1 the spare
    rf = n - 1 if int(config.get("reassignments", 0) or 0) > 0 else n
    return {
        "op": "start",
        "brokers": n,
        "replication": rf,
        "partitions": 1,
        "min_insync": int(config.get("min_isr", 1)),
        "acks": acks,
    }


# The schedule's timings (ZooKeeper family, the reference implementation's scale: impl/sim
# sim_config, a session timeout the story's start sets). The adapter protocol has no command
# that waits for an observable condition, so each step of the implementation's own is a bounded
# `run`: long enough for the step, short enough that the story's cut links (below) do not last
# past the follower lag time (400 ms) before the story itself opens them.
STEP_MS = 20  # a step the implementation takes at once (a LeaderAndIsr applied: 1-5 ms away)
OPEN_MS = 400  # a cut link opened: a fetch or epoch query lost while cut is retried (<= 350)
SESSION_MS = 200  # the story's session timeout: a crash is noticed after it
ELECT_MS = 260  # ControllerElectLeader / ControllerShrinkIsr: after the session expired
LAG_MS = 460  # LeaderShrinkIsr: the leader's lag time (400) and its check (50)
WAITS = {
    "ControllerElectLeader": ELECT_MS,
    "ControllerShrinkIsr": ELECT_MS,
    "LeaderShrinkIsr": LAG_MS,
}
LINKED = frozenset({"FollowerFetch", "FollowerTruncate", "FollowerResetToLogStart"})

# kraft family. The reference kraft simulation (and Apache Kafka's adapter) cannot cut a link
# (``partition`` is refused: the kraft spec has no lost fetches), so a replica the story keeps
# apart is *held*: paused from the start, until the story's first step of its own (``actor``),
# when it is resumed. A pause holds the replica's messages instead of losing them, so the hold
# begins with HOLD_SETTLE_MS of running: the long-poll fetch it had parked at the leader is
# answered empty meanwhile (replica.fetch.wait.max.ms, 50 ms in impl/sim), and no record the
# story keeps from it is on its way to it. The story's session timeout is long enough that a
# hold never expires the held broker's session (it would be fenced: another story).
KRAFT_SESSION_MS = 2_000
HOLD_MS = 1_500  # a held replica resumes by itself after this (the story resumes it earlier)
HOLD_SETTLE_MS = 80
KRAFT_WAITS = {"LeaderSendAlterPartition": LAG_MS}  # an ISR shrink waits for the lag time


@dataclass(frozen=True)
class Timing:
    """The timescale a kraft story is told at: the implementation's session timeout (asked
    for in ``start``), how long a hold lasts at most, the run that lets a held replica's
    parked fetch be answered, the wait for an ISR shrink (past replica.lag.time.max.ms) and
    the run a step of the implementation's own gets, and how long a leader parks an idle fetch
    (replica.fetch.wait.max.ms). ``REFERENCE``: impl/sim's sim_config
    (lag 400 ms, fetch wait 50 ms); ``KAFKA``: the Apache Kafka adapter's cluster
    (traces/conformance/apache_kafka/cluster.py Settings: lag 4 s, a session the start's
    ``session_timeout_ms`` may lengthen, replica.fetch.wait.max.ms 500 ms, elections and
    metadata propagation in hundreds of ms, a produce waiting up to 6 s for its answer)."""

    session_ms: int = KRAFT_SESSION_MS
    hold_ms: int = HOLD_MS
    hold_settle_ms: int = HOLD_SETTLE_MS
    lag_ms: int = LAG_MS
    step_ms: int = 0  # 0: step_ops' own runs as they are
    fetch_wait_ms: int = 50  # replica.fetch.wait.max.ms: how long an idle fetch is parked


REFERENCE = Timing()
# (Kafka's produce command waits up to its 6 s delivery timeout for an answer: a hold spans it)
KAFKA = Timing(
    session_ms=24_000,
    hold_ms=20_000,
    hold_settle_ms=1_200,
    lag_ms=6_000,
    step_ms=1_500,
    fetch_wait_ms=500,
)
KRAFT_LEADER = 0  # the spec's initial leader, the adapter's preferred replica of partition 0


def actor(name: str, args: dict[str, Any]) -> int | None:
    """The replica that takes a kraft step (None: the controller's, or the environment's
    without a replica), the one a hold must release before the step: BrokerX(replica),
    FollowerX(follower), LeaderX(leader), ProducerSend(leader), ConsumerFetch(replica),
    ConsumerResetOffset(leader)."""
    key = None
    if name.startswith("Broker") or name == "ConsumerFetch":
        key = "replica"
    elif name.startswith("Follower"):
        key = "follower"
    elif name.startswith("Leader") or name in ("ProducerSend", "ConsumerResetOffset"):
        key = "leader"
    v = args.get(key) if key else None
    return int(v) if isinstance(v, int) else None


def stale_expansions(path: Path) -> list[tuple[int, int, int, int, int, int]]:
    """The stale expansions of a kraft story (KIP-903's, KAFKA-14139): a
    LeaderSendAlterPartition(l, f) at index k adding follower f (the ISR removal of f, a
    BrokerApplyPartitionChange(l), came after f's crash) on the strength of a fetch f's
    previous incarnation made before its BrokerCrash(f) at index c (no FollowerSendFetch of f
    in between), with f's BrokerRestart at r and BrokerRegister at g between the proposal and
    the controller's ControllerHandleAlterPartition(l). Each as (c, k, f, l, r, g)."""
    out = []
    for k, (name, args) in enumerate(path):
        if name != "LeaderSendAlterPartition":
            continue
        f, ld = int(args["follower"]), int(args["leader"])
        crashes = [
            i for i, (n, a) in enumerate(path[:k]) if n == "BrokerCrash" and a.get("replica") == f
        ]
        if not crashes:
            continue
        c = crashes[-1]
        between = path[c + 1 : k]
        if any(n == "FollowerSendFetch" and a.get("follower") == f for n, a in between):
            continue
        if not any(
            n == "BrokerApplyPartitionChange" and a.get("replica") == ld for n, a in between
        ):
            continue
        if not any(
            n == "LeaderHandleFetch" and (a.get("leader"), a.get("follower")) == (ld, f)
            for n, a in path[:c]
        ):
            continue
        h = next(
            (
                j
                for j in range(k + 1, len(path))
                if path[j][0] == "ControllerHandleAlterPartition" and path[j][1].get("leader") == ld
            ),
            None,
        )
        if h is None:
            continue
        mine = {n: j for j in range(k + 1, h) for n, a in [path[j]] if a.get("replica") == f}
        if "BrokerRestart" in mine and "BrokerRegister" in mine:
            out.append((c, k, f, ld, mine["BrokerRestart"], mine["BrokerRegister"]))
    return out


def schedule(
    path: Path,
    config: dict[str, Any],
    claimed: str | ProtocolVersion,
    story: Story | None = None,
    timing: Timing = REFERENCE,
) -> Scenario:
    """The adapter schedule of a spec path (each step by ``scenarios.step_ops``, the one
    mapping). ZooKeeper family: the spec's controller is no replica, so the story runs on one
    broker more than it has replicas, with the controller moved there (controller_failover);
    the links between replicas are cut (partition) from the start, a link is opened for the
    story's steps between those two replicas (a fetch, a truncation) and cut again before the
    next environment step, so the implementation does not replicate what the story keeps
    apart; the implementation's own
    steps are bounded runs (``WAITS``, ``STEP_MS``). kraft: one broker per replica, each
    replica but the initial leader held (paused, ``HOLD_MS``) until its first step of its own
    (``actor``), since the kraft adapters cannot cut a link; an ISR shrink waits for the lag
    time (``KRAFT_WAITS``), at ``timing``'s scale. ``story``: gets a note per step."""
    lose = bool(config.get("lose_unflushed"))
    n = int(config.get("replicas", 3))
    zk = family(claimed) == "zookeeper"
    start = start_command(config, claimed)
    ops: Scenario = [start]
    ctl = n  # the controller's broker
    pairs = [(a, b) for a in range(n) for b in range(a + 1, n)]
    opened: set[tuple[int, int]] = set()

    def cut() -> Scenario:
        return [{"op": "partition", "a": a, "b": b} for a, b in pairs if (a, b) not in opened]

    held: set[int] = set()
    if zk:
        start.update({"brokers": n + 1, "session_timeout_ms": SESSION_MS})
        ops += [{"op": "controller_failover", "broker": ctl}, {"op": "run", "ms": 50}, *cut()]
    else:
        # every replica but the initial leader (which hosts the reference's controller) is held
        # until its first step: it neither fetches nor answers what the story keeps from it
        # (one whose first step is the story's first has nothing to be kept from: not held, as
        # a resumed replica takes what its hold kept only when the hold would have ended)
        start["session_timeout_ms"] = timing.session_ms
        first = actor(*path[0]) if path else None
        held = {r for r in range(n) if r not in (KRAFT_LEADER, first)}
        if held:
            ops += [{"op": "pause", "broker": r, "ms": timing.hold_ms} for r in sorted(held)]
            ops.append({"op": "run", "ms": timing.hold_settle_ms})
    down: set[int] = set()  # kraft: replicas the story crashed (a fence of one is its session)
    shut: set[int] = set()  # kraft: replicas the adapter's controlled_shutdown stopped
    # kraft: the truncation windows (window_steps): where the leader's hold starts, and, at
    # the leader's answer, the follower and leader; ``since`` the runs after the leader's hold
    windows = {} if zk else {i: ld for i, _k, _f, ld in window_steps(path)}
    answers = {} if zk else {k - 1: (f, ld) for _i, k, f, ld in window_steps(path)}
    reads = set() if zk else {k for _i, k, _f, _ld in window_steps(path)}
    # kraft: KIP-903's stale expansions (stale_expansions): the follower's crash step takes its
    # restart and registration too; ``taken`` the later steps it took, by index: the step
    stale = {} if zk else {c: (f, ld) for c, _k, f, ld, _r, _g in stale_expansions(path)}
    taken = {} if zk else {j: c for c, _k, _f, _l, r, g in stale_expansions(path) for j in (r, g)}
    since: int | None = None
    for k, (name, args) in enumerate(path, start=1):
        where = f"step {k} ({name})"
        try:
            cmds = step_ops(name, args, lose_unflushed=lose, kraft=not zk)
        except (NoAdapterCommand, KeyError) as e:
            why = str(e) if isinstance(e, NoAdapterCommand) else f"argument {e} missing"
            raise StoryError(f"{where}: no adapter command: {why}") from None
        own = all(c["op"] == "run" for c in cmds)
        how = ""
        if not zk and k - 1 in taken:
            # the follower's restart and registration, taken with its crash (below)
            cmds, own = [], False
            how = f"taken with step {taken[k - 1] + 1}"
            if name == "BrokerRestart":
                down.discard(int(args["replica"]))
        elif not zk and k - 1 in stale:
            # KIP-903's story: the leader proposes the follower on a fetch of its previous
            # incarnation, and the controller decides after the follower's new registration.
            # The leader proposes only from a fetch it handles, so that fetch must wait at the
            # leader across the follower's crash and registration: the follower is held a
            # moment (the leader's answer waits for it), then takes the answer and fetches
            # again (an idle fetch, which the leader parks for replica.fetch.wait.max.ms); it
            # loses power while that fetch is parked, restarts at once (its registration is an
            # unclean shutdown's, which takes it out of the ISR, as the story's fence did) and
            # is held before it fetches, so that the parked fetch is the one the leader handles
            f, ld = stale[k - 1]
            cmds = [
                {"op": "pause", "broker": f, "ms": timing.hold_settle_ms},
                {"op": "run", "ms": timing.hold_settle_ms + timing.fetch_wait_ms // 5},
                *cmds,
                {"op": "restart", "broker": f},
                {"op": "pause", "broker": f, "ms": timing.hold_ms},
            ]
            held.add(f)
            down.add(f)  # (the story's fence of f comes as its own step, after the crash)
            how = (
                f"retold for KIP-903: {f} held until its next fetch is parked at {ld}, then "
                f"{cmds[2]['op']}, restart and held (steps of its restart and registration "
                "taken here)"
            )
        elif not zk:
            ms = timing.lag_ms if name in KRAFT_WAITS else timing.step_ms
            if ms:
                cmds = [{**c, "ms": ms} if c["op"] == "run" else c for c in cmds]
            who = actor(name, args)
            if name == "ControllerShutdownBroker":
                # the adapter's controlled_shutdown stops the broker (ADAPTER.md; Kafka's
                # shutdown ends there); the story keeps it running: restarted at its next step
                shut.add(int(args["replica"]))
            elif who in shut and name not in ("BrokerCrash", "BrokerRestart"):
                shut.discard(who)
                cmds = [{"op": "restart", "broker": who}, *cmds]
                how = f"restarts broker {who} (stopped by its controlled shutdown), "
            elif name == "BrokerRestart":
                shut.discard(int(args["replica"]))
            if name == "BrokerCrash":
                down.add(int(args["replica"]))
            elif name == "BrokerRestart":
                down.discard(int(args["replica"]))
            elif name == "ControllerFenceBroker" and int(args["replica"]) not in down:
                # a running broker's heartbeats stop (KIP-841): a pause past its session, and
                # the controller's fence after it (spec/actions/controller.py)
                r = int(args["replica"])
                held.discard(r)
                cmds = [
                    {"op": "pause", "broker": r, "ms": timing.session_ms + timing.hold_ms},
                    {"op": "run", "ms": timing.session_ms + timing.lag_ms},
                ]
                own, how = False, ""
            if who in held:
                held.discard(who)
                cmds = [{"op": "resume", "broker": who}, *cmds]
                how += f"resumes the held broker {who}, "
            if k - 1 in windows:
                # KAFKA-14704's window: the leader is held from before the follower's fetch (it
                # waits there), so that the follower's answer can be held in turn (below)
                ld = windows[k - 1]
                held.discard(ld)
                at = next((n for n, c in enumerate(cmds) if c["op"] == "run"), len(cmds))
                cmds = [*cmds[:at], {"op": "pause", "broker": ld, "ms": timing.hold_ms}, *cmds[at:]]
                how += f"holds the leader {ld} (its answer waits), "
                since = 0
            elif k - 1 in answers:
                # the leader answers when its hold ends; the follower, held from now on, takes
                # the answer when its own hold ends, with the read sent meanwhile behind it
                f, ld = answers[k - 1]
                wait = timing.hold_ms - (since or 0) + max(30, timing.hold_settle_ms // 2)
                cmds = [
                    {"op": "pause", "broker": f, "ms": timing.hold_ms},
                    {"op": "run", "ms": wait},
                ]
                own, how = False, f"holds the follower {f} until {ld}'s answer is on its way, "
                since = None
            elif k - 1 in reads:
                cmds = [*cmds, {"op": "run", "ms": timing.hold_ms}]
                how = "the read waits at the held follower behind the leader's answer, "
            if since is not None:
                since += sum(int(c["ms"]) for c in cmds if c["op"] == "run")
            if how:
                how += ", ".join(f"run {c['ms']} ms" for c in cmds if c["op"] == "run")
        if zk:
            link = None
            if name in LINKED and "follower" in args and "leader" in args:
                f, ld = int(args["follower"]), int(args["leader"])
                link = (min(f, ld), max(f, ld))
            if not own and opened:  # an environment step: what it does stays apart
                opened.clear()
                cmds = [*cut(), *cmds]
            if name == "NetworkLoseLeaderAndIsr":  # from the controller's broker, then re-cut
                cmds = [
                    {"op": "partition", "a": ctl, "b": args["replica"]},
                    cmds[-2],
                    {"op": "heal"},
                    *cut(),
                ]
            elif link is not None and link not in opened:
                opened.add(link)
                cmds = [{"op": "heal"}, *cut(), {"op": "run", "ms": OPEN_MS}]
                how = f"opens the link {link[0]}-{link[1]}, run {OPEN_MS} ms"
            else:
                ms = WAITS.get(name, STEP_MS)
                cmds = [{**c, "ms": ms} if c["op"] == "run" else c for c in cmds]
        ops += cmds
        if story is None:
            continue
        shown = ", ".join(f"{k_}={v}" for k_, v in args.items())
        if own:
            story.own += 1
            run = how or f"run {next((c['ms'] for c in cmds if c['op'] == 'run'), 0)} ms"
            story.notes.append(f"{k}. {name}({shown}): the implementation's own step, {run}")
        elif not cmds:  # (kraft: taken by an earlier step's commands)
            story.caused += 1
            story.notes.append(f"{k}. {name}({shown}): {how}")
        else:
            story.caused += 1
            story.notes.append(f"{k}. {name}({shown}): " + ", ".join(c["op"] for c in cmds))
    # a replica held to the end is resumed before the settling (it would resume by itself)
    ops += [{"op": "resume", "broker": r} for r in sorted(held)]
    return ops + settle(n + 1 if zk else n)


def to_story(
    trace: cxfile.CounterexampleTrace,
    claimed: str | ProtocolVersion,
    version: ProtocolVersion | None = None,
) -> Story:
    """The scenario of ``trace`` for an implementation of ``claimed`` (a name or a version
    object): refused (StoryError) when the counterexample is of another protocol family, or a
    step has no adapter command. ``version``: the user's version the counterexample is of (its
    header's ``protocol_file``), else None. A ZooKeeper-era story is first reordered
    (``normalize``) so that its environment steps fall where an adapter can cause them; the
    notes say which steps are still only approximated."""
    head = trace.header
    cfg = head.get("config") or {}
    proto = str(cfg.get("protocol") or "")
    if version is not None and version.name != proto:
        version = None
    of = version or proto
    claimed_name = claimed.name if isinstance(claimed, ProtocolVersion) else claimed
    if family(of) != family(claimed):
        raise StoryError(
            f"the counterexample is of {proto} ({family(of)} family); --protocol {claimed_name} "
            f"is of the {family(claimed)} family: its steps are another model's"
        )
    path: Path = []
    for step in trace.steps:
        name = step.get("action")
        if not name:
            raise StoryError(f"step {step.get('index')}: the step names no action")
        path.append((str(name), dict(step.get("args") or {})))
    prop = str(head.get("property") or "?")
    story = Story(proto, prop, len(trace.steps), [])
    # both families (a kraft state has the same coordination and in-flight keys)
    rp = Replayer(cfg, trace.initial, prop, version)
    new = normalize(path, rp)
    story.reordered = new != path
    path = new
    states = rp.run(path)
    if states is not None:
        js = [rp.model.state_to_json(s) for s in states]
        story.approximate = [k + 1 for k, (n, a) in enumerate(path) if _awkward(n, js[k], a)]
    story.scenario = schedule(path, cfg, claimed, story)
    return story


def load_story(
    path: str, claimed: str | ProtocolVersion, version: ProtocolVersion | None = None
) -> Story:
    """``read`` then ``to_story`` (``version``: the user's version the file is of, or None)."""
    return to_story(read(path, version), claimed, version)
