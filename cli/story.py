"""A counterexample's steps in Kafka's words: one plain sentence per step, and the roles a reader
must not miss (a deposed leader, a zombie, a stale zkVersion).

`isr explain` shows every variable of every state; a newcomer still has to work out what each
step *did*. :func:`sentence` says it, from the action's name, its arguments and the states before
and after ("Broker 0, a deposed leader still at epoch 1 (the controller is at epoch 2), appends
record 1 at offset 0"). Each action of every protocol version has its own sentence, written from
its docstring in spec/actions/; an action this module does not know (a user's protocol file may
add some) gets a fallback naming what it changed, and so does any step a sentence cannot read
(a state with a variable missing, say): telling the story never fails a page.

Everything here reads the JSON states of counterexample files (spec/codec.py ``state_to_json``),
so it serves the page and the text form alike (cli/explain.py renders them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

State = dict[str, Any]

# What each property asks, in one plain sentence (the spec's descriptions are terse labels).
MEANINGS = {
    "TypeOK": "Every variable holds a value of its type, within the model's bounds.",
    "HwAtMostLeo": "No replica's high watermark (HW), in memory or checkpointed, is past the "
    "end of its log.",
    "LeaderInIsr": "The leader the controller records is a member of the ISR it records.",
    "IsrWithinAssigned": "The ISR is never empty and holds only the partition's assigned replicas.",
    "StrongIsr": "Every replica the controller counts in the ISR holds exactly the leader's "
    "records below the leader's high watermark, so any of them can take over without losing a "
    "committed record.",
    "WeakIsr": "Every replica in the ISR as the leader itself sees it holds exactly the leader's "
    "records below the leader's high watermark.",
    "NoCommittedLoss": "A record acknowledged to an acks=all producer stays at its offset in the "
    "leader's log for ever.",
    "NoAckedLoss": "A record acknowledged to a producer (acks=1 or acks=all) stays at its offset "
    "in the leader's log for ever.",
    "NoPhantomRead": "A record once shown to a consumer never changes or disappears.",
    "LogMatching": "Two logs with an entry of the same epoch at the same offset agree on "
    "everything up to it.",
    "HwMonotonic": "A leader's high watermark never goes back.",
    "MonotonicReads": "The consumer's position never goes back.",
    "NoDuplicates": "No record is in a log twice (a producer's retry must not append it again).",
    "Available": "When the leader's broker is lost, the controller can always elect another: "
    "the partition never goes offline.",
    "AcksAllAnswered": "Every acks=all write to a leader that stays is eventually acknowledged "
    "or refused: the producer is never left waiting for ever.",
    "CaughtUpFollowerRejoinsIsr": "A follower that has caught up with a leader that stays "
    "eventually rejoins the ISR.",
}


def meaning(prop: str, fallback: str = "") -> str:
    """The property in one sentence (``fallback``, the spec's label, for one not listed)."""
    return MEANINGS.get(prop, fallback)


# ---------------------------------------------------------------------------- reading states


def _r(i: int) -> str:
    return f"r{i}"


def _log(s: State, i: int) -> list:
    return s["log"][_r(i)]


def _get(s: State, var: str, i: int, default: Any = None) -> Any:
    return s.get(var, {}).get(_r(i), default)


def _coord(s: State) -> dict:
    return s["coordination"]


def _isr(xs: list) -> str:
    return "[" + ", ".join(str(x) for x in xs) + "]"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _records(entries: list, first: int) -> str:
    """``record 1 at offset 0``, ``records 1 and 2 at offsets 0-1``: log entries from ``first``."""
    recs = [str(e[0]) for e in entries]
    if len(recs) == 1:
        return f"record {recs[0]} at offset {first}"
    names = ", ".join(recs[:-1]) + " and " + recs[-1]
    return f"records {names} at offsets {first}-{first + len(recs) - 1}"


def record_at(offset: int, record: Any) -> str:
    """An (offset, record) pair of the clients' variables, as people say it."""
    return f"record {record} at offset {offset}"


def _dropped(before: list, after: list) -> tuple[int, list] | None:
    """(first offset, entries) a truncation removed from ``before``, or None."""
    keep = 0
    while keep < min(len(before), len(after)) and before[keep] == after[keep]:
        keep += 1
    if keep == len(before):
        return None
    return keep, before[keep:]


def _appended(before: list, after: list) -> tuple[int, list] | None:
    """(first offset, entries) appended to ``before`` (a log that only grew), or None."""
    if len(after) > len(before) and after[: len(before)] == before:
        return len(before), after[len(before) :]
    return None


def believes_it_leads(s: State, i: int) -> bool:
    return bool(_get(s, "alive", i)) and _get(s, "leader_view", i) == i


def is_deposed(s: State, i: int) -> bool:
    """Alive and still leading in its own eyes, at an older epoch than the controller's, which
    names another leader (named itself, it is a leader that has not yet heard of an ISR
    change: :func:`lags_epoch`)."""
    c = _coord(s)
    return (
        believes_it_leads(s, i)
        and _get(s, "epoch_view", i, 0) < c["leader_epoch"]
        and c["leader"] != i
    )


def lags_epoch(s: State, i: int) -> bool:
    """The controller's leader, leading at an older epoch than the controller's (a write it
    has not applied yet)."""
    c = _coord(s)
    return (
        believes_it_leads(s, i)
        and _get(s, "epoch_view", i, 0) < c["leader_epoch"]
        and c["leader"] == i
    )


def is_zombie(s: State, i: int) -> str:
    """Why a running broker is a zombie (its session expired, or fenced in kraft), or ''."""
    if not _get(s, "alive", i):
        return ""
    if i in s.get("session_expired", []):
        return "session expired"
    if i in s.get("fenced", []):
        return "fenced"
    return ""


def is_kraft(s: State) -> bool:
    return "broker_epoch" in s


def has_stale_version(s: State, i: int) -> bool:
    """A leader whose cached zkVersion (kraft: partition epoch) is stale: its ISR writes fail
    (the CAS is refused), so it can neither shrink nor expand the ISR until a LeaderAndIsr
    refreshes it. Followers never use theirs, so only a leader's matters."""
    return believes_it_leads(s, i) and _get(s, "zk_version_current", i) is False


def roles(s: State, i: int) -> list[tuple[str, str]]:
    """(label, kind) of what replica ``i`` is in state ``s``; kind ``warn`` for the roles that
    explain anomalies (a deposed leader, a zombie, a stale version), ``role`` otherwise."""
    out: list[tuple[str, str]] = []
    if not _get(s, "alive", i):
        return [("crashed", "dead")]
    lead = _get(s, "leader_view", i)
    ep = _get(s, "epoch_view", i)
    if is_deposed(s, i):
        out.append((f"deposed leader (epoch {ep} < {_coord(s)['leader_epoch']})", "warn"))
    elif lags_epoch(s, i):
        out.append((f"leader at an old epoch ({ep} < {_coord(s)['leader_epoch']})", "warn"))
    elif lead == i:
        out.append(("leader", "role"))
    elif lead is not None and lead >= 0:
        out.append((f"follows {lead}", "role"))
    else:
        out.append(("alive, no leader known", "role"))
    why = is_zombie(s, i)
    if why:
        out.append((f"zombie ({why})", "warn"))
    if has_stale_version(s, i):
        out.append(
            ("stale partition epoch" if is_kraft(s) else "stale zkVersion: ISR writes fail", "warn")
        )
    if _get(s, "truncating", i):
        out.append(("truncating", "role"))
    return out


def _who_leads(s: State, i: int) -> str:
    """Broker ``i`` as a producer or consumer meets it: the leader, or a deposed one, or a
    zombie, said in the words that explain what follows."""
    ep = _get(s, "epoch_view", i)
    if is_deposed(s, i):
        return (
            f"broker {i}, a deposed leader still at epoch {ep} (the controller is at epoch "
            f"{_coord(s)['leader_epoch']})"
        )
    why = is_zombie(s, i)
    if why:
        return f"broker {i}, a zombie leader at epoch {ep} ({why})"
    if lags_epoch(s, i):
        return (
            f"broker {i}, the leader, still at epoch {ep} (the controller's write of epoch "
            f"{_coord(s)['leader_epoch']} has not reached it)"
        )
    if believes_it_leads(s, i):
        return f"broker {i}, the leader at epoch {ep}"
    return f"broker {i}"


def _gone_why(s: State, i: int) -> str:
    """Why the controller counts broker ``i`` gone."""
    if not _get(s, "alive", i):
        return "which crashed"
    why = is_zombie(s, i)
    return f"whose {why}" if why == "session expired" else ("which is fenced" if why else "")


# ---------------------------------------------------------------------------- consequences


def _new_pairs(b: State, a: State, var: str) -> list:
    before = [tuple(x) for x in b.get(var, [])]
    return [x for x in a.get(var, []) if tuple(x) not in before]


def outcomes(b: State, a: State) -> list[str]:
    """What clients learned in the step: acknowledgements, refusals (clauses)."""
    out = []
    acked = _new_pairs(b, a, "acked_all")
    if acked:
        out.append(
            ", ".join(record_at(o, r) for o, r in acked)
            + " acknowledged to the producer (acks=all)"
        )
    acked1 = _new_pairs(b, a, "acked_1")
    if acked1:
        out.append(
            ", ".join(record_at(o, r) for o, r in acked1) + " acknowledged to the producer (acks=1)"
        )
    refused = [x for x in a.get("refused", []) if x not in b.get("refused", [])]
    if refused:
        out.append(", ".join(f"record {x}" for x in refused) + " refused (NotEnoughReplicas)")
    return out


def _hw_moves(b: State, a: State, me: int | None = None) -> list[str]:
    """Every HW that moved: `leader 0's HW moves from 0 to 1`, `its HW ...` for ``me``'s;
    two that moved alike in one clause (`leader 0's HW and its own move from 0 to 1`)."""
    groups: dict[tuple, list[str]] = {}
    for k in sorted(a["hw"], key=lambda k: int(k[1:])):
        i = int(k[1:])
        if b["hw"].get(k) == a["hw"][k]:
            continue
        who = (
            "its" if i == me else (f"leader {i}'s" if believes_it_leads(a, i) else f"replica {i}'s")
        )
        groups.setdefault((b["hw"].get(k), a["hw"][k]), []).append(who)
    out = []
    for (x, y), whos in groups.items():
        whos.sort(key=lambda w: w == "its")  # the leader's first: it moves first, in Kafka
        if len(whos) == 1:
            out.append(f"{whos[0]} HW moves from {x} to {y}")
        else:
            rest = ["its own" if w == "its" else w.removesuffix("'s") + "'s" for w in whos[1:]]
            out.append(f"{whos[0]} HW and {' and '.join(rest)} move from {x} to {y}")
    return out


def _log_change(b: State, a: State, i: int, verb: str = "copies") -> str:
    """What happened to replica ``i``'s log: `copies record 1 at offset 0`, `truncates ...`."""
    bl, al = _log(b, i), _log(a, i)
    add = _appended(bl, al)
    if add:
        return f"{verb} {_records(add[1], add[0])}"
    cut = _dropped(bl, al)
    if cut:
        text = f"truncates its log to offset {len(al)}, dropping {_records(cut[1], cut[0])}"
        if len(al) > cut[0]:  # a truncation and a re-fetch in one step (not in this spec)
            text += f", then {verb} {_records(al[cut[0] :], cut[0])}"
        return text
    return ""


# ---------------------------------------------------------------------------- per action

Args = dict[str, Any]
Say = Callable[[Args, State, State], str]


def _elect(x: Args, b: State, a: State) -> str:
    c = _coord(a)
    lead, old = x["leader"], _coord(b)["leader"]
    text = f"The controller elects replica {lead} leader at epoch {c['leader_epoch']} (ISR {_isr(c['isr'])})"
    if old != lead and old >= 0:
        text += f" in place of broker {old}, {_gone_why(b, old) or 'which is gone'}"
    elif old == lead:
        text = text.replace("elects", "re-elects", 1)
    if lead not in _coord(b)["isr"]:
        text += f": an unclean election, replica {lead} was not in the ISR"
    lacks = _lacks(b, lead)
    if lacks:
        text += f"; replica {lead}'s log lacks {lacks}"
    return text


def _lacks(s: State, i: int) -> str:
    """What replica ``i``'s log lacks of what was acknowledged or committed elsewhere, or ''."""
    log = _log(s, i)
    for o, rec in s.get("acked_all", []):
        if o >= len(log) or log[o][0] != rec:
            return f"offset {o} (record {rec}, acknowledged to the producer)"
    for k, hw in s["hw"].items():
        other = s["log"][k]
        for o in range(min(hw, len(other))):
            if o >= len(log) or log[o] != other[o]:
                return f"offset {o} (record {other[o][0]}, committed on replica {k[1:]})"
    return ""


def _shrink(x: Args, b: State, a: State) -> str:
    j, c = x["replica"], _coord(a)
    why = _gone_why(b, j)
    return (
        f"The controller removes broker {j}{', ' + why + ',' if why else ''} from the ISR "
        f"(ISR {_isr(c['isr'])}, epoch {c['leader_epoch']})"
    )


def _move(x: Args, b: State, a: State) -> str:
    old, c = _coord(b)["leader"], _coord(a)
    return (
        f"The controller moves leadership from replica {old} to replica {x['leader']} at epoch "
        f"{c['leader_epoch']} (a preferred-replica election); broker {old} does not know yet"
    )


def _shutdown(x: Args, b: State, a: State) -> str:
    j, lead, c = x["replica"], x["leader"], _coord(a)
    text = f"Broker {j} asks for a controlled shutdown: the controller "
    if _coord(b)["leader"] == j:
        if lead < 0:
            return text + "finds no other ISR member to lead, so the partition has no leader"
        text += f"moves leadership to replica {lead} and "
    text += f"removes broker {j} from the ISR (ISR {_isr(c['isr'])}, epoch {c['leader_epoch']})"
    return text


def _failover(x: Args, b: State, a: State) -> str:
    if (a.get("deposed_controller") or {}).get("leader_epoch"):  # kraft
        return (
            "Another controller becomes active with every committed record; the deposed one "
            "still answers AlterPartitions from the state it had"
        )
    ce = a.get("controller_epoch")
    return (
        "A new controller takes over"
        + (f" (controller epoch {ce})" if ce is not None else "")
        + " and sends the partition state to the live brokers"
    )


def _become_leader(x: Args, b: State, a: State) -> str:
    i = x["replica"]
    text = (
        f"Broker {i} applies the LeaderAndIsr request and becomes the leader at epoch "
        f"{x['epoch']} (ISR {_isr(_get(a, 'isr_view', i, []))})"
    )
    if _get(b, "leader_view", i) == i:
        text = text.replace("becomes the leader", "stays the leader", 1)
    return text


def _become_follower(x: Args, b: State, a: State) -> str:
    i, lead = x["replica"], x["leader"]
    was = believes_it_leads(b, i)
    follows = f"follows replica {lead}" if lead >= 0 else "learns the partition has no leader"
    text = (
        f"Broker {i} learns it is no longer the leader: it {follows}"
        if was
        else f"Broker {i} applies the LeaderAndIsr request and {follows}"
    )
    text += f" at epoch {x['epoch']}"
    cut = _dropped(_log(b, i), _log(a, i))
    if cut:
        text += (
            f", truncating its log to its HW, {len(_log(a, i))}, and dropping "
            f"{_records(cut[1], cut[0])}"
        )
    if _get(a, "truncating", i):
        text += ", and will ask the leader where its log diverges before fetching"
    return text


def _apply_change(x: Args, b: State, a: State) -> str:
    i = x["replica"]
    return f"Leader {i} applies the controller's partition change: ISR {_isr(_get(a, 'isr_view', i, []))}"


def _lost_requests(b: State, a: State, i: int) -> list[dict]:
    after = a.get("leader_and_isr_in_flight", [])
    return [q for q in b.get("leader_and_isr_in_flight", []) if q["to"] == i and q not in after]


def _ignore_stale(x: Args, b: State, a: State) -> str:
    i = x["replica"]
    return (
        f"Broker {i} ignores a stale LeaderAndIsr request of epoch {x['epoch']} (it is at epoch "
        f"{_get(b, 'epoch_view', i)})"
    )


def _lose(x: Args, b: State, a: State) -> str:
    i = x["replica"]
    lost = _lost_requests(b, a, i) or [{"epoch": x["epoch"], "leader": None}]
    if len(lost) == 1:
        q = lost[0]
        what = f"The LeaderAndIsr request to broker {i} (epoch {q['epoch']}"
        lead = q.get("leader")
        what += ")" if lead is None else (f", leader {lead})" if lead >= 0 else ", no leader)")
        what += " is lost"
    else:
        epochs = ", ".join(str(q["epoch"]) for q in lost)
        what = f"The {len(lost)} LeaderAndIsr requests to broker {i} (epochs {epochs}) are lost"
    why = _gone_why(b, i)
    if why and not is_kraft(b):
        what += f": the controller drops the queue of broker {i}, {why}"
    what += f"; broker {i} never learns of epoch {max(q['epoch'] for q in lost)}"
    return what


def _append(i: int, record: Any, b: State, a: State, again: bool = False, acks: str = "") -> str:
    who = _who_leads(b, i)
    add = _appended(_log(b, i), _log(a, i))
    sends = "sends it again" if again else f"sends record {record}"
    if acks:
        sends += f" with acks={acks}"
    if again:
        text = f"The producer, without a reply for record {record}, {sends} to {who}"
    else:
        text = f"The producer {sends} to {who}"
    batch = _batch(a, record)
    if batch is not None:  # the idempotent producer: the batch's header
        text += f" (producer epoch {a['producer']['epoch']}, sequence {batch['sequence']})"
    if add:
        held = any(e[0] == record for e in _log(b, i))
        text += f", which appends it at offset {add[0]}" + (" (a duplicate)" if held else "")
        o = add[0]
        if o in _get(a, "pending_acks", i, []) and o not in _get(b, "pending_acks", i, []):
            text += "; it waits until the ISR has it (acks=all)"
    elif record in a.get("refused", []) and record not in b.get("refused", []):
        text += f", whose ISR {_isr(_get(b, 'isr_view', i, []))} is below min.insync.replicas"
    elif batch is not None and batch["answer"] in ("acknowledged", "waiting"):
        text += (
            ", which holds that batch (the same producer epoch and sequence, among the last five"
            " it keeps) and answers with its offset"
            + (" once the ISR has it" if batch["answer"] == "waiting" else "")
        )
    elif batch is not None:
        text += ", which answers OUT_OF_ORDER_SEQUENCE_NUMBER: it holds no such batch and expects "
        text += "another sequence"
        if batch["answer"] == "out_of_order_sequence":
            text += "; the producer expects this batch next"
    elif again:
        text += ", which already holds it (idempotence) and answers with its offset"
    return text


def _batch(s: State, record: Any) -> dict | None:
    """--idempotence: the producer's batch in flight of ``record``, if any."""
    for x in s.get("producer", {}).get("in_flight", []):
        if x["record"] == record:
            return x
    return None


def _complete_batch(x: Args, b: State, a: State) -> str:
    record = x["record"]
    seq = (_batch(b, record) or {}).get("sequence")
    return (
        f"The producer takes in the acknowledgement of record {record} (sequence {seq}): the"
        " batch is done"
    )


def _bump_epoch(x: Args, b: State, a: State) -> str:
    record = x["record"]
    p = a.get("producer", {})
    seqs = ", ".join(
        f"record {y['record']} sequence {y['sequence']}" for y in p.get("in_flight", [])
    )
    text = (
        f"The producer takes in the OUT_OF_ORDER_SEQUENCE_NUMBER answer for record {record}, the"
        f" batch it expects next, bumps its producer epoch to {p.get('epoch')} and rewrites its"
        f" batches in flight from sequence 0 ({seqs})"
    )
    before = {y["record"]: y for y in b.get("producer", {}).get("in_flight", [])}
    lost = [
        y["record"]
        for y in p.get("in_flight", [])
        if y["record"] != record
        and before.get(y["record"], {}).get("answer") in ("acknowledged", "waiting")
        and y["answer"] == "none"
    ]
    if lost:
        broker = before[lost[0]].get("broker")
        text += (
            f"; broker {broker}'s answers come in order on one connection, so its answer to "
            + ", ".join(f"record {r}" for r in lost)
            + ", not taken in before, was lost"
        )
    return text


def _send(x: Args, b: State, a: State) -> str:
    return _append(x["leader"], x["record"], b, a)


def _send_acks(x: Args, b: State, a: State) -> str:
    acks = {-1: "all"}.get(x.get("acks"), x.get("acks"))
    return _append(x["leader"], x["record"], b, a, acks=str(acks))


def _retry(x: Args, b: State, a: State) -> str:
    return _append(x["leader"], x["record"], b, a, again=True)


def _fetch(x: Args, b: State, a: State) -> str:
    f, lead = x["follower"], x["leader"]
    change = _log_change(b, a, f)
    if change.startswith("truncates"):
        text = (
            f"Follower {f} fetches from leader {lead} past its log end (out of range) and "
            + change.replace(
                "truncates its log to offset", "truncates its log to the leader's LEO,", 1
            )
        )
    elif change:
        text = f"Follower {f} fetches from leader {lead} and {change}"
    else:
        text = f"Follower {f} fetches from leader {lead} and finds nothing new to copy"
    differ = _first_difference(_log(a, f), _log(a, lead))
    if differ:  # the anomaly a fetch by offset alone cannot see
        text += f", though its log differs from the leader's at {differ}"
    moves = _hw_moves(b, a, f)
    return text + ("; " + "; ".join(moves) if moves else "")


def _first_difference(mine: list, theirs: list) -> str:
    for o in range(min(len(mine), len(theirs))):
        if mine[o] != theirs[o]:
            return (
                f"offset {o} (record {mine[o][0]} of epoch {mine[o][1]} against record "
                f"{theirs[o][0]} of epoch {theirs[o][1]})"
            )
    return ""


def _truncate(x: Args, b: State, a: State) -> str:
    f, lead = x["follower"], x["leader"]
    text = f"Follower {f} asks leader {lead} where its epoch ends (OffsetsForLeaderEpoch)"
    cut = _dropped(_log(b, f), _log(a, f))
    if cut:
        return (
            text + f" and truncates its log to offset {len(_log(a, f))}, dropping "
            f"{_records(cut[1], cut[0])}"
        )
    return text + " and keeps its whole log"


def _send_fetch(x: Args, b: State, a: State) -> str:
    f, lead = x["follower"], x["leader"]
    return f"Follower {f} sends a fetch to broker {lead} at offset {len(_log(b, f))}, its LEO"


def _handle_fetch(x: Args, b: State, a: State) -> str:
    lead, f = x["leader"], x["follower"]
    text = f"Broker {lead} answers follower {f}'s fetch"
    before = b.get("fetch_responses", [])
    new = [p for p in a.get("fetch_responses", []) if p not in before and p["follower"] == f]
    if not new:
        text += " with an error (not the leader at that epoch, or a stale broker epoch)"
    else:
        p = new[0]
        if p.get("out_of_range"):
            text += (
                f" with OFFSET_OUT_OF_RANGE: offset {p['fetch_offset']} is outside its log"
                f" (it starts at {p.get('log_start', 0)})"
            )
        elif p.get("diverging"):
            ep, end = p["diverging"][:2]
            text += f" with a diverging epoch: its epoch {ep} ends at offset {end}"
        elif p.get("records"):
            text += f" with {_records(p['records'], p['fetch_offset'])} and its HW, {p['hw']}"
        else:
            text += f" with nothing new but its HW, {p['hw']}"
    moves = _hw_moves(b, a)
    return text + ("; " + "; ".join(moves) if moves else "")


def _handle_response(x: Args, b: State, a: State) -> str:
    f, lead = x["follower"], x["leader"]
    change = _log_change(b, a, f, verb="appends")
    text = f"Follower {f} takes broker {lead}'s fetch response"
    if change:
        text += f" and {change}"
    moves = _hw_moves(b, a, f)
    start = _get(a, "log_start", f)
    if start is not None and start != _get(b, "log_start", f):
        moves.append(f"its log now starts at offset {start}, as the leader's")
    if not change and not moves:
        return text + " (it changes nothing)"
    return text + ("; " + "; ".join(moves) if moves else "")


def _handle_out_of_range(x: Args, b: State, a: State) -> str:
    f, lead = x["follower"], x["leader"]
    text = f"Follower {f} takes broker {lead}'s OFFSET_OUT_OF_RANGE"
    start, before = _get(a, "log_start", f), _get(b, "log_start", f)
    change = _log_change(b, a, f, verb="appends")
    if start is not None and start > (before or 0) and start == len(_log(a, f)):
        text += (
            f", asks the leader for its offsets and, its log ending below the leader's log "
            f"start, drops its log and starts again at offset {start}"
        )
        hw = _get(a, "hw", f)
        if hw is not None and hw < start:
            text += f", its HW left at {hw} (below its log start: KAFKA-9491)"
        return text
    if change:
        return text + f", asks the leader for its log end and {change}"
    return text + " and fetches again (it changes nothing)"


def _read_in_truncation_window(x: Args, b: State, a: State) -> str:
    f, lead = x["follower"], x["leader"]
    shown = _new_pairs(b, a, "shown_to_consumers")
    what = ", ".join(record_at(o, r) for o, r in shown) or "nothing new"
    change = _log_change(b, a, f, verb="appends")
    return (
        f"Follower {f} takes broker {lead}'s diverging fetch response HW first (KAFKA-14704): "
        f"its HW covers records it is about to drop, and a consumer reading from it in that "
        f"moment is shown {what}; then it {change or 'truncates'}"
    )


def _reset_to_start(x: Args, b: State, a: State) -> str:
    f, lead = x["follower"], x["leader"]
    start = _get(a, "log_start", f, len(_log(a, f)))
    return (
        f"Follower {f}'s fetch offset is below leader {lead}'s log start: it drops its log and "
        f"starts again at offset {start}"
    )


def _leader_isr(verb: str) -> Say:
    def say(x: Args, b: State, a: State) -> str:
        lead, f = x["leader"], x["follower"]
        text = f"Leader {lead} {verb.format(f=f)} (ISR {_isr(_get(a, 'isr_view', lead, []))})"
        if _get(a, "isr_view", lead) == _get(b, "isr_view", lead):
            text += ", but its write fails: its zkVersion is stale"
        moves = _hw_moves(b, a, lead)
        return text + ("; " + "; ".join(moves) if moves else "")

    return say


def _send_alter(x: Args, b: State, a: State) -> str:
    lead, f = x["leader"], x["follower"]
    remove = f in _get(b, "isr_view", lead, [])
    what = f"remove follower {f} from" if remove else f"add follower {f} to"
    return f"Leader {lead} asks the controller (AlterPartition) to {what} the ISR"


def _handle_alter(x: Args, b: State, a: State) -> str:
    lead = x["leader"]
    if _coord(a)["isr"] != _coord(b)["isr"]:
        return (
            f"The controller accepts leader {lead}'s AlterPartition: ISR {_isr(_coord(a)['isr'])}"
        )
    if _pending_alter(a, lead):
        return (
            f"The controller rejects leader {lead}'s AlterPartition as stale; leader {lead} "
            "keeps the change pending until newer partition state reaches it"
        )
    return f"The controller rejects leader {lead}'s AlterPartition (made from a stale state)"


def _pending_alter(d: State, lead: Any) -> bool:
    return any(p.get("leader") == lead and p.get("answered") for p in d.get("alter_partition", []))


def _lose_alter_answer(x: Args, b: State, a: State) -> str:
    lead = x["leader"]
    return (
        f"The controller records leader {lead}'s AlterPartition (ISR {_isr(_coord(a)['isr'])}), "
        f"but its answer is lost (a failover or a dropped connection): leader {lead} re-sends "
        "the request, now stale"
    )


def _deposed_handle_alter(x: Args, b: State, a: State) -> str:
    lead = x["leader"]
    return (
        f"The deposed controller, behind leader {lead}, refuses its AlterPartition as fenced; "
        f"leader {lead} takes that as final and keeps the ISR change pending, waiting for "
        "metadata that will not come"
    )


def _clear_pending(x: Args, b: State, a: State) -> str:
    lead = x["leader"]
    return f"Newer partition state overrides leader {lead}'s pending ISR change"


def _complete_recovery(x: Args, b: State, a: State) -> str:
    lead = x["leader"]
    return (
        f"Leader {lead} has recovered after its unclean election and says so in an"
        " AlterPartition: the controller marks the partition RECOVERED (KIP-704)"
    )


def _set_min_isr(x: Args, b: State, a: State) -> str:
    text = f"The operator sets min.insync.replicas to {x['min_isr']}"
    if b.get("elr") and not a.get("elr"):
        text += "; the controller clears the ELR in the same batch (KAFKA-16540's fix)"
    elif a.get("elr"):
        text += f"; the ELR stays {_isr(a['elr'])}"
    return text


def _members(mask: int) -> list[int]:
    return [i for i in range(mask.bit_length()) if mask >> i & 1]


def _reassignment_outcome(b: State, a: State) -> str:
    """KIP-455: what the controller's record did to the replica set, ISR and leader."""
    cb, ca = _coord(b), _coord(a)
    if a.get("removing_replicas") or a.get("adding_replicas"):
        text = (
            f"the replicas are now {_isr(a['replicas'])}, adding {_isr(a['adding_replicas'])},"
            f" removing {_isr(a['removing_replicas'])}"
        )
    else:
        text = f"the reassignment completes: the replicas are {_isr(a.get('replicas', []))}"
    if ca["isr"] != cb["isr"]:
        text += f", the ISR {_isr(ca['isr'])}"
    if ca["leader"] != cb["leader"]:
        text += f", broker {ca['leader']} is elected leader"
    if ca["leader_epoch"] != cb["leader_epoch"]:
        text += f" (leader epoch {ca['leader_epoch']})"
    return text


def _reassign(x: Args, b: State, a: State) -> str:
    return (
        f"The operator reassigns the partition to brokers {_isr(_members(x['target']))}: "
        + _reassignment_outcome(b, a)
    )


def _complete_reassignment(x: Args, b: State, a: State) -> str:
    """ZooKeeper era: phase B (spec/actions/zk_reassignment.py)."""
    return (
        "The ISR holds the target, so the controller completes the reassignment (the new"
        " replicas with the old ISR first, then each removed one out of the ISR by its own"
        " write): " + _reassignment_outcome(b, a)
    )


def _cancel_reassignment(x: Args, b: State, a: State) -> str:
    return "The operator cancels the reassignment: " + _reassignment_outcome(b, a)


def _stop_replica(x: Args, b: State, a: State) -> str:
    i = x["replica"]
    text = f"Broker {i}, no longer a replica, applies the change: it stops its replica"
    if _log(b, i):
        text += f" and deletes its log ({_plural(len(_log(b, i)), 'record')})"
    if believes_it_leads(b, i):
        text += " (it led in its own view until now)"
    return text


def _consume(x: Args, b: State, a: State) -> str:
    i = x.get("leader", x.get("replica"))
    shown = _new_pairs(b, a, "shown_to_consumers")
    what = ", ".join(record_at(o, r) for o, r in shown) or "nothing new"
    return f"A consumer reads {what} from {_who_leads(b, i)}, below its HW {_get(b, 'hw', i)}"


def _reset_offset(x: Args, b: State, a: State) -> str:
    lead = x["leader"]
    return (
        f"The consumer's position is past broker {lead}'s log end: it resets to broker {lead}'s "
        f"HW, {a.get('consumer_position', _get(b, 'hw', lead))}"
    )


def _checkpoint(x: Args, b: State, a: State) -> str:
    i = x["replica"]
    return f"Broker {i} writes its HW, {_get(a, 'hw_checkpoint', i)}, to its checkpoint file"


def _checkpoint_cache(x: Args, b: State, a: State) -> str:
    return f"Broker {x['replica']} writes its leader-epoch cache to its checkpoint file"


def _flush(x: Args, b: State, a: State) -> str:
    i = x["replica"]
    return f"Broker {i} flushes (fsyncs) its log to disk up to offset {len(_log(a, i))}"


def _delete_segment(x: Args, b: State, a: State) -> str:
    i = x["replica"]
    return (
        f"Retention deletes the oldest record of broker {i}: its log now starts at offset "
        f"{_get(a, 'log_start', i)}"
    )


def _delete_records(x: Args, b: State, a: State) -> str:
    i, offset = x["leader"], x["offset"]
    return (
        f"The operator's DeleteRecords reaches broker {i}, which leads in its own view: its log "
        f"now starts at offset {offset} (at most its HW, {_get(b, 'hw', i)})"
    )


def _crash(x: Args, b: State, a: State) -> str:
    i = x["replica"]
    text = f"Broker {i}" + (", the leader," if believes_it_leads(b, i) else "") + " crashes"
    cut = _dropped(_log(b, i), _log(a, i))
    if cut:
        text += f" and loses its unflushed {_records(cut[1], cut[0])}"
        if i in _coord(a)["isr"]:
            text += ", while the controller still counts it in the ISR"
    hw = _get(b, "hw", i)
    if hw:  # the HW in memory is what a restart cannot recover (the KIP-101 window)
        text += f": its HW in memory, {hw}, is lost, while its log and its HW checkpoint, "
    else:
        text += ": its log and its HW checkpoint, "
    text += f"{_get(a, 'hw_checkpoint', i)}, survive"
    return text


def _restart(x: Args, b: State, a: State) -> str:
    i = x["replica"]
    text = f"Broker {i} restarts and reads its HW checkpoint, {_get(a, 'hw_checkpoint', i)}"
    cut = _dropped(_log(b, i), _log(a, i))
    if cut:
        text += f", truncating its log to it and dropping {_records(cut[1], cut[0])}"
        if i in _coord(a)["isr"]:
            text += ", while the controller still counts it in the ISR"
    sent = [q for q in a.get("leader_and_isr_in_flight", []) if q["to"] == i]
    before = b.get("leader_and_isr_in_flight", [])
    if any(q not in before for q in sent):
        text += "; the controller sends it the partition state"
    return text


def _register(x: Args, b: State, a: State) -> str:
    i = x["replica"]
    be = _get(a, "broker_epoch", i)
    return (
        f"Broker {i} registers with the controller"
        + (f" (new broker epoch {be})" if be is not None else "")
        + " and is unfenced"
    )


def _fence(x: Args, b: State, a: State) -> str:
    i = x["replica"]
    text = f"The controller fences broker {i}, whose heartbeats stopped"
    cb, ca = _coord(b), _coord(a)
    if ca["leader"] != cb["leader"]:
        text += (
            f", and elects replica {ca['leader']} leader at epoch {ca['leader_epoch']}"
            if ca["leader"] >= 0
            else ", and finds no leader for the partition"
        )
    elif ca["isr"] != cb["isr"]:
        text += f", and removes it from the ISR (ISR {_isr(ca['isr'])})"
    if _get(a, "alive", i):
        text += f"; broker {i} runs on, a zombie"
    return text


def _unfence(x: Args, b: State, a: State) -> str:
    i = x["replica"]
    return f"Broker {i}'s heartbeats get through again: the controller unfences it"


def _expire(x: Args, b: State, a: State) -> str:
    i = x["replica"]
    text = f"Broker {i}'s ZooKeeper session expires while it runs on"
    if believes_it_leads(a, i):
        text += f": a zombie that still believes it leads at epoch {_get(a, 'epoch_view', i)}"
    else:
        text += ": a zombie"
    return text


def _renew(x: Args, b: State, a: State) -> str:
    i = x["replica"]
    text = f"Broker {i}, whose session had expired, registers a new session"
    sent = [q for q in a.get("leader_and_isr_in_flight", []) if q["to"] == i]
    if any(q not in b.get("leader_and_isr_in_flight", []) for q in sent):
        text += "; the controller sends it the partition state"
    return text


def _stutter(x: Args, b: State, a: State) -> str:
    return (
        "Nothing more happens: no step that fairness requires is enabled, so the state stays "
        "as it is for ever"
    )


SENTENCES: dict[str, Say] = {
    "Stutter": _stutter,  # the last step of a lasso that ends stuttering (checker/liveness.py)
    "ControllerElectLeader": _elect,
    "ControllerShrinkIsr": _shrink,
    "ControllerMoveLeader": _move,
    "ControllerShutdownBroker": _shutdown,
    "ControllerFailover": _failover,
    "BrokerBecomeLeader": _become_leader,
    "BrokerBecomeFollower": _become_follower,
    "BrokerApplyPartitionChange": _apply_change,
    "BrokerIgnoreStaleRequest": _ignore_stale,
    "NetworkLoseLeaderAndIsr": _lose,
    "ProducerSend": _send,
    "ProducerSendChoosingAcks": _send_acks,
    "ProducerRetry": _retry,
    "ProducerCompleteBatch": _complete_batch,
    "ProducerBumpEpoch": _bump_epoch,
    "FollowerFetch": _fetch,
    "FollowerTruncate": _truncate,
    "FollowerSendFetch": _send_fetch,
    "LeaderHandleFetch": _handle_fetch,
    "FollowerHandleFetchResponse": _handle_response,
    "ConsumerFetchDuringTruncation": _read_in_truncation_window,
    "FollowerResetToLogStart": _reset_to_start,
    "FollowerHandleOffsetOutOfRange": _handle_out_of_range,
    "LeaderShrinkIsr": _leader_isr("removes follower {f}, which lags, from the ISR"),
    "LeaderExpandIsr": _leader_isr("adds follower {f}, caught up, back to the ISR"),
    "LeaderSendAlterPartition": _send_alter,
    "ControllerHandleAlterPartition": _handle_alter,
    "NetworkLoseAlterPartitionResponse": _lose_alter_answer,
    "DeposedControllerHandleAlterPartition": _deposed_handle_alter,
    "LeaderClearPendingAlterPartition": _clear_pending,
    "ConsumerFetch": _consume,
    "ConsumerResetOffset": _reset_offset,
    "BrokerCheckpointHw": _checkpoint,
    "BrokerCheckpointEpochCache": _checkpoint_cache,
    "BrokerFlush": _flush,
    "BrokerDeleteOldSegment": _delete_segment,
    "BrokerCrash": _crash,
    "BrokerRestart": _restart,
    "BrokerRegister": _register,
    "ControllerFenceBroker": _fence,
    "BrokerUnfence": _unfence,
    "CoordinationExpireSession": _expire,
    "BrokerRenewSession": _renew,
    "LeaderCompleteRecovery": _complete_recovery,
    "OperatorSetMinIsr": _set_min_isr,
    "LeaderDeleteRecords": _delete_records,
    "OperatorReassignPartition": _reassign,
    "OperatorCancelReassignment": _cancel_reassignment,
    "ControllerCompleteReassignment": _complete_reassignment,
    "BrokerStopReplica": _stop_replica,
}

# Positional arguments (an ITF file, an older NDJSON) by the spec's parameter names.
PARAMS: dict[str, tuple[str, ...]] = {
    "ControllerElectLeader": ("leader",),
    "ControllerShrinkIsr": ("replica",),
    "ControllerMoveLeader": ("leader",),
    "ControllerShutdownBroker": ("replica", "leader"),
    "BrokerBecomeLeader": ("replica", "epoch"),
    "BrokerBecomeFollower": ("replica", "leader", "epoch"),
    "BrokerIgnoreStaleRequest": ("replica", "epoch"),
    "NetworkLoseLeaderAndIsr": ("replica", "epoch"),
    "ProducerSend": ("leader", "record"),
    "ProducerSendChoosingAcks": ("leader", "record", "acks"),
    "ProducerRetry": ("leader", "record"),
    "ProducerCompleteBatch": ("record",),
    "ProducerBumpEpoch": ("record",),
    "ConsumerFetch": ("leader",),
    "ConsumerResetOffset": ("leader",),
    "LeaderHandleFetch": ("leader", "follower"),
    "LeaderShrinkIsr": ("leader", "follower"),
    "LeaderExpandIsr": ("leader", "follower"),
    "LeaderSendAlterPartition": ("leader", "follower"),
    "ControllerHandleAlterPartition": ("leader",),
    "NetworkLoseAlterPartitionResponse": ("leader",),
    "DeposedControllerHandleAlterPartition": ("leader",),
    "LeaderClearPendingAlterPartition": ("leader",),
    "LeaderDeleteRecords": ("leader", "offset"),
    "OperatorReassignPartition": ("target",),
    "OperatorCancelReassignment": (),
    "ControllerCompleteReassignment": (),
    "BrokerStopReplica": ("replica",),
}
_FOLLOWER_FIRST = (
    "FollowerFetch",
    "FollowerTruncate",
    "FollowerSendFetch",
    "FollowerHandleFetchResponse",
    "FollowerResetToLogStart",
    "FollowerHandleOffsetOutOfRange",
    "ConsumerFetchDuringTruncation",
)


def _named(action: str, args: Any) -> Args:
    if isinstance(args, dict):
        return args
    args = list(args or [])
    params = PARAMS.get(action) or (
        ("follower", "leader") if action in _FOLLOWER_FIRST else ("replica",)
    )
    return dict(zip(params, args, strict=False))


def call(action: str, args: Any) -> str:
    """``Action(k=v, ...)``: the step as the spec names it."""
    if isinstance(args, dict):
        inner = ", ".join(f"{k}={v}" for k, v in args.items())
    else:
        inner = ", ".join(str(v) for v in args or [])
    return f"{action}({inner})"


def changed_vars(b: State, a: State) -> list[str]:
    """The variables a step changed, per replica where they are per replica: `log of replica
    0`, `coordination`."""
    out = []
    for var in a:
        if b.get(var) == a[var]:
            continue
        if isinstance(a[var], dict) and all(k[:1] == "r" and k[1:].isdigit() for k in a[var]):
            who = [k[1:] for k in a[var] if b.get(var, {}).get(k) != a[var][k]]
            out.append(f"{var.replace('_', ' ')} of replica {', '.join(who)}")
        else:
            out.append(var.replace("_", " "))
    return out


def fallback(action: str, args: Any, b: State, a: State) -> str:
    """The sentence of an action this module cannot tell: its name and what it changed."""
    what = changed_vars(b, a)
    return (
        f"{call(action, args)}, an action this page does not describe, "
        + (f"changes {'; '.join(what)}" if what else "changes nothing")
        + "."
    )


def sentence(action: str, args: Any, before: State, after: State) -> str:
    """One plain sentence for the step ``action(args)`` from ``before`` to ``after``."""
    say = SENTENCES.get(action)
    if say is None:
        return fallback(action, args, before, after)
    try:
        text = say(_named(action, args), before, after)
        extra = outcomes(before, after)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError):
        # a file from another spec version, or hand-edited: the step is still told
        return fallback(action, args, before, after)
    if extra and not any(e in text for e in extra):
        text += "; " + "; ".join(extra)
    return text[0].upper() + text[1:] + "."


def opening(s: State) -> str:
    """The initial state in one sentence: who leads, the ISR, what the logs hold."""
    c = _coord(s)
    text = (
        f"At the start, replica {c['leader']} leads at epoch {c['leader_epoch']} with ISR "
        f"{_isr(c['isr'])}"
        if c["leader"] >= 0
        else "At the start, the partition has no leader"
    )
    if all(not v for v in s["log"].values()):
        return text + "; every log is empty."
    return text + "."
