"""The ``kraft`` version's fetch as request and delayed response (R2, R3, R4, R12; issue 18,
docs/design/kraft.md §4). It replaces FollowerFetch and FollowerTruncate there: there is no
truncation phase, the leader answers a diverging fetch with the diverging epoch (KIP-595 style,
Kafka 2.7+) and the follower truncates on that answer by KIP-279's rule.

One fetcher per (follower, leader, follower incarnation) with at most one fetch in flight: a
request (FetchReq) or its response (FetchResp). What is deliberately not modelled: fetch
sessions, partial batches (a response carries the whole suffix), lost fetches (a lost request
or response is the fetcher's timeout; without it a fetch in flight to a live leader is always
answered eventually), fetches that the leader parks in purgatory (fetch.max.wait.ms), and the
leader-epoch cache's own checkpoint file is written with every change but a truncation's
(``sync_truncation_ckpt``), see spec.epoch_cache and BrokerCheckpointEpochCache."""

from __future__ import annotations

from ..epoch_cache import (
    Cache,
    assign_records,
    end_offset,
    latest_epoch,
    truncate_from_end,
    truncate_from_start,
    truncation_state,
)
from ..log import epoch_starts, last_epoch
from ..state import FetchReq, FetchResp, Kraft, State, with_log
from .common import (
    Ctx,
    advance_leader_hw,
    follower_hw,
    forget_producers,
    raise_log_start,
    set_replica,
    sorted_add,
)

_new = tuple.__new__


def with_kraft(s: State, k: Kraft) -> State:
    return _new(State, (s.replicas, s.coord, s.requests, s.history, s.faults, k))


def with_view(s: State, i: int, view: int) -> State:
    """KIP-455: ``s`` with broker ``i``'s view of the replica set (``Kraft.views``) set."""
    k = s.kraft
    views = k.views
    if views[i] == view:
        return s
    return with_kraft(s, k._replace(views=views[:i] + (view,) + views[i + 1 :]))


def fetch_in_flight(k: Kraft, f: int, l: int, broker_epoch: int) -> bool:
    """The fetcher of follower ``f``'s incarnation ``broker_epoch`` for leader ``l`` awaits an
    answer (its request or its response is in flight)."""
    for q in k.fetch_requests:
        if q.follower == f and q.leader == l and q.broker_epoch == broker_epoch:
            return True
    for p in k.fetch_responses:
        if p.follower == f and p.leader == l and p.broker_epoch == broker_epoch:
            return True
    return False


def follower_send_fetch(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """FollowerSendFetch(follower, leader): a live follower's fetcher, idle, sends a fetch to the
    live broker it follows (R2): its LEO as fetch offset, the epoch of its last entry (the leader
    checks divergence against it), its current leader epoch (KIP-320) and its broker epoch
    (KIP-903, KAFKA-15221). A broker that is down refuses the connection: no fetch to it.

    Every send is listed, even one whose answer could change nothing now: a fetch sent before a
    crash and handled after the restart is exactly KAFKA-15221's, so "useless now" is not
    "useless later" (the atomic FollowerFetch of the older versions prunes such fetches)."""
    k = s.kraft
    reps = s.replicas
    bepochs = k.broker_epoch
    for f, r in enumerate(reps):
        l = r.leader
        if not r.alive or l < 0 or l == f or not reps[l].alive:
            continue
        be = bepochs[f]
        if fetch_in_flight(k, f, l, be):
            continue
        log = r.log
        if k.epoch_cache:
            last = latest_epoch(k.epoch_cache[f])
        else:
            starts = s.faults.log_start
            last = last_epoch(log) if not starts or starts[f] < len(log) else 0
        req = FetchReq(f, l, len(log), last, r.epoch, be)
        reqs = tuple(sorted((*k.fetch_requests, req)))
        out.append(((kind, (f, l)), with_kraft(s, k._replace(fetch_requests=reqs))))


def leader_handle_fetch(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """LeaderHandleFetch(leader, follower): a live broker takes a fetch from its socket queue.

    1. Not the leader, or not at the fetch's leader epoch: an error answer (NOT_LEADER,
       FENCED/UNKNOWN_LEADER_EPOCH, KIP-320); nothing changes but the fetcher's slot.
    2. The fetch's broker epoch is older than the one the leader last counted for that follower:
       a fetch from a previous incarnation, STALE_BROKER_EPOCH (KAFKA-15221's fix; the version's
       ``fence_stale_fetch``).
    2b. With a log start offset that moves (--retention, --delete-records; R12): the fetch
       offset is below the leader's log start, whether or not the epochs diverge (KAFKA-12996,
       Kafka 3.0.0: ``Partition.readRecords`` checks it before the divergence), or, for a fetch
       without a last fetched epoch (the follower's cache is empty: after a full truncation),
       past the leader's log end (``UnifiedLog.read``): OFFSET_OUT_OF_RANGE, not counted
       (``ReplicaManager.updateFollowerFetchState`` skips a read with an error), answered with
       no records (FollowerHandleOffsetOutOfRange takes it).
    3. The leader's end offset for the fetch's last fetched epoch (KIP-279's answer) is below the
       fetch offset, or its epoch is below the requested one: the logs diverge. The answer is
       the diverging epoch and its end offset, no records, and the leader does not count the
       fetch offset (KAFKA-13141; ``count_diverging_fetch`` counts it, the bug).
    4. Otherwise the leader reads its log from the fetch offset and its HW, then records the
       follower's LEO and broker epoch (R3) and re-evaluates its HW (R4). The answer carries
       the HW read *before* this update (KAFKA-7104): the follower learns the advance one round
       later (``fresh_hw_in_response`` answers with the HW after it, the pre-2.0 behaviour).
    The answer goes back on the follower incarnation's connection: if that incarnation is gone
    (crashed, restarted) it is lost, though the leader's update stands. Every answer carries the
    leader's log start offset read with the records (KIP-107; 0 while no log start moves)."""
    k = s.kraft
    starts = s.faults.log_start
    proto = ctx.protocol
    fence_stale = proto.fence_stale_fetch
    count_diverging = proto.count_diverging_fetch
    fresh_hw = proto.fresh_hw_in_response
    for q in k.fetch_requests:
        l = q.leader
        f = q.follower
        lr = s.replicas[l]
        if not lr.alive:  # requests to a crashed broker are dropped by its crash: not reached
            continue
        reqs = tuple(x for x in k.fetch_requests if x is not q)
        args = (l, f)
        rem_epochs = k.remote_epoch[l]
        if (
            lr.leader != l
            or q.leader_epoch != lr.epoch
            or (fence_stale and q.broker_epoch < rem_epochs[f])
            or (k.views and not k.views[l] >> f & 1)
        ):  # (KIP-455: a follower outside the replica set the leader applied is answered
            # UNKNOWN_LEADER_EPOCH, ``Partition.followerReplicaOrThrow``: it retries)
            out.append(((kind, args), with_kraft(s, k._replace(fetch_requests=reqs))))
            continue
        llog = lr.log
        diverging: tuple[int, ...] = ()
        lstart = starts[l] if starts else 0
        # (with no log start tracked, a fetch without a last fetched epoch comes from an empty
        # log: it is never past the leader's end)
        if starts and (
            q.fetch_offset < lstart or (q.last_fetched_epoch == 0 and q.fetch_offset > len(llog))
        ):
            resps = k.fetch_responses
            fr = s.replicas[f]
            if fr.alive and fr.leader >= 0 and k.broker_epoch[f] == q.broker_epoch:
                resp = FetchResp(
                    f,
                    l,
                    q.leader_epoch,
                    q.fetch_offset,
                    q.broker_epoch,
                    (),
                    lr.hw,
                    (),
                    lstart,
                    True,
                )
                resps = tuple(sorted((*resps, resp)))
            out.append(
                (
                    (kind, args),
                    with_kraft(s, k._replace(fetch_requests=reqs, fetch_responses=resps)),
                )
            )
            continue
        if q.last_fetched_epoch > 0:
            cache = k.epoch_cache[l] if k.epoch_cache else derived_cache(llog, lstart, lr.epoch)
            e, end = end_offset(cache, len(llog), q.last_fetched_epoch)
            if e < q.last_fetched_epoch or end < q.fetch_offset:
                diverging = (e, end)
        hw_before = lr.hw
        t = s
        remote_epoch = k.remote_epoch
        if (not diverging or count_diverging) and (
            lr.remote_leo[f] != q.fetch_offset or rem_epochs[f] != q.broker_epoch
        ):
            rl = lr.remote_leo
            lr2 = lr._replace(remote_leo=rl[:f] + (q.fetch_offset,) + rl[f + 1 :])
            t = advance_leader_hw(ctx, set_replica(s, l, lr2), l)
            row = rem_epochs[:f] + (q.broker_epoch,) + rem_epochs[f + 1 :]
            remote_epoch = remote_epoch[:l] + (row,) + remote_epoch[l + 1 :]
        resps = k.fetch_responses
        fr = s.replicas[f]
        # the sender's connection is open: it has not crashed since (a crash ends it; until its
        # restarted process registers, its broker epoch is still the old one, but it follows
        # no leader yet)
        if fr.alive and fr.leader >= 0 and k.broker_epoch[f] == q.broker_epoch:
            records = () if diverging else tuple(llog[q.fetch_offset :])
            hw = t.replicas[l].hw if fresh_hw else hw_before
            resp = FetchResp(
                f, l, q.leader_epoch, q.fetch_offset, q.broker_epoch, records, hw, diverging, lstart
            )
            resps = tuple(sorted((*resps, resp)))
        k2 = Kraft(reqs, resps, remote_epoch, *k[3:])
        out.append(((kind, args), with_kraft(t, k2)))


def follower_handle_fetch_response(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """FollowerHandleFetchResponse(follower, leader): the follower's fetcher takes the answer.

    It is ignored when the partition left this fetcher (the follower now follows another
    broker), or, Kafka's guard (AbstractFetcherThread; KAFKA-18991 added the epoch half), the
    follower's fetch offset or leader epoch changed while the fetch was in flight: the records
    and the HW were read for a log the follower no longer has. ``response_guard=False`` drops the
    epoch half; the offset half stays, because the follower's log itself refuses an append that
    does not start at its LEO (records carry their offsets; the tuple log cannot hold a gap).

    A diverging answer (epoch e, end offset) truncates by KIP-279's rule as Kafka's
    ``AbstractFetcherThread.getOffsetTruncationState`` applies it (``spec.epoch_cache.
    truncation_state``, kip-320's too): the follower looks up e in its own cache by 2.1+'s
    ``end_offset``; if it knows e (or e is below all it has), to the smaller of the two end
    offsets; if its largest epoch <= e is below e, to that epoch's end (the next fetch asks
    again: the walk back of kip-279, one round per step); if it knows no epoch at all, to the
    leader's end offset; never past its LEO. The HW and its checkpoint follow the truncation
    (R13).
    Otherwise the records are appended and HW := min(LEO, the answer's HW) (R4), and the
    follower takes up the leader's log start offset the answer carries, with its epoch cache
    truncated from the start (R12, KIP-107: ``ReplicaFetcherThread.processPartitionData`` →
    ``maybeIncrementLogStartOffset(leaderLogStartOffset)``, after the HW; never past its HW,
    which Kafka refuses with OFFSET_OUT_OF_RANGE: only when the leader's start passed the
    leader's HW, KAFKA-5634's bug, where the follower keeps its records and its HW and its
    fetcher thread dies, not modelled further). An OFFSET_OUT_OF_RANGE answer is
    FollowerHandleOffsetOutOfRange's."""
    k = s.kraft
    guard = ctx.protocol.response_guard
    starts = s.faults.log_start
    for p in k.fetch_responses:
        if p.out_of_range:
            continue
        f = p.follower
        r = s.replicas[f]
        resps = tuple(x for x in k.fetch_responses if x is not p)
        t = with_kraft(s, k._replace(fetch_responses=resps))
        args = (f, p.leader)
        log = r.log
        if (
            r.leader != p.leader
            or p.fetch_offset != len(log)
            or (guard and p.leader_epoch != r.epoch)
        ):
            out.append(((kind, args), t))
            continue
        caches = k.epoch_cache
        cache = caches[f] if caches else ()
        if p.diverging:  # (an UNDEFINED answer, which a leader that knows its own epoch
            # never gives, would leave the log: the fetch offset is its LEO)
            own = cache if caches else derived_cache(log, starts[f] if starts else 0)
            tr, _done = truncation_state(end_offset, own, len(log), len(log), *p.diverging)
            nr = with_log(r, log[:tr], min(r.hw, tr), min(r.hw_ckpt, tr))
            if caches:  # the cache is truncated with the log; its file now or later
                cache = truncate_from_end(cache, tr)
                t = with_epoch_cache(t, f, cache, sync=ctx.protocol.sync_truncation_ckpt)
        else:
            log2 = log + p.records if p.records else log
            hw = follower_hw(starts, f, len(log2), p.hw)
            nr = with_log(r, log2, hw, r.hw_ckpt)
            if caches and p.records:  # a batch of a newer epoch is assigned, file written
                cache2 = assign_records(cache, p.records, len(log))
                if cache2 != cache:
                    t = with_epoch_cache(t, f, cache2, sync=True)
            if starts and starts[f] < p.log_start <= hw:  # the leader's log start, taken up
                t = move_log_start(ctx, t, f, p.log_start)
        out.append(((kind, args), set_replica(t, f, nr) if nr != r else t))


def consumer_fetch_during_truncation(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """ConsumerFetchDuringTruncation(follower, leader), kraft with ``truncate_before_hw=False``
    (KAFKA-14704, before Kafka 3.5.0): the follower takes a diverging fetch response as
    ``AbstractFetcherThread.processFetchRequest`` did: the partition data first, which sets its
    HW to min(its LEO, the leader's HW), divergent records below it included, and the
    truncation after. The one consumer fetches from that follower (KIP-392) in between, below
    that HW, then the truncation lands: FollowerHandleFetchResponse's successor, with the read.
    Enabled only where the window shows something: the response's HW, capped by the
    follower's LEO, is above its HW and the consumer's position, and the consumer's leader
    epoch is not newer than the follower's. Not modelled: the window's other readers (the HW
    checkpoint thread, a crash between the two writes); what the bug shows is a consumer read
    of records that were never committed, and that is this step."""
    proto = ctx.protocol
    if proto.truncate_before_hw or not proto.follower_reads:
        return
    k = s.kraft
    pos, cepoch = k.consumer_pos, k.consumer_epoch
    handled: list = []
    follower_handle_fetch_response(ctx, s, kind, handled)
    for p, (_a, t) in zip(k.fetch_responses, handled, strict=True):
        f = p.follower
        r = s.replicas[f]
        log = r.log
        if (
            not p.diverging
            or not r.alive
            or r.leader != p.leader
            or p.fetch_offset != len(log)
            or (proto.response_guard and p.leader_epoch != r.epoch)
            or r.epoch < cepoch
        ):
            continue
        starts = s.faults.log_start
        if starts and pos < starts[f]:
            continue  # OFFSET_OUT_OF_RANGE at that follower (ConsumerFetch)
        window = follower_hw(starts, f, len(log), p.hw)
        if window <= r.hw or window <= pos:
            continue
        h = t.history
        shown = sorted_add(h.shown, [(o, log[o][0]) for o in range(pos, window)])
        kt = t.kraft
        out.append(
            (
                (kind, (f, p.leader)),
                t._replace(
                    history=h._replace(shown=shown),
                    kraft=kt._replace(consumer_pos=window, consumer_epoch=r.epoch),
                ),
            )
        )


def follower_handle_offset_out_of_range(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """FollowerHandleOffsetOutOfRange(follower, leader): the follower's fetcher takes an
    OFFSET_OUT_OF_RANGE answer (R12; kraft with --retention or --delete-records). Ignored, as
    any answer, when the partition left this fetcher or its fetch offset or leader epoch
    changed while it was in flight (FollowerHandleFetchResponse). Otherwise Kafka's
    ``AbstractFetcherThread.handleOutOfRangeError`` → ``fetchOffsetAndTruncate`` (4.x; the
    same since 2.x): the follower asks the leader (ListOffsets at its current leader epoch,
    ``fetchLatestOffset``, ``fetchEarliestOffset``); if the leader does not answer (down, no
    longer leading, at another epoch: NOT_LEADER_OR_FOLLOWER, FENCED/UNKNOWN_LEADER_EPOCH) the
    fetch is retried later, nothing changes. Else:

    * the leader's log end is below the follower's (a fetch past its end, after an unclean
      election): the follower truncates to it (``truncate``: ``UnifiedLog.truncateTo``, which
      truncates fully when that is below the log start; here the log start follows it down);
    * the leader's log start is above the follower's log end (retention or DeleteRecords
      removed what it would fetch while it was away): ``truncateFullyAndStartAt(leader's log
      start)``: the follower's log is emptied and starts there (its entries are the leader's
      deleted ones: spec.state.Faults.log_start), its epoch cache cleared and written
      (``clearAndFlush``), its HW moved to its new log end (KAFKA-9491, Kafka 2.4.1/2.5.0;
      ``hw_at_log_start_on_reset=False`` keeps the HW below the log start, as before);
    * otherwise (the leader's log grew past the fetch offset meanwhile) it fetches again from
      its log end, nothing changes.
    The two ListOffsets answers and the truncation are one step: the leader's log end and start
    only grow within its epoch, and nothing but the follower itself reads what it changes."""
    k = s.kraft
    proto = ctx.protocol
    guard = proto.response_guard
    starts = s.faults.log_start
    caches = k.epoch_cache
    for p in k.fetch_responses:
        if not p.out_of_range:
            continue
        f, l = p.follower, p.leader
        r = s.replicas[f]
        resps = tuple(x for x in k.fetch_responses if x is not p)
        t = with_kraft(s, k._replace(fetch_responses=resps))
        args = (f, l)
        log = r.log
        lr = s.replicas[l]
        if (
            r.leader != l
            or p.fetch_offset != len(log)
            or (guard and p.leader_epoch != r.epoch)
            or not lr.alive
            or lr.leader != l
            or lr.epoch != r.epoch
        ):
            out.append(((kind, args), t))  # ignored, or ListOffsets refused: retried later
            continue
        leo, lleo = len(log), len(lr.log)
        if lleo < leo:  # truncate to the leader's log end
            nr = with_log(r, log[:lleo], min(r.hw, lleo), min(r.hw_ckpt, lleo))
            if caches:
                cache = truncate_from_end(caches[f], lleo)
                t = with_epoch_cache(t, f, cache, sync=proto.sync_truncation_ckpt)
            out.append(((kind, args), set_replica(t, f, nr)))
            continue
        ls = starts[l]
        if ls <= leo:
            out.append(((kind, args), t))
            continue
        hw = ls if proto.hw_at_log_start_on_reset else r.hw
        t = raise_log_start(set_replica(t, f, with_log(r, lr.log[:ls], hw, r.hw_ckpt)), f, ls)
        t = forget_producers(t, f, ls)
        if caches:
            t = with_epoch_cache(t, f, (), sync=True)
        out.append(((kind, args), t))


def derived_cache(log, start: int, leader_epoch: int | None = None) -> list[tuple[int, int]]:
    """With ``epoch_cache=False`` (an implementation that derives its leader-epoch cache from
    its log, declared in its trace header): the (epoch, start) of the records it retains, from
    its log start offset ``start`` (R12; entries below it are deleted: the epoch of the one at
    ``start`` begins there, as ``truncate_from_start`` leaves Kafka's cache; none when no record
    is retained, as no epoch without a record), plus the leader's current epoch at its LEO."""
    es = epoch_starts(log)
    if start:
        kept = [(e, o) for e, o in es if o >= start]
        if start < len(log) and (not kept or kept[0][1] > start):
            kept.insert(0, ([e for e, o in es if o < start][-1], start))
        es = kept
    if leader_epoch is not None and (not es or es[-1][0] < leader_epoch):
        es.append((leader_epoch, len(log)))
    return es


def move_log_start(ctx: Ctx, s: State, i: int, start: int) -> State:
    """kraft: replica ``i``'s log start offset moved up to ``start`` (R12), as
    ``UnifiedLog.maybeIncrementLogStartOffset`` does it (Kafka 4.x): the log start (and the
    recovery point, ``raise_log_start``) and the leader-epoch cache truncated from the start
    (``truncateFromStartAsyncFlush``: its file written later, by BrokerCheckpointEpochCache,
    since Kafka 3.8, KAFKA-16541's #15993; with the change before, ``sync_truncation_ckpt``).
    The caller checks Kafka's OFFSET_OUT_OF_RANGE guard: ``start`` at most the HW."""
    t = raise_log_start(s, i, start)
    caches = t.kraft.epoch_cache
    if caches:
        cache = truncate_from_start(caches[i], start)
        t = with_epoch_cache(t, i, cache, sync=ctx.protocol.sync_truncation_ckpt)
    return t


def with_epoch_cache(s: State, i: int, cache: Cache, sync: bool) -> State:
    """``s`` with replica ``i``'s epoch cache ``cache``, and its checkpoint file too if ``sync``
    (written with the change; otherwise BrokerCheckpointEpochCache writes it later)."""
    k = s.kraft
    caches = k.epoch_cache
    if caches[i] == cache and (not sync or k.epoch_ckpt[i] == cache):
        return s
    caches = caches[:i] + (cache,) + caches[i + 1 :]
    ckpts = k.epoch_ckpt
    if sync:
        ckpts = ckpts[:i] + (cache,) + ckpts[i + 1 :]
    return with_kraft(s, k._replace(epoch_cache=caches, epoch_ckpt=ckpts))


def broker_checkpoint_epoch_cache(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """BrokerCheckpointEpochCache(replica): kraft with ``epoch_cache``: the leader-epoch
    checkpoint file catches up with the cache in memory (R13). Only a truncation leaves it
    behind, and only with ``sync_truncation_ckpt=False`` (KAFKA-15046, KAFKA-16541: Kafka 3.7+
    writes it from a scheduler thread after the truncation), or a restart that cut the cache to
    the recovered log. Kafka's writes are fsynced since KAFKA-16541, so a write is whole."""
    k = s.kraft
    caches = k.epoch_cache
    if not caches:
        return
    ckpts = k.epoch_ckpt
    for i, r in enumerate(s.replicas):
        if r.alive and ckpts[i] != caches[i]:
            ckpts2 = ckpts[:i] + (caches[i],) + ckpts[i + 1 :]
            out.append(((kind, (i,)), with_kraft(s, k._replace(epoch_ckpt=ckpts2))))
