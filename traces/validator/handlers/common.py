"""Handler builders shared by the handlers of several actors.

A handler maps (validator, event, candidate, mismatches) to the next candidates. ``generic_handler``
builds one that takes the spec action the event names, with the event's arguments, and checks
the acting replica against what the event observed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from isr.spec.state import State

from ..candidates import Cand, strip_history
from ..mapping import Event

if TYPE_CHECKING:
    from .view import PartitionView as PartitionValidator


# ---- handlers: (validator, event, candidate, mismatches) -> next candidates ------------------
def generic_handler(
    name: str,
    args_of: Callable[[PartitionValidator, Event], tuple],
    actor: Callable[[PartitionValidator, Event], int],
    stutter: Callable[[PartitionValidator, Event, State, int], bool] | None = None,
) -> Callable:
    def handler(v: PartitionValidator, ev: Event, c: Cand, mism: list[str]) -> list[Cand]:
        s, pend, ack = c
        args = args_of(v, ev)
        i = actor(v, ev)
        out: list[Cand] = []
        for _a, t in v.steps(s, name, args):
            t, gained = strip_history(t)
            got = (t, gained) if i < 0 else v.fit(ev, i, t, gained, mism)
            if got is not None:
                t, gained = got
                out.append((t, pend, ack | gained if gained else ack))
        if stutter is not None and stutter(v, ev, s, i) and (i < 0 or v.check(ev, i, s, mism)):
            out.append(c)
        if not out and not mism:
            mism.append(f"{name}{args} is not enabled")
        return out

    return handler


def node_rep(v: PartitionValidator, ev: Event) -> int:
    return v.pm.rep(ev["node"])


def arg_rep(key: str) -> Callable[[PartitionValidator, Event], int]:
    return lambda v, ev: v.pm.rep(ev["args"][key])
