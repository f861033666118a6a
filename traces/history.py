"""A Jepsen-style checker of client-operation histories (issue 24, item 5; FORMAT.md, "Client
history"; schema/history.schema.json).

A history is what the clients of a Kafka-like log saw: each ``send`` and ``poll`` recorded as
an ``invoke`` and its completion (``ok``, ``fail`` definite, ``info`` indeterminate), in the
order they happened. Nothing of the brokers is needed, so the same checker judges the reference
implementation, Apache Kafka, or anything an adapter can drive. The checks follow
jepsen.tests.kafka (docs: /work/shared/KAFKA.md, "Jepsen's checks") and the project's
requirements (docs/PROTOCOL.md):

* **R5 (commit and visibility)**: consumers are served committed records only, below the HW,
  and what they were shown never changes: no inconsistent offsets (one offset, two records), no
  phantom reads (a record nobody sent), no aborted reads (a record whose send definitely
  failed), no read at or above the HW the poll reported, no reordering or gap inside one poll,
  and (optionally) reads of one consumer that never go back.
* **R6 (acks)**: an acks=all acknowledgement means the record is committed; an acks=1
  acknowledgement only that the leader appended it, so its loss when the leader fails is
  within Kafka's contract (``acks1_lost``, reported, not a violation); a retry after a lost
  answer may store a record twice unless the producer is idempotent (duplicates are a violation
  only when the header declares ``idempotent``).
* **R17 (the guarantee)**: no acknowledged acks=all record is lost while an ISR member survives:
  a **lost write** is an acks=all send acknowledged at offset o where polls that began after
  the acknowledgement read offset o or beyond, and no poll ever returned that record at o.

``load``/``loads``/``parse`` read and check a history (bad input: ``HistoryError``, one line),
``check`` runs every check and returns a ``HistoryResult`` (counts, first examples, verdict,
``to_json``, ``summary``). Pure Python, no I/O besides the loader's.
"""

from __future__ import annotations

import time
from bisect import bisect_left, bisect_right
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .format import TraceFormatError, check_values, load_json_line, ndjson_lines, parse_document
from .schemacheck import first_error

FORMAT = "isr-history"
VERSION = 1
SCHEMA_PATH = Path(__file__).parent / "schema" / "history.schema.json"
MAX_EXAMPLES = 5  # examples kept per anomaly class
HEADER_KEYS = ("acks", "idempotent", "monotonic_reads")

# The anomaly classes, in report order, with what each flags (the verdict's rules: VIOLATIONS).
CLASSES: dict[str, str] = {
    "lost": "acks=all send acknowledged at offset o, polls begun after the ack read o or "
    "beyond, and no poll ever returned that record at o (R6, R17)",
    "acks1_lost": "the same for an acks=1 send: allowed when a leader fails (R6), not a violation",
    "lost_power": "the same for an acks=all send acknowledged before a power failure (a header "
    "fault `power B`): Kafka acknowledges before the log is fsynced, so the tail a power failure "
    "takes may hold it (R14); reported, not a violation",
    "duplicates": "one record id read at two or more (partition, offset) positions (R6, R15); "
    "a violation only when the header declares idempotent",
    "inconsistent_offsets": "one (partition, offset) read with two or more different records (R5)",
    "phantom_reads": "a poll returned a record id no send invoked (R5)",
    "aborted_reads": "a poll returned a record whose every send definitely failed (R5, R6)",
    "above_hw_reads": "a poll returned a record at or above the HW it reported (R5)",
    "reorders": "offsets not strictly increasing inside one poll (R5)",
    "gaps": "a poll jumped over an offset (from its from_offset, or between two records) that "
    "another poll read (R5)",
    "non_monotonic": "one consumer process: a poll from the same from_offset as an earlier poll "
    "of that partition reaching a lower offset, or an offset read with another record than it "
    "read before (R5); a violation only when the header declares monotonic_reads",
}
ALWAYS_VIOLATIONS = (
    "lost",
    "inconsistent_offsets",
    "phantom_reads",
    "aborted_reads",
    "above_hw_reads",
    "reorders",
    "gaps",
)


class HistoryError(ValueError):
    """A history this checker cannot read: ``str()`` is one line, ``WHERE: FIELD: problem``."""


@dataclass
class History:
    """A parsed history: the header's settings and the ops in history order (``value`` and the
    values of ``records`` as text: ``1`` and ``"1"`` are the same record id)."""

    header: dict[str, Any]
    ops: list[dict[str, Any]]
    name: str = "history"


# ---- reading ------------------------------------------------------------------------------
def _schema_error(obj: Any, kind: str) -> str | None:
    errs = first_error(obj, kind, SCHEMA_PATH)
    return errs[0] if errs else None


def load(path: str | Path) -> History:
    """A history file: NDJSON (an optional header line, then one op per line) or one JSON
    document (a list of ops, or an object holding the header's keys and ``ops``)."""
    p = Path(path)
    try:
        with open(p, "rb") as f:
            first = f.read(4096).lstrip()
    except OSError as e:
        raise HistoryError(f"{path}: cannot read: {e.strerror}") from None
    if not first:
        raise HistoryError(f"{path}: empty file")
    try:
        if first[:1] == b"[" or _one_document(p):
            return loads(p.read_text(encoding="utf-8"), str(path))
        lines, where = [], []
        for ln, raw in ndjson_lines(p, keep_torn=True):
            # bounds (depth, numbers) are checked with the schema, once (parse)
            lines.append(load_json_line(raw, f"{path}:{ln}", bounded=False))
            where.append(f"{path}:{ln}")
    except (TraceFormatError, UnicodeDecodeError) as e:
        raise HistoryError(
            str(e) if isinstance(e, TraceFormatError) else f"{path}: not UTF-8"
        ) from None
    except OSError as e:
        raise HistoryError(f"{path}: cannot read: {e.strerror}") from None
    return _from_lines(lines, str(path), where)


def _one_document(p: Path) -> bool:
    """A pretty-printed JSON object (``{"format": ..., "ops": [...]}``) rather than NDJSON: its
    first line is not a whole JSON value."""
    with open(p, "rb") as f:
        line = f.readline(1 << 20).strip()
    try:
        load_json_line(line, str(p), bounded=False)
    except TraceFormatError:
        return True
    return False


def loads(text: str, name: str = "history") -> History:
    """A history from text: a JSON document (list of ops, or object with ``ops``) or NDJSON."""
    stripped = text.strip()
    if not stripped:
        raise HistoryError(f"{name}: empty history")
    try:
        doc = parse_document(stripped)
        check_values(doc, name)
    except ValueError as e:  # JSONDecodeError: NDJSON (or not JSON at all)
        if isinstance(e, TraceFormatError):
            raise HistoryError(str(e)) from None
        doc = None
    if isinstance(doc, list):
        return parse({}, doc, name)
    if isinstance(doc, dict) and "ops" in doc:
        head = {k: v for k, v in doc.items() if k != "ops"}
        return parse(head, doc["ops"], name)
    lines, where = [], []
    for ln, raw in enumerate(text.splitlines(), 1):
        if raw.strip():
            try:
                lines.append(load_json_line(raw, f"{name}:{ln}"))
            except TraceFormatError as e:
                raise HistoryError(str(e)) from None
            where.append(f"{name}:{ln}")
    return _from_lines(lines, name, where)


def _from_lines(lines: list[Any], name: str, where: list[str]) -> History:
    head: dict[str, Any] = {}
    if lines and isinstance(lines[0], dict) and "ops" in lines[0]:  # a document on one line
        if len(lines) > 1:
            raise HistoryError(f"{where[1]}: a line after a document holding its ops")
        doc = lines[0]
        return parse({k: v for k, v in doc.items() if k != "ops"}, doc["ops"], name)
    if lines and isinstance(lines[0], dict) and "format" in lines[0]:
        head, lines, where = lines[0], lines[1:], where[1:]
    return parse(head, lines, name, where)


def parse(
    header: dict[str, Any], ops: Any, name: str = "history", where: list[str] | None = None
) -> History:
    """Check a header and a list of ops against the format (schema, then what relates the
    ops: every completion closes an open invoke of its process, ``f``, partition and, for a
    send, record id; a send's ok carries its offset, a poll's ok its records) and return the
    normalized History. Raises HistoryError naming the op (``NAME:LINE`` or ``ops[i]``)."""
    if not isinstance(header, dict):
        raise HistoryError(f"{name}: header: not an object")
    err = _schema_error(header, "header")
    if err:
        raise HistoryError(f"{name}: header: {err}")
    if not isinstance(ops, list):
        raise HistoryError(f"{name}: ops: not a list")
    out: list[dict[str, Any]] = []
    open_: dict[tuple[Any, ...], list[int]] = defaultdict(list)
    for i, op in enumerate(ops):
        at = where[i] if where else f"{name}: ops[{i}]"
        err = _schema_error(op, "op")
        if err:
            raise HistoryError(f"{at}: {err}")
        o = dict(op)
        o.pop("_invoke", None)  # the reader's own annotations, never the file's
        o.pop("_done", None)
        f, ty = o["f"], o["type"]
        if "value" in o:
            o["value"] = str(o["value"])
        if f == "send" and "value" not in o:
            raise HistoryError(f"{at}: value: a send names its record id (invoke and completion)")
        key = (_proc(o["process"]), f, o["partition"], o.get("value") if f == "send" else None)
        if ty == "invoke":
            open_[key].append(i)
        else:
            waiting = open_.get(key)
            if not waiting:
                what = f"send of {o['value']!r}" if f == "send" else "poll"
                raise HistoryError(
                    f"{at}: type: {ty} without an open invoke ({what} by process "
                    f"{o['process']!r} on partition {o['partition']})"
                )
            o["_invoke"] = waiting.pop(0)
            out[o["_invoke"]]["_done"] = i
            if ty == "ok" and f == "send" and "offset" not in o:
                raise HistoryError(f"{at}: offset: an ok send carries its offset")
            if ty == "ok" and f == "poll":
                if "records" not in o:
                    raise HistoryError(f"{at}: records: an ok poll carries its records")
                o["records"] = [
                    (r[0], str(r[1]), r[2] if len(r) > 2 else None) for r in o["records"]
                ]
        if ty != "ok" and f == "poll" and o.get("records"):
            raise HistoryError(f"{at}: records: only an ok poll returns records")
        out.append(o)
    return History(dict(header), out, name)


def _proc(p: Any) -> str:
    return str(p)


# ---- the result ---------------------------------------------------------------------------
@dataclass
class Anomaly:
    """One class of anomaly: how many, and the first few examples."""

    count: int = 0
    examples: list[dict[str, Any]] = field(default_factory=list)

    def add(self, example: dict[str, Any]) -> None:
        self.count += 1
        if len(self.examples) < MAX_EXAMPLES:
            self.examples.append(example)

    def to_json(self) -> dict[str, Any]:
        return {"count": self.count, "examples": self.examples}


@dataclass
class HistoryResult:
    """The checker's verdict on one history: per class of CLASSES a count and examples (op
    indices count from 0 in history order, the header not counted), the statistics, and the
    indeterminate sends counted apart (``info_read``: later read, so written; ``info_unread``:
    never read, not a loss)."""

    name: str
    idempotent: bool = False
    monotonic_reads: bool = False
    anomalies: dict[str, Anomaly] = field(default_factory=lambda: {k: Anomaly() for k in CLASSES})
    stats: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    # every lost write's op index (its ok completion), per class (lost, acks1_lost): the
    # examples keep the first few only; the timeline (cli/timeline.py) marks them all
    lost_ops: dict[str, list[int]] = field(
        default_factory=lambda: {"lost": [], "acks1_lost": [], "lost_power": []}
    )

    @property
    def violations(self) -> dict[str, int]:
        """The classes that make the history invalid, with their counts (zero counts left out)."""
        rules = list(ALWAYS_VIOLATIONS)
        if self.idempotent:
            rules.append("duplicates")
        if self.monotonic_reads:
            rules.append("non_monotonic")
        return {
            k: self.anomalies[k].count for k in CLASSES if k in rules and self.anomalies[k].count
        }

    @property
    def valid(self) -> bool:
        return not self.violations

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "valid": self.valid,
            "violations": self.violations,
            "idempotent": self.idempotent,
            "monotonic_reads": self.monotonic_reads,
            "anomalies": {k: a.to_json() for k, a in self.anomalies.items()},
            "stats": self.stats,
            "seconds": round(self.seconds, 4),
        }

    def counts(self) -> dict[str, int]:
        """Every class's count (zero ones too), and the indeterminate sends."""
        c = {k: a.count for k, a in self.anomalies.items()}
        c["info_read"] = self.stats.get("info_read", 0)
        c["info_unread"] = self.stats.get("info_unread", 0)
        return c

    def summary(self) -> str:
        """One paragraph for people."""
        s = self.stats
        head = (
            f"{self.name}: {'VALID' if self.valid else 'INVALID'}: {s.get('ops', 0)} ops; sends "
            f"{s.get('sends_invoked', 0)} invoked, {s.get('sends_ok', 0)} ok "
            f"({s.get('acks_all_ok', 0)} acks=all), {s.get('sends_fail', 0)} fail, "
            f"{s.get('sends_info', 0)} info ({s.get('info_read', 0)} read later, "
            f"{s.get('info_unread', 0)} never read); polls {s.get('polls_ok', 0)} ok read "
            f"{s.get('records_read', 0)} records ({s.get('distinct_values_read', 0)} distinct)"
        )
        hi = s.get("highest_offset") or {}
        if hi:
            shown = ", ".join(f"p{p}={o}" for p, o in list(hi.items())[:8])
            more = f" and {len(hi) - 8} more partitions" if len(hi) > 8 else ""
            head += f"; highest offset read {shown}{more}"
        parts = []
        viol = self.violations
        for k, a in self.anomalies.items():
            if a.count:
                tag = "" if k in viol else " (allowed)"
                parts.append(f"{k} {a.count}{tag}")
        tail = "; ".join(parts) if parts else "no anomaly"
        unseen = s.get("acked_unseen", 0)
        if unseen:
            tail += f"; {unseen} acknowledged sends not yet reached by a later poll (not checked)"
        return f"{head}. {tail}."


# ---- the checks ---------------------------------------------------------------------------
def _acks(op: dict[str, Any], header: dict[str, Any]) -> str:
    return str(op.get("acks", header.get("acks", "all")))


def _last_power_failure(head: dict[str, Any]) -> float | None:
    """The time of the header's last power failure (a fault ``power B``: the broker died with
    what it had not fsynced, R14), or None. A lost write acknowledged before it may have been in
    that unflushed tail (``lost_power``)."""
    times = [
        float(f["time"])
        for f in head.get("faults") or []
        if isinstance(f, dict)
        and str(f.get("event", "")).split(" ")[0] == "power"
        and isinstance(f.get("time"), int | float)
    ]
    return max(times, default=None)


def check(history: History) -> HistoryResult:
    """Every check of CLASSES on ``history`` (see the module docstring and FORMAT.md)."""
    t0 = time.perf_counter()
    head, ops = history.header, history.ops
    res = HistoryResult(
        history.name,
        idempotent=bool(head.get("idempotent", False)),
        monotonic_reads=bool(head.get("monotonic_reads", False)),
    )
    A = res.anomalies
    last_power = _last_power_failure(head)

    # sends: per record id, the outcome of each send op; polls: (invoke index, op index)
    invoked: set[str] = set()
    outcome: dict[str, set[str]] = defaultdict(set)  # value -> {ok, fail, info}
    acked: list[tuple[int, dict[str, Any]]] = []  # (op index, ok send op)
    info: list[tuple[int, str]] = []
    polls: list[tuple[int, int]] = []
    st = {
        "ops": len(ops),
        "sends_invoked": 0,
        "sends_ok": 0,
        "sends_fail": 0,
        "sends_info": 0,
        "acks_all_ok": 0,
        "acks1_ok": 0,
        "polls_invoked": 0,
        "polls_ok": 0,
        "polls_fail": 0,
        "polls_info": 0,
    }
    for i, o in enumerate(ops):
        ty, f = o["type"], o["f"]
        if f == "send":
            if ty == "invoke":
                st["sends_invoked"] += 1
                invoked.add(o["value"])
                if "_done" not in o:  # never completed: indeterminate
                    st["sends_info"] += 1
                    outcome[o["value"]].add("info")
                    info.append((i, o["value"]))
                continue
            outcome[o["value"]].add(ty)
            if ty == "ok":
                st["sends_ok"] += 1
                acked.append((i, o))
                st["acks_all_ok" if _acks(o, head) in ("all", "-1") else "acks1_ok"] += 1
            elif ty == "fail":
                st["sends_fail"] += 1
            else:
                st["sends_info"] += 1
                info.append((i, o["value"]))
        else:
            if ty == "invoke":
                st["polls_invoked"] += 1
                if "_done" not in o:
                    st["polls_info"] += 1
                continue
            st[f"polls_{ty}"] += 1
            if ty == "ok":
                polls.append((o["_invoke"], i))

    # what the polls read
    at: dict[tuple[int, int], dict[str, int]] = defaultdict(dict)  # (p, off) -> value -> op
    where: dict[str, dict[tuple[int, int], int]] = defaultdict(dict)  # value -> (p, off) -> op
    highest: dict[int, int] = {}
    records_read = 0
    for _inv, i in polls:
        o = ops[i]
        p = o["partition"]
        for off, val, _ep in o["records"]:
            records_read += 1
            at[(p, off)].setdefault(val, i)
            where[val].setdefault((p, off), i)
            if off > highest.get(p, -1):
                highest[p] = off
    st["records_read"] = records_read
    st["distinct_values_read"] = len(where)
    st["highest_offset"] = {p: highest[p] for p in sorted(highest)}
    read_offsets: dict[int, list[int]] = defaultdict(list)
    for q, off in at:
        read_offsets[q].append(off)
    for offs in read_offsets.values():
        offs.sort()

    # 1. lost writes (R6, R17). A poll invoked after the ack "reads past" offset o when it
    # returned an offset >= o and started at or below o: from its from_offset, or, without
    # one, from wherever its consumer began (Jepsen's assumption: a consumer reads every
    # offset up to the highest it returns). Offline: acks by decreasing op index, polls
    # inserted by decreasing invoke index into a prefix-max tree over their start offsets.
    rows: dict[int, list[tuple[int, int, int]]] = defaultdict(list)  # p -> (invoke, start, top)
    for inv, i in polls:
        o = ops[i]
        recs = o["records"]
        if recs:
            top = max(r[0] for r in recs)
            rows[o["partition"]].append((inv, o.get("from_offset", -1), top))
    todo: dict[int, list[tuple[int, dict[str, Any]]]] = defaultdict(list)
    unseen = 0
    for i, o in acked:
        got = at.get((o["partition"], o["offset"]))
        if got is None or o["value"] not in got:
            todo[o["partition"]].append((i, o))
    lost_rows: list[tuple[int, dict[str, Any], int]] = []
    for p, acks_p in todo.items():
        pr = sorted(rows.get(p, []), reverse=True)
        starts = sorted({r[1] for r in pr})
        tree = [-1] * (len(starts) + 1)  # Fenwick tree of prefix maxima over starts
        k = 0
        for i, o in sorted(acks_p, key=lambda x: -x[0]):
            while k < len(pr) and pr[k][0] > i:
                j = bisect_left(starts, pr[k][1]) + 1
                while j < len(tree):
                    if tree[j] < pr[k][2]:
                        tree[j] = pr[k][2]
                    j += j & -j
                k += 1
            off = o["offset"]
            j, reached = bisect_right(starts, off), -1
            while j > 0:
                reached = max(reached, tree[j])
                j -= j & -j
            if off > reached:
                unseen += 1
            else:
                lost_rows.append((i, o, reached))
    for i, o, reached in sorted(lost_rows, key=lambda x: x[0]):
        p, off, val = o["partition"], o["offset"], o["value"]
        got = at.get((p, off))
        ex: dict[str, Any] = {"op": i, "value": val, "partition": p, "offset": off}
        if got:
            ex["read_instead"] = sorted(got)[:3]
        elsewhere = sorted(where.get(val, {}))[:3]
        if elsewhere:
            ex["read_at"] = [list(x) for x in elsewhere]
        ex["highest_read_after"] = reached
        kind = "lost" if _acks(o, head) in ("all", "-1") else "acks1_lost"
        t = o.get("time")
        if (
            kind == "lost"
            and last_power is not None
            and isinstance(t, int | float)
            and t <= last_power
        ):
            kind = "lost_power"
        A[kind].add(ex)
        res.lost_ops[kind].append(i)
    st["acked_unseen"] = unseen

    # 2. duplicates, 4. phantom and aborted reads (per record id read)
    for val, places in where.items():
        if len(places) > 1:
            pl = sorted(places)
            A["duplicates"].add(
                {"value": val, "at": [list(x) for x in pl[:5]], "ops": [places[x] for x in pl[:5]]}
            )
        if val not in invoked:
            first = min(places.items(), key=lambda kv: kv[1])
            A["phantom_reads"].add(
                {"op": first[1], "value": val, "partition": first[0][0], "offset": first[0][1]}
            )
        elif outcome.get(val) == {"fail"}:
            first = min(places.items(), key=lambda kv: kv[1])
            A["aborted_reads"].add(
                {"op": first[1], "value": val, "partition": first[0][0], "offset": first[0][1]}
            )

    # 3. inconsistent offsets
    for (p, off), vals in sorted(at.items()):
        if len(vals) > 1:
            A["inconsistent_offsets"].add(
                {
                    "partition": p,
                    "offset": off,
                    "values": sorted(vals)[:5],
                    "ops": sorted(vals.values())[:5],
                }
            )

    # 5. reorders and gaps inside one poll, reads above the reported HW
    for _inv, i in polls:
        o = ops[i]
        p, recs = o["partition"], o["records"]
        hw = o.get("hw")
        if hw is not None:
            above = [r[0] for r in recs if r[0] >= hw]
            if above:
                A["above_hw_reads"].add({"op": i, "partition": p, "hw": hw, "offsets": above[:5]})
        prev = o.get("from_offset")
        prev = None if prev is None else prev - 1
        reordered = False
        own: set[int] | None = None
        for off, _val, _ep in recs:
            if prev is not None:
                if off <= prev and not reordered:
                    reordered = True
                    A["reorders"].add({"op": i, "partition": p, "offset": off, "after": prev})
                elif off > prev + 1:
                    ro = read_offsets.get(p, [])
                    lo, hi = bisect_left(ro, prev + 1), bisect_left(ro, off)
                    if hi > lo:
                        if own is None:  # offsets read later in this poll: a reorder
                            own = {r[0] for r in recs}
                        skipped = []  # at most |own| + 5 looked at, however long the jump
                        for idx in range(lo, hi):
                            if ro[idx] not in own:
                                skipped.append(ro[idx])
                                if len(skipped) == MAX_EXAMPLES:
                                    break
                        if skipped:
                            A["gaps"].add(
                                {
                                    "op": i,
                                    "partition": p,
                                    "from": prev + 1,
                                    "to": off,
                                    "skipped_read_elsewhere": skipped,
                                }
                            )
            prev = off if prev is None or off > prev else prev

    # 6. non-monotonic reads of one consumer process
    reach: dict[tuple[str, int, int], tuple[int, int]] = {}  # (proc, p, start) -> (highest, op)
    seen_by: dict[tuple[str, int], dict[int, tuple[str, int]]] = defaultdict(dict)
    for _inv, i in sorted(polls, key=lambda x: x[1]):
        o = ops[i]
        p, recs, proc = o["partition"], o["records"], _proc(o["process"])
        start = o.get("from_offset")  # without one, where the poll began is unknown
        if start is not None:
            top = max((r[0] for r in recs), default=start - 1)
            before = reach.get((proc, p, start))
            if before is not None and top < before[0]:
                A["non_monotonic"].add(
                    {
                        "op": i,
                        "process": o["process"],
                        "partition": p,
                        "kind": "shrunk",
                        "from_offset": start,
                        "highest": top,
                        "earlier_op": before[1],
                        "earlier_highest": before[0],
                    }
                )
            if before is None or top > before[0]:
                reach[(proc, p, start)] = (top, i)
        mine = seen_by[(proc, p)]
        for off, val, _ep in recs:
            had = mine.get(off)
            if had is None:
                mine[off] = (val, i)
            elif had[0] != val:
                A["non_monotonic"].add(
                    {
                        "op": i,
                        "process": o["process"],
                        "partition": p,
                        "kind": "changed",
                        "offset": off,
                        "value": val,
                        "earlier_op": had[1],
                        "earlier_value": had[0],
                    }
                )
                mine[off] = (val, i)

    # 7. indeterminate sends
    st["info_read"] = sum(1 for _i, v in info if v in where)
    st["info_unread"] = len(info) - st["info_read"]
    res.stats = st
    res.seconds = time.perf_counter() - t0
    return res


def check_file(path: str | Path) -> HistoryResult:
    """``check(load(path))``."""
    return check(load(path))


__all__ = [
    "CLASSES",
    "FORMAT",
    "VERSION",
    "Anomaly",
    "History",
    "HistoryError",
    "HistoryResult",
    "check",
    "check_file",
    "load",
    "loads",
    "parse",
]
