"""Each fault mode is needed to reach its violation (it disappears when the mode is off), and a
version exists that the mode does not break. Bounds are small; lengths are exact."""

from __future__ import annotations

import pytest
from isr.checker.bfs import check_bfs
from isr.spec import Config, ConfigError, IsrSpec
from isr.spec.state import NO_FAULTS

from .helpers import SMALL, verdicts

LOSS = ["NoCommittedLoss", "NoAckedLoss"]


def test_with_every_mode_off_the_state_carries_no_fault_variables():
    m = IsrSpec(Config(**SMALL))
    assert m.init_states()[0].faults is NO_FAULTS
    assert not any(a.name in ("BrokerFlush", "ProducerRetry") for a in m.actions)


# --- unclean leader election (R9) ---------------------------------------------------------------
def test_unclean_election_loses_an_acknowledged_record():
    on = verdicts(LOSS, protocol="kip-320", crashes=2, unclean=True, **SMALL)
    off = verdicts(LOSS, protocol="kip-320", crashes=2, **SMALL)
    assert on["NoCommittedLoss"] == (False, 5)
    assert off["NoCommittedLoss"] == (True, None)


def test_unclean_election_keeps_logs_matching_in_kip_320():
    v = verdicts(
        ["LogMatching", "TypeOK", "HwMonotonic", "LeaderInIsr"],
        protocol="kip-320",
        crashes=2,
        unclean=True,
        **SMALL,
    )
    assert all(h is True for h, _ in v.values()), v


# --- acks and min.insync.replicas (R6) ----------------------------------------------------------
def test_acks_1_loses_a_record_on_leader_failover():
    on = verdicts(LOSS, protocol="kip-320", crashes=1, acks="1", **SMALL)
    off = verdicts(LOSS, protocol="kip-320", crashes=1, **SMALL)
    # 3 steps: a preferred election moves leadership before the follower has the record
    assert on["NoAckedLoss"] == (False, 3)
    assert on["NoCommittedLoss"] == (True, None)  # it speaks only of acks=all writes
    assert off["NoAckedLoss"] == (True, None)


def test_mixed_acks_lose_only_acks_1_writes():
    v = verdicts(LOSS, protocol="kip-320", crashes=1, acks="mixed", **SMALL)
    assert v == {"NoCommittedLoss": (True, None), "NoAckedLoss": (False, 3)}


def test_acks_0_acknowledges_nothing():
    v = verdicts(LOSS, protocol="kip-320", crashes=1, acks="0", **SMALL)
    assert v == {"NoCommittedLoss": (True, None), "NoAckedLoss": (True, None)}


# --- crash that loses the unflushed tail (R14) --------------------------------------------------
def test_losing_the_unflushed_tail_of_every_isr_member_loses_a_committed_record():
    on = verdicts(LOSS, protocol="kip-320", crashes=2, lose_unflushed=True, **SMALL)
    off = verdicts(LOSS, protocol="kip-320", crashes=2, **SMALL)
    assert on["NoCommittedLoss"] == (False, 6)
    assert off["NoCommittedLoss"] == (True, None)


def test_kip_966_keeps_committed_records_across_unclean_shutdowns():
    v = verdicts(
        [*LOSS, "LogMatching", "TypeOK"],
        protocol="kip-966",
        crashes=2,
        lose_unflushed=True,
        **SMALL,
    )
    assert all(h is True for h, _ in v.values()), v


# --- producer retries (R6, R15) -----------------------------------------------------------------
def test_a_retry_after_a_lost_reply_duplicates_a_record():
    on = verdicts(["NoDuplicates"], protocol="kip-320", crashes=1, retries=1, **SMALL)
    off = verdicts(["NoDuplicates"], protocol="kip-320", crashes=1, **SMALL)
    assert on["NoDuplicates"] == (False, 2)
    assert off["NoDuplicates"] == (True, None)


def test_idempotence_removes_the_duplicates_and_breaks_nothing():
    v = verdicts(None, protocol="kip-320", crashes=1, retries=1, idempotence=True, **SMALL)
    assert all(h is True for h, _ in v.values()), v


# --- retention and the fetch below the log start offset (R12) -----------------------------------
def test_retention_reaches_the_reset_to_the_leaders_log_start_and_breaks_nothing():
    v = verdicts(None, protocol="kip-320", crashes=1, retention=True, **SMALL)
    assert v["SometimesLogStartReset"] == (True, None)
    assert all(h is True for h, _ in v.values()), v
    assert "SometimesLogStartReset" not in verdicts(None, protocol="kip-320", crashes=1, **SMALL)


def test_a_follower_hw_never_falls_below_its_log_start():
    """Kafka bounds a follower's HW below by its log start offset (UnifiedLog.
    updateHighWatermark). Without the bound, majority-quorum under retention broke TypeOK in 11
    steps (2/1/2/2): follower 1 deleted record 1's segment (log start 1), the leader crashed and
    came back with HW 0 and, committing only entries of its own epoch, answered HW 0; the
    follower took it. The regenerated docs/matrix showed it."""
    cfg = Config(
        replicas=2, records=1, epochs=2, crashes=2, retention=True, protocol="majority-quorum"
    )
    res = check_bfs(IsrSpec(cfg), properties=["TypeOK"])
    assert res.complete and res.properties[0].holds is True
    assert res.distinct_states == 2832


# --- controller failover (R9, R18) --------------------------------------------------------------
def test_controller_failover_makes_a_zombie_leader_before_broker_epochs():
    on = verdicts(LOSS, protocol="kip-320", crashes=1, controller_failovers=1, **SMALL)
    off = verdicts(LOSS, protocol="kip-320", crashes=1, **SMALL)
    assert on["NoCommittedLoss"] == (False, 11)  # 10 before R8's in-order delivery
    assert off["NoCommittedLoss"] == (True, None)
    fenced = verdicts(LOSS, protocol="kip-966", crashes=1, controller_failovers=1, **SMALL)
    assert fenced["NoCommittedLoss"] == (True, None)


def test_bad_fault_settings_are_one_line_errors():
    with pytest.raises(ConfigError, match="retries must"):
        Config(retries=-1).validate()
    with pytest.raises(ConfigError, match="idempotence needs retries"):
        Config(idempotence=True).validate()
    with pytest.raises(ConfigError, match="acks must"):
        Config(acks="2").validate()


# --- session expiry: a running broker loses its session, a zombie (R7, R8, R9, R18) --------------
def test_with_session_expiry_off_the_model_is_unchanged():
    m = IsrSpec(Config(protocol="kip-320", crashes=1, **SMALL))
    assert not {"CoordinationExpireSession", "BrokerRenewSession"} & set(m.action_names)
    # as tests/checker/spark pins (leader moves in; 5,626 before R8's in-order delivery)
    assert check_bfs(m).distinct_states == 2902


def test_session_expiry_keeps_kip_320_safe():
    m = IsrSpec(Config(protocol="kip-320", crashes=1, session_expiries=1, **SMALL))
    res = check_bfs(m)
    assert res.complete and res.distinct_states == 21312  # 44,606 before R8's order
    assert all(p.holds is not False for p in res.properties), res.properties
    assert "+session-expiry" in m.name


def test_a_session_bounce_breaks_the_original_designs_new_leader_hw():
    """R16: a new leader sets HW := its own LEO and passes its HW over a record its follower
    lacks. A leader whose session expires and comes back is re-elected (a new incarnation); a
    preferred election alone (R9) opens the same hole, with no session expiry at all."""
    on = verdicts(["StrongIsr"], protocol="original-design", crashes=0, session_expiries=1, **SMALL)
    off = verdicts(["StrongIsr"], protocol="original-design", crashes=0, **SMALL)
    assert on["StrongIsr"] == (False, 5)
    assert off["StrongIsr"] == (False, 5)


def test_a_zombie_opens_the_hw_truncation_hole_without_any_crash():
    kw = dict(replicas=3, records=1, epochs=2, crashes=0, protocol="hw-truncation")
    on = verdicts(["StrongIsr"], session_expiries=1, **kw)
    off = verdicts(["StrongIsr"], **kw)
    # leader moves (R9) open it without a session expiry too, in as few steps: a controlled
    # shutdown takes broker 1 out of the ISR; leader 0, re-elected at epoch 2, keeps follower
    # 2's fetched LEO (makeLeader resets it only for a new leader), so its HW passes record 1 at
    # once, and follower 2, told of epoch 2, cuts its log to its own lagging HW (6 steps; 7
    # while a re-elected leader forgot its followers)
    assert on["StrongIsr"] == (False, 6)
    assert off["StrongIsr"] == (False, 6)


def test_session_expiry_states_round_trip_through_json():
    from isr.spec.codec import state_from_json

    m = IsrSpec(Config(protocol="kip-320", crashes=0, session_expiries=1, **SMALL))
    s = m.init_states()[0]
    for name in ("CoordinationExpireSession", "BrokerRenewSession"):
        s = next(t for (k, _a), t in m.successors(s) if m.action_names[k] == name)
        assert state_from_json(m.state_to_json(s)) == s
    assert s.faults.lead_renewed and not s.faults.expired  # the leader came back
    with pytest.raises(ConfigError, match="session_expiries must"):
        Config(session_expiries=-1).validate()
