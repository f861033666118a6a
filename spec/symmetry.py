"""Symmetry over replica ids: replicas are interchangeable, so states that differ only by a
renaming of them have the same futures up to that renaming, and the checker stores one
representative per orbit (R1's replicas carry no identity the protocol reads; a version whose
rule does read ids says so with ``ProtocolVersion.replica_symmetric = False`` and gets none).

``ReplicaSymmetry`` is the model's half of it (``canonicalize``, ``canonicalize_with_permutation``,
``permute``: checker/model.py's interface), mixed into ``spec.model.IsrSpec``; ``permute`` below
renames every replica id in a state. Both run on every generated state, hence the style: fields by
position, ``tuple.__new__``, no sort when the keys are already in order.
``tests/spec/test_symmetry.py`` holds the fast order equal to its plain definition."""

from __future__ import annotations

from .state import (
    NO_FAULTS,
    NO_KRAFT,
    AlterReq,
    Coord,
    Faults,
    FetchReq,
    FetchResp,
    Kraft,
    Producer,
    Replica,
    Request,
    State,
)


class ReplicaSymmetry:
    """The canonical form of a state under renamings of the replicas (the model's part)."""

    def _init_symmetry(self, n: int, faulty: bool, symmetric: bool) -> None:
        """``faulty``: a fault mode adds per-replica variables, so the canonical order reads
        them too (``_order_faulty``). ``symmetric``: False for a version whose rule reads replica
        ids; every state is then its own representative, whatever the engine asks for."""
        self._faulty = faulty
        self._ident = list(range(n))
        # per permutation, its renaming (see permute)
        self._mask_tables: dict[tuple[int, ...], tuple[list[int], tuple[int, ...]]] = {}
        # (the state last expanded, whether its replicas are in the canonical order or None:
        # not known yet); see canonicalize. The model's ``successors`` sets it. One attribute,
        # so that a reader always sees a consistent pair even if two threads shared this model.
        self._expanded: tuple[State | None, bool | None] = (None, None)
        self.symmetric = symmetric
        if not symmetric:
            self.canonicalize = _no_symmetry  # type: ignore[method-assign]
            self.canonicalize_with_permutation = self._no_symmetry_with_permutation  # type: ignore[method-assign]

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
                f.producer_state_start[i] if f.producer_state_start else 0,
            )
            for i in range(len(reps))
        ]
        k = s.kraft
        if k is not NO_KRAFT and k != NO_KRAFT:
            extra = [(*e, *_kraft_key(k, i)) for i, e in enumerate(extra)]
        keyed = [(k, e) for k, e in zip(keys, extra, strict=True)]
        return sorted(self._ident, key=keyed.__getitem__)


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
    Request: dest 0, leader 1, epoch 2, isr 3, fresh 4, ctrl_epoch 5, replicas 6, pc 7) and tuple.__new__."""
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
                if not s.kraft.assigned
                else [  # KIP-455: a request names its partition state's replica set too
                    _new(
                        Request,
                        (
                            pos[q[0]],
                            pos[q[1]] if q[1] >= 0 else q[1],
                            q[2],
                            table[q[3]],
                            q[4],
                            q[5],
                            table[q[6]],
                            q[7],
                        ),
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
            _permute_producer(f.producer, pos) if f.producer else (),
            tuple([f.producer_state_start[o] for o in order]) if f.producer_state_start else (),
        )
    k = s.kraft
    if k is not NO_KRAFT and k != NO_KRAFT:
        k = _permute_kraft(k, order, pos)
    return _new(State, (tuple(reps), coord, reqs, s.history, f, k))


def _permute_producer(p: Producer, pos: list[int]) -> Producer:
    """--idempotence: the producer's batches name the broker that answered each."""
    if not any(b[3] >= 0 for b in p.batches):
        return p
    return p._replace(
        batches=tuple((*b[:3], pos[b[3]] if b[3] >= 0 else -1, *b[4:]) for b in p.batches)
    )


def _kraft_key(k: Kraft, i: int) -> tuple:
    """Replica ``i``'s share of the kraft variables, for the canonical order: its broker epoch
    and what its fetches in flight say apart from replica ids. (A ZooKeeper-era version with
    --reassignments has the KIP-455 fields alone: ``spec.state.initial_zk_reassign``.)"""
    if not k.broker_epoch:
        return (k.assigned >> i & 1, k.adding >> i & 1, k.removing >> i & 1, k.views[i].bit_count())
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
        # KIP-455: in the replica set, adding, removing; its view's size as leader
        k.assigned >> i & 1,
        k.adding >> i & 1,
        k.removing >> i & 1,
        k.views[i].bit_count() if k.views else 0,
    )


def _permute_kraft(k: Kraft, order: list[int], pos: list[int]) -> Kraft:
    """The kraft variables with replica ``order[j]`` renamed ``j``: fetch messages name their
    follower and leader, the leaders' views of broker epochs are per (leader, follower)."""
    if not k.broker_epoch:  # a ZooKeeper-era version with --reassignments: KIP-455's alone
        return k._replace(
            assigned=_perm_mask(k.assigned, pos),
            adding=_perm_mask(k.adding, pos),
            removing=_perm_mask(k.removing, pos),
            views=tuple([_perm_mask(k.views[o], pos) for o in order]),
        )
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
        # deposed (leader epoch, written since), leader_recovery, min_isr, min_isr_changes,
        # delete_records: no replica ids in them
        *k[11:16],
        # KIP-455 (--reassignments): the replica set, adding and removing masks, the count, and
        # per broker its view of the replica set (a mask). Broker R-1 starting as the spare
        # breaks no symmetry: it is renamed with everything it holds (its bit in ``assigned``)
        *(
            (
                _perm_mask(k.assigned, pos),
                _perm_mask(k.adding, pos),
                _perm_mask(k.removing, pos),
                k.reassignments,
                tuple([_perm_mask(k.views[o], pos) for o in order]),
            )
            if k.assigned
            else k[16:]
        ),
    )


def _no_symmetry(s: State) -> State:
    """canonicalize of a model without symmetry (a version with ``replica_symmetric = False``)."""
    return s
