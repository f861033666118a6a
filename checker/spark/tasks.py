"""What runs on the executors: expand a frontier partition, deduplicate a partition.

Per-level RDDs hold one blob per partition (see :mod:`.partition`):
``LevelBlob = (visited, frontier)``. ``visited`` is three parallel arrays ``(fps, parent fps,
action indices)`` of every state the partition owns — the only data kept for counterexamples —
and ``frontier`` the packed list of ``(fp, packed canonical state)`` new at this level, each
state packed in the model's wire form (plain tuples, ``wire_codec``).
Each state is pickled once, where it is generated, and travels as bytes from then on (the
shuffle, the frontier, the cache): Spark moves opaque bytes, and dedup unpickles only the new
states, to check invariants. The tasks run without the cyclic garbage collector (see
:mod:`checker.nogc`: unpickling hundreds of thousands of nested tuples otherwise triggers
full collections over and over, 3x slower).
Dedup reports its summary through an accumulator keyed by (level, partition): re-running a task
overwrites its entry instead of counting twice.
"""

from __future__ import annotations

import pickle
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ..fingerprint import fingerprint
from ..model import Model, State
from ..nogc import paused_gc as no_cyclic_gc  # the one GC helper (states are acyclic)
from ..store import _identity, wire_codec  # the wire form: plain tuples pickle in C
from . import summary as S
from .partition import fingerprints, one_blob, partition_of

Visited = tuple[array, array, array]
LevelBlob = tuple[Visited, bytes]


def pack(obj: Any) -> bytes:
    return pickle.dumps(obj, pickle.HIGHEST_PROTOCOL)


_same = _identity  # (bench/spark_tasks.py swaps the codec for the identity through this name)


def unpack(data: bytes) -> Any:
    return pickle.loads(data)


@dataclass(frozen=True)
class LevelJob:
    """Everything executors need for one level; shipped in the task closure (cloudpickle)."""

    model: Model
    symmetry: bool
    parts: int
    invariants: tuple[str, ...]  # `always` properties not yet violated
    actions: tuple[str, ...]  # `action` properties not yet violated
    some_states: tuple[str, ...]  # `sometimes` on states, not yet witnessed
    some_trans: tuple[str, ...]  # `sometimes` on transitions, not yet witnessed

    def checks(self, names: tuple[str, ...]) -> list[tuple[str, Any]]:
        by_name = {p.name: p.check for p in self.model.properties}
        return [(n, by_name[n]) for n in names]


def expand(job: LevelJob, pid: int, it: Iterator[LevelBlob]) -> Iterator[tuple[int, Any]]:
    """Expand partition ``pid``'s frontier. Yields, for each partition ``q``, one record
    ``(q, packed candidates)`` with ``candidate = (fp, parent fp, action index, canonical
    state)`` deduplicated within this partition, and one ``(pid, ("S", summary))`` record for
    the transition-level findings."""
    with no_cyclic_gc():
        model = job.model
        to_wire, from_wire = wire_codec(model)
        canon = model.canonicalize if job.symmetry else None
        successors = model.successors
        within = model.within_boundary
        act_checks = job.checks(job.actions)
        trans_checks = job.checks(job.some_trans)
        summ = S.empty()
        act_found, wit = summ["act"], summ["wit"]
        fired = 0
        generated = 0
        deadlocks = 0
        deadlock: int | None = None
        local: dict[int, tuple[int, int, State]] = {}
        blob = one_blob(it)
        own = set(blob[0][0])  # this partition's visited set: filter our own candidates early
        parts = job.parts
        frontier = unpack(blob[1])
        del blob
        for sfp, packed in frontier:
            s = from_wire(unpack(packed))
            if not within(s):
                continue
            n = 0
            for action, t in successors(s):
                fired |= 1 << action[0]
                for name, check in act_checks:
                    if not check(s, action, t):
                        S.note(act_found, name, sfp)
                for name, check in trans_checks:
                    if check(s, action, t):
                        S.note(wit, name, sfp)
                c = canon(t) if canon is not None else t
                fp = fingerprint(c)
                if fp not in local and not (fp % parts == pid and fp in own):
                    local[fp] = (sfp, n, c)
                n += 1
            generated += n
            if n == 0:
                deadlocks += 1
                if deadlock is None or sfp < deadlock:
                    deadlock = sfp
        summ.update(generated=generated, deadlocks=deadlocks, deadlock=deadlock, fired=fired)
        yield pid, ("S", summ)
        buckets: list[list[tuple[int, int, int, bytes]]] = [[] for _ in range(parts)]
        for fp, (parent, index, c) in local.items():
            buckets[partition_of(fp, parts)].append((fp, parent, index, pack(to_wire(c))))
        del local, frontier, own
        for q, bucket in enumerate(buckets):
            if bucket:
                yield q, pack(bucket)
            buckets[q] = []


def dedup(
    job: LevelJob, acc: Any, level: int, pid: int, it: Iterator[tuple[list[Any], LevelBlob]]
) -> Iterator[LevelBlob]:
    """Partition ``pid``'s candidates against partition ``pid``'s visited set: keep the new
    states, check invariants and `sometimes` on them; the merged summary goes to ``acc``."""
    with no_cyclic_gc():
        records, old = one_blob(it)
        from_wire = wire_codec(job.model)[1]
        fps, parents, indices = old[0]
        seen = set(fps)
        inv_checks = job.checks(job.invariants)
        some_checks = job.checks(job.some_states)
        summ = S.empty()
        frontier: list[tuple[int, bytes]] = []
        for _, payload in records:
            if not isinstance(payload, bytes):
                summ = S.merge(summ, payload[1])
                continue
            for fp, parent, index, packed in unpack(payload):
                if fp in seen:
                    continue
                seen.add(fp)
                fps.append(fp)
                parents.append(parent)
                indices.append(index)
                frontier.append((fp, packed))
                if not (inv_checks or some_checks):
                    continue
                c = from_wire(unpack(packed))
                for name, check in inv_checks:
                    if not check(c):
                        S.note(summ["inv"], name, fp)
                for name, check in some_checks:
                    if check(c):
                        S.note(summ["wit"], name, fp)
        summ["new"] = len(frontier)
        acc.add({(level, pid): summ})
        yield (fps, parents, indices), pack(frontier)


def new_visited(frontier: list[tuple[int, State]]) -> Visited:
    """The visited arrays of initial states (each its own parent)."""
    fps = fingerprints(fp for fp, _ in frontier)
    return fps, fingerprints(fps), array("l", [-1] * len(fps))


def find_parents(wanted: frozenset[int], it: Iterable[LevelBlob]) -> list[tuple[int, int, int]]:
    """The parent links of the fingerprints in ``wanted`` that this partition owns, as
    ``(fp, parent fp, action index)``; an initial state is its own parent."""
    out: list[tuple[int, int, int]] = []
    for blob in it:
        fps, parents, indices = blob[0]
        for fp in wanted:
            try:
                i = fps.index(fp)
            except ValueError:
                continue
            out.append((fp, parents[i], indices[i]))
    return out
