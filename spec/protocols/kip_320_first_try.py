"""kip-320-first-try: KIP-320's first design, reworked before release, as its discussion and the
public TLA+ module Kip320FirstTry describe it.

What it changes from kip-279: a follower does not truncate when it becomes follower
(``truncate_on_divergence``: no truncation phase); it fetches at once, its fetch carrying the
epoch of its last entry, and the leader checks that epoch against its own entry at the offset
before the fetch offset. A match proves the logs agree up to the fetch offset, so the leader counts
the fetch (remote LEO, HW, ISR); a mismatch (or a follower log longer than the leader's) is
answered LOG_TRUNCATION and the follower truncates by KIP-279's walk back. It keeps KAFKA-7128's
ISR-join rule, as the public module does.

What it misses: nothing checks that the follower is at the leader's *current* epoch, so a
follower still acting on an older LeaderAndIsr is counted by a leader it is not following in that
epoch; when it later applies a LeaderAndIsr naming a would-be leader with a different log, it
truncates records the HW already covered. The released KIP-320 (kip_320.py) added the current
leader epoch to fetches (``fenced_fetch``) and kept truncation on becoming follower.
"""

from __future__ import annotations

from .kip_279 import Kip279


class Kip320FirstTry(Kip279):
    name = "kip-320-first-try"
    description = (
        "KIP-320's first design (reworked before release): fetches carry the follower's last fetched"
        " epoch, not its current leader epoch; truncation only on a LOG_TRUNCATION answer"
    )
    truncate_on_divergence = True
    isr_join_needs_epoch_start = True


KIP_320_FIRST_TRY = Kip320FirstTry()
