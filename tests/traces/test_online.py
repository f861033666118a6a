"""Online checking (issue 6, item 5): a hypothesis state machine drives the reference
implementation in the deterministic simulation and checks every new trace event against the spec
as it happens."""

from __future__ import annotations

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from isr.impl.sim.world import World, sim_config
from isr.traces.validator.mapping import Unsupported
from isr.traces.validator.validate import OnlineValidator, Rejection


class OnlineCheck(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.w = World(3, 1, 3, sim_config("kip-320"), seed=7, full_log_in_trace=False)
        self.w.run_until(200)  # the cluster is up (see VALIDATION.md, known gaps)
        head = {
            "format": "isr-trace",
            "version": 1,
            "protocol": "kip-320",
            "config": self.w.config.to_dict(),
            "cluster": {"assignments": {"t-0": [0, 1, 2]}},
        }
        self.v = OnlineValidator(head)
        self.done = 0
        self.sent = 0
        self.dead: set[int] = set()
        self.unsupported = False
        self._check()

    def _check(self) -> None:
        new = self.w.trace[self.done :]
        self.done = len(self.w.trace)
        if self.unsupported:
            return  # the run left what the spec can express: nothing more to check
        try:
            self.v.feed(new)
        except Rejection as rj:
            raise AssertionError(f"{rj.reason}: {rj.mismatches}") from None
        except Unsupported:
            self.unsupported = True

    @rule(n=st.integers(1, 3))
    def produce(self, n: int) -> None:
        for _ in range(n):
            self.w.produce(("t", 0), f"o{self.sent}")
            self.sent += 1
        self._check()

    @rule(ms=st.sampled_from([5, 50, 300, 900]))
    def run(self, ms: int) -> None:
        self.w.run_until(self.w.now + ms)
        self._check()

    @rule()
    def consume(self) -> None:
        self.w._refresh_metadata()
        self.w._apply("consumer", self.w.consumer.poll(("t", 0)))
        self.w.run_until(self.w.now + 5)
        self._check()

    @precondition(lambda self: len(self.dead) < 2)
    @rule(b=st.integers(0, 2))
    def crash(self, b: int) -> None:
        self.w.crash(b)
        self.dead.add(b)
        self._check()

    @precondition(lambda self: bool(self.dead))
    @rule(data=st.data())
    def restart(self, data: st.DataObject) -> None:
        b = data.draw(st.sampled_from(sorted(self.dead)))
        self.w.restart(b)
        self.dead.discard(b)
        self._check()

    @invariant()
    def every_event_checked(self) -> None:
        assert self.unsupported or self.v.seen == len(self.w.trace)


OnlineCheck.TestCase.settings = settings(
    max_examples=40,
    stateful_step_count=25,
    deadline=None,
    derandomize=True,  # the same schedules on every run: CI failures reproduce
    suppress_health_check=list(HealthCheck),
)
TestOnline = OnlineCheck.TestCase


def test_online_catches_a_mutant() -> None:
    """The same online check fails on a broken broker (acks=all answered on append)."""
    from isr.impl.mutants import MUTANTS

    mu = MUTANTS["ack-before-commit"]
    w = World(3, 1, 3, sim_config("kip-320"), seed=1, broker_cls=mu.broker_cls)
    head = {
        "format": "isr-trace",
        "version": 1,
        "protocol": "kip-320",
        "config": w.config.to_dict(),
        "cluster": {"assignments": {"t-0": [0, 1, 2]}},
    }
    v = OnlineValidator(head)
    w.run_until(100)
    w.produce(("t", 0), "x")
    w.run_until(200)
    try:
        v.feed(w.trace)
    except Rejection as rj:
        assert "ProduceAcked" in rj.reason
    else:
        raise AssertionError("the online check accepted acks before commit")
