"""The findings' stories are the counterexamples the tool prints (issue 16 item 7).

docs/findings.md (README's "What the checker finds" until issue 30 moved it there), section "The
findings", tells a story per row of its table, and lists below
the table, in a `<details>` block, every counterexample those stories tell, action by action, as
`isr check ... --invariant P` prints it (one `$ isr check ...` line, the `Counterexample for P (N
steps):` line and the numbered steps). This test:

1. parses that block and the table;
2. checks every step count the table's prose claims ("StrongIsr violated in 9 steps",
   "NoPhantomRead (7 steps)", ", LogMatching in 10") against the listed counterexample of the same
   protocol, bounds and property, and that every listed counterexample is claimed by its row;
3. for each listed counterexample, either runs the same command in-process (same protocol,
   bounds and property, and `--workers 1` as listed: with several workers an equally short
   counterexample may be printed, depending on how the workers split a level) and asserts the
   printed counterexample is the listed one, step for step; or, for the rows whose search takes tens of
   CPU seconds (three replicas, see SEARCH_IN_TESTS), replays the listed steps against the spec
   with `isr replay`'s semantics (each step must be a transition with that action and those
   arguments, and the property must be violated in the last state and in no earlier one).
   The replayed rows' shortest lengths are pinned by tests/quality/test_three_replica_history.py
   (kip-279, kip-320-first-try) and measured by bench/first_counterexample.py.

A row may name a version defined in a protocol file (`--protocol-file examples/protocols/...`:
a kraft guard removed, which no built-in version is); such a row is named by the file's version
name and is always searched.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from isr.cli.main import main
from isr.cli.protocol_file import load_protocol_file
from isr.spec import Config, IsrSpec

ROOT = Path(__file__).resolve().parents[2]
FINDINGS = ROOT / "docs" / "findings.md"
FAULTS = ROOT / "docs" / "faults.md"
SUMMARY = "Every counterexample of this table, action by action"
Bounds = tuple[int, int, int, int]

# Searched by the test (seconds of CPU each); the others are replayed (see the docstring).
SEARCH_IN_TESTS: set[tuple[str, Bounds]] = {
    ("hw-truncation", (2, 1, 2, 2)),
    ("hw-truncation", (2, 3, 2, 2)),
    ("kip-101", (2, 3, 3, 0)),
    ("kip-279", (3, 1, 3, 0)),  # the headline story (TLC's Kip279), about 10 CPU seconds
    ("kraft", (2, 1, 3, 1)),  # with --lose-unflushed, which the replay does not read
}


def section() -> str:
    text = FINDINGS.read_text()
    start = text.index("## The findings")
    end = text.index("\n## ", start + 1)
    return text[start:end]


def options(argv: list[str]) -> dict[str, str]:
    """``--name value`` pairs of a command line; a flag without a value (``--lose-unflushed``)
    maps to ""."""
    opts: dict[str, str] = {}
    for i, a in enumerate(argv):
        if a.startswith("--"):
            nxt = argv[i + 1] if i + 1 < len(argv) else "--"
            opts[a] = "" if nxt.startswith("--") else nxt
    return opts


def listed() -> list[dict]:
    """The counterexamples of the details block: argv, protocol, bounds, property, steps."""
    sec = section()
    assert SUMMARY in sec, "docs/findings.md lists no counterexamples below the table"
    block = sec[sec.index(SUMMARY) : sec.index("</details>", sec.index(SUMMARY))]
    out: list[dict] = []
    for line in block.splitlines():
        if line.startswith("$ isr check "):
            argv = line.removeprefix("$ isr ").split()
            opts = options(argv)
            if "--protocol-file" in opts:  # the file's version, by its name; the path absolute
                path = ROOT / opts["--protocol-file"]
                argv[argv.index("--protocol-file") + 1] = str(path)
                opts["--protocol"] = load_protocol_file(str(path)).name
            bounds = tuple(
                int(opts[f"--{k}"]) for k in ("replicas", "records", "epochs", "crashes")
            )
            out.append(
                {
                    "argv": argv,
                    "protocol": opts["--protocol"],
                    "bounds": bounds,
                    "property": opts["--invariant"],
                    "steps": [],
                    "from_file": "--protocol-file" in opts,
                }
            )
        elif m := re.match(r"^Counterexample for (\w+) \((\d+) steps\):$", line):
            assert out and m.group(1) == out[-1]["property"], line
            out[-1]["length"] = int(m.group(2))
        elif m := re.match(r"^\s+(\d+)\. (\w+\(.*\))$", line):
            assert int(m.group(1)) == len(out[-1]["steps"]) + 1, line
            out[-1]["steps"].append(m.group(2))
    for cx in out:
        assert cx["length"] == len(cx["steps"]), cx["argv"]
    return out


def claims() -> list[tuple[str, Bounds, str, int]]:
    """(protocol, bounds, property, steps) for every step count the table's prose states."""
    out = []
    for line in section().splitlines():
        if not line.startswith("| `"):
            continue
        cols = [c.strip() for c in line.strip("|").split("|")]
        protocols = re.findall(r"`([a-z0-9.-]+)`", cols[0])  # (release presets: kraft-4.0)
        bounds = [tuple(map(int, b)) for b in re.findall(r"(\d), (\d), (\d), (\d)", cols[1])]
        said = re.findall(r"\b([A-Z][A-Za-z]+) violated in (\d+) steps", cols[2])
        said += re.findall(r"\b([A-Z][A-Za-z]+) \((\d+) steps", cols[2])
        said += re.findall(r", ([A-Z][A-Za-z]+) in (\d+)\b", cols[2])
        for p in protocols:
            for b in bounds:
                for prop, n in said:
                    out.append((p, b, prop, int(n)))
    return out


def test_every_step_count_in_the_prose_is_a_listed_counterexample():
    cxs = {(c["protocol"], c["bounds"], c["property"]): c["length"] for c in listed()}
    said = claims()
    assert len(said) >= 10, said  # the parser found the table
    for protocol, bounds, prop, n in said:
        key = (protocol, bounds, prop)
        assert key in cxs, (
            f"docs/findings.md claims {key} in {n} steps but lists no such counterexample"
        )
        assert cxs[key] == n, f"{key}: the prose says {n} steps, the listing {cxs[key]}"
    assert set(cxs) == {(p, b, q) for p, b, q, _n in said}, "a listed counterexample no row tells"


def test_the_searched_rows_exist():
    keys = {(c["protocol"], c["bounds"]) for c in listed()}
    assert keys >= SEARCH_IN_TESTS


def test_every_listed_command_names_one_worker():
    """The listing is reproducible on any machine only with one worker (see the docstring)."""
    for c in listed():
        opts = options(c["argv"])
        assert opts.get("--workers") == "1", c["argv"]


def printed_counterexample(out: str) -> tuple[str, int, list[str]]:
    m = re.search(r"^Counterexample for (\w+) \((\d+) steps\):$", out, re.M)
    assert m, out[-2000:]
    steps = []
    for line in out[m.end() :].splitlines()[1:]:
        s = re.match(r"^  (\d+)\. (\w+\(.*\))$", line)
        if s and s.group(1) != "0":
            steps.append(s.group(2))
        elif line.strip() == "" and steps:
            break
    return m.group(1), int(m.group(2)), steps


def _id(c: dict) -> str:
    return f"{c['protocol']}-{'.'.join(map(str, c['bounds']))}-{c['property']}"


def searched(c: dict) -> bool:
    return (c["protocol"], c["bounds"]) in SEARCH_IN_TESTS or c["from_file"]


@pytest.mark.parametrize("cx", [c for c in listed() if searched(c)], ids=_id)
def test_the_tool_prints_the_listed_counterexample(cx, capsys):
    assert main([*cx["argv"], "--quiet"]) == 1
    out = capsys.readouterr().out
    prop, length, steps = printed_counterexample(out)
    assert (prop, length) == (cx["property"], cx["length"])
    assert steps == cx["steps"]


def _text(model: IsrSpec, action) -> str:
    d = model.describe_action(action)
    return f"{d['action']}({', '.join(f'{k}={v}' for k, v in d['args'].items())})"


@pytest.mark.parametrize("cx", [c for c in listed() if not searched(c)], ids=_id)
def test_the_listed_counterexample_replays(cx):
    """`isr replay` semantics for the rows whose search is too slow for the suite."""
    r, rec, ep, cr = cx["bounds"]
    model = IsrSpec(Config(protocol=cx["protocol"], replicas=r, records=rec, epochs=ep, crashes=cr))
    prop = next(p for p in model.properties if p.name == cx["property"])
    assert prop.kind == "always"
    (state,) = model.init_states()
    assert prop.check(state)
    for i, want in enumerate(cx["steps"], 1):
        nxt = [t for a, t in model.successors(state) if _text(model, a) == want]
        assert nxt, f"step {i}: {want} is not a transition of the spec there"
        state = nxt[0]
        violated = not prop.check(state)
        assert violated == (i == len(cx["steps"])), f"{prop.name} violated at step {i}"


MATRIX = ROOT / "docs" / "matrix" / "matrix.json"
TABLE_COLUMNS = ["StrongIsr", "NoCommittedLoss", "NoAckedLoss", "NoPhantomRead", "NoDuplicates"]


def _short(verdict: str) -> str:
    m = re.match(r"violated \((\d+) steps\)", verdict)
    return f"v({m.group(1)})" if m else verdict


def test_the_verdict_table_is_docs_matrix():
    """docs/faults.md's verdict table (README's until issue 30) summarises docs/matrix/matrix.json (the output
    of `isr matrix`): every (protocol, mode) cell of the file appears in exactly one row of the
    table, with the same verdicts, and every cell is complete."""
    import json

    doc = json.loads(MATRIX.read_text())
    cells = {(c["protocol"], c["mode"]): c for c in doc["cells"]}
    assert all(c["complete"] for c in cells.values())
    text = FAULTS.read_text()
    start = text.index("| protocol | mode | StrongIsr | NoCommittedLoss (acks=all)")
    seen: dict[tuple[str, str], list[str]] = {}
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("| "):
            break
        cols = [c.strip() for c in line.strip("|").split("|")]
        for protocol in cols[0].split(", "):
            for mode in cols[1].split(", "):
                assert (protocol, mode) not in seen, f"{protocol}/{mode} in two rows"
                seen[(protocol, mode)] = cols[2:]
    assert set(seen) == set(cells)
    for key, row in seen.items():
        want = [_short(cells[key]["verdicts"][n]) for n in TABLE_COLUMNS]
        assert row == want, (key, row, want)


def _replayed_states(cx: dict) -> list[dict]:
    """The whole states (spec.codec.state_to_json) along a listed counterexample, replayed step
    by step against the spec (as test_the_listed_counterexample_replays)."""
    from isr.spec.codec import state_to_json

    r, rec, ep, cr = cx["bounds"]
    opts = options(cx["argv"])
    cfg = Config(
        protocol=cx["protocol"],
        replicas=r,
        records=rec,
        epochs=ep,
        crashes=cr,
        lose_unflushed="--lose-unflushed" in opts,
        controller_failovers=int(opts.get("--controller-failovers", 0)),
        unclean="--unclean" in opts,
        min_isr=int(opts.get("--min-isr", 1)),
        min_isr_changes=int(opts.get("--min-isr-changes", 0)),
        retention="--retention" in opts,
        delete_records=int(opts.get("--delete-records", 0)),
        reassignments=int(opts.get("--reassignments", 0)),
    )
    model = IsrSpec(cfg, _version(cx))
    (state,) = model.init_states()
    states = [state_to_json(state)]
    for i, want in enumerate(cx["steps"], 1):
        nxt = [t for a, t in model.successors(state) if _text(model, a) == want]
        assert nxt, f"step {i}: {want} is not a transition of the spec there"
        state = nxt[0]
        states.append(state_to_json(state))
    return states


def _version(cx: dict):
    """The version object of a listed counterexample: its --protocol-file's, or the built-in
    one it names."""
    from isr.spec.protocols import get_protocol

    if cx["from_file"]:
        return load_protocol_file(cx["argv"][cx["argv"].index("--protocol-file") + 1])
    return get_protocol(cx["protocol"])


def _reorder_params() -> list:
    return [pytest.param(c, id=_id(c)) for c in listed()]


@pytest.mark.parametrize("cx", _reorder_params())
def test_no_listed_counterexample_reorders_a_controllers_requests(cx):
    """Issue 25 item 4 (R8): in no story of the table does a broker receive a LeaderAndIsr
    request after a later one of the same controller (Kafka's controller sends each broker its
    requests in order, one FIFO queue per broker: ControllerChannelManager). kraft: a broker
    reads the metadata log in order and may skip to a later image, never act on an older
    partition state after a newer one (find_reorders' ``coalescing``)."""
    from isr.traces.counterexample.reorder import find_reorders

    states = _replayed_states(cx)
    actions = [s[: s.index("(")] for s in cx["steps"]]
    kraft = _version(cx).split_fetch
    assert find_reorders(states, actions, coalescing=kraft) == []
