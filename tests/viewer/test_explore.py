"""`isr explore`: the state walker without HTTP (successors, diffs, the predicate search, the
counterexample jump), its JSON API on an ephemeral loopback port, and the page in headless
Chromium (one run: the first enabled action clicked by the page's test hook)."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import urllib.error
import urllib.request
from collections import deque
from pathlib import Path

import pytest
from isr.cli.errors import UsageError
from isr.cli.explore import make_server, session_from_args
from isr.cli.explore_query import QueryError, parse
from isr.cli.explore_session import ExploreError, ExploreSession, diff, flatten
from isr.cli.main import build_parser, main
from isr.traces.counterexample import itf

SMALL = ["--protocol", "hw-truncation", "--replicas", "2", "--records", "1"]
SMALL += ["--epochs", "2", "--crashes", "0"]


def _session(*argv: str) -> ExploreSession:
    """A session built as the command builds it (the model options through cli.models)."""
    return session_from_args(build_parser().parse_args(["explore", *argv]))


@pytest.fixture(scope="module")
def small() -> ExploreSession:
    return _session(*SMALL)


@pytest.fixture(scope="module")
def strong_isr_trace(tmp_path_factory) -> dict[str, Path]:
    """hw-truncation's StrongIsr counterexample at the default bounds, as `isr check` writes
    it, in both formats."""
    d = tmp_path_factory.mktemp("explore")
    out = {}
    for fmt in ("ndjson", "itf"):
        out[fmt] = d / f"strong-isr.{fmt}"
        argv = ["check", "--protocol", "hw-truncation", "--invariant", "StrongIsr", "--quiet"]
        argv += ["--workers", "1", "--trace-out", str(out[fmt]), "--trace-format", fmt]
        assert main(argv) == 1
    return out


# --- the session ------------------------------------------------------------------------------
def test_successors_of_the_initial_state_are_the_models(small):
    model = small.model
    init = model.init_states()[0]
    assert small.initial == [0] and small.state(0) == init
    view = small.successors_view(0)
    succ = model.successors(init)
    assert len(view) == len(succ) > 0
    for k, (v, (action, t)) in enumerate(zip(view, succ, strict=True)):
        desc = model.describe_action(action)
        assert v["k"] == k and v["action"] == desc["action"] and v["args"] == desc["args"]
        assert small.state(v["target"]) == t  # the state as reached, not its representative
        assert v["changed"] == diff(model.state_to_json(init), model.state_to_json(t))
    # the state's properties: every invariant, each holding in the initial state
    names = {p["name"]: p["holds"] for p in small.state_view(0)["invariants"]}
    assert "StrongIsr" in names and all(names.values())


def test_diff_lists_only_what_changed_before_and_after(small):
    before = {"hw": {"r0": 0, "r1": 0}, "log": {"r0": [], "r1": []}, "n": 0, "c": {"leader": 0}}
    after = {"hw": {"r0": 1, "r1": 0}, "log": {"r0": [[1, 1]], "r1": []}, "n": 0, "c": {}}
    assert flatten(after) == {
        "hw.r0": 1,
        "hw.r1": 0,
        "log.r0": [[1, 1]],
        "log.r1": [],
        "n": 0,
        "c": {},
    }
    assert diff(before, after) == [
        {"field": "hw.r0", "before": 0, "after": 1},
        {"field": "log.r0", "before": [], "after": [[1, 1]]},
        {"field": "c", "before": None, "after": {}},
        {"field": "c.leader", "before": 0, "after": None},
    ]
    # a list of records: also the members that left and came
    two = [{"to": 0, "epoch": 2}, {"to": 1, "epoch": 2}]
    (c,) = diff({"q": two}, {"q": [two[1], {"to": 2, "epoch": 2}]})
    assert (c["removed"], c["added"]) == ([two[0]], [{"to": 2, "epoch": 2}])
    assert "removed" not in diff({"log": [[1, 1]]}, {"log": []})[0]
    # a producer's write, as the model makes it: the leader's log, its pending ack, the count
    send = next(v for v in small.successors_view(0) if v["action"] == "ProducerSend")
    assert {c["field"]: (c["before"], c["after"]) for c in send["changed"]} == {
        "log.r0": ([], [[1, 1]]),
        "pending_acks.r0": ([], [0]),
        "records_written": (0, 1),
    }


def test_walk_follows_successor_positions(small):
    first = small.successors_view(0)[1]
    walk = small.walk([0, 1])
    assert [w["id"] for w in walk] == [0, first["target"]]
    assert walk[1]["label"] == first["label"] and walk[1]["changed"] == first["changed"]
    with pytest.raises(ExploreError, match="not an action 99"):
        small.walk([0, 99])
    with pytest.raises(ExploreError, match="no initial state 3"):
        small.walk([3])


def _bfs_depth(model, goal) -> int:
    """The depth of the first state satisfying ``goal``, by a plain breadth-first search."""
    init = model.init_states()[0]
    seen = {init}
    queue = deque([(init, 0)])
    while queue:
        s, d = queue.popleft()
        if goal(s):
            return d
        for _a, t in model.successors(s):
            if t not in seen:
                seen.add(t)
                queue.append((t, d + 1))
    raise AssertionError("unreachable")


def test_search_finds_a_shortest_path(small):
    q = "leader_view[r1] == 1 and hw[r1] = 1"
    r = small.search(q)
    assert r["found"], r
    want = _bfs_depth(
        small.model,
        lambda s: (
            (j := small.model.state_to_json(s))["leader_view"]["r1"] == 1 and j["hw"]["r1"] == 1
        ),
    )
    assert len(r["choices"]) == want > 1
    walk = small.walk([0, *r["choices"]])
    assert [w["id"] for w in walk] == r["ids"]
    last = small.model.state_to_json(small.state(r["ids"][-1]))
    assert last["leader_view"]["r1"] == 1 and last["hw"]["r1"] == 1
    # from a state on the way: the rest of the path
    mid = small.search(q, start=r["ids"][1])
    assert mid["found"] and len(mid["choices"]) == want - 1
    # a state that matches already: no step
    assert small.search("records_written == 0")["choices"] == []


def test_search_for_a_violation_matches_the_checkers_counterexample(strong_isr_trace):
    """hw-truncation's StrongIsr violation at the default bounds: `isr check` reports a shortest
    counterexample; the explorer's search finds one of the same length."""
    n = len(itf.read_any(str(strong_isr_trace["ndjson"])).steps)
    session = _session("--protocol", "hw-truncation")
    r = session.search("not StrongIsr")
    assert r["found"] and len(r["choices"]) == n == 6, r
    view = session.state_view(r["ids"][-1])
    assert {p["name"] for p in view["invariants"] if not p["holds"]} >= {"StrongIsr"}


def test_search_stops_at_its_limit_with_a_message():
    session = _session(*SMALL, "--search-max-states", "50")
    r = session.search("records_written == 1 and crashes == 1")  # crashes 0: never
    assert not r["found"] and not r["complete"]
    assert "stopped at the limit of 50 states" in r["message"]
    done = _session(*SMALL).search("crashes == 1")
    assert not done["found"] and done["complete"] and "all" in done["message"]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("", "the query is empty"),
        ("hw[r0] ==", "column 10: expected a value, got the end"),
        ("hw[r7] == 1", "hw has no key 'r7'; its keys: r0, r1"),
        ("hw_view[r0] == 1", "unknown field 'hw_view'"),
        ("StrongISR", "did you mean StrongIsr?"),
        ("__import__('os')", "unknown field '__import__'"),
        ("hw[r0] == 1 2", "expected 'and', 'or', ',' or the end, got '2'"),
        ("hw[r0] ; 1", "unexpected ';'"),
        ("records_written[0] == 1", "records_written is a number, it has no keys"),
        ("(" * 60 + "true" + ")" * 60, "nested more than 50 deep"),
        ("hw[r0] in " + "[" * 600 + "]" * 600, "nested more than 50 deep"),
        ("not " * 300 + "true", "nested more than 50 deep"),
    ],
)
def test_a_bad_predicate_is_a_clear_error(small, query, message):
    with pytest.raises(ExploreError, match=re.escape(message)):
        small.search(query)


def test_the_predicate_language():
    state = {
        "hw": {"r0": 1, "r1": 0},
        "alive": {"r0": True, "r1": False},
        "isr_view": {"r0": [0, 1], "r1": [1]},
        "log": {"r0": [[1, 1], [2, 1]], "r1": []},
        "coordination": {"leader": 0, "isr": [0, 1]},
        "n": 2,
    }

    def holds(text: str, invariants: dict[str, bool] | None = None) -> bool:
        inv = invariants or {}
        q = parse(text, state, inv)
        return q.matches(state if q.uses_state else None, inv.__getitem__)

    assert holds("hw[r0] == 1 and hw[r1] < 1")
    assert holds("hw[0] = 1, hw.r1 = 0")  # `=`, commas, an index for r0, a dotted key
    assert holds("not alive[r1] and alive[r0]")
    assert holds("1 in isr_view[r0] and 0 not in isr_view[r1]")
    assert holds("len(log[r0]) == 2 and log[r0][1] == [2, 1] and log[r0][5] == null")
    assert holds("coordination.leader == 0 or n > 100")
    assert not holds("hw[r0] < 'x'")  # an ordering between types: false, no error
    assert not holds("alive[r0] == 1")  # true is not 1
    assert holds("not Weak and Strong", {"Weak": False, "Strong": True})
    assert not parse("not Weak", state, ["Weak"]).uses_state  # a search skips the JSON
    with pytest.raises(QueryError, match="unknown field 'Weak'"):
        parse("Weak", state, [])


def test_the_counterexample_replays_through_the_model(strong_isr_trace):
    """Every state of a real --trace-out file (both formats) is reached by the model, and the
    page's path for each leads to exactly that state."""
    for fmt, path in strong_isr_trace.items():
        trace = itf.read_any(str(path))
        session = _session("--trace", str(path))
        tr = session.trace
        assert tr["property"] == "StrongIsr" and len(tr["states"]) == len(trace.steps) + 1, fmt
        want = [trace.initial, *(s["state"] for s in trace.steps)]
        for i, (state_json, st) in enumerate(zip(want, tr["states"], strict=True)):
            walk = session.walk(st["path"])
            assert len(st["path"]) == i + 1 and walk[-1]["id"] == st["id"]
            assert session.state_view(st["id"])["state"] == state_json, (fmt, i)
            if i:
                assert walk[-1]["label"] == st["label"]
        last = session.state_view(tr["states"][-1]["id"])
        assert not next(p["holds"] for p in last["invariants"] if p["name"] == "StrongIsr")


def test_a_lasso_ending_in_stuttering_is_shown(tmp_path):
    """A liveness lasso's last step may be ``Stutter`` (staying forever in a state): no
    transition of the model, it shows the state before it again."""
    lasso = tmp_path / "lasso.ndjson"
    argv = ["liveness", "--protocol", "kip-320", "--replicas", "2", "--records", "1"]
    argv += ["--crashes", "1", "--session-expiries", "1", "--trace-out", str(lasso)]
    assert main(argv) == 1
    tr = _session("--trace", str(lasso)).trace
    assert tr["kind"] == "eventually" and tr["loop_start"] is not None
    last, before = tr["states"][-1], tr["states"][-2]
    assert last["label"] == "Stutter" and (last["id"], last["path"]) == (
        before["id"],
        before["path"],
    )


def test_trace_errors_are_usage_errors(strong_isr_trace, tmp_path):
    with pytest.raises(UsageError, match="--replicas with --trace"):
        _session("--trace", str(strong_isr_trace["ndjson"]), "--replicas", "2")
    lines = strong_isr_trace["ndjson"].read_text().splitlines()
    step = json.loads(lines[2])
    step["state"]["hw"]["r0"] = 1  # a state the recorded step does not make
    bad = tmp_path / "bad.ndjson"
    bad.write_text("\n".join([lines[0], lines[1], json.dumps(step), *lines[3:]]) + "\n")
    with pytest.raises(UsageError, match=r"step 1 .* is not a transition of the spec"):
        _session("--trace", str(bad))


# --- the HTTP API -----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def server(small):
    srv = make_server(small, "127.0.0.1", 0)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def _get(srv, path: str, host: str | None = None) -> tuple[int, str, bytes]:
    req = urllib.request.Request(srv.url.rstrip("/") + path)
    if host:
        req.add_header("Host", host)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.headers["Content-Type"], r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers["Content-Type"], e.read()


def test_the_api_answers_json(server, small):
    code, ctype, body = _get(server, "/api/info")
    info = json.loads(body)
    assert code == 200 and ctype == "application/json"
    assert info["model"] == "isr/hw-truncation" and info["initial"] == [0]
    assert "StrongIsr" in [p["name"] for p in info["invariants"]] and info["trace"] is None
    code, _, body = _get(server, "/api/successors/0")
    assert code == 200 and json.loads(body) == small.successors_view(0)
    code, _, body = _get(server, "/api/state/0")
    assert code == 200 and json.loads(body)["state"]["records_written"] == 0
    code, _, body = _get(server, "/api/walk?path=0.1")
    assert code == 200 and len(json.loads(body)) == 2
    code, _, body = _get(server, "/api/search?q=leader_view%5Br1%5D%20%3D%3D%201&from=0")
    found = json.loads(body)
    assert code == 200 and found["found"] and len(found["choices"]) >= 1
    for path, want in [
        ("/api/search?q=hw%5B", 400),
        ("/api/state/nope", 400),
        ("/api/state/999999", 400),
        ("/api/walk?path=0.999", 400),
        ("/api/nothing", 404),
        ("/elsewhere", 404),
    ]:
        code, ctype, body = _get(server, path)
        assert (code, ctype) == (want, "application/json"), path
        assert json.loads(body)["error"], path


def test_the_page_is_self_contained_and_only_loopback_names_are_served(server):
    code, ctype, body = _get(server, "/")
    page = body.decode()
    assert code == 200 and ctype.startswith("text/html")
    assert not re.search(r"(src|href)=\"?(https?:)?//", page), "the page must load nothing"
    assert _get(server, "/api/info", host=f"localhost:{server.server_address[1]}")[0] == 200
    code, _, body = _get(server, "/api/info", host="attacker.example:80")  # DNS rebinding
    assert code == 403 and "127.0.0.1 or localhost only" in json.loads(body)["error"]


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "::", "example.com"])
def test_a_non_loopback_address_is_refused(small, host):
    with pytest.raises(UsageError, match="loopback address only"):
        make_server(small, host, 0)
    assert main(["explore", *SMALL, "--bind", host, "--port", "0"]) == 2


def test_a_port_in_use_is_one_line_and_exit_2(server, capsys):
    port = str(server.server_address[1])
    assert main(["explore", *SMALL, "--port", port]) == 2
    err = capsys.readouterr().err
    assert (
        err
        == f"isr: error: port {port} on 127.0.0.1 is in use: give another with --port N (0: any free port)\n"
    )


def test_ctrl_c_stops_it_cleanly():
    """Ctrl-C (SIGINT) once the server answers: exit 0, one line on stderr. The signal is sent
    only after a page was served, so the server is in its loop; if the command does not stop,
    the failure says whether SIGINT was ignored in it (an inherited disposition; see
    tests/conftest.py) or caught and not acted on."""
    p = subprocess.Popen(
        [sys.executable, "-m", "isr.cli", "explore", *SMALL, "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = p.stdout.readline()
        m = re.fullmatch(
            r"isr explore: isr/hw-truncation at (http://127\.0\.0\.1:\d+/) \(Ctrl-C stops it\)\n",
            line,
        )
        assert m, line
        with urllib.request.urlopen(m.group(1), timeout=60) as r:
            assert r.status == 200
        p.send_signal(signal.SIGINT)
        try:
            out, err = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            with open(f"/proc/{p.pid}/status") as f:
                masks = [x.strip() for x in f if x.startswith(("SigIgn", "SigCgt", "SigPnd"))]
            pytest.fail(f"still running 60 s after SIGINT; {masks} (bit 2 is SIGINT)")
    finally:
        p.kill()
        p.wait()
    assert p.returncode == 0 and out == "" and err == "isr explore: stopped\n"


# --- the page in headless Chromium ------------------------------------------------------------
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
CHROMIUM_FLAGS += [
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def test_the_page_clicks_an_action_and_shows_its_successor(server, small):
    exe = shutil.which("chromium")
    assert exe, "chromium is not installed: apt-get install chromium (scripts/debian-packages.txt)"
    first = small.successors_view(0)[0]
    with tempfile.TemporaryDirectory() as profile:
        r = subprocess.run(
            [exe, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--virtual-time-budget=10000"]
            + ["--dump-dom", server.url + "?auto=click0"],
            capture_output=True,
            text=True,
            timeout=120,
        )
    dom = r.stdout
    assert 'data-ready="0.0"' in dom, f"the page did not show the successor: {r.stderr[-2000:]}"
    crumbs = re.search(r'id="crumbs">(.*?)</span>\s*</nav>', dom, re.S)
    assert crumbs, dom[:3000]
    steps = re.findall(r'class="crumb[^"]*"[^>]*>([^<]*)</a>', crumbs.group(1))
    assert steps == ["Init s0", f"1. {first['label']}"]  # one step: the action clicked
    assert f"State s{first['target']}" in dom
