"""Every command's exit codes are the ones its help and the README document (issue 16 item 5).

The table below holds, for every command, at least one invocation per documented code; the test
reads the codes from each command's `--help` description ("Exit 0: ...; 1: ...") and from the
README's table, so a code added to one and not the other, or documented and never produced,
fails here. Slow engines are replaced where the code only depends on their answer (z3 for
`prove`, the whole scenario suite for `conform`).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from isr.cli.main import COMMANDS, build_parser

from .hostile_inputs import ROOT, SAMPLES, make_counterexamples, run_cli

SMALL = ["--replicas", "2", "--records", "1", "--epochs", "2", "--crashes", "2", "--quiet"]
# Codes that need a real ZooKeeper and broker processes: none. `cluster` and `chaos` answer 0
# or 1 from what the cluster and the workload report, so those are faked below (fake_cluster);
# tests/impl/test_real_cluster.py and tests/impl/test_storage_comes_back.py run a real one.
NEEDS_A_CLUSTER: set[tuple[str, int]] = set()


def documented_codes() -> dict[str, set[int]]:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    out = {}
    for name, p in sub.choices.items():
        desc = p.description or ""
        assert "Exit " in desc, f"`isr {name} --help` does not state its exit codes"
        out[name] = {int(c) for c in re.findall(r"(?:Exit |; )(\d):", desc)}
    return out


def readme_codes() -> dict[str, set[int]]:
    text = (ROOT / "README.md").read_text()
    out = {}
    for cmds, codes in re.findall(r"^\| ((?:`[a-z]+`(?:, )?)+) \| ([\d, ]+) \|$", text, re.M):
        for c in re.findall(r"`([a-z]+)`", cmds):
            out[c] = {int(x) for x in codes.split(",")}
    return out


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("exit-codes")
    cx = make_counterexamples(d)[0]  # hw-truncation: StrongIsr violated
    lines = [json.loads(x) for x in cx.read_text().splitlines()]
    holds = d / "holds.ndjson"  # the same behaviour, named for a property true at its end
    holds.write_text(
        "\n".join(
            json.dumps({**x, "property": "TypeOK"} if i == 0 else x) for i, x in enumerate(lines)
        )
        + "\n"
    )
    wrong = d / "not-a-step.ndjson"  # the last step's state tampered with
    last = lines[-1]
    state = {**last["state"], "hw": {**last["state"]["hw"], "r0": 7}}
    wrong.write_text(
        "\n".join(json.dumps(x) for x in [*lines[:-1], {**last, "state": state}]) + "\n"
    )
    bad = d / "bad.ndjson"
    bad.write_bytes(b'{"type": "header"}\n[1]\n')
    return {"cx": cx, "holds": holds, "wrong": wrong, "bad": bad, "dir": d}


class FakeInduction:
    def __init__(self, ctis=(), unknown=()):
        self.init_ok = self.implies_strong_isr = True
        self.ctis, self.unknown, self.seconds = list(ctis), list(unknown), 0.0
        self.inductive = not ctis and not unknown

    def to_json(self):
        return {}


class FakeBmc:
    def __init__(self, violation_depth=None, unknown=False):
        self.depth, self.violation_depth, self.unknown = 5, violation_depth, unknown
        self.actions, self.seconds = ["ProducerSend"], 0.0

    def to_json(self):
        return {}


CTI = SimpleNamespace(action="BrokerRestart", args=(0,), broken=["StrongIsr"])


def fake_prove(monkeypatch, ind, b):
    import isr.spec.symbolic.bmc as bmc_mod
    import isr.spec.symbolic.induction as ind_mod

    monkeypatch.setattr(ind_mod, "check_induction", lambda *a, **k: ind)
    monkeypatch.setattr(bmc_mod, "bmc", lambda *a, **k: b)


def one_scenario(monkeypatch):
    """`isr conform` on one short scenario instead of the whole suite (the CLI's exit code only
    depends on the verdicts and on the adapter's health)."""
    from isr.traces.conformance import runner

    def conform(adapter, **_kw):
        rep = runner.ConformReport()
        sc = [{"op": "produce", "count": 2}, {"op": "run", "ms": 500}]
        v = runner.run_scenario(adapter, sc, "one")
        rep.results.append(("one", sc, v))
        return rep

    monkeypatch.setattr(runner, "conform", conform)


class FakeCluster:
    """A running cluster as `isr cluster` and `isr chaos` see it (cli/cluster.py)."""

    running = True
    zk_hosts = "127.0.0.1:1"

    def down(self) -> None:
        pass


def fake_cluster(monkeypatch, lost: int = 0, produce_error: str = "NONE") -> None:
    """A cluster, a producer client and a chaos workload that answer as told, so that the exit
    code of `isr cluster` and `isr chaos` is tested without ZooKeeper: 1 when a record was not
    acknowledged (cluster produce) or an acknowledged one was lost (chaos)."""
    import isr.cli.chaos as chaos_mod
    import isr.cli.cluster as cluster_mod
    import isr.impl.cluster.client as client_mod
    import isr.impl.cluster.workload as workload

    monkeypatch.setattr(cluster_mod, "open_cluster", lambda _path: FakeCluster())
    monkeypatch.setattr(chaos_mod, "open_cluster", lambda _path: FakeCluster())
    monkeypatch.setattr(workload, "tps_of", lambda _c: [("t", 0)])

    class Client:
        def __init__(self, _hosts):
            pass

        async def refresh(self):
            pass

        async def produce(self, *_a, **_k):
            return SimpleNamespace(error=produce_error)

        def close(self):
            pass

    monkeypatch.setattr(client_mod, "ClusterClient", Client)

    async def chaos(*_a, **_k):
        ids = [f"r-{i}" for i in range(lost)]
        return {
            "acknowledged": 10,
            "consumed": 10 - lost,
            "lost": lost,
            "lost_ids": ids,
            "duplicated": 0,
            "failed": 0,
        }

    monkeypatch.setattr(workload, "chaos", chaos)


ADAPTER = f"{sys.executable} -m isr.impl.adapter"
TRACE_OK = str(SAMPLES / "accepted" / "sim-kip320-leader-crash.ndjson")
TRACE_BAD = str(SAMPLES / "rejected" / "mutant-ack-before-commit.ndjson")
TRACE_UNSUPPORTED = str(SAMPLES / "unsupported" / "sim-six-replicas.ndjson")

# (command, code, argv with {cx}/{holds}/{wrong}/{bad}/{dir} placeholders, setup or None)
TABLE = [
    ("check", 0, ["check", "--protocol", "kip-320", *SMALL], None),
    ("check", 1, ["check", "--protocol", "hw-truncation", *SMALL], None),
    ("check", 2, ["check", "--max-seconds", "nan"], None),
    ("check", 3, ["check", *SMALL, "--max-states", "10"], None),
    (
        "check",
        5,
        ["check", "--protocol", "kip-320", *SMALL, "--workers", "2"],
        lambda mp: mp.setenv("ISR_PARALLEL_KILL", "0:2"),
    ),
    ("simulate", 0, ["simulate", *SMALL, "--walks", "5", "--depth", "10"], None),
    (
        "simulate",
        1,
        ["simulate", "--protocol", "hw-truncation", *SMALL, "--walks", "400", "--depth", "12"],
        None,
    ),
    ("simulate", 2, ["simulate", "--depth", "0"], None),
    ("protocols", 0, ["protocols"], None),
    ("protocols", 2, ["protocols", "--format", "xml"], None),
    ("matrix", 0, ["matrix", "--protocols", "kip-320", "--modes", "none", "--jobs", "1"], None),
    ("matrix", 2, ["matrix", "--max-seconds", "inf"], None),
    (
        "matrix",
        3,
        ["matrix", "--protocols", "kip-320", "--modes", "none", "--jobs", "1", "--max-states", "5"],
        None,
    ),
    ("replay", 0, ["replay", "{holds}"], None),
    ("replay", 1, ["replay", "{cx}"], None),
    ("replay", 2, ["replay", "{bad}"], None),
    ("replay", 4, ["replay", "{wrong}"], None),
    ("liveness", 0, ["liveness", *SMALL[:-1], "--without", "NetworkLoseLeaderAndIsr"], None),
    (
        "liveness",
        1,
        ["liveness", "--replicas", "2", "--records", "1", "--crashes", "1"]
        + ["--session-expiries", "1"],  # R8: a request is lost only with its queue
        None,
    ),
    ("liveness", 2, ["liveness", "--max-states", "-5"], None),
    ("liveness", 3, ["liveness", *SMALL[:-1], "--max-states", "10"], None),
    ("graph", 0, ["graph", "--replicas", "2", "--records", "1", "--crashes", "0"], None),
    ("graph", 2, ["graph", "--records", "1000000000"], None),
    ("graph", 3, ["graph", *SMALL[:-1], "--max-states", "10"], None),
    ("prove", 0, ["prove"], lambda mp: fake_prove(mp, FakeInduction(), FakeBmc())),
    ("prove", 1, ["prove"], lambda mp: fake_prove(mp, FakeInduction(ctis=[CTI]), FakeBmc())),
    (
        "prove",
        1,  # the reported case: a BMC violation while z3 answered unknown elsewhere
        ["prove", "--protocol", "hw-truncation"],
        lambda mp: fake_prove(mp, FakeInduction(unknown=["x"]), FakeBmc(5)),
    ),
    ("prove", 2, ["prove", "--replicas", "9"], None),
    ("prove", 3, ["prove"], lambda mp: fake_prove(mp, FakeInduction(unknown=["x"]), FakeBmc())),
    ("explain", 0, ["explain", "{cx}", "--html", "{dir}/cx.html"], None),
    ("explain", 2, ["explain", "{bad}", "--html", "{dir}/bad.html"], None),
    ("validate", 0, ["validate", TRACE_OK, "--quiet"], None),
    ("validate", 1, ["validate", TRACE_BAD, "--quiet"], None),
    ("validate", 2, ["validate", "{bad}", "--quiet"], None),
    ("validate", 2, ["validate", TRACE_UNSUPPORTED, "--quiet"], None),
    (
        "validate",
        3,  # two candidate states at one point: over a limit of one, the run is incomplete
        ["validate", str(SAMPLES / "accepted" / "sim-kip-101-kip101-scenario1.ndjson"), "--quiet"],
        lambda mp: mp.setattr("isr.traces.validator.partition.MAX_CANDIDATES", 1),
    ),
    ("conform", 0, ["conform"], one_scenario),
    ("conform", 1, ["conform", "--adapter", f"{ADAPTER} --mutant ack-before-commit"], one_scenario),
    (
        "conform",
        2,  # a hung adapter: a clear error after --adapter-timeout, not a hang
        ["conform", "--adapter", "sleep 100", "--adapter-timeout", "0.5"],
        one_scenario,
    ),
    ("history", 0, ["history", str(ROOT / "examples/history/valid.ndjson")], None),
    ("history", 1, ["history", str(ROOT / "examples/history/lost-write.ndjson")], None),
    ("history", 2, ["history", "{bad}"], None),
    ("cluster", 0, ["cluster", "down", "--dir", "{dir}/c"], fake_cluster),
    ("cluster", 0, ["cluster", "produce", "--count", "3", "--dir", "{dir}/c"], fake_cluster),
    (
        "cluster",
        1,  # a record the cluster did not acknowledge
        ["cluster", "produce", "--count", "3", "--dir", "{dir}/c"],
        lambda mp: fake_cluster(mp, produce_error="NOT_ENOUGH_REPLICAS"),
    ),
    ("chaos", 0, ["chaos", "--duration", "1", "--dir", "{dir}/c"], fake_cluster),
    (
        "chaos",
        1,  # an acknowledged record lost
        ["chaos", "--duration", "1", "--dir", "{dir}/c"],
        lambda mp: fake_cluster(mp, lost=2),
    ),
    ("cluster", 2, ["cluster", "status", "--dir", "{dir}/no-cluster"], None),
    ("cluster", 2, ["cluster", "up", "--fetchers", "0"], None),
    ("chaos", 2, ["chaos", "--duration", "nan"], None),
    (
        "explore",
        0,  # served until Ctrl-C
        ["explore", *SMALL[:-1], "--port", "0"],
        lambda mp: mp.setattr("isr.cli.explore.ExploreServer.serve_forever", ctrl_c),
    ),
    ("explore", 2, ["explore", "--bind", "0.0.0.0"], None),
]


def ctrl_c(*_args, **_kwargs):
    raise KeyboardInterrupt


def test_every_documented_code_has_an_invocation_and_the_readme_agrees():
    doc = documented_codes()
    assert set(doc) == {m.__name__.removeprefix("isr.cli.") for m in COMMANDS}
    covered = {(c, code) for c, code, _a, _s in TABLE} | NEEDS_A_CLUSTER
    want = {(c, code) for c, codes in doc.items() for code in codes}
    assert want == covered, (want - covered, covered - want)
    assert readme_codes() == doc


@pytest.mark.parametrize(
    ("command", "code", "argv", "setup"),
    TABLE,
    ids=[f"{c}-{code}-{i}" for i, (c, code, _a, _s) in enumerate(TABLE)],
)
def test_exit_code(command, code, argv, setup, files, monkeypatch):
    if setup is not None:
        setup(monkeypatch)
    argv = [a.format(**{k: str(v) for k, v in files.items()}) for a in argv]
    o = run_cli(argv, timeout=120)
    assert o.exc is None, o.where
    assert o.code == code, (o.out[-800:], o.err[-800:])
    if code == 2:
        lines = [x for x in o.err.splitlines() if x.strip()]
        assert len(lines) == 1 and "Traceback" not in o.err, o.err


def test_options_must_be_spelt_out():
    """argparse's abbreviations are off: `validate` has no --protocol, and with abbreviations on
    `--protocol kip-320` was read as `--protocol-file kip-320` (a file that does not exist)."""
    trace = str(next(SAMPLES.glob("accepted/*.ndjson")))
    out = run_cli(["validate", "--protocol", "kip-320", trace])
    assert out.code == 2 and "unrecognized arguments: --protocol" in out.err
    out = run_cli(["check", "--max-sec", "5", "--replicas", "2"])
    assert out.code == 2 and "--max-sec" in out.err
