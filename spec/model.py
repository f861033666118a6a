"""The ISR spec as a model for the checker: Init, Next (the actions), the properties, and the
symmetry over replica ids."""

from __future__ import annotations

from typing import Any

from .actions import ACTIONS, ActionDef
from .actions.common import Ctx, clamp_offsets
from .config import Config
from .liveness import make_liveness
from .properties import make_properties
from .protocols import PROTOCOLS, ProtocolVersion
from .state import (
    NO_FAULTS,
    NO_KRAFT,
    AlterReq,
    Coord,
    Faults,
    FetchReq,
    FetchResp,
    Kraft,
    Replica,
    Request,
    State,
    from_wire,
    initial_state,
    to_wire,
)


class IsrSpec:
    """The model of one partition under one protocol version and one set of bounds."""

    def __init__(
        self,
        config: Config,
        protocol: ProtocolVersion | None = None,
        reduction: str | None = None,
    ):
        """``protocol``: the version object, named ``config.protocol``: a user's version (from
        --protocol-file), or a variant of a built-in one (a test builds one with a guard
        removed, e.g. ``KRAFT.variant(response_guard=False)``), which keeps that version's kind
        of fetch; None for the built-in version named ``config.protocol``. ``reduction``:
        ``"dead-state"`` to merge states that differ only in what no step will ever read again
        (:meth:`forget`, docs/reduction.md), else None."""
        if protocol is not None and (
            protocol.name != config.protocol
            or (
                protocol.name in PROTOCOLS
                and protocol.split_fetch != PROTOCOLS[protocol.name].split_fetch
            )
        ):
            raise ValueError(f"protocol variant {protocol.name!r} is not a {config.protocol!r}")
        self.config = config.validate(protocol)
        self.ctx = Ctx.of(config, protocol)
        self.protocol = self.ctx.protocol  # the version object, for result headers
        self.actions: tuple[ActionDef, ...] = tuple(
            a for a in ACTIONS if a.exists_in(config, self.ctx.protocol)
        )
        self.action_names = [a.name for a in self.actions]
        self._fns = [(k, a.fn) for k, a in enumerate(self.actions)]
        self.kind_of = {a.name: k for k, a in enumerate(self.actions)}
        liveness, self.fairness = make_liveness(self.ctx, self.kind_of)
        self.properties = [*make_properties(self.ctx, self.kind_of), *liveness]
        modes = config.fault_modes
        self.name = f"isr/{config.protocol}" + "".join(f"+{m}" for m in modes)
        # a user's protocol file: its hash, so a checkpoint refuses to resume once the file
        # changed (checker.model.model_identity); None for a built-in version
        self.version = self.ctx.protocol.source_sha256
        self._clamp = self.ctx.clamp
        self._faulty = (
            self.ctx.initial_faults != NO_FAULTS
            or config.retries > 0
            or config.session_expiries > 0
            or self.ctx.split_fetch
        )
        self._ident = list(range(self.ctx.n))
        # per permutation, its renaming (see permute)
        self._mask_tables: dict[tuple[int, ...], tuple[list[int], tuple[int, ...]]] = {}
        # (the state last expanded, whether its replicas are in the canonical order or None:
        # not known yet); see canonicalize. One attribute, so that a reader always sees a
        # consistent pair even if two threads shared this model.
        self._expanded: tuple[State | None, bool | None] = (None, None)
        # A version whose rule reads replica ids (ProtocolVersion.replica_symmetric) has no
        # symmetry: every state is its own representative, whatever the engine asks for.
        self.symmetric = self.ctx.protocol.replica_symmetric
        if not self.symmetric:
            self.canonicalize = _no_symmetry  # type: ignore[method-assign]
            self.canonicalize_with_permutation = self._no_symmetry_with_permutation  # type: ignore[method-assign]
        # the dead-state reduction: the canonical form forgets what no step reads any more
        self.reduction = reduction
        self.forget = None
        parts = parse_reduction(reduction)
        self.por = None
        if "por" in parts:
            self._setup_por("dead-state" in parts)
        if "dead-state" in parts:
            reason = dead_state_refusal(self.ctx.protocol)
            if reason:
                raise ValueError(reason)
            self._crash_budget = config.crashes
            self._sym = self.canonicalize
            self._sym_perm = self.canonicalize_with_permutation
            self.forget = self._forget  # checker.model: the optional ``forget``
            self.canonicalize = self._forget_then_canonicalize  # type: ignore[method-assign]
            self.canonicalize_with_permutation = self._forget_then_permutation  # type: ignore[method-assign]
            self.name += "+dead-state"
        if self.por is not None:
            self.name += "+por"

    # --- the partial-order reduction (spec/por.py, docs/reduction.md) --------------------------
    def _setup_por(self, dead_state: bool) -> None:
        """Successors of a stubborn set where one is safe (spec.por.Por). Liveness is not
        checked under it: the model keeps no `eventually` property and no fairness."""
        from .por import Por

        self.liveness_names = [p.name for p in self.properties if p.kind == "eventually"]
        self.properties = [p for p in self.properties if p.kind != "eventually"]
        self.fairness = []
        self.por = Por(self, dead_state=dead_state)
        self._full_successors = self.successors
        # checker.model's optional ``full_successors``: the counterexample replay matches a
        # concrete state's step against every successor (the stubborn set chosen on the
        # representative need not be the one a renamed or unforgotten state would get)
        self.full_successors = self._full_successors
        self.successors = self._por_successors  # type: ignore[method-assign]
        self.reduction = "dead-state,por" if self.reduction != "por" else "por"

    def _por_successors(self, state: State) -> list[tuple]:
        return self.por.reduce(state, self._full_successors(state))  # type: ignore[union-attr]

    def por_properties(self, names: list[str] | None) -> None:
        """The reduction keeps the verdicts of the properties it is told are checked (all of
        the model's when None): fewer properties, fewer visible steps, more reduction. Part of
        the model's identity (a checkpoint's), as the graph depends on it."""
        if self.por is None:
            return
        self.por.set_properties(self, names)
        base = self.reduction.split("[")[0]  # type: ignore[union-attr]
        self.reduction = base if names is None else f"{base}[{','.join(sorted(names))}]"

    # --- the model protocol -------------------------------------------------------------------
    # states as plain tuples between processes (checker.model; spec.state.to_wire)
    to_wire = staticmethod(to_wire)
    from_wire = staticmethod(from_wire)

    def init_states(self) -> list[State]:
        return [initial_state(self.ctx.n, self.ctx.initial_faults, self.ctx.initial_kraft)]

    def successors(self, state: State) -> list[tuple]:
        ctx = self.ctx
        self._expanded = (state, None)
        out: list[tuple] = []
        for kind, fn in self._fns:
            fn(ctx, state, kind, out)
        if self._clamp:
            return [(a, clamp_offsets(t)) for a, t in out]
        return out

    def within_boundary(self, state: State) -> bool:
        return True  # the bounds are enforced by the actions' enabling conditions

    def canonicalize(self, s: State) -> State:
        """Symmetry over replica ids: order the replicas by what they hold (log, HW, roles...),
        then rename every id in the state accordingly. Replicas with equal keys keep their
        relative order, so two members of an orbit may keep different representatives (less
        reduction, never unsound: the representative is always in the orbit).

        Without fault modes this is ``_order`` inlined (it runs on every generated state; the
        call it saves is a visible share): the same keys, the same stable sort. Those keys read
        only the replicas and the coordination state, so a successor that shares both objects
        with the state last expanded (a request lost or ignored, a consumer read: about a quarter
        of the successors) is in order exactly when that state is, which is computed once per
        expansion and only when such a successor comes."""
        if self._faulty:
            order = self._order_faulty(s)
            if order == self._ident:
                return s
            return permute(s, order, self._mask_tables)
        p, ordered = self._expanded
        if p is not None and s[0] is p[0] and s[1] is p[1]:
            if ordered is None:
                ordered = self._order(p) is self._ident
                self._expanded = (p, ordered)
            if ordered:
                return s
        c = s[1]
        cl = c[0]
        cisr = c[2]
        i = 0
        keys = []
        prev = None
        ordered = True
        for r in s[0]:
            k = (r[0], r[1], r[2], r[3], r[5], r[4] == i, cl == i, cisr >> i & 1, r[9], r[7], r[10])
            if ordered and prev is not None and prev > k:
                ordered = False
            keys.append(k)
            prev = k
            i += 1  # noqa: SIM113 - a counter is cheaper than enumerate here (hot path)
        if ordered:
            return s
        return permute(s, sorted(self._ident, key=keys.__getitem__), self._mask_tables)

    # --- the dead-state reduction (docs/reduction.md) ------------------------------------------
    def _forget(self, s: State) -> State:
        """Once a behaviour has spent its crash budget (``History.crashes``), no live replica
        will ever crash again, and only a crash reads a live replica's HW checkpoint (R13), its
        flushed prefix (R14) and its leader-epoch checkpoint file (kraft, R13); the steps that
        write them (BrokerCheckpointHw, BrokerFlush, BrokerCheckpointEpochCache, a truncation's
        cap) read nothing but themselves and what they copy. So two such states that differ only
        there have the same futures, step for step, up to those three values: this writes what
        a checkpoint or flush would write now (the HW, the LEO, the cache), making them one state.
        A crashed replica keeps all three: its restart reads them."""
        if s[3].crashes < self._crash_budget:
            return s
        reps = s[0]
        faults = s[4]
        flushed = faults.flushed
        kraft = s[5]
        ckpts = kraft.epoch_ckpt
        new_reps = None
        new_flushed = None
        new_ckpts = None
        for i, r in enumerate(reps):
            if not r[3]:  # crashed: its restart reads them
                continue
            if r[2] != r[1]:
                if new_reps is None:
                    new_reps = list(reps)
                new_reps[i] = _tuple_new(Replica, (r[0], r[1], r[1], *r[3:]))
            if flushed and flushed[i] != len(r[0]):
                if new_flushed is None:
                    new_flushed = list(flushed)
                new_flushed[i] = len(r[0])
            if ckpts and ckpts[i] != kraft.epoch_cache[i]:
                if new_ckpts is None:
                    new_ckpts = list(ckpts)
                new_ckpts[i] = kraft.epoch_cache[i]
        if new_reps is None and new_flushed is None and new_ckpts is None:
            return s
        if new_reps is not None:
            s = s._replace(replicas=tuple(new_reps))
        if new_flushed is not None:
            s = s._replace(faults=faults._replace(flushed=tuple(new_flushed)))
        if new_ckpts is not None:
            s = s._replace(kraft=kraft._replace(epoch_ckpt=tuple(new_ckpts)))
        return s

    def _forget_then_canonicalize(self, s: State) -> State:
        return self._sym(self._forget(s))

    def _forget_then_permutation(self, s: State) -> tuple[State, tuple[int, ...]]:
        return self._sym_perm(self._forget(s))

    def canonicalize_with_permutation(self, s: State) -> tuple[State, tuple[int, ...]]:
        """``(canonicalize(s), order)`` with ``permute(s, order) == canonicalize(s)``: the
        renaming the representative was made with (for rebuilding concrete counterexamples, see
        checker.paths)."""
        order = self._order(s)
        if order == self._ident:
            return s, tuple(order)
        return permute(s, order, self._mask_tables), tuple(order)

    def _no_symmetry_with_permutation(self, s: State) -> tuple[State, tuple[int, ...]]:
        return s, tuple(self._ident)

    def permute(self, s: State, order: tuple[int, ...]) -> State:
        """The state with replica ``order[k]`` renamed ``k`` (the model protocol's ``permute``)."""
        return permute(s, list(order), self._mask_tables)

    def _order(self, s: State) -> list[int]:
        """The canonical order of the replicas: ``order[k]`` is the replica renamed ``k``. The
        identity order is returned as ``self._ident`` itself (callers test it with ``is``).

        Each replica's key is (log, HW, HW checkpoint, alive, epoch, leads in its own view, the
        recorded leader, in the recorded ISR, truncating, zkVersion current, pending acks); the
        replicas are stably sorted by it. Written for speed (it runs on every generated state):
        fields by position (Replica's order: log 0, hw 1, hw_ckpt 2, alive 3, leader 4, epoch 5,
        isr 6, zk_fresh 7, remote_leo 8, truncating 9, pending 10), and no sort at all when the
        keys are already in order (most states): a stable sort of ordered keys is the identity.
        ``tests/spec/test_symmetry.py`` compares it with the plain definition."""
        if self._faulty:
            return self._order_faulty(s)
        c = s.coord
        cl = c[0]
        cisr = c[2]
        i = 0
        keys = []
        prev = None
        ordered = True
        for r in s[0]:
            k = (r[0], r[1], r[2], r[3], r[5], r[4] == i, cl == i, cisr >> i & 1, r[9], r[7], r[10])
            if ordered and prev is not None and prev > k:
                ordered = False
            keys.append(k)
            prev = k
            i += 1  # noqa: SIM113 - a counter is cheaper than enumerate here (hot path)
        if ordered:
            return self._ident
        return sorted(self._ident, key=keys.__getitem__)

    def _order_faulty(self, s: State) -> list[int]:
        """``_order`` with the fault modes' per-replica variables as a second key."""
        reps = s.replicas
        c = s.coord
        cl = c.leader
        cisr = c.isr
        keys = [
            (
                r.log,
                r.hw,
                r.hw_ckpt,
                r.alive,
                r.epoch,
                r.leader == i,
                cl == i,
                cisr >> i & 1,
                r.truncating,
                r.zk_fresh,
                r.pending,
            )
            for i, r in enumerate(reps)
        ]
        f = s.faults
        extra = [
            (
                f.flushed[i] if f.flushed else 0,
                f.log_start[i] if f.log_start else 0,
                f.ctrl_seen[i] if f.ctrl_seen else 0,
                f.unclean >> i & 1,
                f.elr >> i & 1,
                f.expired >> i & 1,
            )
            for i in range(len(reps))
        ]
        k = s.kraft
        if k is not NO_KRAFT and k != NO_KRAFT:
            extra = [(*e, *_kraft_key(k, i)) for i, e in enumerate(extra)]
        keyed = [(k, e) for k, e in zip(keys, extra, strict=True)]
        return sorted(self._ident, key=keyed.__getitem__)

    def describe_action(self, action: tuple) -> dict[str, Any]:
        kind, args = action
        if kind < 0:
            return {"action": "Init", "args": {}}
        a = self.actions[kind]
        return {"action": a.name, "args": dict(zip(a.params, args, strict=True))}

    def follow(self, state: State, steps: list[dict[str, Any]]) -> list[tuple] | None:
        """The run of ``steps`` (each ``{"action", "args"}`` as ``describe_action`` names it)
        from ``state``: one (action, next state) per step, or None at the first step that is
        no transition of the spec from the state before it."""
        out: list[tuple] = []
        for want in steps:
            nxt = next(
                ((a, t) for a, t in self.successors(state) if self.describe_action(a) == want),
                None,
            )
            if nxt is None:
                return None
            out.append(nxt)
            state = nxt[1]
        return out

    def state_label(self, s: State) -> str:
        """A short label for a drawing of the state graph (checker/graph.py's DOT export): the
        recorded leader, epoch and ISR, then each replica's log length and HW ("-" for a
        replica that is down). The full state is the node's tooltip."""
        c = s.coord
        isr = ",".join(str(i) for i in range(len(s.replicas)) if c.isr >> i & 1)
        reps = " ".join(f"{len(r.log)}/{r.hw}" if r.alive else "-" for r in s.replicas)
        return f"L{c.leader} e{c.epoch} {{{isr}}}\n{reps}"

    def state_to_json(self, s: State) -> dict[str, Any]:
        return state_to_json(s)


_new = tuple.__new__  # NamedTuple construction without its Python-level __new__ (hot path)


def _perm_mask(mask: int, pos: list[int]) -> int:
    out = 0
    i = 0
    while mask:
        if mask & 1:
            out |= 1 << pos[i]
        mask >>= 1
        i += 1
    return out


def _renaming(order: list[int]) -> tuple[list[int], tuple[int, ...]]:
    """``(pos, table)`` for the permutation ``order``: ``pos[old]`` is replica ``old``'s new id
    and ``table[m]`` the image of the replica bitmask ``m``."""
    n = len(order)
    pos = [0] * n
    for new, old in enumerate(order):
        pos[old] = new
    return pos, tuple(_perm_mask(m, pos) for m in range(1 << n))


def permute(s: State, order: list[int], tables: dict | None = None) -> State:
    """The state with replica ``order[k]`` renamed ``k``. ``tables`` caches, per permutation,
    its ``_renaming``. Written for speed (it runs on about a fifth of the generated states):
    NamedTuple fields by position (Replica: log 0, hw 1, hw_ckpt 2, alive 3, leader 4, epoch 5,
    isr 6, zk_fresh 7, remote_leo 8, truncating 9, pending 10; Coord: leader 0, epoch 1, isr 2;
    Request: dest 0, leader 1, epoch 2, isr 3, fresh 4, ctrl_epoch 5) and tuple.__new__."""
    if tables is None:
        pos, table = _renaming(order)
    else:
        key = tuple(order)
        renaming = tables.get(key)
        if renaming is None:
            renaming = tables[key] = _renaming(order)
        pos, table = renaming
    reps = []
    replicas = s[0]
    for old in order:
        r = replicas[old]
        rl = r[8]
        lead = r[4]
        reps.append(
            _new(
                Replica,
                (
                    r[0],
                    r[1],
                    r[2],
                    r[3],
                    pos[lead] if lead >= 0 else lead,
                    r[5],
                    table[r[6]],
                    r[7],
                    tuple([rl[o] for o in order]),
                    r[9],
                    r[10],
                ),
            )
        )
    c = s[1]
    coord = _new(Coord, (pos[c[0]], c[1], table[c[2]]))
    reqs = s[2]
    if reqs:
        reqs = tuple(
            sorted(
                [
                    _new(
                        Request,
                        (pos[q[0]], pos[q[1]] if q[1] >= 0 else q[1], q[2], table[q[3]], *q[4:]),
                    )
                    for q in reqs
                ]
            )
        )
    f = s.faults
    if f is not NO_FAULTS and f != NO_FAULTS:
        f = Faults(
            tuple([f.flushed[o] for o in order]) if f.flushed else (),
            tuple([f.log_start[o] for o in order]) if f.log_start else (),
            table[f.unclean],
            table[f.elr],
            f.lost_replies,
            f.retries,
            f.ctrl_epoch,
            tuple([f.ctrl_seen[o] for o in order]) if f.ctrl_seen else (),
            f.failovers,
            table[f.expired],
            f.expiries,
            f.lead_renewed,
        )
    k = s.kraft
    if k is not NO_KRAFT and k != NO_KRAFT:
        k = _permute_kraft(k, order, pos)
    return _new(State, (tuple(reps), coord, reqs, s.history, f, k))


def _kraft_key(k: Kraft, i: int) -> tuple:
    """Replica ``i``'s share of the kraft variables, for the canonical order: its broker epoch
    and what its fetches in flight say apart from replica ids."""
    return (
        k.broker_epoch[i],
        tuple(q[2:] for q in k.fetch_requests if q.follower == i),
        tuple(p[2:] for p in k.fetch_responses if p.follower == i),
        tuple(
            (a.leader_epoch, a.new_isr.bit_count(), a.fresh, a.answered)
            for a in k.alter_partition
            if a.leader == i
        ),
        k.fenced >> i & 1,
        k.shutting_down >> i & 1,
        k.epoch_cache[i] if k.epoch_cache else (),
        k.epoch_ckpt[i] if k.epoch_ckpt else (),
    )


def _permute_kraft(k: Kraft, order: list[int], pos: list[int]) -> Kraft:
    """The kraft variables with replica ``order[j]`` renamed ``j``: fetch messages name their
    follower and leader, the leaders' views of broker epochs are per (leader, follower)."""
    reqs = k.fetch_requests
    if reqs:
        reqs = tuple(sorted(FetchReq(pos[q.follower], pos[q.leader], *q[2:]) for q in reqs))
    resps = k.fetch_responses
    if resps:
        resps = tuple(sorted(FetchResp(pos[p.follower], pos[p.leader], *p[2:]) for p in resps))
    rem = k.remote_epoch
    alters = k.alter_partition
    if alters:
        alters = tuple(
            sorted(
                AlterReq(
                    pos[a.leader],
                    a.leader_epoch,
                    _perm_mask(a.new_isr, pos),
                    pos[a.added] if a.added >= 0 else a.added,
                    a.added_be,
                    a.fresh,
                    a.leader_be,
                    a.answered,
                )
                for a in alters
            )
        )
    return Kraft(
        reqs,
        resps,
        tuple(tuple([rem[o][o2] for o2 in order]) for o in order),
        tuple([k.broker_epoch[o] for o in order]),
        alters,
        _perm_mask(k.fenced, pos),
        _perm_mask(k.shutting_down, pos),
        k.consumer_pos,
        k.consumer_epoch,
        tuple([k.epoch_cache[o] for o in order]) if k.epoch_cache else (),
        tuple([k.epoch_ckpt[o] for o in order]) if k.epoch_ckpt else (),
        # deposed (leader epoch, written since), leader_recovery, min_isr, min_isr_changes: no
        # replica ids in them
        *k[11:],
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
)
KRAFT_PER_REPLICA_KEYS = ("remote_broker_epoch", "broker_epoch", "epoch_cache", "epoch_checkpoint")
# The keys ``state_to_json`` writes only once their mechanism moved them off their constant, with
# the value their absence stands for (``state_from_json`` reads either the same): a format that
# needs every variable in every state (ITF) writes these there.
JSON_ABSENT = {"leader_recovery": "RECOVERED", "min_isr": 0, "min_isr_changes": 0}


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
    return {
        "fetch_requests": [q._asdict() for q in k.fetch_requests],
        "fetch_responses": [
            {**p._asdict(), "records": [list(e) for e in p.records], "diverging": list(p.diverging)}
            for p in k.fetch_responses
        ],
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
    }


def _kraft_from_json(d: dict[str, Any], n: int) -> Kraft:
    if "broker_epoch" not in d:
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
    return out


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
    )


def state_from_json(d: dict[str, Any]) -> State:
    """Inverse of state_to_json (for replaying saved traces)."""
    from .state import Coord, History

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


_tuple_new = tuple.__new__


REDUCTIONS = ("dead-state", "por")


def parse_reduction(reduction: str | None) -> set[str]:
    """The reductions a ``reduction`` string names: None, one name, or names joined by commas
    (``"dead-state,por"``); ValueError for an unknown or repeated name."""
    if reduction is None:
        return set()
    parts = [p.strip() for p in reduction.split(",")]
    for p in parts:
        if p not in REDUCTIONS:
            raise ValueError(
                f"unknown reduction {p!r}; the reductions: {', '.join(REDUCTIONS)} "
                "(several joined by commas)"
            )
    if len(set(parts)) != len(parts):
        raise ValueError(f"reduction {reduction!r} names one twice")
    return set(parts)


def dead_state_refusal(protocol: ProtocolVersion) -> str:
    """Why the dead-state reduction is not sound for ``protocol`` ("" when it is). Its argument
    (docs/reduction.md) reads the spec's actions: a live replica's HW checkpoint reaches no
    decision but through the ``become_follower`` hook, which the built-in versions do not
    override; a version that does (a user's ``--protocol-file``) may read it there."""
    if type(protocol).become_follower is not ProtocolVersion.become_follower:
        return (
            f"the dead-state reduction is not known to be sound for {protocol.name!r}: its "
            "become_follower hook may read a live replica's HW checkpoint (drop --reduction)"
        )
    return ""


def _no_symmetry(s: State) -> State:
    """canonicalize of a model without symmetry (a version with ``replica_symmetric = False``)."""
    return s
