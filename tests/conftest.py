"""Test-wide settings.

Under CI (the CI environment variable set, as `.ci/run` is run), hypothesis runs derandomized:
every run explores the same examples, so a CI failure reproduces and a pass is not luck. Locally
it explores new examples each run (and keeps failures in .hypothesis/)."""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
