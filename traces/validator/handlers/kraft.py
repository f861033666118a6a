"""Handlers of the ``kraft`` version's events (issue 18 step 4; VALIDATION.md, "kraft"): the
split fetch (FollowerSendFetch, LeaderHandleFetch, FollowerHandleFetchResponse), asynchronous
AlterPartition (LeaderSendAlterPartition, ControllerHandleAlterPartition), the leader's
partition change (BrokerApplyPartitionChange) and registration (BrokerRegister). Each runs the
spec action the event names and keeps the successors whose message (the request consumed or
created, the response) has the event's fields, and whose acting replica is what the event
observed. Two stutters, each sound because the spec step would change nothing the trace can
see: a fetch sent to a broker the trace shows crashed (connection refused: the implementation's
message is dropped; the spec lists no send to a dead broker), and an AlterPartition proposed
with a stale partition epoch together with its refusal (the spec does not list a proposal the
controller refuses for certain: nothing changes)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from isr.spec.state import FetchReq, FetchResp, State

from ..candidates import Cand, strip_history
from ..mapping import Event

if TYPE_CHECKING:
    from .view import PartitionView as PartitionValidator

OFFSET_OUT_OF_RANGE = "OFFSET_OUT_OF_RANGE"  # R12: the leader's answer (FORMAT.md, "kraft")


def _ep(v: PartitionValidator, trace_epoch: Any) -> int:
    """A trace epoch (a log entry's or a leader epoch) as the spec's; -1 (none) is 0 for a
    last fetched epoch (the spec's empty log) and stays UNDEFINED in a diverging answer."""
    return v.pm.epoch(int(trace_epoch))


def _fit(
    v: PartitionValidator, ev: Event, i: int, c: Cand, t: State, out: list, mism: list
) -> None:
    _s, pend, ack = c
    t, gained = strip_history(t)
    got = v.fit(ev, i, t, gained, mism)
    if got is not None:
        out.append((got[0], pend, ack | got[1] if got[1] else ack))


def _not_enabled(mism: list[str], ev: Event, out: list) -> list:
    if not out and not mism:
        mism.append(f"{ev['action']}({ev.get('args')}) is not enabled with these fields")
    return out


def on_send_fetch(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
    a = ev["args"]
    f, l = v.pm.rep(a["follower"]), v.pm.rep(a["leader"])
    s = c[0]
    if l in v.down or not s.replicas[l].alive:
        # connection refused: the leader's process is down (trace-determined, or its crash
        # already taken in this candidate, as an event logged on its behalf forces); no spec step
        return [c] if v.check(ev, f, s, mism) else []
    want = (
        f,
        l,
        int(a["fetch_offset"]),
        _ep(v, a["last_fetched_epoch"]),
        _ep(v, a["leader_epoch"]),
        int(a["broker_epoch"]),
    )
    out: list[Cand] = []
    _send(v, ev, c, s, f, l, want, out, mism)
    if not out and l in v.crashed_once:
        # A fetch of ``f`` to ``l`` whose connection closed when ``l`` crashed: a request that
        # ``l``'s crash dropped (the merged order may put the send after the crash: the two are
        # concurrent by their clocks), or an answer ``l`` sent before it crashed, lost with the
        # connection (the spec keeps answers from a crashed leader; losing one is the lost
        # fetch it does not model yet). Dropped here (VALIDATION.md, "kraft").
        k = s.kraft
        reqs = tuple(q for q in k.fetch_requests if not (q.follower == f and q.leader == l))
        resps = tuple(p for p in k.fetch_responses if not (p.follower == f and p.leader == l))
        if len(reqs) + len(resps) < len(k.fetch_requests) + len(k.fetch_responses):
            s2 = s._replace(kraft=k._replace(fetch_requests=reqs, fetch_responses=resps))
            _send(v, ev, (s2, c[1], c[2]), s2, f, l, want, out, mism)
    return _not_enabled(mism, ev, out)


def _send(v, ev, c, s, f, l, want, out, mism) -> None:
    for _a, t in v.steps(s, "FollowerSendFetch", (f, l)):
        new = set(t.kraft.fetch_requests) - set(s.kraft.fetch_requests)
        if any(tuple(q) == want for q in new):
            _fit(v, ev, f, c, t, out, mism)


def _consumed_req(s: State, t: State) -> FetchReq | None:
    gone = set(s.kraft.fetch_requests) - set(t.kraft.fetch_requests)
    return next(iter(gone)) if len(gone) == 1 else None


def on_handle_fetch(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
    a = ev["args"]
    l, f = v.pm.rep(a["leader"]), v.pm.rep(a["follower"])
    s = c[0]
    out: list[Cand] = []
    # R12: OFFSET_OUT_OF_RANGE is no error branch of the spec's: an answer of its own
    oor = a.get("error") == OFFSET_OUT_OF_RANGE
    err = "error" in a and not oor
    starts = s.faults.log_start
    for _a, t in v.steps(s, "LeaderHandleFetch", (l, f)):
        q = _consumed_req(s, t)
        if q is None or q.fetch_offset != int(a["fetch_offset"]):
            continue
        if q.broker_epoch != int(a["broker_epoch"]) or q.leader_epoch != _ep(v, a["leader_epoch"]):
            continue
        new = set(t.kraft.fetch_responses) - set(s.kraft.fetch_responses)
        # the spec's error branch (NOT_LEADER, FENCED/UNKNOWN_LEADER_EPOCH, STALE_BROKER_EPOCH)
        # is taken exactly when the event is an error answer
        lr = s.replicas[l]
        stale = v.ctx.protocol.fence_stale_fetch and q.broker_epoch < s.kraft.remote_epoch[l][f]
        # (KIP-455: a follower outside the replica set the leader applied is answered
        # UNKNOWN_LEADER_EPOCH)
        outside = bool(s.kraft.views) and not s.kraft.views[l] >> f & 1
        if err != (lr.leader != l or q.leader_epoch != lr.epoch or stale or outside):
            continue
        if not err and new:
            p: FetchResp = next(iter(new))
            if p.out_of_range != oor:
                continue
            if starts and "log_start" in a and p.log_start != int(a["log_start"]):
                continue
            if "hw" in a and not oor and p.hw != int(a["hw"]):
                continue
            if "diverging" in a:
                e, end = a["diverging"]
                want = (_ep(v, e) if int(e) >= 0 else -1, int(end))
                if p.diverging != want:
                    continue
            elif p.diverging:
                continue
        elif not err and oor != _out_of_range(s, l, q):
            continue  # (the answer is lost: the branch the spec took, from the request)
        # (no new response: the follower's incarnation is gone, the answer is lost)
        _fit(v, ev, l, c, t, out, mism)
    if not out and err and v.dropped_fetches:
        # KIP-455: a request a BrokerStopReplica of its follower dropped (the spec drops a
        # removed broker's fetches with its fetcher) that the leader still had queued, parked
        # or from a previous incarnation, answered with an error: the error branch changes
        # nothing but the request, which the spec no longer has (a stutter)
        want = (
            f, l, int(a["fetch_offset"]), _ep(v, a["leader_epoch"]), int(a["broker_epoch"])
        )  # fmt: skip
        gone = [q for q in v.dropped_fetches if (q.follower, q.leader, q.fetch_offset,
                                                 q.leader_epoch, q.broker_epoch) == want]  # fmt: skip
        if gone and v.check(ev, l, s, mism):
            out.append(c)
    return _not_enabled(mism, ev, out)


def on_fetch_response(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
    a = ev["args"]
    f, l = v.pm.rep(a["follower"]), v.pm.rep(a["leader"])
    s = c[0]
    out: list[Cand] = []
    for _a, t in v.steps(s, "FollowerHandleFetchResponse", (f, l)):
        p = _response_taken(v, a, s, t, f)
        if p is None or bool(p.diverging) != ("diverging" in a):
            continue
        _fit(v, ev, f, c, t, out, mism)
    return _not_enabled(mism, ev, out)


def _response_taken(v: PartitionValidator, a: dict, s: State, t: State, f: int) -> FetchResp | None:
    """The one fetch response follower ``f``'s step ``s`` -> ``t`` took in, if it is the one
    the event names (its fetch offset and leader epoch; an ``ignored`` answer changes nothing
    of the follower), else None."""
    gone = set(s.kraft.fetch_responses) - set(t.kraft.fetch_responses)
    if len(gone) != 1:
        return None
    p = next(iter(gone))
    if p.fetch_offset != int(a["fetch_offset"]) or p.leader_epoch != _ep(v, a["leader_epoch"]):
        return None
    if a.get("ignored") and t.replicas[f] is not s.replicas[f]:
        return None
    return p


def on_send_alter(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
    a = ev["args"]
    l, f = v.pm.rep(a["leader"]), v.pm.rep(a["follower"])
    s = c[0]
    out: list[Cand] = []
    want = v.pm.mask(a["isr"]) if "isr" in a else None
    for _a, t in v.steps(s, "LeaderSendAlterPartition", (l, f)):
        new = set(t.kraft.alter_partition) - set(s.kraft.alter_partition)
        if want is not None and not any(x.new_isr == want for x in new):
            continue
        _fit(v, ev, l, c, t, out, mism)
    if not out:
        r = s.replicas[l]
        if r.alive and r.leader == l and not r.zk_fresh and v.check(ev, l, s, mism):
            # made on a stale partition epoch: refused for certain, so no spec step; the
            # refusal that follows is a stutter too (``on_handle_alter``)
            v.stale_alter.add(l)
            out.append(c)
    return _not_enabled(mism, ev, out)


def on_handle_alter(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
    a = ev["args"]
    l = v.pm.rep(a["leader"])
    s = c[0]
    accepted = bool(a.get("accepted"))
    out: list[Cand] = []
    if (
        l in v.stale_alter
        and not accepted
        and not any(x.leader == l for x in s.kraft.alter_partition)
    ):
        return [c] if v.check(ev, l, s, mism) else []
    for _a, t in v.steps(s, "ControllerHandleAlterPartition", (l,)):
        if (t.coord != s.coord) != accepted:
            continue
        _fit(v, ev, l, c, t, out, mism)
    return _not_enabled(mism, ev, out)


def on_register(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
    i = v.pm.rep(ev["args"]["replica"])
    s = c[0]
    out: list[Cand] = []
    for _a, t in v.steps(s, "BrokerRegister", (i,)):
        if "broker_epoch" in ev["args"] and t.kraft.broker_epoch[i] != int(
            ev["args"]["broker_epoch"]
        ):
            continue
        _fit(v, ev, i, c, t, out, mism)
    return _not_enabled(mism, ev, out)


def _out_of_range(s: State, l: int, q: FetchReq) -> bool:
    """Whether the spec's LeaderHandleFetch answers ``q`` OFFSET_OUT_OF_RANGE (R12, its
    branch 2b): below the leader's log start, or without a last fetched epoch past its end."""
    starts = s.faults.log_start
    if not starts:
        return False
    n = len(s.replicas[l].log)
    return q.fetch_offset < starts[l] or (q.last_fetched_epoch == 0 and q.fetch_offset > n)


def on_offset_out_of_range(
    v: PartitionValidator, ev: Event, c: Cand, mism: list[str]
) -> list[Cand]:
    """FollowerHandleOffsetOutOfRange (R10, R12): the spec's step that takes the
    OFFSET_OUT_OF_RANGE answer with the event's fetch offset and leader epoch; the follower's
    truncation or reset is then what its observed state (log start, LEO, HW) shows."""
    a = ev["args"]
    f, l = v.pm.rep(a["follower"]), v.pm.rep(a["leader"])
    s = c[0]
    out: list[Cand] = []
    _offset_out_of_range(v, ev, c, s, f, l, out, mism)
    starts = s.faults.log_start
    seen = a.get("leader_log_start")
    if not out and starts and isinstance(seen, int) and seen < starts[l]:
        # The leader's log start was read before it moved again (its ListOffsets answer, here
        # the OFFSET_OUT_OF_RANGE answer's): the spec's step reads the leader's current one.
        # A log start only grows within an epoch, so the follower's step is the spec's on the
        # leader's earlier log start (VALIDATION.md, "kraft: the log start offset"); the leader
        # keeps its own.
        mism.clear()
        early = s._replace(faults=s.faults._replace(log_start=_with(starts, l, seen)))
        got: list[Cand] = []
        _offset_out_of_range(v, ev, (early, c[1], c[2]), early, f, l, got, mism)
        for t, pend, ack in got:
            ts = t.faults.log_start
            out.append((t._replace(faults=t.faults._replace(log_start=_with(ts, l, starts[l]))),
                        pend, ack))  # fmt: skip
    return _not_enabled(mism, ev, out)


def _with(xs: tuple[int, ...], i: int, x: int) -> tuple[int, ...]:
    return xs[:i] + (x,) + xs[i + 1 :]


def _offset_out_of_range(v, ev, c, s, f, l, out, mism) -> None:
    a = ev["args"]
    for _a, t in v.steps(s, "FollowerHandleOffsetOutOfRange", (f, l)):
        if _response_taken(v, a, s, t, f) is not None:
            _fit(v, ev, f, c, t, out, mism)


def on_delete_old_segment(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
    """BrokerDeleteOldSegment (R4, R12): retention deleted one segment of the replica, its log
    start now at ``offset``. The spec deletes one record per step (one record is one segment
    there), so a segment of k records is k spec steps in a row, each enabled (below the HW)."""
    a = ev["args"]
    i = v.pm.rep(a["replica"])
    s = c[0]
    starts = s.faults.log_start
    if not starts:
        mism.append("BrokerDeleteOldSegment: the spec tracks no log start (no --retention)")
        return []
    want = int(a.get("offset", starts[i] + 1))
    cur = [s]
    for _k in range(max(0, want - starts[i])):
        cur = [t for u in cur for _a, t in v.steps(u, "BrokerDeleteOldSegment", (i,))]
        if not cur:
            mism.append(
                f"BrokerDeleteOldSegment({a['replica']}) up to offset {want} is not enabled"
                f" (the log start would pass the HW {s.replicas[i].hw}: LogStartAtMostHw,"
                " KAFKA-5634)"
            )
            return []
    out: list[Cand] = []
    for t in cur:
        if t.faults.log_start[i] == want:
            _fit(v, ev, i, c, t, out, mism)
    return _not_enabled(mism, ev, out)
