"""The walk of one `isr` command from its `run` to the engine, at file level (issue 29).

    python scripts/call_walk.py check --protocol-file my_kip.py --max-states 10 --quiet
    python scripts/call_walk.py --json check --workers 2 --max-states 10 --quiet

Runs the command in this process with a profiler and prints the project's files the call tree
passes through, in order of first entry, from the command's ``run`` to the search engine's
entry point, and every *climb back*: a call into a file that is already on the call stack below
another file (A calls B, which calls back into A), the tangle issue 29 removed; and the
files entered more than once from another file (a caller coming back to a module step by step
instead of asking once). Module-level
code (imports) is not counted. Run it with ``ISR_PURE_PYTHON=1``: a compiled module's calls
are invisible to the profiler. Exit 0 when the walk has no climb back, 1 when it has one."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = str(Path(__file__).resolve().parent.parent) + "/"
sys.path.insert(0, ROOT)  # this checkout's isr, whatever is installed
# where the walk ends: the engines' entry points
ENGINES = {
    ("checker/bfs.py", "check_bfs"),
    ("checker/parallel/engine.py", "check_parallel"),
    ("checker/simulate.py", "simulate"),
    ("checker/liveness.py", "check_liveness"),
}


def walk(argv: list[str]) -> dict:
    command = argv[0]
    stack: list[str | None] = []
    order: list[str] = []
    hops: set[tuple[str, str]] = set()
    climbs: set[tuple[str, str, str]] = set()
    entries: dict[str, list[str]] = {}  # file -> the functions called in it from other files
    state = {"on": False, "done": False}

    def prof(frame, event, arg) -> None:
        if state["done"]:
            return
        f = frame.f_code.co_filename
        rel = f[len(ROOT) :] if f.startswith(ROOT) and "/.venv/" not in f else None
        name = frame.f_code.co_name
        if not state["on"]:
            if event == "call" and rel == f"cli/{command}.py" and name == "run":
                state["on"] = True
            else:
                return
        if event == "call":
            if name == "<module>":
                rel = None
            if rel is not None:
                files = [x for x in stack if x]
                if files and files[-1] != rel:
                    entries.setdefault(rel, []).append(name)
                    hops.add((files[-1], rel))
                    if rel in files:
                        climbs.add((files[-1], rel, name))
                if rel not in order:
                    order.append(rel)
                if (rel, name) in ENGINES:
                    state["done"] = True
                    return
            stack.append(rel)
        elif event == "return" and stack:
            stack.pop()

    from isr.cli.main import main

    sys.setprofile(prof)
    try:
        main(argv)
    except SystemExit:
        pass
    finally:
        sys.setprofile(None)
    return {
        "files": order,
        "hops": len(hops),
        "climbs_back": [list(c) for c in sorted(climbs)],
        "entered_more_than_once": {f: e for f, e in entries.items() if len(e) > 1},
        "reached_engine": state["done"],
    }


def main() -> int:
    argv = sys.argv[1:]
    as_json = bool(argv) and argv[0] == "--json"
    if as_json:
        argv = argv[1:]
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.stdout
    sys.stdout = sys.stderr  # the command's own output is not the walk's
    try:
        res = walk(argv)
    finally:
        sys.stdout = out
    if as_json:
        print(json.dumps(res))
    else:
        print(f"files {len(res['files'])}, file-to-file hops {res['hops']}")
        print("  " + " -> ".join(res["files"]))
        print(f"climbs back: {len(res['climbs_back'])}")
        for c in res["climbs_back"]:
            print(f"  {c[0]} calls back into {c[1]} ({c[2]})")
        again = res["entered_more_than_once"]
        print(f"files entered more than once from another file: {len(again)}")
        for f, names in again.items():
            print(f"  {f}: {', '.join(names)}")
    return 1 if res["climbs_back"] else 0


if __name__ == "__main__":
    sys.exit(main())
