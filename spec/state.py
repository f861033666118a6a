"""The state variables of the ISR spec, each with what it means and what is not modelled.

One partition, replicas 0..R-1 (all assigned: AR = all replicas; kraft with --reassignments:
R brokers, the replica set ``Kraft.assigned`` moving among them, KIP-455). A state is a nest of tuples
(NamedTuples are tuples) of ints and bools, so it hashes by value identically in every process.
Sets of replicas are bitmasks; sets of records are sorted tuples.

Deliberately not modelled: time (any timeout may expire between two steps, so lag-based ISR
shrink may happen at any moment), multiple partitions, fetcher threads and batching of requests.
The fault modes (unclean election, lost unflushed tails, producer retries, log retention,
controller failover, eligible leader replicas, session expiry) live in ``Faults``, a constant when they are off, so
that with every mode off the state space is exactly the fault-free one. Up to kip-966 the fetch
is one atomic request/response, and the follower learns the leader's HW in the same step; the
lazily written HW checkpoint keeps the window of the KIP-101 loss. That is not Kafka since
KAFKA-7104 (2.0): a fetch response carries the HW read before the leader applied that fetch, so a
follower's in-memory HW lags one more round. The ``kraft`` version splits the fetch into request
and response (``Kraft``, spec/actions/fetch.py) and has that lag.
"""

from __future__ import annotations

from typing import NamedTuple

from .shared_log import SharedLog

NO_LEADER = -1
NO_EPOCH = 0
UNKNOWN_LEO = -1

Entry = tuple[int, ...]  # (record id, leader epoch that appended it); with --idempotence
# also the batch header the producer wrote: (record, leader epoch, producer epoch, sequence)
# A tuple in the model checker; a SharedLog (same value semantics, O(1) append and prefix) in
# trace validation, where logs grow long. See spec.shared_log.
Log = tuple[Entry, ...] | SharedLog


class Replica(NamedTuple):
    """A broker's replica of the partition."""

    log: Log  # durable log: (record id, leader epoch) at each offset; LEO = len(log) (R3)
    hw: int  # in-memory high watermark (R4); 0 after a crash until restart reads the checkpoint
    hw_ckpt: int  # HW checkpoint file on disk (R13), written lazily (BrokerCheckpointHw) and on truncation
    alive: bool  # False between BrokerCrash and BrokerRestart
    leader: (
        int  # leader from the last LeaderAndIsr applied (NO_LEADER before any, or after a crash)
    )
    epoch: int  # leader epoch from the last LeaderAndIsr applied (NO_EPOCH before any)
    isr: int  # ISR bitmask: from the last LeaderAndIsr, or from the leader's own ISR writes (R7)
    zk_fresh: bool  # the cached partition-state zkVersion equals the coordination's (see Coord)
    remote_leo: tuple[
        int, ...
    ]  # as leader: each follower's LEO from its last fetch (R3); -1 unknown
    truncating: bool  # follower fetcher awaits OffsetsForLeaderEpoch truncation (kip-101 and later)
    pending: tuple[
        int, ...
    ]  # as leader: offsets of acks=all writes awaiting commit (purgatory, R6)


class Coord(NamedTuple):
    """The coordination service's partition state (ZooKeeper's /brokers/topics/t/partitions/p/state,
    R18), written only by the controller and by the leader's compare-and-set ISR updates (R7, R9).

    The zkVersion is abstracted: versions only ever increase and are only compared for equality
    with the current one, so a cached version is either current or stale forever. Each replica and
    each request in flight carries that one bit (``zk_fresh`` / ``Request.fresh``), every write
    clears it everywhere but at the writer: this is the compare-and-set fencing exactly, with a
    finite state space."""

    leader: int  # the elected leader (may be crashed: the partition is then offline until elected)
    epoch: int  # the leader epoch, bumped by every controller write (R9)
    isr: int  # the recorded ISR, a bitmask


class Request(NamedTuple):
    """A LeaderAndIsr request in flight from the controller to one replica (R9). In flight
    requests may be delayed and lost (NetworkLoseLeaderAndIsr) but, in every ZooKeeper-era
    version, a broker receives those of one controller in the order sent (R8: one FIFO queue per
    broker in Kafka's ControllerChannelManager): ``State.requests`` stays a sorted set, and the
    order of each (dest, ctrl_epoch) queue follows from the requests themselves
    (spec.actions.common.queue_key), so a state stays canonical without sequence numbers."""

    dest: int
    leader: int
    epoch: int
    isr: int
    fresh: bool  # the request's zkVersion is still the current one
    ctrl_epoch: int  # the sending controller's epoch (R9); always 1 without controller failover
    replicas: int = 0  # kraft with --reassignments (KIP-455): the partition's replica set, a
    # bitmask, as the registration the request stands for has it (PartitionRegistration
    # .replicas); 0, a constant, when the mechanism is off (every broker is a replica)
    pc: int = 0  # kraft: a partition change in flight to the leader in its own leader epoch
    # (KAFKA-15021: no leader epoch bump) that is newer than the partition state the leader
    # holds, by rank in the order written: 1 the oldest such, densely (the partition epoch's
    # order, abstracted: only the order among these and the leader's state is ever asked, and
    # ranks keep the space finite where partition epochs grow without bound). 0 for every
    # other request: an election, a follower's state, a change the leader has passed (it may
    # only be ignored), and always in the ZooKeeper-era versions, whose changes bump the epoch


class History(NamedTuple):
    """History variables: what clients were told, for the safety properties. Not protocol state."""

    next_record: int  # records written so far (ids 1..next_record have been used)
    acked: tuple[Entry, ...]  # (offset, record) acknowledged to an acks=all producer (R6)
    acked1: tuple[Entry, ...]  # (offset, record) acknowledged to an acks=1 producer (R6)
    refused: tuple[int, ...]  # records refused: NotEnoughReplicas or NotEnoughReplicasAfterAppend
    shown: tuple[Entry, ...]  # (offset, record) ever returned to a consumer (R5)
    crashes: int  # crashes so far (bounded by Config.crashes)


class Producer(NamedTuple):
    """--idempotence: the idempotent producer's own state for the one partition (R6, R15), as
    Kafka 3.9's client keeps it (clients/.../producer/internals/TransactionManager.java,
    TxnPartitionEntry.java): its producer epoch, the next sequence, the last acknowledged one,
    and the batches in flight (sent, not yet completed), each a record (one record, one batch)
    with its sequence in the current epoch and what the latest attempt was answered. The
    producer id is one and constant, so it is not kept; every batch in flight carries the
    current epoch (a bump rewrites them all: ``startSequencesAtBeginning``)."""

    epoch: int  # producerIdAndEpoch.epoch: 0, bumped by the producer itself (KIP-360, 2.5)
    next_seq: int  # TxnPartitionEntry.nextSequence: the sequence of the next new batch
    last_acked: int  # lastAckedSequence: the highest sequence acknowledged in this epoch, -1
    batches: tuple[tuple[int, int, int, int, int, int], ...]  # in flight, by sequence:
    # (record, sequence, answer, broker, leader epoch, offset): the latest attempt's answer,
    # not yet taken in, is 0 none (not sent, lost, or an error to retry; broker -1), 1
    # acknowledged, 2 OUT_OF_ORDER_SEQUENCE_NUMBER, or 3 waiting in the purgatory of that
    # broker, leader at that leader epoch, at that offset (acks=all); ``broker`` answered it
    leader_epoch: int  # the highest leader epoch of a leader it sent to: its metadata never
    # goes back to an older one (Metadata.updateLatestMetadata ignores an older leader epoch,
    # KIP-320 on the client, Kafka 2.1), so it sends to no replica at an older epoch; 0 none


NO_PRODUCER = Producer(0, 0, -1, (), 0)  # the idempotent producer before its first send


class Faults(NamedTuple):
    """The variables of the fault modes and of the later protocol versions. Each keeps a constant
    value (the one in NO_FAULTS) while its mode is off, so it costs nothing then."""

    flushed: tuple[int, ...]  # R14 lose-unflushed: per replica, the flushed prefix of its log
    # (Kafka's recovery point); a crash keeps only that. () when the mode is off.
    log_start: tuple[int, ...]  # R12 retention (kraft: or DeleteRecords): per replica, the log
    # start offset; () when off. Entries below it are deleted: their values stay in the tuple
    # (so offsets stay positions; a follower reset to its leader's log start takes the leader's
    # deleted prefix) but nothing reads them any more except the properties, which compare
    # values, and (not kraft) the epoch lookups, as Kafka's epoch cache kept them before it was
    # truncated from the start (kraft: ``spec.epoch_cache.truncate_from_start``).
    unclean: int  # kip-966: bitmask of replicas back from an unclean shutdown (a crash that lost
    # an unflushed tail) and not yet back in the ISR: never elected cleanly.
    elr: int  # kip-966: eligible leader replicas (coordination state, R18), a bitmask
    lost_replies: tuple[int, ...]  # R6/R15 retries: records the producer sent without a reply
    # yet (lost, or not yet given); each may be retried. () when retries are off.
    retries: int  # producer retries so far (bounded by Config.retries)
    ctrl_epoch: int  # R9/R18 controller failover: /controller_epoch; 1 when the mode is off
    ctrl_seen: tuple[int, ...]  # per replica: the highest controller epoch it has accepted; ()
    failovers: int  # controller failovers so far (bounded by Config.controller_failovers)
    expired: int  # R7/R8/R18 session expiry: bitmask of live brokers whose coordination session
    # expired (/brokers/ids/[id] gone) while the process runs on (a pause, lost contact): the
    # controller treats them as dead, they themselves act on (zombies). Always within alive.
    expiries: int  # session expiries so far (bounded by Config.session_expiries)
    lead_renewed: bool  # the recorded leader registered a new session after its old one expired
    # and the controller has not elected since: its leadership belongs to the previous
    # incarnation, so it is lost (KIP-380 broker epochs; Kafka's onBrokerStartup)
    # (the fields below have defaults: each is a constant while its mode is off, so NO_FAULTS,
    # and every state of a model without the mode, are what they were before it was added)
    producer: Producer | tuple = ()  # R6/R15 --idempotence: the idempotent producer's client
    # state (spec/actions/producer.py); () when idempotence is off
    producer_state_start: tuple[int, ...] = ()  # --idempotence with --retention: per replica,
    # the offset its producer state is rebuilt from (spec/producer_state.py): 0, or the leader's
    # log start a follower was reset to (a reset clears Kafka's producer state); () when off

    def __reduce__(self):
        return (_faults, tuple(self))


NO_FAULTS = Faults((), (), 0, 0, (), 0, 1, (), 0, 0, 0, False)


def _faults(*fields):
    """Unpickling a Faults: the no-fault value comes back as NO_FAULTS itself. The spec and its
    properties test ``f is NO_FAULTS`` to skip every fault mode's work; an equal copy (from a
    checkpoint, a state balanced to another worker, a Spark task) would pass that test only
    after a field-by-field comparison, or fail it and take the slow path for every descendant
    (the parallel engine's workers ran 11% more CPU before this)."""
    f = Faults(*fields)
    return NO_FAULTS if f == NO_FAULTS else f


class FetchReq(NamedTuple):
    """kraft: a fetch request in flight from a follower's fetcher to the broker it follows
    (FollowerSendFetch -> LeaderHandleFetch; R2, R3). At most one per fetcher: per (follower,
    leader, follower incarnation). It outlives its sender's crash (KAFKA-15221: the leader's
    socket queue still holds it), never its addressee's (a crashed broker's connections close)."""

    follower: int
    leader: int  # the broker it was sent to: the follower's leader then
    fetch_offset: int  # the follower's LEO when sent
    last_fetched_epoch: int  # epoch of the follower's last entry (0: empty log), KIP-595 style
    leader_epoch: int  # the follower's current leader epoch (KIP-320 fencing)
    broker_epoch: int  # the follower's broker epoch when sent (KIP-380/903, KAFKA-15221)


class FetchResp(NamedTuple):
    """kraft: the leader's answer to a fetch it counted or found diverging (LeaderHandleFetch ->
    FollowerHandleFetchResponse). Error answers (NOT_LEADER, FENCED_LEADER_EPOCH,
    STALE_BROKER_EPOCH) are not messages here: they change nothing on the follower but its
    fetcher's in-flight slot, so the request is simply removed (the answer delivered at once)."""

    follower: int
    leader: int
    leader_epoch: int  # the epoch the fetch was sent (and answered) in
    fetch_offset: int  # echoed: the follower applies the response only if still its LEO
    broker_epoch: int  # the follower incarnation it answers (its connection)
    records: tuple[Entry, ...]  # the leader's log from fetch_offset: the whole suffix, one batch
    hw: int  # the leader's HW *read before* it applied this fetch (KAFKA-7104)
    diverging: tuple[int, ...]  # (epoch, end offset) when the logs diverge, else ()
    # (the fields below have defaults: constant while no log start offset moves, --retention
    # and --delete-records off, so the states and counts of a model without them are unchanged)
    log_start: int = 0  # R12, KIP-107: the leader's log start offset, read with the records
    # (``Partition.readRecords``: initialLogStartOffset); the follower takes it up
    out_of_range: bool = False  # R12: OFFSET_OUT_OF_RANGE, the fetch offset below the leader's
    # log start or past its log end: no records, the follower asks the leader for its offsets
    # (FollowerHandleOffsetOutOfRange)


class AlterReq(NamedTuple):
    """kraft: a leader's AlterPartition in flight to the controller, at most one per leader
    (LeaderSendAlterPartition -> ControllerHandleAlterPartition; R7, KIP-903)."""

    leader: int
    leader_epoch: int
    new_isr: int  # the proposed ISR, a bitmask
    added: int  # the follower an expansion adds; -1 for a shrink
    added_be: int  # KIP-903: the broker epoch of the fetch that justified the expansion; -1
    fresh: bool  # made with the current partition state (no write of it since): the partition
    # epoch check, abstracted as Coord's docstring abstracts the zkVersion
    leader_be: int  # the sending leader's broker epoch (AlterPartition's BrokerEpoch field)
    answered: int = 0  # --controller-failovers (kraft) only: the leader has an answer it
    # takes as final (INVALID_UPDATE_VERSION, FENCED_LEADER_EPOCH) and keeps the change pending,
    # counted in its maximal ISR and blocking any other proposal, until newer partition state
    # overrides it (``Partition.handleAlterPartitionError`` returns false: no retry). Not in
    # flight any more: no controller handles it (LeaderClearPendingAlterPartition clears it).
    # 1 answered; 2 answered and the leader has since applied a newer partition change, which
    # in Kafka drops the pending state at once (``Partition.makeLeader``), even when the state
    # it applied is not the newest written


class Kraft(NamedTuple):
    """The variables of the ``kraft`` version's split fetch (issue 18, docs/design/kraft.md §3,
    step 1). NO_KRAFT, a constant, in every other version, so their states do not change."""

    fetch_requests: tuple[FetchReq, ...]  # a set, kept sorted
    fetch_responses: tuple[FetchResp, ...]  # a set, kept sorted
    remote_epoch: tuple[tuple[int, ...], ...]  # per replica as leader: each follower's broker
    # epoch from the last fetch it counted (beside Replica.remote_leo); -1 unknown
    broker_epoch: tuple[int, ...]  # per broker: its current incarnation's epoch (the one the
    # controller registered, KIP-380/903); 1 initially, bumped by every restart
    alter_partition: tuple[AlterReq, ...]  # a set, kept sorted; at most one per leader
    fenced: int  # KIP-841 (controller state): brokers fenced, a bitmask: their heartbeats
    # stopped past the session timeout (ControllerFenceBroker: crashed, or running on as a
    # zombie; with ``fence_at_crash`` a crash fences at once), or restarted and registered but
    # not yet unfenced (BrokerRegister). The controller counts them neither as live nor as
    # eligible for the ISR or leadership; a crashed broker not yet fenced is live to it.
    shutting_down: int  # KIP-841 (controller state): brokers in controlled shutdown, a
    # bitmask: still live (they get the metadata, they fetch) but not eligible for the ISR or
    # leadership. For a stopped broker (Kafka) the bit records a clean exit, which its next
    # registration reads (spec/actions/broker.py ``_clean_or_not``); cleared by that
    # registration (BrokerRestart), or at the crash with ``fence_at_crash``
    consumer_pos: int  # KIP-392: the one consumer's position, the next offset it will read
    # (R5); only ever set to the end of what it read, or back by an offset reset
    consumer_epoch: int  # KIP-320/392: the leader epoch the consumer's fetches carry (its
    # metadata's); a replica at an older epoch refuses them (UNKNOWN_LEADER_EPOCH), a newer
    # one fences them and the consumer takes up its epoch (the metadata refresh, folded in)
    epoch_cache: tuple[tuple[tuple[int, int], ...], ...]  # per replica: its leader-epoch cache
    # in memory, [(epoch, start offset)] (spec.epoch_cache); () when the version derives the
    # cache from the log (``epoch_cache=False``)
    epoch_ckpt: tuple[tuple[tuple[int, int], ...], ...]  # per replica: its leader-epoch
    # checkpoint file (R13); a restart rebuilds the cache from it; () as epoch_cache
    deposed: tuple[int, ...] = ()  # --controller-failovers with ``not_controller_if_ahead``
    # off (KAFKA-14154's bug): the deposed controller, still answering AlterPartitions from the
    # state it had when it lost office, as (leader epoch then, 1 if the partition state was
    # written since else 0); () when there is none. With the fix its answers change nothing
    # (NOT_CONTROLLER: the request goes to the new controller), so it is not kept
    # (the fields below have defaults: each is a constant 0 while its mechanism is off, so the
    # states, and every count, of a model without it are those before it was added)
    leader_recovery: int = 0  # KIP-704 (``leader_recovery_state``), controller state: the
    # partition's LeaderRecoveryState, 1 RECOVERING (set by an unclean election) until the
    # leader's AlterPartition reports RECOVERED, else 0 (RECOVERED)
    min_isr: int = 0  # KAFKA-16540 (--min-isr-changes): min.insync.replicas as the operator
    # last set it (OperatorSetMinIsr); 0: never changed, Config.min_isr holds
    min_isr_changes: int = 0  # operator changes of min.insync.replicas so far (the bound)
    delete_records: int = 0  # R12 (--delete-records): the operator's DeleteRecords requests
    # a leader has applied so far (LeaderDeleteRecords; the bound); the log start offsets they
    # moved are Faults.log_start
    assigned: int = 0  # KIP-455 (--reassignments), controller state: the partition's replica
    # set (PartitionRegistration.replicas), a bitmask; during a reassignment the target with
    # the replicas being removed (``PartitionReassignmentReplicas``: target + (current -
    # target)). 0 when the mechanism is off: every broker is a replica (Ctx.full)
    adding: int = 0  # KIP-455: addingReplicas (target - current), a bitmask; 0 none
    removing: int = 0  # KIP-455: removingReplicas (current - target), a bitmask; 0 none
    reassignments: int = 0  # the operator's AlterPartitionReassignments so far (the bound)
    views: tuple[int, ...] = ()  # KIP-455: per broker, as leader, the replica set of the
    # partition state it last applied (Partition.assignmentState: the replicas whose fetches
    # it accepts and may add to the ISR); 0 while it does not lead; () when off

    def __reduce__(self):
        return (_kraft, tuple(self))


NO_KRAFT = Kraft((), (), (), (), (), 0, 0, 0, 0, (), ())


def _kraft(*fields):
    """Unpickling a Kraft: NO_KRAFT comes back as itself (as :func:`_faults`)."""
    k = Kraft(*fields)
    return NO_KRAFT if k == NO_KRAFT else k


class State(NamedTuple):
    replicas: tuple[Replica, ...]
    coord: Coord
    requests: tuple[Request, ...]  # a set, kept sorted
    history: History
    faults: Faults  # NO_FAULTS unless a fault mode is on
    kraft: Kraft = NO_KRAFT  # NO_KRAFT unless the protocol version is kraft


def with_log(r: Replica, log: Log, hw: int, hw_ckpt: int) -> Replica:
    """``r`` with a new log, HW and HW checkpoint: the common update of fetch, truncation and
    log-start resets. Positional construction, because ``_replace`` is several times slower on
    the checker's hot path; ``tuple.__new__`` skips NamedTuple's Python-level ``__new__``, and
    the other fields are read by position (Replica's field order)."""
    return _tuple_new(Replica, (log, hw, hw_ckpt, r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10]))


_tuple_new = tuple.__new__


def bit(i: int) -> int:
    return 1 << i


def members(mask: int, n: int) -> tuple[int, ...]:
    return tuple(i for i in range(n) if mask >> i & 1)


def initial_kraft(n: int, epoch_cache: bool = False, spare: bool = False) -> Kraft:
    """The kraft variables of the initial state; with ``epoch_cache`` the initial leader's cache
    (and its checkpoint) holds its epoch 1 from offset 0, the followers' are empty. ``spare``
    (--reassignments): broker n-1 is not a replica (``spare_assignment``); the replica set and
    the leader's view of it are brokers 0..n-2."""
    caches = (((1, 0),), *((),) * (n - 1)) if epoch_cache else ()
    k = Kraft((), (), ((-1,) * n,) * n, (1,) * n, (), 0, 0, 0, 0, caches, caches)
    if not spare:
        return k
    assigned = spare_assignment(n)
    return k._replace(assigned=assigned, views=(assigned, *(0,) * (n - 1)))


def initial_zk_reassign(n: int) -> Kraft:
    """The ZooKeeper-era versions with --reassignments (spec/actions/zk_reassignment.py): only
    Kraft's KIP-455 fields move off NO_KRAFT's values (the replica set, brokers 0..n-2, and
    broker 0's view of it as leader); the kraft-only fields stay empty, so every ZooKeeper path
    that tests ``Kraft.broker_epoch`` stays one."""
    assigned = spare_assignment(n)
    return NO_KRAFT._replace(assigned=assigned, views=(assigned, *(0,) * (n - 1)))


def spare_assignment(n: int) -> int:
    """--reassignments: the initial replica set, brokers 0..n-2 (replication factor n-1); broker
    n-1 is a spare, alive with an empty log, hosting no replica, the first reassignment's
    possible target."""
    return (1 << (n - 1)) - 1


def initial_state(
    n: int, faults: Faults = NO_FAULTS, kraft: Kraft = NO_KRAFT, spare: bool = False
) -> State:
    """Replica 0 (the preferred replica, R1) leads at epoch 1 with every replica in the ISR, and
    every replica has applied that LeaderAndIsr; logs are empty. ``spare`` (--reassignments):
    broker n-1 is no replica: it has applied no partition state (no leader, no epoch)."""
    full = spare_assignment(n) if spare else (1 << n) - 1
    unknown = (-1,) * n
    replicas = tuple(
        Replica(
            log=(),
            hw=0,
            hw_ckpt=0,
            alive=True,
            leader=0 if full >> i & 1 else NO_LEADER,
            epoch=1 if full >> i & 1 else NO_EPOCH,
            isr=full if full >> i & 1 else 0,
            zk_fresh=(i == 0),
            remote_leo=unknown,
            truncating=False,
            pending=(),
        )
        for i in range(n)
    )
    return State(
        replicas=replicas,
        coord=Coord(leader=0, epoch=1, isr=full),
        requests=(),
        history=History(next_record=0, acked=(), acked1=(), refused=(), shown=(), crashes=0),
        faults=faults,
        kraft=kraft,
    )


def _fast_replace(cls: type) -> None:
    """Give ``cls`` a ``_replace`` with the same meaning as NamedTuple's, about twice as fast:
    the generated one goes through ``_make(map(kwds.pop, ...))`` and is a visible share of the
    checker's successor generation (every action builds its successors with it). Unknown field
    names still raise ValueError, as NamedTuple's does."""
    index = {name: i for i, name in enumerate(cls._fields)}  # type: ignore[attr-defined]
    new = tuple.__new__

    def _replace(self, /, **changes):
        values = list(self)
        try:
            for name, value in changes.items():
                values[index[name]] = value
        except KeyError:
            raise ValueError(f"Got unexpected field names: {list(changes)!r}") from None
        return new(cls, values)

    cls._replace = _replace  # type: ignore[attr-defined]


for _cls in (Replica, Coord, Request, History, Faults, FetchReq, FetchResp, AlterReq, Kraft, State):
    _fast_replace(_cls)
_fast_replace(Producer)


# --- the wire form: a state as plain tuples, for moving it between processes -----------------
# Pickling a State pickles about nine NamedTuples, each through NamedTuple's Python-level
# __getnewargs__; plain tuples pickle in C, about four times as fast, and a third smaller.
# A NamedTuple hashes as the tuple of its fields, so a state and its wire form have the same
# hash (the checker's fingerprint). Entries, masks and offsets are plain already.


def to_wire(s: State) -> tuple:
    """``s`` as nested plain tuples: ``hash(to_wire(s)) == hash(s)``, ``from_wire`` inverts it
    (the Spark engine ships states in this form: checker.model, ``to_wire``)."""
    k = s[5]
    return (
        tuple(map(tuple, s[0])),
        tuple(s[1]),
        tuple(map(tuple, s[2])),
        tuple(s[3]),
        tuple(s[4]) if not s[4].producer else _producer_wire(s[4]),
        tuple(k)
        if k is NO_KRAFT
        else (
            tuple(map(tuple, k[0])),
            tuple(map(tuple, k[1])),
            k[2],
            k[3],
            tuple(map(tuple, k[4])),
            *k[5:],  # masks, offsets and the epoch caches: plain already
        ),
    )


_NO_FAULTS_WIRE = tuple(NO_FAULTS)


def _producer_wire(f: Faults) -> tuple:
    """The faults of --idempotence as plain tuples: the producer's state (Faults.producer, a
    Producer) too, which marshal (the disk store) cannot write as a NamedTuple."""
    return (*f[:12], tuple(f[12]), *f[13:])


def _producer_unwire(f: tuple) -> tuple:
    return (*f[:12], _tuple_new(Producer, f[12]), *f[13:])


_NO_KRAFT_WIRE = tuple(NO_KRAFT)


def from_wire(w: tuple) -> State:
    """The state whose wire form is ``w`` (also accepts a State: old Spark checkpoints hold
    pickled States). NO_FAULTS and NO_KRAFT come back as those very constants, which several
    checks test by identity first."""
    new = _tuple_new
    f = w[4]
    k = w[5]
    return new(
        State,
        (
            tuple([new(Replica, r) for r in w[0]]),
            new(Coord, w[1]),
            tuple([new(Request, q) for q in w[2]]),
            new(History, w[3]),
            NO_FAULTS
            if f == _NO_FAULTS_WIRE
            else new(Faults, f if len(f) < 13 or not f[12] else _producer_unwire(f)),
            NO_KRAFT
            if k == _NO_KRAFT_WIRE
            else new(
                Kraft,
                (
                    tuple([new(FetchReq, q) for q in k[0]]),
                    tuple([new(FetchResp, p) for p in k[1]]),
                    k[2],
                    k[3],
                    tuple([new(AlterReq, a) for a in k[4]]),
                    *k[5:],
                ),
            ),
        ),
    )
