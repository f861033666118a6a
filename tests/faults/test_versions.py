"""The three design comparisons as protocol versions: original-design (R16), majority-quorum (R17)
and kip-966."""

from __future__ import annotations

from .helpers import SMALL, verdicts


def test_original_design_commits_what_the_new_leader_happens_to_have():
    v = verdicts(["StrongIsr", "NoCommittedLoss"], protocol="original-design", crashes=1, **SMALL)
    assert v["StrongIsr"][0] is False and v["NoCommittedLoss"][0] is False


def test_majority_quorum_survives_f_crashes_with_2f_plus_1_replicas():
    v = verdicts(
        ["NoCommittedLoss", "NoPhantomRead", "LogMatching", "Available"],
        protocol="majority-quorum",
        replicas=3,
        records=1,
        epochs=2,
        crashes=1,
        availability=True,
    )
    assert all(h is True for h, _ in v.values()), v


def test_majority_quorum_is_unavailable_with_f_plus_1_replicas_where_the_isr_keeps_data():
    q = verdicts(
        ["NoCommittedLoss", "Available"],
        protocol="majority-quorum",
        crashes=1,
        availability=True,
        **SMALL,
    )
    assert q == {"NoCommittedLoss": (True, None), "Available": (False, 1)}
    isr = verdicts(["NoCommittedLoss"], protocol="kip-320", crashes=1, **SMALL)
    assert isr == {"NoCommittedLoss": (True, None)}


def test_kip_966_with_min_isr_keeps_data_and_goes_offline_instead():
    v = verdicts(
        ["NoCommittedLoss", "Available"],
        protocol="kip-966",
        crashes=2,
        min_isr=2,
        availability=True,
        **SMALL,
    )
    assert v["NoCommittedLoss"] == (True, None) and v["Available"][0] is False
