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
    """Every test leaves the protocol registry as it found it: a test that adds a version of
    its own to it must not leave it for a later test in the same worker
    (tests/spec/test_protocol_registry.py compares the registry with the built-in list)."""
    from isr.spec.protocols import PROTOCOLS

    saved = dict(PROTOCOLS)
    yield
    PROTOCOLS.clear()
    PROTOCOLS.update(saved)
