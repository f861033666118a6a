"""The Python API (isr.api, issue 15 part 3): the answers `isr` prints, for scripts and pytest."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from isr.spec import ConfigError
from isr.traces.validator.validate import ACCEPTED, REJECTED

import isr
from isr import api

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "traces" / "samples"


def test_version_is_the_distribution_version():
    expected = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert isr.__version__ == expected


def test_check_finds_the_kip101_hole_with_its_shortest_counterexample():
    r = api.check(
        protocol="kip-101",
        replicas=2,
        records=3,
        epochs=3,
        crashes=0,
        properties=["StrongIsr"],
        stop_at_first_violation=True,
    )
    assert r.holds("StrongIsr") is False
    (violated,) = r.violated
    assert violated.counterexample is not None and violated.counterexample.length == 11
    assert r.exit_code() == 1


def test_check_a_small_model_completely_and_on_two_workers():
    one = api.check(protocol="kip-320", replicas=2, records=1, epochs=2, crashes=0)
    # 445 before issue 25's re-elected leader, 657 before R8
    assert one.complete and one.distinct_states == 488 and not one.violated
    two = api.check(protocol="kip-320", replicas=2, records=1, epochs=2, crashes=0, workers=2)
    assert (two.engine, two.distinct_states, two.depth) == ("parallel", 488, one.depth)
    with pytest.raises(KeyError):
        one.holds("NoSuchProperty")


def test_simulate_and_bad_bounds():
    r = api.simulate(
        protocol="hw-truncation", replicas=2, records=1, epochs=2, crashes=2, walks=200
    )
    assert r.states_generated > 0
    with pytest.raises(ConfigError):
        api.check(replicas=9)


def test_validate_a_recorded_run_and_a_rejected_one():
    run = sorted((SAMPLES / "accepted" / "cluster-kip320-produce").glob("*.ndjson"))
    assert api.validate(run).verdict == ACCEPTED
    bad = SAMPLES / "rejected" / "mutant-ack-before-commit.ndjson"
    assert api.validate([bad]).verdict == REJECTED


def test_api_errors_name_the_config_fields_and_the_cli_its_flags(capsys):
    """issue 30: the Python API's errors named command-line flags (``--min-isr``)."""
    from isr.cli.main import main

    with pytest.raises(ConfigError) as e:
        api.check(protocol="hw-truncation", min_isr=9)
    assert str(e.value).startswith("min_isr must be between 1 and the replica count")
    assert "--" not in str(e.value)
    assert main(["check", "--min-isr", "9"]) == 2
    assert "--min-isr must be between 1" in capsys.readouterr().err
