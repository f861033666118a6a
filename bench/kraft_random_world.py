"""The random kraft schedule the mechanism benches share (bench/kraft_logstart_random.py,
bench/kraft_reassign_random.py): 25 random steps on the simulation, each a write, a crash (one
broker kept alive), a restart or the mechanism's own step, then heal. The draws are made in one
fixed order, so a seed names the same schedule as before the two were merged (their tests pin
seeds)."""

from __future__ import annotations

import random
from collections.abc import Callable

from isr.impl.sim.world import World

TP = ("t", 0)


def random_run(
    w: World,
    rng: random.Random,
    restart_below: float,
    mechanism: Callable[[World, random.Random, float], None],
) -> World:
    """``w`` after 25 random steps: a write below 0.4, a crash below 0.5, a restart below
    ``restart_below``, else ``mechanism(w, rng, r)``; then healed and run 1.5 s."""
    w.run_until(100)
    k = 0
    for _ in range(25):
        r = rng.random()
        if r < 0.4:
            w.produce(TP, f"m{k}")
            k += 1
        elif r < 0.5:
            b = rng.choice(w.ids)
            if w.nodes[b].alive and sum(w.nodes[x].alive for x in w.ids) > 1:
                w.crash(b)
        elif r < restart_below:
            b = rng.choice(w.ids)
            if not w.nodes[b].alive:
                w.restart(b)
        else:
            mechanism(w, rng, r)
        w.run_until(w.now + rng.choice([5, 20, 100, 400]))
    w.heal()
    w.run_until(w.now + 1500)
    return w
