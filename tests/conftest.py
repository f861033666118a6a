"""Test-wide settings.

Under CI (the CI environment variable set, as `.ci/run` is run), hypothesis runs derandomized:
every run explores the same examples, so a CI failure reproduces and a pass is not luck. Locally
it explores new examples each run (and keeps failures in .hypothesis/)."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(autouse=True)
def _protocol_registry_restored():
    """The protocol registry holds the built-in versions only (issue 29): a user's or a
    test's version is passed as the object, never registered. A test after which the registry
    changed fails here (the registry is restored for the next one)."""
    from isr.spec.protocols import PROTOCOLS

    saved = dict(PROTOCOLS)
    yield
    changed = sorted(set(PROTOCOLS) ^ set(saved))
    PROTOCOLS.clear()
    PROTOCOLS.update(saved)
    assert not changed, f"the protocol registry changed: {changed}; pass the version object"


@pytest.fixture(autouse=True)
def _signal_handlers_restored():
    """SIGINT and SIGTERM as a test found them, for the next test of this pytest worker. A test
    that leaves one ignored fails here: an ignored SIGINT is inherited by every command a later
    test starts in this worker, which then cannot be stopped by Ctrl-C (tests/viewer/
    test_explore.py's `test_ctrl_c_stops_it_cleanly` timed out that way once, only in a full
    run). A Python handler left behind (a SparkContext installs one and keeps it) is not
    inherited by a command: it is put back quietly."""
    import signal

    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    yield
    ignored = [
        sig.name
        for sig, h in saved.items()
        if signal.getsignal(sig) is signal.SIG_IGN and h is not signal.SIG_IGN
    ]
    for sig, h in saved.items():
        signal.signal(sig, h)
    assert not ignored, f"the test left {ignored} ignored; restore it"
