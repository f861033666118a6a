"""An example of your own election rule: kip-320 whose controller always elects the preferred
replica (the lowest replica id among the candidates).

    isr check --protocol-file examples/protocols/preferred_leader.py --replicas 3 --records 1 --crashes 0

``choose_leader`` (spec/protocols/base.py) is the election's last word: the version's rule
computes the candidates of the step that applies (the live ISR members, kip-966's eligible
leader replicas, --unclean's live replicas, a leader move or a controlled shutdown: its
``election`` argument says which) and the hook keeps the ones the controller may pick. It can
only narrow an election, never widen it.

This rule reads replica ids, so the version sets ``replica_symmetric = False``: symmetry
reduction assumes that renaming replicas changes nothing, and would otherwise merge states that
this rule tells apart (the check then runs without it and its result says "symmetry off"). A
rule that reads only the logs (``logs[i]``: replica i's log, entries (epoch, record)) keeps the
symmetry. At 3 replicas, 1 record, 2 epochs and no crash every property holds in 50,377 states
(kip-320, with any ISR member electable: 27,480 under symmetry, 62,168 without).
"""

from isr.spec.protocols.kip_320 import Kip320


class PreferredLeader(Kip320):
    name = "preferred-leader"
    description = "kip-320 whose controller always elects the lowest-id candidate"
    replica_symmetric = False  # the rule reads ids

    def choose_leader(self, candidates: int, logs: tuple, election: str) -> int:
        return candidates & -candidates  # the lowest set bit: the first of the assignment


PROTOCOL = PreferredLeader()
