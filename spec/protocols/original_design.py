"""original-design: the design seed 004 describes (R16), for comparison.

What it changes from hw-truncation: the first surviving ISR member to register leads and sets its
HW to its own LEO, instead of keeping the HW it had (``new_leader_hw``). Followers still truncate
to their HW (R10, R13). A new leader so declares committed whatever it holds, including records
no other replica has.
"""

from __future__ import annotations

from .hw_truncation import HwTruncation


class OriginalDesign(HwTruncation):
    name = "original-design"
    description = (
        "seed 004 (R16): the first surviving ISR member to register leads and sets HW := its LEO;"
        " followers truncate to their HW"
    )
    new_leader_hw_is_leo = True


ORIGINAL_DESIGN = OriginalDesign()
