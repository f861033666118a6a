"""An example of your own protocol version: kip-320 without fetch fencing.

Run it with any command that builds the spec:

    isr check --protocol-file examples/protocols/my_kip.py --replicas 3 --records 1 --epochs 3 --crashes 0
    isr matrix --protocols kip-320 --protocol-file examples/protocols/my_kip.py --replicas 3 --crashes 0

A version is a subclass of a built-in one (spec/protocols/: one module per version, each reading
as "what this KIP changed") that overrides the hooks its change touches; everything else is
inherited. The hooks (spec/protocols/base.py): ``become_follower``, ``on_restart``,
``truncation_offset``, ``fetch_fenced``, ``isr_join_floor``, ``new_leader_hw``, ``high_watermark``
(the commit rule), ``choose_leader`` (the election rule; see preferred_leader.py); or set one of
the flags the base hooks read (``fenced_fetch``, ``isr_join_needs_epoch_start``, ...).

The question this one asks: does KIP-320 still need its fencing once it has KIP-279's truncation
and KAFKA-7128's ISR-join rule? ``fetch_fenced`` says when a leader refuses a fetch made at
another leader epoch; here never, as before KIP-320. The checker says it does: a follower still at
an old epoch (it missed a LeaderAndIsr, R8) is counted by the leader of a newer epoch, then
applies the older LeaderAndIsr and truncates against a stale leader, in whose ISR it now sits
without a record below the HW (WeakIsr violated in 7 steps, StrongIsr in 9; README, "Check your
own protocol change", gives the run).

The file is imported as Python, so it can do anything Python can: load only files you trust.
The result headers carry the file's path and SHA-256 (``protocol_file``, ``protocol_sha256``);
``isr replay`` of a counterexample refuses the file once its content changed.
"""

from isr.spec.protocols.kip_320 import Kip320


class Kip320WithoutFencing(Kip320):
    name = "my-kip"  # what headers and tables show; must not be a built-in name
    description = "kip-320 without fetch fencing: a leader serves fetches made at any epoch"

    def fetch_fenced(self, leader_epoch: int, follower_epoch: int) -> bool:
        return False  # the one change: no FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH


PROTOCOL = Kip320WithoutFencing()
