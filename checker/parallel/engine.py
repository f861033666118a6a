"""Level-synchronous BFS on several local cores: ``check_parallel``, the coordinator.

The visited set is partitioned by fingerprint (worker ``fp mod N`` owns ``fp`` and its parent
link). Each worker process (:mod:`.worker`) expands its share of a level and asks the owners of
its successors' fingerprints which are new; it keeps the new states and checks the state
properties on them. The coordinator orders levels, evens out the frontier between workers
before each one (:func:`balance_plan`), and merges the workers' small reports.

Same answers as :func:`checker.bfs.check_bfs` on a complete run: the same canonicalisation and
fingerprints give the same distinct states, states generated, depth, deadlocks and verdicts, and
a level-synchronous search finds each violation at the same (shortest) depth, so every
counterexample has the same length as check_bfs's. The trace itself may differ: which of several
shortest violating states is found first depends on how the level was split among workers.
Counterexamples are rebuilt by asking the owners for parent links and replaying the model
(:mod:`checker.paths`), exactly as check_bfs does.

Limits and the stop conditions are looked at between levels, and inside a level every 256 states
by each worker (a shared abort flag, a shared count of distinct states and a shared clock), so a
limit ends the run about as promptly as in check_bfs; a level cut short is never checkpointed.
``stop_at_first_violation`` ends the run once an ``always`` or ``action`` property is violated
(stop reason ``first-violation``); other workers may find further violations in the same level
before they hear of it, so more than one property may be reported violated, each with a
shortest counterexample.

Ctrl-C (SIGINT, in the main thread) stops the workers at their next check, and the run returns
its partial statistics as incomplete (stop reason ``interrupted``); a second Ctrl-C raises
KeyboardInterrupt at once. In both cases every worker is terminated and reaped.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from typing import Any

from ..fingerprint import collision_probability
from ..model import Model, Property, State, model_identity
from ..nogc import gc_paused
from ..options import Options, open_properties, select_properties, takes_options
from ..paths import extend_with_transition, fingerprint_chain, replay_chain, to_counterexample
from ..progress import Progress
from ..result import CheckResult
from ..store import StoreDir
from ..verdicts import property_results
from .checkpoint import (
    CheckpointError,
    disk_parts,
    one_directory,
    parts,
    prepare,
    read_manifest,
    write_manifest,
)
from .pool import EngineFailure, Pool
from .worker import LevelOrder, Start

FIRST_VIOLATION = "first-violation"
INTERRUPTED = "interrupted"


def _identity(state: State) -> State:
    return state


def new_tally() -> dict[str, Any]:
    """What the coordinator keeps between levels; JSON-able (the checkpoint manifest's payload)."""
    return {
        "depth": -1,  # depth of the deepest non-empty level
        "levels_done": 0,
        "generated": 0,
        "distinct": 0,
        "frontier": 0,
        "deadlocks": 0,
        "deadlock": None,  # [depth, fp] of the first deadlock found
        "fired": 0,  # bitmask of action kinds that fired
        "inv": {},  # name -> [depth, fp]
        "act": {},  # name -> [depth of the source, fp]
        "wit": {},  # name -> fp
        "seconds": 0.0,  # spent before a resume
        "levels": [],
    }


def absorb(t: dict[str, Any], reports: list[dict[str, Any]], source_depth: int) -> None:
    """Fold the workers' reports on expanding the level at ``source_depth`` (in worker order,
    so the first findings kept do not depend on timing)."""
    for r in reports:
        t["generated"] += r["generated"]
        t["deadlocks"] += r["deadlocks"]
        if t["deadlock"] is None and r["deadlock"] is not None:
            t["deadlock"] = [source_depth, r["deadlock"]]
        t["fired"] |= r["fired"]
        for name, fp in r["inv"].items():
            t["inv"].setdefault(name, [source_depth + 1, fp])
        for name, fp in r["act"].items():
            t["act"].setdefault(name, [source_depth, fp])
        for name, fp in r["wit"].items():
            t["wit"].setdefault(name, fp)
    t["distinct"] = sum(r["size"] for r in reports)
    t["frontier"] = sum(r["frontier"] for r in reports)


def balance_plan(holding: list[int]) -> list[tuple[int, int, int]]:
    """Moves (from, to, count) that even out the frontier between workers. A state stays with
    the worker that generated it (only fingerprints travel), so without moves the worker that
    holds the initial state would keep everything; after the first levels the shares stay close
    by themselves and little moves. Imbalances below 2% of the frontier (or 8 states) stay."""
    n, total = len(holding), sum(holding)
    target = [total // n + (1 if k < total % n else 0) for k in range(n)]
    slack = max(8, total // 50)
    if all(abs(h - g) <= slack for h, g in zip(holding, target, strict=True)):
        return []
    give = [[k, h - g] for k, (h, g) in enumerate(zip(holding, target, strict=True)) if h > g]
    take = [[k, g - h] for k, (h, g) in enumerate(zip(holding, target, strict=True)) if h < g]
    plan = []
    while give and take:
        count = min(give[0][1], take[0][1])
        plan.append((give[0][0], take[0][0], count))
        give[0][1] -= count
        take[0][1] -= count
        if give[0][1] == 0:
            give.pop(0)
        if take[0][1] == 0:
            take.pop(0)
    return plan


@takes_options
@gc_paused
def check_parallel(model: Model, options: Options) -> CheckResult:
    """Explore every reachable state of ``model`` with ``options.workers`` processes; the same
    counts, depth, verdicts and counterexample lengths as ``check_bfs`` (the traces may differ).
    ``options``: checker.engines.Options (or its fields as keywords).

    ``checkpoint``: after each level, write the search to that directory.
    ``resume``: continue the search checkpointed there (with any number of workers), and keep
    checkpointing there (in the store the checkpoint was written with).
    ``store``: "memory", or "disk": each worker's queue and parent links on disk
    (:mod:`checker.store`), in the checkpoint directory when there is one, else in
    ``store_dir`` or a temporary directory removed at the end.
    Raises :class:`~.checkpoint.CheckpointError` for a checkpoint that cannot be resumed and
    :class:`~.pool.EngineFailure` when a worker dies.
    """
    if options.workers < 1:
        raise ValueError("workers must be at least 1")
    directory = one_directory(options.checkpoint, options.resume)
    return LevelRun(model, options).execute(directory, options.resume is not None)


class LevelRun:
    """One run of the coordinator, as ``options`` ask (workers, symmetry, limits, properties,
    progress, config, stop at the first violation, store). ``pool_factory(n, model, symmetry,
    props, resume)`` gives the workers (default: forked processes, :class:`~.pool.Pool`; Spark's barrier tasks use
    :class:`~.net.NetPool`); ``engine`` names the engine in the result. The checkpoint identity
    says "parallel" whatever the pool, so a run checkpointed on one can be resumed on another."""

    def __init__(
        self,
        model: Model,
        options: Options,
        pool_factory: Callable[..., Any] = Pool,
        engine: str = "parallel",
    ):
        self.model = model
        self.pool_factory = pool_factory
        self.engine = engine
        self.extra: dict[str, Any] = {}  # more for the result's extra (the engine's own)
        self.partial_new = 0  # new states of a level a stop cut short
        self.n = options.workers
        self.symmetry = symmetry = options.symmetry
        self.limits = options.limits
        self.canon: Callable[[State], State] = model.canonicalize if symmetry else _identity
        properties = options.properties
        self.props: list[Property] = select_properties(model, properties)
        self.property_filter = None if properties is None else sorted(properties)
        self.reporter = Progress(options.progress)
        self.config = dict(options.config or {})
        self.stop_at_first = options.stop_at_first_violation
        self.interrupted = False
        self.pool: Pool | None = None
        self.t = new_tally()
        self.store = options.store  # checker.store: where the workers keep queue and trace
        self.store_dir: str | None = options.store_dir

    def identity(self) -> dict[str, Any]:
        return {
            "engine": "parallel",
            **model_identity(self.model),
            "config": self.config,
            "symmetry": self.symmetry,
            "properties": self.property_filter,
            "action_names": list(self.model.action_names),
        }

    def open_(self, kind: str, on_transitions: bool | None = None) -> tuple[str, ...]:
        t = self.t
        done = {"always": t["inv"], "action": t["act"], "sometimes": t["wit"]}[kind]
        return open_properties(self.props, kind, done, on_transitions)

    def all_decided(self) -> bool:
        return not (self.open_("always") or self.open_("action") or self.open_("sometimes"))

    # --- Ctrl-C ---------------------------------------------------------------------------------
    def _on_sigint(self, signum, frame) -> None:
        if self.interrupted:
            if signum == signal.SIGTERM:
                return  # (sent to the process and to its group: one stop, not two)
            raise KeyboardInterrupt
        self.interrupted = True
        if self.pool is not None:
            self.pool.abort.value = 1

    # --- the level loop -------------------------------------------------------------------------
    def execute(self, directory: str | None, resuming: bool) -> CheckResult:
        t0 = time.perf_counter()
        identity = self.identity()
        resume_arg = None
        resumed_from = None
        if resuming:
            assert directory is not None
            manifest = read_manifest(directory, identity)
            self.t = manifest["tally"]
            if not isinstance(self.t, dict) or not set(new_tally()) <= set(self.t):
                raise CheckpointError(f"{directory}: the manifest's tally is incomplete")
            resumed_from = self.t["levels_done"]
            self.store = manifest.get("store", "memory")  # a run resumes in its own store
            if self.store == "disk":
                resume_arg = (disk_parts(directory, manifest), manifest["workers"])
            else:
                resume_arg = (parts(directory, manifest), manifest["workers"])
        elif directory is not None:
            prepare(directory)
        store_dir = None
        owned: StoreDir | None = None
        if self.store == "disk":
            # a checkpointed run keeps its store in the checkpoint; else where asked, or a
            # temporary directory of its own
            owned = StoreDir(directory or self.store_dir)
            store_dir = str(owned.root)
            self.reporter.disk = owned.disk_bytes
            if directory is None and self.store_dir is not None:
                owned.owned = False
        start = Start(self.store, store_dir, resume_arg, keep_queues=directory is not None)
        main = threading.current_thread() is threading.main_thread()
        old = signal.signal(signal.SIGINT, self._on_sigint) if main else None
        # SIGTERM to the coordinator stops the run as Ctrl-C does (partial statistics, exit 3)
        term = signal.getsignal(signal.SIGTERM) if main else None
        if term is signal.SIG_DFL:
            signal.signal(signal.SIGTERM, self._on_sigint)
        try:
            with self.pool_factory(self.n, self.model, self.symmetry, self.props, start) as pool:
                self.pool = pool
                # the progress line's peak RSS counts the workers, which hold the states
                procs = getattr(pool, "procs", None) or []
                self.reporter.pids = lambda: [p.pid for p in procs if p.pid is not None]
                return self._search(pool, directory, identity, t0, resumed_from)
        finally:
            self.pool = None
            if owned is not None and directory is None:
                owned.cleanup()
            if main:
                signal.signal(signal.SIGINT, old)
            if term is signal.SIG_DFL:
                signal.signal(signal.SIGTERM, term)

    def _search(self, pool: Pool, directory, identity, t0: float, resumed_from) -> CheckResult:
        t = self.t
        reports = pool.collect()
        if resumed_from is None:
            t["generated"] = sum(1 for _ in self.model.init_states())
            absorb(t, reports, -1)
            t["depth"] = 0 if t["frontier"] else -1
            if directory is not None:
                self.save(pool, directory, identity, t0)
        elif sum(r["size"] for r in reports) != t["distinct"]:
            raise CheckpointError(
                f"checkpoint in {directory} holds {sum(r['size'] for r in reports)} states, "
                f"its manifest says {t['distinct']}"
            )
        holding = [r["frontier"] for r in reports]  # frontier states each worker holds
        t["expanded"] = [0] * self.n  # states each worker expanded (in this run)
        earlier = t["seconds"]
        limits = self.limits
        deadline = None if limits.max_seconds is None else time.monotonic() + limits.max_seconds
        stop = "exhausted"
        unexpanded = None  # states left unexpanded when a stop cuts a level short
        # the size of each level (the last the one being expanded), for the progress line's ETA
        # (checker.progress.estimate_eta); a resumed run's from its tally
        sizes = [1] + [lv["new"] for lv in t["levels"]]
        while t["frontier"] > 0:
            if self.props and self.all_decided():
                stop = "all-properties-decided"
                break
            if self.stop_at_first and (t["inv"] or t["act"]):
                stop = FIRST_VIOLATION
                break
            if limits.max_states is not None and t["distinct"] >= limits.max_states:
                stop = "max-states"
                break
            if deadline is not None and time.monotonic() >= deadline:
                stop = "max-seconds"
                break
            if self.interrupted:
                stop = INTERRUPTED
                break
            start = time.perf_counter()
            plan = balance_plan(holding)
            moved = sum(count for _, _, count in plan)
            if plan:
                pool.ask_all(("balance", plan))
                holding = pool.collect()
            generated_before, distinct_before = t["generated"], t["distinct"]
            pool.abort.value = 1 if self.interrupted else 0
            order = LevelOrder(
                depth=t["depth"],
                invariants=self.open_("always"),
                actions=self.open_("action"),
                some_states=self.open_("sometimes", False),
                some_trans=self.open_("sometimes", True),
                deadline=deadline,
                max_states=limits.max_states,
                stop_on_violation=self.stop_at_first,
            )
            pool.ask_all(("level", order))

            level_size = t["frontier"]
            sizes.append(level_size)
            # states expanded so far in this level, estimated from the states generated (workers
            # share only that count) at the previous level's successors per state
            prev = t["levels"][-1] if t["levels"] else None
            per_state = prev["generated"] / sizes[-2] if prev and sizes[-2] else None

            def in_level(
                t0=t0, earlier=earlier, shared=pool.shared, per_state=per_state, size=level_size
            ) -> None:
                generated = sum(shared.generated)
                done = min(int(generated / per_state), size) if per_state else 0
                self.reporter.maybe_report(
                    earlier + time.perf_counter() - t0,
                    t["generated"] + generated,
                    sum(shared.sizes),
                    t["frontier"],
                    max(t["depth"], 0),
                    sizes if per_state else None,
                    done,
                )

            reports = pool.collect(idle=in_level)
            absorb(t, reports, t["depth"])
            holding = [r["frontier"] for r in reports]
            t["expanded"] = [a + r["expanded"] for a, r in zip(t["expanded"], reports, strict=True)]
            if any(r["aborted"] for r in reports):
                stop = self.why_aborted(deadline)
                # states of the level left unexpanded, and the new ones found before the stop
                unexpanded = level_size - sum(r["expanded"] for r in reports) + t["frontier"]
                self.partial_new = t["distinct"] - distinct_before
                break
            t["levels_done"] += 1
            if t["frontier"]:
                t["depth"] += 1
            t["levels"].append(
                {
                    "level": t["levels_done"],
                    "new": t["distinct"] - distinct_before,
                    "generated": t["generated"] - generated_before,
                    "seconds": round(time.perf_counter() - start, 3),
                    "moved": moved,  # frontier states moved between workers before the level
                    "cpu_max": round(max(r["cpu"] for r in reports), 3),
                    "cpu_sum": round(sum(r["cpu"] for r in reports), 3),
                }
            )
            if directory is not None:
                self.save(pool, directory, identity, t0)
            self.reporter.maybe_report(
                earlier + time.perf_counter() - t0,
                t["generated"],
                t["distinct"],
                t["frontier"],
                max(t["depth"], 0),
                [*sizes, t["frontier"]],  # the next level, none of it expanded yet
                0,
            )
        else:
            if self.interrupted:
                stop = INTERRUPTED
        seconds = earlier + time.perf_counter() - t0
        if unexpanded is None:
            unexpanded = t["frontier"]
        self.reporter.final(
            seconds,
            t["generated"],
            t["distinct"],
            max(t["depth"], 0),
            0 if stop == "exhausted" else unexpanded,
            stop,
        )
        return self.result(pool, stop, seconds, resumed_from, unexpanded)

    def level_sizes(self) -> list[int]:
        """The distinct states first reached at each depth, as check_bfs's ``level_sizes``: the
        initial states, each finished level's new states (the last, empty, one left out) and
        those of a level cut short. Per-level bookkeeping only, from the tally."""
        t = self.t
        news = [lv["new"] for lv in t["levels"]]
        sizes = [t["distinct"] - sum(news) - self.partial_new, *news]
        if len(sizes) > 1 and sizes[-1] == 0:
            sizes.pop()
        if self.partial_new:
            sizes.append(self.partial_new)
        return sizes

    def why_aborted(self, deadline: float | None) -> str:
        t = self.t
        if self.interrupted:
            return INTERRUPTED
        if self.stop_at_first and (t["inv"] or t["act"]):
            return FIRST_VIOLATION
        if self.limits.max_states is not None and t["distinct"] >= self.limits.max_states:
            return "max-states"
        return "max-seconds"

    def save(self, pool: Pool, directory: str, identity: dict[str, Any], t0: float) -> None:
        t = self.t
        seq = t["levels_done"]
        pool.ask_all(("save", directory, seq))
        entries = [e for written in pool.collect() for e in written]
        snapshot = dict(t, seconds=t["seconds"] + time.perf_counter() - t0)
        if self.store == "disk":
            write_manifest(
                directory,
                identity,
                seq,
                self.n,
                snapshot,
                entries,
                store="disk",
                frontier_depth=max(t["depth"], 0),
            )
        else:
            write_manifest(directory, identity, seq, self.n, snapshot, entries)

    # --- the result -----------------------------------------------------------------------------
    def result(
        self, pool: Pool, stop: str, seconds: float, resumed_from, unexpanded: int = 0
    ) -> CheckResult:
        t = self.t
        model = self.model
        complete = stop == "exhausted"

        class Parents:  # fp -> parent fp, asked of the fingerprint's owner
            def __getitem__(_, fp: int) -> int:
                parent = pool.ask_one(fp % self.n, ("parent", fp))
                if parent is None:
                    raise EngineFailure(f"fingerprint {fp} of a counterexample has no parent link")
                return parent

            def __len__(_) -> int:
                return t["distinct"]

        def path_to(fp: int):
            return replay_chain(model, self.canon, fingerprint_chain(fp, Parents()))

        violations: dict[str, Callable[[], Any]] = {
            name: (lambda fp=fp: path_to(fp)) for name, (_, fp) in t["inv"].items()
        }
        checks = {p.name: p.check for p in self.props}
        for name, (_, fp) in t["act"].items():
            violations[name] = lambda fp=fp, check=checks[name]: extend_with_transition(
                model, path_to(fp), check
            )
        results = property_results(
            model,
            self.props,
            complete=complete,
            violations=violations,
            witnessed=t["wit"],
            checked_to_depth=max(t["depth"], 0),  # every state up to it was checked (as check_bfs)
        )
        deadlock_example = None
        if t["deadlock"] is not None:
            deadlock_example = to_counterexample(model, path_to(t["deadlock"][1]))
        names = model.action_names
        return CheckResult(
            model=model.name,
            engine=self.engine,
            config=self.config,
            complete=complete,
            stop_reason=stop,
            distinct_states=t["distinct"],
            states_generated=t["generated"],
            depth=max(t["depth"], 0),
            seconds=seconds,
            properties=results,
            actions_never_fired=[n for k, n in enumerate(names) if not t["fired"] >> k & 1]
            if complete
            else [],
            deadlocks=t["deadlocks"],
            deadlock_example=deadlock_example,
            collision_probability=collision_probability(t["distinct"]),
            symmetry=self.symmetry,
            extra={
                "level_sizes": self.level_sizes(),
                **({} if complete else {"unexplored": unexpanded}),
                **({"store": self.store} if self.store != "memory" else {}),
                "parallel": {
                    "workers": self.n,
                    "resumed_from_level": resumed_from,
                    "levels": t["levels"],
                    # the busiest worker's CPU, summed over levels: the run's wall time on
                    # cores of its own, but for synchronisation (load-independent, for sizing)
                    "cpu_critical_path": round(sum(v.get("cpu_max", 0) for v in t["levels"]), 2),
                    "expanded": t["expanded"],
                    "cpu_workers": round(sum(v.get("cpu_sum", 0) for v in t["levels"]), 2),
                },
                **self.extra,
            },
        )
