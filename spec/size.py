"""How large a model's state space is, roughly, before it is searched: the estimate behind
the CLI's defaults (`--workers`, `--store`), its note before a long run and its refusal of
bounds no exhaustive run can finish (cli/models.py ``refuse_hopeless``). A fact of the spec's
bounds, measured on it, so it lives beside them; no engine reads it."""

from __future__ import annotations

import math

from .config import Config
from .protocols import PROTOCOLS, ProtocolVersion

# A rough estimate of the distinct states of a configuration, calibrated on kip-320 runs of the
# sequential checker (2,1,2,1): 1,287; (2,1,2,2): 8,223; (2,2,2,2): 58,820; (2,1,3,2): 36,327;
# (2,1,4,2): 143,525; (2,1,2,3): 27,605; (3,1,2,1): 35,653; (3,2,2,1): 554,880; (2,3,3,2):
# 1,391,444. Leader moves without a crash (ControllerMoveLeader, ControllerShutdownBroker) made
# the models larger: (2,1,2,2) 21,991 (x2.7), (3,1,2,1) 542,445 (x15); the base below is scaled
# by those factors (4 and 5 replicas, unmeasured, by x4). Measured again after issue 25 (each
# broker's requests in order, a re-elected leader's state kept, a missed bounce sending
# nothing): (2,1,2,1) 2,902; (2,1,2,2) 7,787; (2,1,3,2) 34,618; (2,2,3,2) 326,671; (3,1,2,0)
# 15,700; (3,1,3,0) 232,600; (3,1,2,1) 173,371; (3,1,3,1) 2,433,849; (3,2,2,1) 3,057,459: an
# epoch is x14-15 at 3 replicas, a record x17.6, so (3,2,3,1) is about 4e7, which the
# constants below also give (10^7.7); they overestimate the smaller models by x1.2-6.
# It is meant to be right within a factor of 10 or so, and the limits below are
# far above anything a run has finished (the largest listed are ~3e6): only the clearly hopeless
# is refused, so models that grow (new actions) stay accepted.
_BASE = {2: 3_500, 3: 542_445, 4: 4.0e6, 5: 1.2e8}  # records 1, epochs 2, crashes 1
_PER_RECORD = {2: 7.0, 3: 15.5, 4: 30.0, 5: 60.0}
_PER_EPOCH = {2: 4.5, 3: 6.0, 4: 8.0, 5: 10.0}
_PER_CRASH = {2: 5.0, 3: 6.0, 4: 8.0, 5: 10.0}
_PER_FAULT = 5.0  # each retry, controller failover, session expiry
# A version with the split fetch (kraft): fetches and AlterPartitions in flight are state.
# Measured against kip-320: (2,1,2,1) 781,691 / 5,626 = x139 (issue 25's Kafka 4.x kraft: the
# fence's batch, unfenced pauses, unclean-shutdown registration, the asynchronous checkpoint;
# x93 before it, with the partition epoch apart, KIP-841, KIP-392's consumer and the epoch
# cache's own state; x75 before the last two, x22.5 before the partition epoch); (3,1,2,0)
# 9,038,249 / 27,480 = x329 before those, not measured since (4 and 5 replicas extrapolated by
# x10 per replica).
_SPLIT_FETCH = {2: 139.0, 3: 330.0, 4: 3.3e3, 5: 3.3e4}


def estimate_log10_states(cfg: Config, version: ProtocolVersion | None = None) -> float:
    """log10 of a rough estimate of the distinct states of ``cfg`` (see above); ``version``:
    the version object when it is not the built-in one ``cfg`` names (a user's)."""
    r = cfg.replicas
    x = math.log10(_BASE[r])
    x += (cfg.records - 1) * math.log10(_PER_RECORD[r]) if cfg.records else -math.log10(18)
    x += (cfg.epochs - 2) * math.log10(_PER_EPOCH[r])
    x += (cfg.crashes - 1) * math.log10(_PER_CRASH[r])
    x += (cfg.retries + cfg.controller_failovers + cfg.session_expiries) * math.log10(_PER_FAULT)
    x += math.log10(2) * cfg.unclean + math.log10(4) * (cfg.lose_unflushed + cfg.retention)
    x += math.log10(4) * cfg.delete_records
    x += math.log10(4) * (cfg.acks == "mixed")
    version = version or PROTOCOLS.get(cfg.protocol)
    if version is not None and version.split_fetch:
        x += math.log10(_SPLIT_FETCH[r])
    return x
