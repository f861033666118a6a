"""What a protocol version is: the base class every version (and a user's own) extends.

A version is one object with named hooks. The spec's actions never ask which version runs; they
call the hooks, bound once per model (spec.actions.common.Ctx), so the hot path pays one call
where it paid one flag test. The base class is no Kafka release: it is the skeleton every version
fills in. Its hooks answer these questions:

* ``become_follower``: what a replica does to its log on becoming follower (R10);
* ``on_restart``: what a restarted broker does to its log (R13);
* ``truncation_offset``: where a truncating follower cuts its log, given the leader's answer
  (KIP-101, KIP-279);
* ``fetch_fenced``: whether a leader refuses a fetch made at another leader epoch (KIP-320);
* ``isr_join_floor``: the offset a follower must reach to rejoin the ISR (R7, KAFKA-7128);
* ``new_leader_hw``: the HW a new leader starts from (R11; R16 in the original design);
* ``high_watermark``: the commit rule, the HW a leader advances to from the LEOs it counts (R4);
* ``choose_leader``: which of the replicas an election rule allows the controller picks (R9).

The base hooks read the flags below, so a version that only switches a rule sets a flag; a
version (or a user's) that changes how a rule works overrides the hook. Rules that change which
actions exist, or the election and commit rules as a whole, stay flags
(class attributes): ``majority_quorum`` (R17), ``eligible_leader_replicas`` (KIP-966),
``broker_epoch_fencing`` (KIP-380), ``truncate_on_divergence`` (KIP-320's first design). A flag is
the honest form there: each switches on a family of actions and properties, not one decision.

A subclass overrides what its KIP changed and inherits the rest, as the TLA+ modules extend each
other (``Kip320.tla`` EXTENDS ``Kip279.tla``). A version's ``name`` is what ``--protocol`` takes;
it and ``description`` are class attributes, and a version is used as one instance.
"""

from __future__ import annotations

import copy
from typing import ClassVar

from ..log import epoch_start
from ..state import Log


class ProtocolVersion:
    """The skeleton of a protocol version. Subclasses set ``name`` and ``description`` and
    override the hooks their KIP changed."""

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""

    # --- flags: the declarations the base hooks read ----------------------------------------
    truncate_to_hw_on_become_follower: ClassVar[bool] = False  # seeds: R10 "truncate to the HW"
    truncate_to_hw_on_restart: ClassVar[bool] = False  # seeds: R13 "truncates to the checkpoint"
    fenced_fetch: ClassVar[bool] = False  # KIP-320: fetches carry the current leader epoch
    isr_join_needs_epoch_start: ClassVar[bool] = False  # KAFKA-7128
    new_leader_hw_is_leo: ClassVar[bool] = False  # R16 original design: new leader's HW := LEO
    majority_quorum: ClassVar[bool] = False  # R17: commit at a majority, elect most up-to-date
    eligible_leader_replicas: ClassVar[bool] = False  # KIP-966: eligible leader replicas
    hw_needs_min_isr: ClassVar[bool] = False  # KIP-966 / KAFKA-15583: the HW advances only
    # while the ISR has min.insync.replicas members (unconditional in Kafka since 3.7, apart
    # from the ELR flag, which 4.0 ships off)
    broker_epoch_fencing: ClassVar[bool] = False  # KIP-380: a previous incarnation is fenced
    truncate_on_divergence: ClassVar[bool] = False  # KIP-320's first design: no truncation
    # phase; the leader answers LOG_TRUNCATION to a fetch whose last epoch disagrees
    alter_reassignment_in_progress: ClassVar[bool] = False  # ZooKeeper era with
    # --reassignments: KIP-455 (Kafka 2.4.0, AlterPartitionReassignments and
    # ``KafkaController.updateCurrentReassignment``) lets a new target replace a reassignment in
    # progress; before it (every built-in ZooKeeper-era version: 0.8 to 2.3) the operator's tool
    # refuses while /admin/reassign_partitions exists (``ReassignPartitionsCommand``: "There is
    # an existing assignment running.")
    reassignment_keeps_leader: ClassVar[bool] = True  # ZooKeeper era with --reassignments:
    # KAFKA-14808's fix (apache/kafka#13451, closed unmerged, so no Kafka release has it): a new
    # target that would stop the current leader, an adding replica of the reassignment in
    # progress, is refused; without it the controller's phase U records leader -1 and the
    # partition stays leaderless (spec/actions/zk_reassignment.py)
    split_fetch: ClassVar[bool] = False  # kraft: the fetch as request and delayed response, with
    # DivergingEpoch truncation in the response (spec/actions/fetch.py, spec.state.Kraft)
    walks_back: ClassVar[bool] = False  # KIP-279: OffsetsForLeaderEpoch in rounds, epoch by
    # epoch (the trace validator accepts an intermediate round an implementation logs)
    startup_needs_failure: ClassVar[bool] = False  # a ZooKeeper controller before KIP-380
    # sends a restarted broker its partitions only if it handled the broker's failure first
    # (KafkaController.onBrokerStartup runs for brokers it saw leave; the failure handling took
    # a follower out of the ISR): a restarted follower still in the ISR is a missed bounce, and
    # is sent nothing (spec/actions/broker.py ``_registered``). Off, the spec sends it the
    # current state with its ISR seat kept, a combination Kafka's controller does not produce
    # (docs/audit.md: set only where the pins have been redone)
    # --idempotence (R6, R15): the idempotent producer and the brokers' producer state are
    # Kafka 3.9's in every version (the versions differ in replication, not in KIP-98 and
    # KIP-360: spec/producer_state.py, spec/actions/producer.py); each flag is a fix a variant
    # takes back to find the bug it closed (examples/protocols/)
    retain_producer_state: ClassVar[bool] = True  # KAFKA-7190 (Kafka 2.5, KIP-360): a
    # producer whose last batch retention deleted stays known (in memory and in the producer
    # snapshots) until producer.id.expiration.ms; before, ``truncateHead`` forgot it, and its
    # retry of a deleted batch was appended again
    cache_five_batches: ClassVar[bool] = True  # KAFKA-5494 (Kafka 1.0): the leader keeps the
    # last five batches of a producer (ProducerStateEntry.NUM_BATCHES_TO_RETAIN), as many as
    # the producer has in flight; 0.11 kept only the last, with one request in flight
    replica_symmetric: ClassVar[bool] = True  # no hook reads a replica's id; a version whose
    # rule does (a preferred replica: the lowest id) sets False, and the model then turns off
    # symmetry reduction, which would otherwise merge states the rule tells apart

    # Set by cli.protocol_file.load_protocol_file on a user's version: where it came from (for
    # result headers), and ``rebuild``: (function, arguments) that build it again from the
    # file's content. A user's class lives in a module no other process has, so a pickle (a
    # Spark executor, matrix's pool, any process not forked from this one) carries that call
    # instead of a reference to the class (see __reduce_ex__). None for a built-in version.
    source_file: str | None = None
    source_sha256: str | None = None
    rebuild: tuple | None = None

    # --- hooks --------------------------------------------------------------------------------
    def become_follower(self, log: Log, hw: int, hw_ckpt: int) -> tuple[Log, int, int, bool]:
        """R10: (log, HW, HW checkpoint, truncating) of a replica that applies a LeaderAndIsr
        naming another leader. With ``truncate_to_hw_on_become_follower`` (the seeds): cut the
        log to the HW at once and checkpoint it. Otherwise keep the log and ask the leader before
        fetching (the fetcher starts truncating), unless the version has no truncation phase."""
        if self.truncate_to_hw_on_become_follower:
            return log[:hw], hw, hw, False
        return (
            log,
            hw,
            hw_ckpt,
            bool(log) and not (self.truncate_on_divergence or self.split_fetch),
        )

    def on_restart(self, log: Log, hw_ckpt: int) -> Log:
        """R13: the log a broker restarts with, given its HW checkpoint: cut to the checkpoint with
        ``truncate_to_hw_on_restart`` (the seeds), else all of it (truncation waits for the
        leader)."""
        return log[:hw_ckpt] if self.truncate_to_hw_on_restart else log

    def truncation_offset(self, flog: Log, fhw: int, llog: Log, lepoch: int) -> int:
        """Where a truncating follower with log ``flog`` and HW ``fhw`` cuts its log, given the
        leader's log and current epoch. Only the epoch-based versions truncate this way."""
        raise NotImplementedError(f"{self.name}: no truncation by asking the leader")

    def fetch_fenced(self, leader_epoch: int, follower_epoch: int) -> bool:
        """Whether the leader refuses a follower's fetch (and OffsetsForLeaderEpoch) because the
        follower is at another leader epoch (FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH).
        Base: only when the version's fetches carry the epoch (``fenced_fetch``)."""
        return self.fenced_fetch and leader_epoch != follower_epoch

    def isr_join_floor(self, log: Log, epoch: int, hw: int) -> int:
        """R7: the fetched LEO a follower must reach to rejoin the ISR of a leader with ``log``,
        leader epoch ``epoch`` and HW ``hw``: the HW, and with ``isr_join_needs_epoch_start``
        (KAFKA-7128) also the start offset of the leader's epoch, since a new leader's HW may lag
        records the previous leader already committed."""
        if self.isr_join_needs_epoch_start:
            return max(hw, epoch_start(log, epoch))
        return hw

    def new_leader_hw(self, log: Log, hw: int) -> int:
        """R11: the HW a replica starts from on becoming leader; it may lag the old leader's.
        With ``new_leader_hw_is_leo`` (R16, the original design) its own LEO. (The leader
        then re-evaluates it from its ISR, R4.)"""
        return len(log) if self.new_leader_hw_is_leo else hw

    def high_watermark(self, leader_leo: int, follower_leos: tuple[int, ...]) -> int:
        """R4, the commit rule: the HW a leader with LEO ``leader_leo`` may advance to, given the
        fetched LEOs of the other replicas it counts (its ISR; in kraft the maximal ISR while an
        AlterPartition is in flight), -1 for one not heard from since it became leader. Base:
        the minimum, so a record is committed once every counted replica has it. The spec keeps
        the HW from decreasing (a result at or below the current HW changes nothing) and checks
        the result against HwAtMostLeo like any other state; majority-quorum's rule is its own
        (R17) and does not call this hook."""
        return min(leader_leo, *follower_leos) if follower_leos else leader_leo

    def choose_leader(self, candidates: int, logs: tuple[Log, ...], election: str) -> int:
        """R9, the election's last word: of ``candidates`` (a bitmask of replica ids), the ones
        the controller may pick. The version's rule has already chosen which step applies and
        computed that step's candidates, named by ``election``:

        * ``"isr"``: the leader is lost; the live ISR members not barred (kip-966: back from an
          unclean shutdown; KIP-841: fenced or shutting down);
        * ``"elr"``: kip-966, no such ISR member; the live eligible leader replicas;
        * ``"unclean"``: --unclean, none of those; every live replica not barred;
        * ``"move"``: a live leader moved away (preferred-replica or operator election); the
          other live ISR members not barred;
        * ``"shutdown"``: the leader's controlled shutdown; the rest of the ISR, live, not
          shutting down;
        * ``"quorum"``: majority-quorum; the live replicas at least as up to date as a majority.

        ``logs``: every replica's log, by id. Kafka's ZooKeeper and KRaft controllers do not
        read them; a rule that does models a controller that asks (as KIP-966's unclean
        recovery asks the replicas for their log ends). Base: every candidate: the controller's
        own preference (the first live replica of the assignment) is one of them, and replica
        ids are symmetric. The result is intersected with ``candidates``: a rule cannot widen an
        election (--unclean and the flags do that); an empty result leaves the partition
        offline (the leader lost) or the leadership where it is (a move, a shutdown). A rule
        that reads ids, not only logs, must set ``replica_symmetric = False``."""
        return candidates

    # --- variants -----------------------------------------------------------------------------
    def variant(self, **flags: bool) -> ProtocolVersion:
        """A copy of this version with some flags set otherwise (a test builds a version with
        one guard removed, e.g. ``KRAFT.variant(response_guard=False)``). It keeps the name: a
        variant is that version with a known bug put back, not a new version."""
        v = copy.copy(self)
        for key, value in flags.items():
            if not isinstance(getattr(type(self), key, None), bool):
                raise AttributeError(f"{self.name} has no flag {key!r}")
            setattr(v, key, value)
        return v

    # --- crossing a process boundary -----------------------------------------------------------
    def __reduce_ex__(self, protocol: object) -> object:
        """A built-in version pickles as any object (its class by reference); a user's as the
        call that loads its file's content again, then its own attributes (a variant's flags)."""
        if self.rebuild is None:
            return super().__reduce_ex__(protocol)  # type: ignore[arg-type]
        fn, args = self.rebuild
        return fn, args, {k: v for k, v in vars(self).items() if k != "rebuild"}

    def __copy__(self) -> ProtocolVersion:
        """A copy of the same class with the same attributes (``variant``): never through
        pickling, which for a user's version would load the file's version again."""
        v = object.__new__(type(self))
        v.__dict__.update(self.__dict__)
        return v

    # --- derived ------------------------------------------------------------------------------
    @property
    def truncates_by_asking_leader(self) -> bool:
        """The version has FollowerTruncate (KIP-101 and later): a new follower does not cut its
        log to the HW at once."""
        return not self.truncate_to_hw_on_become_follower

    def __repr__(self) -> str:
        return f"<protocol {self.name}>"
