"""The compiled hot path (issue 13, item 2; setup.py, isr/_hotpath.py): after `make setup` every
hot module runs compiled, the compiled and the pure-Python modules give the same results, and a
compiled module built from another source is never used."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import isr._hotpath as hotpath

ROOT = Path(__file__).resolve().parents[2]
SMALL = ["--replicas", "2", "--records", "1", "--epochs", "2", "--crashes", "2"]


def _env(pure: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in (hotpath.PURE_ENV, "ISR_HOTPATH_WARNED")}
    if pure:
        env[hotpath.PURE_ENV] = "1"
    return env


def _python(code: str, pure: bool) -> str:
    out = subprocess.run(
        [sys.executable, "-c", code], env=_env(pure), capture_output=True, text=True, cwd=ROOT
    )
    assert out.returncode == 0, out.stderr
    assert "isr: warning" not in out.stderr, out.stderr
    return out.stdout


def test_the_hot_modules_are_compiled_after_make_setup():
    """CI runs `make test`, which builds them: this fails if the build silently stopped (a
    module missing, or built from another version of its source)."""
    status = json.loads(
        _python("import json, isr._hotpath as h; print(json.dumps(h.status()))", False)
    )
    assert set(status) == set(hotpath.compiled_modules())
    assert "isr.spec.model" in status and "isr.checker.bfs" in status
    assert "isr.spec.properties" in status
    assert len(status) == 22
    not_compiled = {k: v for k, v in status.items() if v != "compiled"}
    assert not not_compiled, f"run `make setup` to build them: {not_compiled}"


def test_pure_python_switch_loads_the_sources():
    status = json.loads(
        _python("import json, isr._hotpath as h; print(json.dumps(h.status()))", True)
    )
    assert status and set(status.values()) == {"python"}
    origin = _python("import isr.spec.model as m; print(m.__file__)", True).strip()
    assert origin.endswith(os.path.join("spec", "model.py"))


def _check(pure: bool, *argv: str) -> tuple[int, dict]:
    out = subprocess.run(
        [sys.executable, "-m", "isr", "check", *argv, "--format", "json", "--quiet"],
        env=_env(pure),
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert out.returncode in (0, 1), out.stderr
    return out.returncode, json.loads(out.stdout)


def _verdicts(result: dict) -> list[tuple]:
    return [
        (
            p["name"],
            p["holds"],
            (p.get("counterexample") or {}).get("length"),
            [(s["action"], s["args"]) for s in (p.get("counterexample") or {}).get("steps", [])],
            p.get("found_after_states"),
        )
        for p in result["properties"]
    ]


def test_compiled_and_pure_python_agree_exactly():
    """The same small models both ways, in subprocesses: exact counts, depth, every verdict and
    counterexample (a violating version, the sequential engine; a holding one on 2 workers, so
    the parallel worker's loop runs compiled too)."""
    runs = [
        ("hw-truncation", "1", 1, 11170),  # 22,341 before R8's in-order delivery
        ("kip-320", "2", 0, 7787),  # 21,991
    ]
    for protocol, workers, code, distinct in runs:
        argv = ("--protocol", protocol, *SMALL, "--workers", workers)
        pure_code, pure = _check(True, *argv)
        comp_code, comp = _check(False, *argv)
        assert pure_code == comp_code == code
        for key in ("complete", "distinct_states", "states_generated", "depth"):
            assert pure[key] == comp[key], key
        assert comp["distinct_states"] == distinct
        assert _verdicts(pure) == _verdicts(comp)
        if code == 1:
            loss = next(v for v in _verdicts(comp) if v[0] == "NoCommittedLoss")
            assert loss[1] is False and loss[2] == 6


def test_a_module_built_from_another_source_runs_as_python(capsys, monkeypatch):
    """An edited .py whose extension was not rebuilt: the finder takes the .py, warns once."""
    import isr.spec

    monkeypatch.setenv("ISR_HOTPATH_WARNED", "")  # restored afterwards; empty: not warned yet
    monkeypatch.delenv(hotpath.PURE_ENV, raising=False)
    finder = hotpath.HotPathFinder()
    assert finder.manifest.get("isr.spec.model"), "not built: run `make setup`"
    spec = finder.find_spec("isr.spec.model", isr.spec.__path__)
    assert spec is None and "isr.spec.model" in finder.compiled  # the extension, as built
    finder.manifest["isr.spec.model"] = "0" * 64  # as if spec/model.py had changed since
    finder.manifest["isr.spec.log"] = "0" * 64
    spec = finder.find_spec("isr.spec.model", isr.spec.__path__)
    assert spec is not None and spec.origin.endswith(os.path.join("spec", "model.py"))
    assert finder.find_spec("isr.spec.log", isr.spec.__path__).origin.endswith("log.py")
    assert finder.stale == ["isr.spec.model", "isr.spec.log"]
    err = capsys.readouterr().err
    assert err.count("isr: warning:") == 1 and "isr.spec.model" in err and "make setup" in err
    monkeypatch.setenv(hotpath.PURE_ENV, "1")
    finder = hotpath.HotPathFinder()
    spec = finder.find_spec("isr.spec.model", isr.spec.__path__)
    assert spec is not None and spec.origin.endswith("model.py") and not finder.stale


def test_the_compiled_state_types_are_the_python_ones():
    """spec/state.py runs compiled: its NamedTuples are still plain tuple subclasses that pickle
    by reference (Spark ships states so), with NamedTuple's fields, defaults and _replace."""
    import pickle

    from isr.spec import state as st

    assert st.__file__.endswith(".so"), "not built: run `make setup`"
    s = st.initial_state(3)
    assert type(s) is st.State and type(s).__mro__ == (st.State, tuple, object)
    back = pickle.loads(pickle.dumps(s))
    assert back == s and type(back) is st.State and type(back.replicas[0]) is st.Replica
    assert hash(back) == hash(s)
    r = s.replicas[0]
    assert st.Replica._fields[:3] == ("log", "hw", "hw_ckpt") and st.State._field_defaults
    assert r._replace(hw=3) == (r[0], 3, *r[2:]) and r._asdict()["hw"] == 0
    with pytest.raises(ValueError, match="unexpected field names"):
        r._replace(bogus=1)
