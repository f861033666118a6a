"""The ISR spec as a model for the checker (checker/model.py's interface): Init, Next (the
actions of the protocol version), the properties, and the reductions (the dead-state reduction
here, partial orders in spec/por.py). Symmetry over replica ids is spec/symmetry.py; the state's
JSON form spec/codec.py."""

from __future__ import annotations

from typing import Any

from .actions import ACTIONS, ActionDef
from .actions.common import Ctx, clamp_offsets
from .codec import state_to_json
from .config import Config
from .liveness import make_liveness
from .properties import make_properties
from .protocols import PROTOCOLS, ProtocolVersion
from .state import NO_FAULTS, Replica, State, from_wire, initial_state, to_wire
from .symmetry import ReplicaSymmetry


class IsrSpec(ReplicaSymmetry):
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
        # fault modes add per-replica variables the fast canonical order does not read
        faulty = (
            self.ctx.initial_faults != NO_FAULTS
            or config.retries > 0
            or config.session_expiries > 0
            or self.ctx.split_fetch
            or self.ctx.reassign  # (the replica set: ZooKeeper-era versions too)
        )
        self._init_symmetry(self.ctx.n, faulty, self.ctx.protocol.replica_symmetric)
        # the dead-state reduction: the canonical form forgets what no step reads any more
        self.reduction = reduction
        self.forget = None
        parts = parse_reduction(reduction)
        if parts and config.reassignments:
            raise ValueError(
                "--reassignments is not covered by the reductions yet (its footprints and what"
                " a removed replica leaves dead are not argued): run it without --reduction"
            )
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
        return [
            initial_state(
                self.ctx.n, self.ctx.initial_faults, self.ctx.initial_kraft, self.ctx.reassign
            )
        ]

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
        """The state as JSON (spec/codec.py: the one form every file of the project writes)."""
        return state_to_json(s)


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
