"""kip-966: Kafka 3.7+, "Eligible Leader Replicas" (KIP-966), with KIP-380/KIP-903 broker epochs.

What it changes from kip-320:
* the controller keeps an ELR beside the ISR: a replica removed while the ISR falls below
  min.insync.replicas stays eligible for a clean election (``eligible_leader_replicas``);
* the HW advances only while the ISR has at least min.insync.replicas members;
* a broker that restarts after an unclean shutdown (lose-unflushed, R14) reports it: the
  controller removes it from the ELR and the ISR and never elects it cleanly until it is back in
  the ISR;
* broker epochs fence a previous incarnation (KIP-380): requests in flight to it are rejected
  after a restart, and a leader no longer counts its fetches (KIP-903) (``broker_epoch_fencing``).
"""

from __future__ import annotations

from .kip_320 import Kip320


class Kip966(Kip320):
    name = "kip-966"
    description = (
        "Kafka 3.7+: kip-320 plus eligible leader replicas (HW needs min ISR; an unclean shutdown"
        " makes a replica ineligible; broker epochs fence requests to a previous incarnation)"
    )
    eligible_leader_replicas = True
    hw_needs_min_isr = True
    broker_epoch_fencing = True
    startup_needs_failure = False  # KIP-380: a bounce is handled (BrokerRestart)


KIP_966 = Kip966()
