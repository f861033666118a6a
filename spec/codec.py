"""The state's JSON form: the variables by name, per-replica maps keyed r0, r1, ... (R16: what a
counterexample file, an ITF export, the explorer and the state graph show is this form). One
codec for every file: the counterexample file (traces/counterexample/) writes and checks it, ITF
(traces/counterexample/itf.py) re-types it (sets, tuples, records), ``isr replay`` reads it back
with ``state_from_json``."""

from __future__ import annotations

from typing import Any

from .state import (
    NO_KRAFT,
    AlterReq,
    Coord,
    Faults,
    FetchReq,
    FetchResp,
    History,
    Kraft,
    Producer,
    Replica,
    Request,
    State,
)


def _mask_list(mask: int) -> list[int]:
    return [i for i in range(mask.bit_length()) if mask >> i & 1]


# The state's per-replica maps in its JSON form (each keyed r0..r{R-1}): the variables that are
# functions of the replica id. One list for every reader and writer of that form (the
# counterexample file's checks, ITF's maps keyed by replica); kraft's apart, ITF writes them as
# records (issue 29: the list was written out twice, and the two copies disagreed).
PER_REPLICA_KEYS = (
    "log",
    "hw",
    "hw_checkpoint",
    "alive",
    "leader_view",
    "epoch_view",
    "isr_view",
    "zk_version_current",
    "remote_leo",
    "truncating",
    "pending_acks",
    "flushed",
    "log_start",
    "controller_epoch_seen",
    "producer_state_start",
)
KRAFT_PER_REPLICA_KEYS = ("remote_broker_epoch", "broker_epoch", "epoch_cache", "epoch_checkpoint")
# The keys ``state_to_json`` writes only once their mechanism moved them off their constant, with
# the value their absence stands for (``state_from_json`` reads either the same): a format that
# needs every variable in every state (ITF) writes these there.
JSON_ABSENT = {
    "leader_recovery": "RECOVERED",
    "min_isr": 0,
    "min_isr_changes": 0,
    "delete_records": 0,
    "replicas": [],
    "adding_replicas": [],
    "removing_replicas": [],
    "reassignments": 0,
    "replica_set_view": {},
}
# A fetch response's fields written only when set (R12: --retention, --delete-records), with
# the value their absence stands for: the JSON of a model whose log start never moves is the
# one it was before they were added.
FETCH_RESPONSE_ABSENT = {"log_start": 0, "out_of_range": False}

# Where this JSON holds sets and tuples (every other list is a sequence): what a typed form
# (ITF's #set and #tup) needs to know of it. "*" is any key of a per-replica record, "[]" any
# element of a sequence.
SET_PATHS = {
    ("isr_view", "*"),
    ("coordination", "isr"),
    ("leader_and_isr_in_flight", "[]", "isr"),
    ("unclean_shutdown",),
    ("elr",),
    ("session_expired",),
    ("fenced",),
    ("shutting_down",),
    ("alter_partition", "[]", "new_isr"),
    ("leader_and_isr_in_flight", "[]", "replicas"),
    ("replicas",),
    ("adding_replicas",),
    ("removing_replicas",),
    ("replica_set_view", "*"),
}
TUPLE_PATHS = {
    ("log", "*", "[]"),
    ("acked_all", "[]"),
    ("acked_1", "[]"),
    ("shown_to_consumers", "[]"),
    ("epoch_cache", "*", "[]"),
    ("epoch_checkpoint", "*", "[]"),
    ("fetch_responses", "[]", "records", "[]"),
    ("fetch_responses", "[]", "diverging"),
}


def state_to_json(s: State) -> dict[str, Any]:
    """The variables by name, as people read them: per-replica maps keyed r0, r1, ..."""
    reps = s.replicas
    h = s.history

    def per(f) -> dict[str, Any]:
        return {f"r{i}": f(r) for i, r in enumerate(reps)}

    return {
        "log": per(lambda r: [list(e) for e in r.log]),
        "hw": per(lambda r: r.hw),
        "hw_checkpoint": per(lambda r: r.hw_ckpt),
        "alive": per(lambda r: r.alive),
        "leader_view": per(lambda r: r.leader),
        "epoch_view": per(lambda r: r.epoch),
        "isr_view": per(lambda r: _mask_list(r.isr)),
        "zk_version_current": per(lambda r: r.zk_fresh),
        "remote_leo": per(lambda r: list(r.remote_leo)),
        "truncating": per(lambda r: r.truncating),
        "pending_acks": per(lambda r: list(r.pending)),
        "coordination": {
            "leader": s.coord.leader,
            "leader_epoch": s.coord.epoch,
            "isr": _mask_list(s.coord.isr),
        },
        "leader_and_isr_in_flight": [
            {
                "to": q.dest,
                "leader": q.leader,
                "epoch": q.epoch,
                "isr": _mask_list(q.isr),
                "version_current": q.fresh,
                **({"controller_epoch": q.ctrl_epoch} if q.ctrl_epoch != 1 else {}),
                **({"replicas": _mask_list(q.replicas)} if q.replicas else {}),
                **({"partition_change_rank": q.pc} if q.pc else {}),
            }
            for q in s.requests
        ],
        "records_written": h.next_record,
        "acked_all": [list(x) for x in h.acked],
        "acked_1": [list(x) for x in h.acked1],
        "refused": list(h.refused),
        "shown_to_consumers": [list(x) for x in h.shown],
        "crashes": h.crashes,
        **_faults_to_json(s.faults),
        **_kraft_to_json(s.kraft, failovers=bool(s.faults.ctrl_seen)),
    }


def _kraft_to_json(k: Kraft, failovers: bool = False) -> dict[str, Any]:
    """The kraft variables, only for the kraft version. With controller failovers, the deposed
    controller in every state (leader epoch 0: none), so that every state has the same keys
    (ITF's variables are the first state's)."""
    if k is NO_KRAFT or k == NO_KRAFT:
        return {}
    if not k.broker_epoch:  # a ZooKeeper-era version with --reassignments: KIP-455's alone
        return _reassignment_to_json(k)
    return {
        "fetch_requests": [q._asdict() for q in k.fetch_requests],
        "fetch_responses": [_fetch_response_to_json(p) for p in k.fetch_responses],
        "remote_broker_epoch": {f"r{i}": list(row) for i, row in enumerate(k.remote_epoch)},
        "broker_epoch": {f"r{i}": x for i, x in enumerate(k.broker_epoch)},
        "alter_partition": [
            {**a._asdict(), "new_isr": _mask_list(a.new_isr)} for a in k.alter_partition
        ],
        "fenced": _mask_list(k.fenced),
        "shutting_down": _mask_list(k.shutting_down),
        "consumer_position": k.consumer_pos,
        "consumer_epoch": k.consumer_epoch,
        **(
            {
                "epoch_cache": {f"r{i}": [list(e) for e in c] for i, c in enumerate(k.epoch_cache)},
                "epoch_checkpoint": {
                    f"r{i}": [list(e) for e in c] for i, c in enumerate(k.epoch_ckpt)
                },
            }
            if k.epoch_cache
            else {}
        ),
        **(
            {
                "deposed_controller": {
                    "leader_epoch": k.deposed[0] if k.deposed else 0,
                    "behind": bool(k.deposed and k.deposed[1]),
                }
            }
            if k.deposed or failovers
            else {}
        ),
        # each only when its mechanism has moved it off its constant (KIP-704, KAFKA-16540)
        **({"leader_recovery": "RECOVERING"} if k.leader_recovery else {}),
        **({"min_isr": k.min_isr} if k.min_isr else {}),
        **({"min_isr_changes": k.min_isr_changes} if k.min_isr_changes else {}),
        **({"delete_records": k.delete_records} if k.delete_records else {}),
        # KIP-455 (--reassignments): the replica set, its reassignment and the leaders' views
        **(_reassignment_to_json(k) if k.assigned else {}),
    }


def _reassignment_to_json(k: Kraft) -> dict[str, Any]:
    return {
        "replicas": _mask_list(k.assigned),
        "adding_replicas": _mask_list(k.adding),
        "removing_replicas": _mask_list(k.removing),
        "reassignments": k.reassignments,
        "replica_set_view": {f"r{i}": _mask_list(v) for i, v in enumerate(k.views)},
    }


def _fetch_response_to_json(p: FetchResp) -> dict[str, Any]:
    d = {**p._asdict(), "records": [list(e) for e in p.records], "diverging": list(p.diverging)}
    for key, absent in FETCH_RESPONSE_ABSENT.items():
        if d[key] == absent:
            del d[key]
    return d


def _kraft_from_json(d: dict[str, Any], n: int) -> Kraft:
    if "broker_epoch" not in d:
        if "replicas" in d:  # a ZooKeeper-era version with --reassignments
            return NO_KRAFT._replace(
                assigned=sum(1 << x for x in d["replicas"]),
                adding=sum(1 << x for x in d.get("adding_replicas", [])),
                removing=sum(1 << x for x in d.get("removing_replicas", [])),
                reassignments=d.get("reassignments", JSON_ABSENT["reassignments"]),
                views=tuple(sum(1 << x for x in d["replica_set_view"][f"r{i}"]) for i in range(n)),
            )
        return NO_KRAFT
    return Kraft(
        tuple(sorted(FetchReq(**q) for q in d["fetch_requests"])),
        tuple(
            sorted(
                FetchResp(
                    **{
                        **p,
                        "records": tuple(tuple(e) for e in p["records"]),
                        "diverging": tuple(p["diverging"]),
                    }
                )
                for p in d["fetch_responses"]
            )
        ),
        tuple(tuple(d["remote_broker_epoch"][f"r{i}"]) for i in range(n)),
        tuple(d["broker_epoch"][f"r{i}"] for i in range(n)),
        tuple(
            sorted(
                AlterReq(**{**a, "new_isr": sum(1 << x for x in a["new_isr"])})
                for a in d.get("alter_partition", [])
            )
        ),
        sum(1 << x for x in d.get("fenced", [])),
        sum(1 << x for x in d.get("shutting_down", [])),
        d.get("consumer_position", 0),
        d.get("consumer_epoch", 0),
        _caches_from_json(d.get("epoch_cache"), n),
        _caches_from_json(d.get("epoch_checkpoint"), n),
        _deposed_from_json(d.get("deposed_controller")),
        1 if d.get("leader_recovery", JSON_ABSENT["leader_recovery"]) == "RECOVERING" else 0,
        d.get("min_isr", JSON_ABSENT["min_isr"]),
        d.get("min_isr_changes", JSON_ABSENT["min_isr_changes"]),
        d.get("delete_records", JSON_ABSENT["delete_records"]),
        sum(1 << x for x in d.get("replicas", [])),
        sum(1 << x for x in d.get("adding_replicas", [])),
        sum(1 << x for x in d.get("removing_replicas", [])),
        d.get("reassignments", JSON_ABSENT["reassignments"]),
        tuple(sum(1 << x for x in d["replica_set_view"][f"r{i}"]) for i in range(n))
        if d.get("replica_set_view")
        else (),
    )


def _deposed_from_json(d: dict[str, Any] | None) -> tuple[int, ...]:
    return (d["leader_epoch"], int(d["behind"])) if d and d["leader_epoch"] else ()


def _caches_from_json(d: dict[str, Any] | None, n: int) -> tuple:
    if not d:
        return ()
    return tuple(tuple(tuple(e) for e in d[f"r{i}"]) for i in range(n))


def _faults_to_json(f: Faults) -> dict[str, Any]:
    """The fault-mode variables, only where their mode is on (a constant value means off)."""
    out: dict[str, Any] = {}
    if f.flushed:
        out["flushed"] = {f"r{i}": x for i, x in enumerate(f.flushed)}
    if f.log_start:
        out["log_start"] = {f"r{i}": x for i, x in enumerate(f.log_start)}
    if f.unclean:
        out["unclean_shutdown"] = _mask_list(f.unclean)
    if f.elr:
        out["elr"] = _mask_list(f.elr)
    if f.lost_replies or f.retries:
        if not f.producer:  # (the idempotent producer's batches in flight are its own)
            out["unanswered_records"] = list(f.lost_replies)
        out["retries"] = f.retries
    if f.ctrl_seen:
        out["controller_epoch"] = f.ctrl_epoch
        out["controller_epoch_seen"] = {f"r{i}": x for i, x in enumerate(f.ctrl_seen)}
        out["controller_failovers"] = f.failovers
    if f.expired or f.expiries or f.lead_renewed:
        out["session_expired"] = _mask_list(f.expired)
        out["session_expiries"] = f.expiries
        out["leader_session_renewed"] = f.lead_renewed
    if f.producer:
        out["producer"] = _producer_to_json(f.producer)
    if f.producer_state_start:
        out["producer_state_start"] = {f"r{i}": x for i, x in enumerate(f.producer_state_start)}
    return out


# --idempotence: what a batch in flight was answered (spec.producer_state's codes, by position)
ANSWERS = ("none", "acknowledged", "out_of_order_sequence", "waiting")


def _producer_to_json(p: Producer) -> dict[str, Any]:
    """The idempotent producer's state (spec.state.Producer)."""
    return {
        "epoch": p.epoch,
        "next_sequence": p.next_seq,
        "last_acked_sequence": p.last_acked,
        "metadata_leader_epoch": p.leader_epoch,
        "in_flight": [
            {
                "record": b[0],
                "sequence": b[1],
                "answer": ANSWERS[b[2]],
                **({"broker": b[3]} if b[3] >= 0 else {}),
                **({"leader_epoch": b[4], "offset": b[5]} if b[2] == 3 else {}),
            }
            for b in p.batches
        ],
    }


def _producer_from_json(d: dict[str, Any] | None) -> Producer | tuple:
    if not d:
        return ()
    return Producer(
        d["epoch"],
        d["next_sequence"],
        d["last_acked_sequence"],
        tuple(
            (
                b["record"],
                b["sequence"],
                ANSWERS.index(b["answer"]),
                b.get("broker", -1),
                b.get("leader_epoch", 0),
                b.get("offset", 0),
            )
            for b in d["in_flight"]
        ),
        d["metadata_leader_epoch"],
    )


def _faults_from_json(d: dict[str, Any], n: int) -> Faults:
    def per(key: str) -> tuple[int, ...]:
        return tuple(d[key][f"r{i}"] for i in range(n)) if key in d else ()

    def mask(xs) -> int:
        m = 0
        for x in xs:
            m |= 1 << x
        return m

    return Faults(
        per("flushed"),
        per("log_start"),
        mask(d.get("unclean_shutdown", [])),
        mask(d.get("elr", [])),
        tuple(d.get("unanswered_records", [])),
        d.get("retries", 0),
        d.get("controller_epoch", 1),
        per("controller_epoch_seen"),
        d.get("controller_failovers", 0),
        mask(d.get("session_expired", [])),
        d.get("session_expiries", 0),
        d.get("leader_session_renewed", False),
        _producer_from_json(d.get("producer")),
        per("producer_state_start"),
    )


def state_from_json(d: dict[str, Any]) -> State:
    """Inverse of state_to_json (for replaying saved traces)."""

    n = len(d["log"])

    def mask(xs) -> int:
        m = 0
        for x in xs:
            m |= 1 << x
        return m

    reps = tuple(
        Replica(
            tuple(tuple(e) for e in d["log"][f"r{i}"]),
            d["hw"][f"r{i}"],
            d["hw_checkpoint"][f"r{i}"],
            d["alive"][f"r{i}"],
            d["leader_view"][f"r{i}"],
            d["epoch_view"][f"r{i}"],
            mask(d["isr_view"][f"r{i}"]),
            d["zk_version_current"][f"r{i}"],
            tuple(d["remote_leo"][f"r{i}"]),
            d["truncating"][f"r{i}"],
            tuple(d["pending_acks"][f"r{i}"]),
        )
        for i in range(n)
    )
    c = d["coordination"]
    reqs = tuple(
        sorted(
            Request(
                q["to"],
                q["leader"],
                q["epoch"],
                mask(q["isr"]),
                q["version_current"],
                q.get("controller_epoch", 1),
                mask(q.get("replicas", [])),
                q.get("partition_change_rank", 0),
            )
            for q in d["leader_and_isr_in_flight"]
        )
    )
    hist = History(
        d["records_written"],
        tuple(tuple(x) for x in d["acked_all"]),
        tuple(tuple(x) for x in d["acked_1"]),
        tuple(d["refused"]),
        tuple(tuple(x) for x in d["shown_to_consumers"]),
        d["crashes"],
    )
    coord = Coord(c["leader"], c["leader_epoch"], mask(c["isr"]))
    return State(reps, coord, reqs, hist, _faults_from_json(d, n), _kraft_from_json(d, n))
