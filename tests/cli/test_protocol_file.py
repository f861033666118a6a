"""A user's own protocol version, `--protocol-file FILE` (issue 15 part 1): loaded from a Python
file, refused with one line and exit 2 when it cannot be used, and run through `isr check`,
`isr matrix`, `isr validate` and `isr replay` without touching the source."""

from __future__ import annotations

import json
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from isr.cli.protocol_file import file_sha256, load_protocol_file
from isr.spec.protocols import PROTOCOLS, ProtocolFileError

from .hostile_inputs import ROOT, run_cli

MY_KIP = ROOT / "examples" / "protocols" / "my_kip.py"
README_BOUNDS = ["--replicas", "3", "--records", "1", "--epochs", "3", "--crashes", "0"]


BAD_FILES = {
    "syntax": ("x = (\n", "line 1: syntax error"),
    "raises": ("raise RuntimeError('boom')\n", "importing it raised RuntimeError: boom"),
    "none": ("X = 1\n", "defines no ProtocolVersion"),
    "two": (
        "from isr.spec.protocols.kip_279 import Kip279\n"
        "class A(Kip279):\n    name = 'a'\n"
        "class B(Kip279):\n    name = 'b'\n",
        "defines 2 ProtocolVersions",
    ),
    "builtin-name": (
        "from isr.spec.protocols.kip_279 import Kip279\nclass A(Kip279):\n    name = 'kip-320'\n",
        "is a built-in version",
    ),
    "builtin-object": (
        "from isr.spec.protocols import KIP_320\nPROTOCOL = KIP_320\n",
        "PROTOCOL is the built-in 'kip-320'",
    ),
    "not-a-version": ("PROTOCOL = 3\n", "PROTOCOL is a int, not a ProtocolVersion"),
    "no-name": (
        "from isr.spec.protocols.kip_279 import Kip279\nclass A(Kip279):\n    name = ''\n",
        "needs a name",
    ),
}


@pytest.mark.parametrize("kind", sorted(BAD_FILES))
def test_a_file_that_cannot_be_used_is_one_line_and_exit_2(tmp_path, kind):
    text, message = BAD_FILES[kind]
    f = tmp_path / f"{kind}.py"
    f.write_text(text)
    with pytest.raises(ProtocolFileError, match="protocol file") as e:
        load_protocol_file(str(f))
    assert isinstance(e.value, ValueError) and message in str(e.value)
    out = run_cli(["check", "--protocol-file", str(f), "--replicas", "2", "--quiet"])
    assert out.code == 2 and out.exc is None
    assert out.err.count("\n") == 1 and message in out.err, out.err


def test_a_missing_file_is_exit_2_for_every_command(tmp_path):
    missing = str(tmp_path / "nope.py")
    for argv in (
        ["check", "--replicas", "2"],
        ["simulate", "--replicas", "2"],
        ["liveness", "--replicas", "2"],
        ["graph", "--replicas", "2"],
        ["matrix", "--replicas", "2"],
        ["validate", str(tmp_path)],
        ["protocols"],
        ["conform", "--random", "0"],
        ["replay", str(tmp_path / "cx.ndjson")],
    ):
        out = run_cli([*argv, "--protocol-file", missing])
        assert out.code == 2 and out.exc is None, (argv, out)
        assert out.err.strip() == f"isr: error: protocol file {missing}: no such file", argv


def test_the_example_runs_through_isr_check():
    """README, "Check a protocol change of mine": kip-320 without fetch fencing loses its
    WeakIsr at once (8 steps, 7 before R8's in-order delivery: a follower counted by a leader
    of an epoch it does not follow)."""
    out = run_cli(
        ["check", "--protocol-file", str(MY_KIP), *README_BOUNDS, "--workers", "1"]
        + ["--stop-at-first-violation", "--format", "json", "--quiet"]
    )
    assert out.code == 1, out.err
    doc = json.loads(out.out)
    assert doc["protocol"] == "my-kip"
    assert doc["protocol_file"] == str(MY_KIP)
    assert doc["protocol_sha256"] == file_sha256(str(MY_KIP))
    bad = {p["name"]: p for p in doc["properties"] if p["holds"] is False}
    assert list(bad) == ["WeakIsr"]
    assert bad["WeakIsr"]["counterexample"]["length"] == 8
    assert doc["distinct_states"] == 9_501  # 34,860 before R8


def test_a_one_hook_version_is_the_model_of_its_hook():
    """A user's kip-320 that never fences a fetch has kip-279's fetches and kip-320's ISR-join
    rule: at 2 replicas exactly kip-279's state count (KAFKA-7128 changes nothing there), 986
    more than kip-320's (1,384 before R8's in-order delivery)."""
    p = load_protocol_file(str(MY_KIP))
    from isr.checker.bfs import check_bfs
    from isr.spec import Config, IsrSpec

    counts = {
        v.name: check_bfs(
            IsrSpec(Config(replicas=2, records=1, protocol=v.name), v)
        ).distinct_states
        for v in (PROTOCOLS["kip-279"], PROTOCOLS["kip-320"], p)
    }
    assert counts == {"kip-279": 3_432, "kip-320": 2_902, "my-kip": 3_432}


def test_the_registry_holds_the_built_in_versions_only():
    """A --protocol-file run passes the version as the object (issue 29): nothing registers it,
    so its name is no protocol of a later Config."""
    from isr.spec import Config, ConfigError

    before = dict(PROTOCOLS)
    out = run_cli(["check", "--protocol-file", str(MY_KIP), "--replicas", "2", "--quiet"])
    assert out.code in (0, 1), out.err
    assert before == PROTOCOLS and "my-kip" not in PROTOCOLS
    with pytest.raises(ConfigError, match="unknown protocol 'my-kip'"):
        Config(protocol="my-kip").validate()


CHILD = """
import pickle, sys
from isr.spec import Config, IsrSpec
obj = pickle.loads(sys.stdin.buffer.read())
if not isinstance(obj, IsrSpec):  # a version alone (matrix's pool): the model built here
    obj = IsrSpec(Config(replicas=2, records=1, protocol=obj.name), obj)
init = obj.init_states()[0]
print(obj.protocol.name, obj.protocol.source_sha256[:12], len(obj.successors(init)))
"""


@pytest.mark.parametrize("how", ["pickle", "cloudpickle"])
def test_a_user_version_travels_by_value(how):
    """A process that never read the file (a Spark executor on another machine, a spawned
    worker) gets the version from the pickle: its file's content travels with it
    (ProtocolVersion.rebuild, cli.protocol_file.rebuilt): the version alone with pickle
    (matrix's pool), the whole model with Spark's cloudpickle; a variant keeps its flags."""
    from isr.spec import Config, IsrSpec

    p = load_protocol_file(str(MY_KIP))
    model = IsrSpec(Config(replicas=2, records=1, protocol=p.name), p)
    if how == "pickle":
        data = pickle.dumps(p)
    else:
        from pyspark import cloudpickle

        data = cloudpickle.dumps(model)
    run = subprocess.run(
        [sys.executable, "-c", CHILD], input=data, capture_output=True, cwd=ROOT, check=False
    )
    assert run.returncode == 0, run.stderr.decode()[-2000:]
    here = len(model.successors(model.init_states()[0]))
    assert run.stdout.decode().split() == ["my-kip", file_sha256(str(MY_KIP))[:12], str(here)]
    flipped = pickle.loads(pickle.dumps(p.variant(isr_join_needs_epoch_start=False)))
    assert flipped.isr_join_needs_epoch_start is False and p.isr_join_needs_epoch_start is True
    assert type(flipped) is type(p) and pickle.loads(pickle.dumps(p)).source_file == p.source_file


@pytest.mark.parametrize("fmt", ["ndjson", "itf"])
def test_replay_refuses_a_changed_file(tmp_path, fmt):
    mine = tmp_path / "mine.py"
    shutil.copy(MY_KIP, mine)
    cx = tmp_path / f"cx.{fmt}"
    out = run_cli(
        ["check", "--protocol-file", str(mine), *README_BOUNDS, "--workers", "1", "--quiet"]
        + ["--stop-at-first-violation", "--trace-out", str(cx), "--trace-format", fmt]
    )
    assert out.code == 1, out.err
    text = cx.read_text()
    head = json.loads(text.splitlines()[0]) if fmt == "ndjson" else json.loads(text)["#meta"]["isr"]
    assert head["protocol_file"] == str(mine)
    assert head["protocol_sha256"] == file_sha256(str(mine))
    assert run_cli(["replay", str(cx)]).code == 1  # the header's file, loaded again: confirmed
    # isr explain too (issue 29: it said "unknown protocol" where replay confirmed)
    out = run_cli(["explain", str(cx), "--format", "text"])
    assert out.code == 0 and "my-kip" in out.out, out.err
    mine.write_text(mine.read_text() + "# changed\n")
    out = run_cli(["replay", str(cx)])
    assert out.code == 2 and "the protocol changed since" in out.err


def test_validate_against_a_user_version():
    """A trace of the implementation's kip-320 is a behaviour of kip-320 without fencing too
    (fencing only removes behaviours)."""
    sample = ROOT / "traces" / "samples" / "accepted" / "sim-kip320-leader-crash.ndjson"
    out = run_cli(
        ["validate", str(sample), "--protocol-file", str(MY_KIP), "--format", "json", "--quiet"]
    )
    assert out.code == 0, out.err
    doc = json.loads(out.out)
    assert [t["verdict"] for t in doc["traces"]] == ["accepted"]
    assert doc["protocol_file"] == str(MY_KIP)


def test_protocols_lists_the_user_version():
    out = run_cli(["protocols", "--protocol-file", str(MY_KIP), "--format", "json"])
    assert out.code == 0
    names = {p["name"]: p for p in json.loads(out.out)["protocols"]}
    assert names["my-kip"]["protocol_file"] == str(MY_KIP)
    assert Path(names["my-kip"]["protocol_file"]).name == "my_kip.py"


def test_protocol_and_protocol_file_together_is_bad_input(capsys):
    """Two versions asked for at once: one line, exit 2, not the file silently winning."""
    from isr.cli.main import main

    code = main(["check", "--protocol", "kip-101", "--protocol-file", str(MY_KIP), "--quiet"])
    assert code == 2
    assert "not both" in capsys.readouterr().err


def test_a_kraft_guard_removed_in_a_user_file(capsys):
    """examples/protocols/kraft_without_maximal_isr.py: the kraft flags are reachable from the
    command line through a file; without the maximal ISR a committed record is lost in 4 steps,
    with no crash (tests/spec/test_kraft.py pins the same on the built-in version)."""
    from isr.cli.main import main

    mine = ROOT / "examples" / "protocols" / "kraft_without_maximal_isr.py"
    bounds = ["--replicas", "2", "--records", "1", "--epochs", "2", "--crashes", "0"]
    argv = ["check", "--protocol-file", str(mine), *bounds, "--invariant", "NoCommittedLoss"]
    assert main([*argv, "--workers", "1", "--quiet"]) == 1
    out = capsys.readouterr().out
    assert "Counterexample for NoCommittedLoss (4 steps):" in out
    assert "LeaderSendAlterPartition(leader=0, follower=1)" in out
    assert main(["check", "--protocol", "kraft", *bounds, "--invariant", "NoCommittedLoss"]) == 0


def test_a_checkpoint_refuses_a_protocol_file_changed_since(tmp_path, capsys):
    """The version's name stays when its file is edited: the checkpoint records the file's
    hash (checker.model.model_identity), so a resume under the edited file is refused (exit 2)
    instead of mixing two state spaces; under the unchanged file it completes."""
    from isr.cli.main import main

    mine = tmp_path / "mine.py"
    shutil.copy(MY_KIP, mine)
    ck = str(tmp_path / "ck")
    small = ["check", "--protocol-file", str(mine), "--replicas", "2", "--records", "1"]
    small += ["--epochs", "2", "--crashes", "1", "--quiet", "--format", "json"]
    assert main([*small, "--max-states", "300", "--checkpoint", ck]) == 3
    capsys.readouterr()
    mine.write_text(mine.read_text() + "\n# edited\n")
    assert main([*small, "--resume", ck]) == 2
    err = capsys.readouterr().err
    assert "made for another check" in err and "model_version" in err
    mine.write_text(MY_KIP.read_text())
    assert main([*small, "--resume", ck]) == 0
    assert json.loads(capsys.readouterr().out)["distinct_states"] == 3_432


def test_a_checkpoint_refuses_a_spec_changed_since(tmp_path, capsys, monkeypatch):
    """A checkpoint records the digest of the model's code beside the version
    (checker.model.source_digest): a resume after the spec changed is refused (exit 2), since the levels saved
    and the levels to come would be of two state spaces; with the same spec it completes."""
    from isr.checker import model as cmodel
    from isr.cli.main import main

    ck = str(tmp_path / "ck")
    small = ["check", "--protocol", "kip-101", "--replicas", "2", "--records", "1"]
    small += ["--epochs", "2", "--crashes", "1", "--quiet", "--format", "json"]
    assert main([*small, "--max-states", "300", "--checkpoint", ck]) == 3
    capsys.readouterr()
    real = cmodel.source_digest
    monkeypatch.setattr(cmodel, "source_digest", lambda module: "0" * 16)
    assert main([*small, "--resume", ck]) == 2
    err = capsys.readouterr().err
    assert "made for another check" in err and "model_code" in err
    monkeypatch.setattr(cmodel, "source_digest", real)
    assert main([*small, "--resume", ck]) == 0
    assert json.loads(capsys.readouterr().out)["distinct_states"] == 3_432
