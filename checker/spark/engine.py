"""Level-synchronous BFS on Spark: ``check_spark``, the driver loop.

Per level: executors expand their partition of the frontier (transition properties checked
there), candidates are shuffled to the partition of their fingerprint, and each partition is
deduplicated against the visited set of the same partition (zipped, no shuffle; invariants checked
on new states). The driver receives one small summary per partition. Level-synchronous, so the
first violation of each property is found at the same (shortest) depth as the sequential engine,
with the same canonicalisation and fingerprints, hence the same distinct-state counts.

Only fingerprints, parent fingerprints and action indices are kept (one links RDD per level); a
counterexample is rebuilt on the driver by walking parent links back one level at a time (a
lookup in one partition per step) and replaying with :mod:`checker.paths`.
Lineage is cut (``localCheckpoint``) every ``cut_every`` levels, and the links of every level,
so a long run does not slow down level after level.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from typing import Any

from ..fingerprint import collision_probability, fingerprint
from ..model import Model, State, model_identity
from ..options import Options, open_properties, select_properties, takes_options
from ..paths import extend_with_transition, replay_chain
from ..result import CheckResult
from ..verdicts import property_results
from . import checkpoint as ckpt
from . import summary as S
from .accumulate import summary_accumulator, take_level
from .partition import partition_of, route, zip_partitions
from .progress import level_info
from .session import spark_context
from .tally import Tally
from .tasks import LevelJob, dedup, expand, find_parents, new_visited, pack, wire_codec


def _identity(state: State) -> State:
    return state


@takes_options
def check_spark(model: Model, options: Options) -> CheckResult:
    """Explore every reachable state of ``model`` on Spark; same answers as ``check_bfs``.
    ``options``: checker.engines.Options (or its fields as keywords):

    ``master``: Spark master URL (default: the running SparkContext, else ``local[*]``).
    ``partitions``: fingerprint partitions (default: the default parallelism, at least 2).
    ``checkpoint``: write the frontier and visited set there after each level.
    ``resume``: continue the run checkpointed there (and keep checkpointing there).
    ``cut_every``: cut the lineage every this many levels.
    Limits are checked between levels (a level is never cut in half).
    """
    checkpoint, resume = options.checkpoint, options.resume
    if checkpoint and resume and checkpoint != resume:
        raise ckpt.CheckpointError(
            "a resumed run keeps checkpointing in its own directory: give --resume DIR alone"
        )
    with spark_context(options.master, f"isr check {model.name}", model) as sc:
        run = _Run(sc, model, options)
        return run.execute(checkpoint or resume, resume is not None, options.cut_every)


class _Run:
    def __init__(self, sc, model: Model, options: Options):
        self.sc = sc
        self.model = model
        self.symmetry = symmetry = options.symmetry
        self.limits = options.limits
        self.canon: Callable[[State], State] = model.canonicalize if symmetry else _identity
        properties = options.properties
        self.props = select_properties(model, properties)
        self.property_filter = None if properties is None else sorted(properties)
        self.progress = options.progress
        self.config = dict(options.config or {})
        self.parts = options.partitions or max(2, sc.defaultParallelism)
        self.tally = Tally()
        self.acc = summary_accumulator(sc)
        self.init_fps: set[int] = set()
        self.cached: list[Any] = []

    # --- identity of a run, for checkpoints -------------------------------------------------
    def identity(self) -> dict[str, Any]:
        return {
            **model_identity(self.model),
            "config": self.config,
            "symmetry": self.symmetry,
            "properties": self.property_filter,
            "action_names": list(self.model.action_names),
            "partitions": self.parts,
        }

    # --- what is still undecided ------------------------------------------------------------
    def job(self) -> LevelJob:
        t = self.tally

        def open_(kind: str, done: dict, on_transitions: bool | None = None) -> tuple[str, ...]:
            return open_properties(self.props, kind, done, on_transitions)

        return LevelJob(
            model=self.model,
            symmetry=self.symmetry,
            parts=self.parts,
            invariants=open_("always", t.inv),
            actions=open_("action", t.act),
            some_states=open_("sometimes", t.wit, False),
            some_trans=open_("sometimes", t.wit, True),
        )

    def all_decided(self) -> bool:
        j = self.job()
        return not (j.invariants or j.actions or j.some_states or j.some_trans)

    # --- level 0 on the driver ----------------------------------------------------------------
    def initial(self) -> Any:
        t = self.tally
        job = self.job()
        by_name = {p.name: p for p in self.props}
        buckets: list[list[tuple[int, State]]] = [[] for _ in range(self.parts)]
        for s in self.model.init_states():
            c = self.canon(s)
            fp = fingerprint(c)
            t.generated += 1
            if fp in self.init_fps:
                continue
            self.init_fps.add(fp)
            buckets[partition_of(fp, self.parts)].append((fp, c))
            for name in job.invariants:
                if name not in t.inv and not by_name[name].check(c):
                    t.inv[name] = [0, fp]
            for name in job.some_states:
                if name not in t.wit and by_name[name].check(c):
                    t.wit[name] = fp
        t.distinct = t.frontier = len(self.init_fps)
        t.depth = 0 if self.init_fps else -1
        to_wire = wire_codec(self.model)[0]
        blobs = [(new_visited(b), pack([(fp, pack(to_wire(c))) for fp, c in b])) for b in buckets]
        return self.sc.parallelize(blobs, self.parts)

    def _persist(self, rdd: Any) -> Any:
        from pyspark import StorageLevel

        rdd.persist(StorageLevel.MEMORY_AND_DISK)
        self.cached.append(rdd)
        return rdd

    # --- the level loop -----------------------------------------------------------------------
    def execute(self, directory: str | None, resuming: bool, cut_every: int) -> CheckResult:
        t0 = time.perf_counter()
        identity = self.identity()
        resumed_from = None
        if resuming:
            assert directory is not None
            manifest = ckpt.read_manifest(directory, identity)
            self.parts = manifest["identity"]["partitions"]
            identity = self.identity()
            self.tally = Tally.from_json(manifest["tally"])
            for s in self.model.init_states():
                self.init_fps.add(fingerprint(self.canon(s)))
            out = ckpt.load(self.sc, directory, manifest)
            resumed_from = manifest["level"]
            out = self._persist(out)
        else:
            out = self._persist(self.initial())
            if directory is not None:
                ckpt.save_level(directory, 0, out, identity, self.tally)
        t = self.tally
        earlier = t.seconds
        deadline = None if self.limits.max_seconds is None else t0 + self.limits.max_seconds
        stop = "exhausted"
        try:
            while t.frontier > 0:
                if self.props and self.all_decided():
                    stop = "all-properties-decided"
                    break
                if self.limits.max_states is not None and t.distinct >= self.limits.max_states:
                    stop = "max-states"
                    break
                if deadline is not None and time.perf_counter() >= deadline:
                    stop = "max-seconds"
                    break
                out = self.level(out, cut_every, directory, identity, t0, earlier)
            seconds = earlier + time.perf_counter() - t0
            return self.result(out, stop, seconds, resumed_from)
        finally:
            for rdd in self.cached:
                rdd.unpersist()

    def level(self, out, cut_every, directory, identity, t0, earlier) -> Any:
        t = self.tally
        start = time.perf_counter()
        source_depth = t.depth
        job = self.job()
        cands = out.mapPartitionsWithIndex(partial(expand, job)).partitionBy(self.parts, route)
        new_out = zip_partitions(cands, out).mapPartitionsWithIndex(
            partial(dedup, job, self.acc, source_depth + 1)
        )
        new_out = self._persist(new_out)
        if (source_depth + 1) % cut_every == 0:
            new_out.localCheckpoint()
        # A JVM-side action: materialises (and caches) the level without another Python pass.
        new_out._jrdd.count()
        summ = S.merge_all(take_level(self.acc, source_depth + 1))
        out.unpersist()
        self.cached.remove(out)
        t.absorb(summ, source_depth)
        if directory is not None:
            t.seconds = earlier + time.perf_counter() - t0
            ckpt.save_level(directory, source_depth + 1, new_out, identity, t)
        now = time.perf_counter()
        info = level_info(
            level=source_depth + 1,
            seconds=earlier + now - t0,
            level_seconds=now - start,
            generated=t.generated,
            level_generated=summ["generated"],
            new=summ["new"],
            distinct=t.distinct,
        )
        t.levels.append(
            {k: info[k] for k in ("level", "new", "level_generated", "level_seconds", "distinct")}
        )
        if self.progress is not None:
            self.progress(info)
        return new_out

    # --- counterexamples ----------------------------------------------------------------------
    def chains(self, out: Any, targets: list[int]) -> dict[int, list[int]]:
        """Fingerprint chains from an initial state to each target: parent links are looked up
        in the partitioned visited set, one step back for all targets at once (one small job
        per step, touching only the partitions that own the fingerprints sought)."""
        parent: dict[int, int] = {}
        wanted = set(targets)
        while wanted:
            owners = sorted({partition_of(fp, self.parts) for fp in wanted})
            found = self.sc.runJob(out, partial(find_parents, frozenset(wanted)), owners)
            if len(found) != len(wanted):
                raise RuntimeError("a fingerprint on a counterexample path has no parent link")
            wanted = set()
            for fp, par, _index in found:
                parent[fp] = par
                if par not in parent:
                    wanted.add(par)
        chains: dict[int, list[int]] = {}
        for fp in targets:
            chain = [fp]
            while parent[chain[-1]] != chain[-1]:
                chain.append(parent[chain[-1]])
                if len(chain) > len(parent) + 1:
                    raise RuntimeError("parent links form a cycle")
            if chain[-1] not in self.init_fps:
                raise RuntimeError("parent links do not lead back to an initial state")
            chain.reverse()
            chains[fp] = chain
        return chains

    def result(self, out: Any, stop: str, seconds: float, resumed_from: int | None) -> CheckResult:
        t = self.tally
        complete = stop == "exhausted"
        checks = {p.name: p.check for p in self.props}
        targets = [fp for _, fp in (*t.inv.values(), *t.act.values())]
        if t.deadlock is not None:
            targets.append(t.deadlock[1])
        chains = self.chains(out, targets) if targets else {}

        def path_to(lv: int, fp: int):
            return replay_chain(self.model, self.canon, chains[fp])

        violations: dict[str, Callable[[], Any]] = {}
        for name, (lv, fp) in t.inv.items():
            violations[name] = partial(path_to, lv, fp)
        for name, (lv, fp) in t.act.items():

            def path(lv=lv, fp=fp, check=checks[name]):
                return extend_with_transition(self.model, path_to(lv, fp), check)

            violations[name] = path
        results = property_results(
            self.model, self.props, complete=complete, violations=violations, witnessed=t.wit
        )
        deadlock_example = None
        if t.deadlock is not None:
            from ..paths import to_counterexample

            deadlock_example = to_counterexample(self.model, path_to(*t.deadlock))
        if self.progress is not None and t.levels:
            self.progress(
                level_info(
                    level=max(t.depth, 0),
                    seconds=seconds,
                    level_seconds=0.0,
                    generated=t.generated,
                    level_generated=0,
                    new=0,
                    distinct=t.distinct,
                    final=True,
                )
            )
        names = self.model.action_names
        extra: dict[str, Any] = {
            "spark": {
                "master": self.sc.master,
                "partitions": self.parts,
                "default_parallelism": self.sc.defaultParallelism,
                "resumed_from_level": resumed_from,
                "levels": t.levels,
            }
        }
        return CheckResult(
            model=self.model.name,
            engine="spark",
            config=self.config,
            complete=complete,
            stop_reason=stop,
            distinct_states=t.distinct,
            states_generated=t.generated,
            depth=max(t.depth, 0),
            seconds=seconds,
            properties=results,
            actions_never_fired=[n for k, n in enumerate(names) if not t.fired >> k & 1]
            if complete
            else [],
            deadlocks=t.deadlocks,
            deadlock_example=deadlock_example,
            collision_probability=collision_probability(t.distinct),
            symmetry=self.symmetry,
            extra=extra,
        )


__all__ = ["check_spark"]
