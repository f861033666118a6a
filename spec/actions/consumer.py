"""The consumer's action (R5)."""

from __future__ import annotations

from ..state import State
from .common import Ctx, sorted_add


def consumer_fetch(ctx: Ctx, s: State, kind: int, out: list) -> None:
    """ConsumerFetch(leader): a consumer reads everything below the HW of a replica that believes
    it leads (R5: only offsets < HW are visible). Reading the whole visible prefix at once loses
    nothing: any partial read shows a subset, and the safety property is about what was shown.
    Listed only when it shows something new."""
    h = s.history
    shown = None  # the set of what was shown, made only when some replica could show something
    for l, r in enumerate(s.replicas):
        hw = r.hw
        if not hw or not r.alive or r.leader != l:
            continue
        if shown is None:
            shown = set(h.shown)
        log = r.log
        new = [e for e in [(o, log[o][0]) for o in range(hw)] if e not in shown]
        if new:
            out.append(
                ((kind, (l,)), s._replace(history=h._replace(shown=sorted_add(h.shown, new))))
            )
