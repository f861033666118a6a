"""Handlers of replication fetches: the leader's serve, the follower's apply (held responses),
stale fetches, parked fetches of a crashing leader, and truncation (VALIDATION.md, "split
fetch")."""

from __future__ import annotations

from typing import TYPE_CHECKING

from isr.spec.log import epoch_start
from isr.spec.state import Replica, State

from ..candidates import (
    ANSWER,
    Cand,
    Pending,
    follow_truncations,
    strip_history,
    with_held,
    without_held,
)
from ..mapping import Event, TraceInputError

if TYPE_CHECKING:
    from .view import PartitionView as PartitionValidator


def parked_responses(v: PartitionValidator, s: State, pend: Pending, l: int) -> Pending:
    """Responses leader ``l`` may have sent before it crashes without logging a serve (R2, R3;
    VALIDATION.md, mapping decision 11 a): a
    follower fetching at the offset the leader has already recorded changes nothing there
    (the leader logs only changes), and the leader answers it when data arrives (a parked
    fetch). Such a response is the spec's FollowerFetch with an unchanged leader half (as in
    ``_fetch_apply`` for a live leader), held with the leader's log as it is before the crash
    (a power failure cuts it). HW: anything up to the leader's."""
    lr = s.replicas[l]
    if not (lr.alive and lr.leader == l):
        return pend
    for f in range(v.n):
        r = s.replicas[f]
        if f == l or not r.alive or r.leader != l or lr.remote_leo[f] != len(r.log):
            continue
        if any(h[:3] == (l, lr.epoch, len(r.log)) for h in pend[f]):
            continue
        if v.steps(s, "FollowerFetch", (f, l)):
            pend = with_held(pend, f, (l, lr.epoch, len(r.log), 0, lr.hw, lr.log))
    return pend


def parked_answers(v: PartitionValidator, s: State, pend: Pending, l: int) -> Pending:
    """OffsetsForLeaderEpoch answers leader ``l`` may have sent before it crashes: the request
    and its answer leave no event (the follower logs FollowerTruncate when it applies the
    answer), and Kafka 2.1's follower applies an answer that arrives after the leader died
    (``ReplicaFetcherThread.fetchEpochsFromLeader`` is a blocking ``sendRequest``;
    ``AbstractFetcherThread.maybeTruncate`` then checks only that the partition is still in
    ``partitionStates``, and ``truncateToEpochEndOffsets`` → ``getOffsetTruncationState``
    truncates by it). The leader answered from its log in memory (``Partition.
    lastOffsetForLeaderEpoch`` → ``LeaderEpochFileCache.endOffsetFor``), unflushed records
    included, which a power failure then loses (R14): so the log it answered from is held
    here, as it is before the crash, for ``_stale_truncate``, for each truncating follower."""
    lr = s.replicas[l]
    if not (lr.alive and lr.leader == l):
        return pend
    for f in range(v.n):
        r = s.replicas[f]
        if f != l and r.alive and r.leader == l and r.truncating:
            pend = with_held(pend, f, (l, lr.epoch, ANSWER, 0, lr.hw, lr.log))
    return pend


def on_fetch(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
    phase = ev["args"].get("phase")
    if phase == "serve":
        return _fetch_serve(v, ev, c, mism)
    if phase == "apply":
        return _fetch_apply(v, ev, c, mism)
    raise TraceInputError("FollowerFetch without phase serve/apply")


def _fetch_serve(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
    """The leader half of the spec's FollowerFetch: the spec step is taken with the follower's
    half held back until the follower applies the response (VALIDATION.md, "split fetch")."""
    s, pend, ack = c
    a = ev["args"]
    f, l, o = v.pm.rep(a["follower"]), v.pm.rep(a["leader"]), int(a["offset"])
    rf = s.replicas[f]
    out: list[Cand] = []
    if len(rf.log) == o and ("epoch" not in a or v.pm.epoch(a["epoch"]) == rf.epoch):
        # the follower is still where it sent the request from: the spec's own step
        steps = v.steps(s, "FollowerFetch", (f, l))
        if not steps and rf.truncating:
            # a request its previous incarnation sent before a bounce, at the same offset and
            # epoch: the follower now waits for its truncation (kip-101+), the request did not
            steps = _stale_fetch(v, s, f, l, o, a, mism)
        if not steps:
            mism.append(
                f"FollowerFetch({a['follower']}, {a['leader']}) is not enabled"
                " (leader not serving, fenced epoch or truncating follower)"
            )
    else:
        # the follower moved on (new epoch, truncation, crash) after sending the request: only
        # the leader half happens, on the follower's state at request time
        steps = _stale_fetch(v, s, f, l, o, a, mism)
    for _a, t in steps:
        t, gained = strip_history(t)
        t = State(
            t.replicas[:f] + (rf,) + t.replicas[f + 1 :], t.coord, t.requests, t.history, t.faults
        )
        got = v.fit(ev, l, t, gained, mism)
        if got is not None:
            t, gained = got
            tl = t.replicas[l]
            held = (l, tl.epoch, o, tl.hw, tl.hw, tl.log)
            np = with_held(pend, f, held)
            out.append((t, np, ack | gained if gained else ack))
    return out


def _stale_fetch(
    v: PartitionValidator, s: State, f: int, l: int, o: int, a: dict, mism: list[str]
) -> list[tuple[tuple, State]]:
    """The spec's FollowerFetch(f, l) evaluated on the follower as it was when it sent the
    request (log cut or padded to the fetch offset, the request's epoch); only the leader's
    side of the result is kept by the caller."""
    lr = s.replicas[l]
    if not (lr.alive and lr.leader == l) or o > len(lr.log):
        mism.append("FollowerFetch serve: the leader does not serve (not leading, or offset > LEO)")
        return []
    # Causal order (issue 17): the follower sent this request from a log it had, at an epoch
    # it knew; its own events must have shown both before the leader serves it.
    if o > v.reached.get(f, 0):
        mism.append(
            f"FollowerFetch serve: offset {o}, but follower {v.pm.broker(f)}'s events never"
            f" reached it (largest LEO {v.reached.get(f, 0)})"
        )
        return []
    if "epoch" in a and int(a["epoch"]) > v.reached_epoch.get(f, 0):
        mism.append(
            f"FollowerFetch serve: epoch {a['epoch']}, but follower {v.pm.broker(f)} never"
            " learned it"
        )
        return []
    epoch = v.pm.epoch(a["epoch"]) if "epoch" in a else lr.epoch
    rf = s.replicas[f]
    past = Replica(lr.log[:o], 0, 0, True, l, epoch, rf.isr, False, rf.remote_leo, False, ())
    virt = State(
        s.replicas[:f] + (past,) + s.replicas[f + 1 :], s.coord, s.requests, s.history, s.faults
    )
    steps = v.steps(virt, "FollowerFetch", (f, l))
    if not steps:
        mism.append("FollowerFetch serve: the spec's fetch is not enabled for the request's epoch")
    return steps


def _fetch_apply(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
    s, pend, ack = c
    a = ev["args"]
    f, l = v.pm.rep(a["follower"]), v.pm.rep(a["leader"])
    r = s.replicas[f]
    fits = [h for h in pend[f] if h[0] == l and h[1] == r.epoch and h[2] == len(r.log)]
    lr = s.replicas[l]
    helds: list[tuple] = []
    if r.alive and fits:
        helds.append(fits[-1])
    elif lr.remote_leo[f] == len(r.log) and v.steps(s, "FollowerFetch", (f, l)):
        # The leader logs a serve only when it changed something: a fetch at the offset the
        # leader already recorded is the spec's FollowerFetch with an unchanged leader half.
        helds.append((l, lr.epoch, len(r.log), 0, lr.hw, lr.log))
    if r.alive:
        # Before KIP-320 a follower at an older epoch (a zombie, or one that missed a
        # LeaderAndIsr) also fetches from its leader at a newer one and applies whatever fits
        # its LEO: the responses held at another leader epoch are alternatives, unless the
        # version fences them (``fetch_fenced``).
        fenced = v.ctx.fetch_fenced
        helds += [
            h
            for h in pend[f][::-1]
            if h[0] == l and h[1] != r.epoch and h[2] == len(r.log) and not fenced(h[1], r.epoch)
        ]
    if not helds:
        fetches = [h for h in pend[f] if h[2] != ANSWER]
        if fetches:
            hl, hepoch, o = fetches[-1][:3]
            mism.append(
                f"FollowerFetch apply: the held response (leader {v.pm.broker(hl)}, epoch "
                f"{v.pm.trace_epoch(hepoch)}, offset {o}) does not fit the follower (leader "
                f"{v.pm.broker(r.leader)}, epoch {v.pm.trace_epoch(r.epoch)}, LEO {len(r.log)})"
            )
        else:
            mism.append("FollowerFetch apply: no fetch response of the spec is held for it")
        return []
    out: list[Cand] = []
    for held in helds:
        out.extend(_apply_held(v, ev, s, pend, ack, f, l, held, mism))
    return out


def _apply_held(
    v: PartitionValidator,
    ev: Event,
    s: State,
    pend: Pending,
    ack: frozenset,
    f: int,
    l: int,
    held: tuple,
    mism: list[str],
) -> list[Cand]:
    a = ev["args"]
    r = s.replicas[f]
    _hl, hepoch, o, hw0, hw1, hlog = held
    if r.leader != l:
        mism.append(f"FollowerFetch apply: the follower follows {v.pm.broker(r.leader)}")
        return []
    # The response was built between the serve and now (a parked fetch answers when data
    # arrives): the spec's fetch at the same offset, on the leader as it was then. A leader
    # never truncates while it leads, so its log now extends the one it sent from; its HW then
    # lies between the HW at serve time and its HW now. A leader that stopped leading since
    # (a crash, a power failure cutting its log) sent from its log as last seen leading.
    lr = s.replicas[l]
    leading = lr.alive and lr.leader == l and lr.epoch == hepoch
    if not leading and _re_elected_leader(v, lr, l, hepoch, hlog):
        # (mapping decision 13) the leader was re-elected at a newer epoch with its log (the
        # controller took a live follower out of the ISR: a controlled shutdown): a parked
        # fetch of the older epoch is answered with what it appended since; before KIP-320
        # nothing fences that request.
        leading = True
    src = lr.log if leading else hlog
    count = int(a.get("count", 0))
    if len(src) < o + count:
        mism.append(
            f"FollowerFetch apply: {count} records from offset {o}, the leader has {len(src)}"
        )
        return []
    log = r.log + src[o : o + count] if count else r.log
    lo = min(len(log), hw0)
    hi = min(len(log), max(hw1, lr.hw if leading else 0))
    obs = (ev.get("state") or {}).get("hw")
    hw = obs if isinstance(obs, int) and lo <= obs <= hi else hi
    nr = r._replace(log=log, hw=hw)
    t = State(
        s.replicas[:f] + (nr,) + s.replicas[f + 1 :], s.coord, s.requests, s.history, s.faults
    )
    if not v.check(ev, f, t, mism):
        return []
    return [(t, without_held(pend, f, held), ack)]


def _re_elected_leader(
    v: PartitionValidator, lr: Replica, l: int, hepoch: int, hlog: object
) -> bool:
    """Leader ``l`` leads now at an epoch newer than ``hepoch``, its log extending ``hlog``
    (its last entry then is still there), and fetches are not fenced (before KIP-320)."""
    if not (lr.alive and lr.leader == l and lr.epoch > hepoch) or v.ctx.fetch_fenced(
        lr.epoch, hepoch
    ):
        return False
    n = len(hlog)  # type: ignore[arg-type]
    return len(lr.log) >= n and (n == 0 or lr.log[n - 1] == hlog[n - 1])  # type: ignore[index]


def on_truncate(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
    """FollowerTruncate: the spec's FollowerTruncate (KIP-101+), or the out-of-range branch of
    the spec's FollowerFetch (R12), or nothing at all when the log is already there."""
    s, pend, ack = c
    a = ev["args"]
    f, l = v.pm.rep(a["follower"]), v.pm.rep(a["leader"])
    out: list[Cand] = []
    for name in ("FollowerTruncate", "FollowerFetch"):
        for _a, t in v.steps(s, name, (f, l)):
            if name == "FollowerFetch" and len(t.replicas[f].log) >= len(s.replicas[f].log):
                continue
            t, _g = strip_history(t)
            if v.check(ev, f, t, mism):
                out.append((t, _held_after_truncation(s, t, pend, f), ack))
    if not out and s.replicas[f].truncating:
        for t in _stale_truncate(v, s, pend, f, l):
            if v.check(ev, f, t, mism):
                out.append((t, without_held(pend, f), ack))
    if not out and s.replicas[f].truncating:
        for t in _walk_back_round(v, ev, s, f, l):
            if v.check(ev, f, t, mism):
                out.append((t, without_held(pend, f), ack))
    if not out and not s.replicas[f].truncating:
        for t in _stale_out_of_range(v, s, f, l, int(a["offset"])):
            if v.check(ev, f, t, mism):
                out.append((t, without_held(pend, f), ack))
    if not out and not s.replicas[f].truncating and v.check(ev, f, s, mism):
        out.append(c)
    return out


def _held_after_truncation(s: State, t: State, pend: Pending, f: int) -> Pending:
    """Responses in flight to ``f`` after its truncation: none fits a cut log; a truncation that
    cut nothing (KIP-101+: the log already ends where the leader's epoch does) leaves them, as
    the follower's fetcher does (a fetch it sent before becoming follower again, at the same
    offset, is still answered and applied: before KIP-320 nothing fences it)."""
    if len(t.replicas[f].log) == len(s.replicas[f].log):
        return pend
    return without_held(pend, f)


def _walk_back_round(v: PartitionValidator, ev: Event, s: State, f: int, l: int) -> list[State]:
    """KIP-279's walk back, one round at a time (Kafka's ``getOffsetTruncationState`` with
    truncation not complete): a follower that never had the epoch the leader answered cuts its
    log to the end of its largest epoch below it and asks again. The spec's FollowerTruncate
    does the whole walk in one step; an intermediate round cuts the follower's log to a point
    that walk passes (between the spec's final point and the log end), the follower still
    truncating. The rounds that follow start from the cut log and end where the whole walk
    does (the entries cut are beyond the point both reach)."""
    r = s.replicas[f]
    obs = (ev.get("state") or {}).get("leo")
    if not isinstance(obs, int) or not v.ctx.protocol.walks_back:
        return []
    finals = [len(t.replicas[f].log) for _a, t in v.steps(s, "FollowerTruncate", (f, l))]
    if not finals or not all(fin <= obs < len(r.log) for fin in finals):
        return []
    nr = r._replace(log=r.log[:obs], hw=min(r.hw, obs), hw_ckpt=min(r.hw_ckpt, obs))
    t = State(
        s.replicas[:f] + (nr,) + s.replicas[f + 1 :], s.coord, s.requests, s.history, s.faults
    )
    if v.flushed:
        t = follow_truncations(s, t)
    return [t]


def _stale_truncate(v: PartitionValidator, s: State, pend: Pending, f: int, l: int) -> list[State]:
    """The leader answered the follower's OffsetsForLeaderEpoch, then crashed or moved on before
    the follower applied the answer (the split of FollowerFetch, for truncation; the answer
    carries no event of its own). The spec's FollowerTruncate is taken on the leader as it was
    when it answered: leading in the follower's epoch (fencing), with its log now, which extends
    its log then; the truncation point depends only on entries the follower could have fetched
    from it, which were there then. Only the follower's side is kept.

    A power failure breaks "its log now extends its log then": the answer came from the log in
    memory, the crash kept only the flushed prefix (R14). The log held when it crashed
    (``parked_answers``) is the one it answered from then."""
    r, lr = s.replicas[f], s.replicas[l]
    if r.leader != l or (lr.alive and lr.leader == l and lr.epoch == r.epoch):
        return []
    logs = [h[5] for h in pend[f] if h[0] == l and h[2] == ANSWER]
    if not logs or (lr.alive and lr.leader == l):
        logs.append(lr.log)
    out = []
    for log in dict.fromkeys(logs):
        past = Replica(
            log, lr.hw, lr.hw_ckpt, True, l, r.epoch, lr.isr, False, lr.remote_leo, False, ()
        )
        virt = State(
            s.replicas[:l] + (past,) + s.replicas[l + 1 :],
            s.coord,
            s.requests,
            s.history,
            s.faults,
        )
        for _a, t in v.steps(virt, "FollowerTruncate", (f, l)):
            t = strip_history(t)[0]
            out.append(t._replace(replicas=t.replicas[:l] + (lr,) + t.replicas[l + 1 :]))
    return out


def _stale_out_of_range(v: PartitionValidator, s: State, f: int, l: int, o: int) -> list[State]:
    """R12's out-of-range answer, applied after the leader appended more: the follower fetched
    past the leader's log end, the leader answered with its LEO ``o`` then, and has appended
    since (the split of FollowerFetch: the serve changed nothing on the leader, so it is not
    logged). The spec's FollowerFetch is taken on the leader as it was: leading at the same
    epoch since, its log then is its log now cut to ``o``, no shorter than where its epoch
    began. Only the follower's side is kept."""
    r, lr = s.replicas[f], s.replicas[l]
    if not (r.leader == l and lr.alive and lr.leader == l and lr.epoch == r.epoch):
        return []
    if not (epoch_start(lr.log, lr.epoch) <= o < len(lr.log) and o < len(r.log)):
        return []
    past = lr._replace(log=lr.log[:o], hw=min(lr.hw, o))
    virt = State(
        s.replicas[:l] + (past,) + s.replicas[l + 1 :], s.coord, s.requests, s.history, s.faults
    )
    out = []
    for _a, t in v.steps(virt, "FollowerFetch", (f, l)):
        if len(t.replicas[f].log) == o:
            t = strip_history(t)[0]
            out.append(t._replace(replicas=t.replicas[:l] + (lr,) + t.replicas[l + 1 :]))
    return out
