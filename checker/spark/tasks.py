"""What runs on the executors: expand a frontier partition, deduplicate a partition.

Per-level RDDs hold one blob per partition (see :mod:`.partition`):
``LevelBlob = (visited, frontier, links, summary)`` where ``visited`` is an ``array('q')`` of
the partition's fingerprints, ``frontier`` a list of ``(fp, canonical state)``, ``links`` a
triple of arrays ``(fps, parent fps, action indices)`` for the states new at this level (the
only data kept for counterexamples) and ``summary`` the level's :mod:`.summary`.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ..fingerprint import fingerprint
from ..model import Model, State
from . import summary as S
from .partition import fingerprints, one_blob, partition_of

LevelBlob = tuple[array, list[tuple[int, State]], Any, Any]
Links = tuple[array, array, array]


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
    """Expand partition ``pid``'s frontier. Yields ``(partition, candidate)`` records with
    ``candidate = (fp, parent fp, action index, canonical state)`` deduplicated within the
    partition, and one ``(pid, ("S", summary))`` record for the transition-level findings."""
    model = job.model
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
    frontier = one_blob(it)[1]
    for sfp, s in frontier:
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
            if fp not in local:
                local[fp] = (sfp, n, c)
            n += 1
        generated += n
        if n == 0:
            deadlocks += 1
            if deadlock is None or sfp < deadlock:
                deadlock = sfp
    summ.update(generated=generated, deadlocks=deadlocks, deadlock=deadlock, fired=fired)
    yield pid, ("S", summ)
    parts = job.parts
    for fp, (parent, index, c) in local.items():
        yield partition_of(fp, parts), (fp, parent, index, c)


def dedup(job: LevelJob, pair: tuple[list[tuple[int, Any]], array]) -> LevelBlob:
    """Partition ``p``'s candidates against partition ``p``'s visited set: keep the new states,
    check invariants and `sometimes` on them, and merge the summaries."""
    records, visited = pair
    seen = set(visited)
    inv_checks = job.checks(job.invariants)
    some_checks = job.checks(job.some_states)
    summ = S.empty()
    new_fps = fingerprints()
    parents = fingerprints()
    indices = array("l")
    frontier: list[tuple[int, State]] = []
    for _, cand in records:
        if len(cand) == 2:
            summ = S.merge(summ, cand[1])
            continue
        fp, parent, index, c = cand
        if fp in seen:
            continue
        seen.add(fp)
        new_fps.append(fp)
        parents.append(parent)
        indices.append(index)
        frontier.append((fp, c))
        for name, check in inv_checks:
            if not check(c):
                S.note(summ["inv"], name, fp)
        for name, check in some_checks:
            if check(c):
                S.note(summ["wit"], name, fp)
    summ["new"] = len(new_fps)
    visited.extend(new_fps)
    return visited, frontier, (new_fps, parents, indices), summ


def visited_of(blob: LevelBlob) -> array:
    return blob[0]


def links_and_summary(blob: LevelBlob) -> tuple[Links, Any]:
    return blob[2], blob[3]


def summary_of(pair: tuple[Links, Any]) -> Any:
    return pair[1]


def find_parent(fp: int, it: Iterable[Any]) -> list[tuple[int, int]]:
    """In a partition of a links RDD (blob ``(links, summary)`` or ``links``): the parent link
    of ``fp`` as ``[(parent fp, action index)]``, or ``[]``."""
    out: list[tuple[int, int]] = []
    for blob in it:
        links = blob[0] if len(blob) == 2 else blob
        fps, parents, indices = links
        try:
            i = fps.index(fp)
        except ValueError:
            continue
        out.append((parents[i], indices[i]))
    return out
