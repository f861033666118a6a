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
    """Every test leaves the protocol registry as it found it: a test that runs a
    `--protocol-file` command registers the file's version (and the CLI remembers the path), and
    a later test in the same worker must not see it (tests/spec/test_protocol_registry.py
    compares the registry with the built-in list)."""
    import isr.cli.models as cli_models
    from isr.spec.protocols import PROTOCOLS

    saved, loaded = dict(PROTOCOLS), dict(cli_models._LOADED)
    yield
    PROTOCOLS.clear()
    PROTOCOLS.update(saved)
    cli_models._LOADED.clear()
    cli_models._LOADED.update(loaded)
