"""The two walks of issue 29, from `isr check`'s options to the search engine, measured by
scripts/call_walk.py (a profiler over the call tree, at file level): no call climbs back into a
file already on the stack, and the command's modules are each asked once (cli/models.py for
the model, cli/sparkopts.py for the engine), not step by step."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SMALL = ["--replicas", "2", "--records", "1", "--max-states", "10", "--quiet"]
WALKS = {
    "protocol-file": [
        "--protocol-file",
        str(ROOT / "examples" / "protocols" / "kraft_join_below_hw.py"),
        "--crashes",
        "0",
    ],
    "workers": ["--workers", "2"],
}


@pytest.mark.parametrize("walk", sorted(WALKS))
def test_check_walks_down_without_climbing_back(walk):
    r = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "call_walk.py"), "--json", "check"]
        + WALKS[walk]
        + SMALL,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "ISR_PURE_PYTHON": "1"},  # compiled calls are invisible to it
    )
    res = json.loads(r.stdout)
    assert res["reached_engine"], r.stderr[-2000:]
    assert res["climbs_back"] == []
    files = res["files"]
    assert files[:2] == ["cli/check.py", "cli/models.py"]
    assert "cli/sparkopts.py" in files and "checker/engines.py" in files
    assert files.index("cli/sparkopts.py") < files.index("checker/engines.py")
    again = res["entered_more_than_once"]
    assert "cli/sparkopts.py" not in again and "cli/models.py" not in again, again
    if walk == "protocol-file":  # loaded once, at the edge
        assert files.index("cli/protocol_file.py") == 2
        assert "cli/protocol_file.py" not in again
