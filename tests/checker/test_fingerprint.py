"""Fingerprints are identical across processes whatever the hash seed (the Spark engine relies
on it)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from isr.checker.fingerprint import check_hashable_value, fingerprint
from isr.spec import Config, IsrSpec

PROGRAM = """
from isr.spec import Config, IsrSpec
from isr.checker.fingerprint import fingerprint
m = IsrSpec(Config(replicas=3, records=1, epochs=2, crashes=1))
s = m.init_states()[0]
fps = [fingerprint(m.canonicalize(t)) for _, t in m.successors(s)]
print(fingerprint(s), *fps)
"""


def run_with_seed(seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    out = subprocess.run(
        [sys.executable, "-c", PROGRAM],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=os.getcwd(),
    )
    return out.stdout.strip()


def test_same_fingerprints_in_other_processes():
    m = IsrSpec(Config(replicas=3, records=1, epochs=2, crashes=1))
    s = m.init_states()[0]
    here = " ".join(
        str(x)
        for x in [fingerprint(s)] + [fingerprint(m.canonicalize(t)) for _, t in m.successors(s)]
    )
    assert run_with_seed("1") == run_with_seed("12345") == here


def test_states_hold_only_stable_values():
    m = IsrSpec(Config(replicas=2, records=1, epochs=2, crashes=1))
    s = m.init_states()[0]
    check_hashable_value(s)
    for _, t in m.successors(s):
        check_hashable_value(t)
    with pytest.raises(TypeError):
        check_hashable_value((1, "leader"))
