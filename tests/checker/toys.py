"""Toy models with state spaces small enough to count by hand."""

from __future__ import annotations

from isr.checker.model import Property, SimpleModel


def grid(n: int, properties=()) -> SimpleModel:
    """(x, y) in 0..n each, actions IncX and IncY: (n+1)**2 states, depth 2n, one deadlock."""

    def nxt(s):
        x, y = s
        if x < n:
            yield (0, ()), (x + 1, y)
        if y < n:
            yield (1, ()), (x, y + 1)

    return SimpleModel("grid", ["IncX", "IncY"], lambda: [(0, 0)], nxt, properties)


def tokens(k: int, top: int = 2) -> SimpleModel:
    """k interchangeable tokens, each 0..top; Inc(i) raises token i. Symmetric under permutations
    of the tokens: sorted tuples are canonical."""

    def nxt(s):
        for i, v in enumerate(s):
            if v < top:
                yield (0, (i,)), s[:i] + (v + 1,) + s[i + 1 :]

    return SimpleModel(
        "tokens",
        ["Inc"],
        lambda: [(0,) * k],
        nxt,
        [Property("NotAllTop", "always", lambda s: not all(v == top for v in s))],
        canon=lambda s: tuple(sorted(s)),
    )


def with_dec(n: int) -> SimpleModel:
    """A counter 0..n with Inc, and Dec enabled only at 3: violates the action property Monotonic."""

    def nxt(s):
        (x,) = s
        if x < n:
            yield (0, ()), (x + 1,)
        if x == 3:
            yield (1, ()), (x - 1,)
        if x == n:
            yield (2, ()), (x,)  # a stuttering step keeps the top state from deadlocking

    return SimpleModel(
        "counter",
        ["Inc", "Dec", "Stay"],
        lambda: [(0,)],
        nxt,
        [
            Property("Monotonic", "action", lambda s, a, t: t[0] >= s[0]),
            Property("ReachesTop", "sometimes", lambda s: s[0] == n),
            Property("ReachesMinusOne", "sometimes", lambda s: s[0] == -1),
        ],
    )
