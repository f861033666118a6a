"""README's commands print what README says they print (issue 30, item 1).

Every fenced ```console block of README.md (and of the docs/ pages, which use the same
convention) is a transcript: lines starting with `$ isr ` are
commands, the lines after each one (up to the next command or the end of the block) are what it
prints on stdout. This test runs each page's blocks' commands in order, in one fresh directory a page (so a
`--trace-out cx.ndjson` is there for the `isr explain cx.ndjson` after it), as
`python -m isr ...` with this checkout's code, and compares the output with the transcript.
Blocks fenced ```sh are commands without pasted output and are not run.

The comparison is exact but for a small, documented normalisation (`normalise`), applied to both
sides, of the fields that change from run to run:

- a duration: a number followed by ` s` or `s` (`0.1 s`, `found after 2.0 s`, `in 40s`);
- a rate: a number followed by a word and `/s` (`35,060 distinct/s`, `events/s`);

and two wildcards, which only the transcript may use:

- a line that is only `…` stands for any number of lines (zero included);
- `…` inside a line stands for any text within that line (an absolute path, say).

Everything else must be equal: state counts, depths, step counts, property verdicts, the exit
code in `verdict: ... (exit N)` (which must also be the command's return code; a command without
such a line must exit 0). Each command must take under 10 CPU seconds (README promises a quick
start under 10 s a command), counted in the child's own CPU time so that a loaded machine does
not fail the test.
"""

from __future__ import annotations

import re
import resource
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
ELLIPSIS = "…"
CPU_SECONDS_PER_COMMAND = 10.0

_DURATION = re.compile(r"(?<![\w.,])\d[\d,]*(?:\.\d+)? ?s\b")
_RATE = re.compile(r"(?<![\w.,])\d[\d,]*(?:\.\d+)? (\w+)/s\b")


def normalise(line: str) -> str:
    """The volatile fields of one output line replaced by placeholders (see the docstring)."""
    line = _RATE.sub(r"<N> \1/s", line)
    return _DURATION.sub("<T>s", line).rstrip()


def console_blocks(text: str) -> list[list[tuple[str, list[str]]]]:
    """[(command, expected stdout lines)] for each ```console block, in order."""
    blocks = []
    for body in re.findall(r"^```console\n(.*?)^```$", text, re.M | re.S):
        cmds: list[tuple[str, list[str]]] = []
        for line in body.splitlines():
            if line.startswith("$ "):
                cmds.append((line[2:], []))
            else:
                assert cmds, f"output before any command in a console block: {line!r}"
                cmds[-1][1].append(line)
        blocks.append(cmds)
    return blocks


def _line_matches(want: str, got: str) -> bool:
    want, got = normalise(want), normalise(got)
    if ELLIPSIS not in want:
        return want == got
    parts = [re.escape(p) for p in want.split(ELLIPSIS)]
    return re.fullmatch(".*".join(parts), got) is not None


def matches(expected: list[str], actual: list[str]) -> bool:
    """Whether the actual lines are the expected ones, with `…` lines matching any run of lines."""
    while expected and expected[-1] == "":
        expected = expected[:-1]
    while actual and actual[-1].strip() == "":
        actual = actual[:-1]
    memo: dict[tuple[int, int], bool] = {}

    def go(i: int, j: int) -> bool:
        if (i, j) in memo:
            return memo[i, j]
        if i == len(expected):
            ok = j == len(actual)
        elif expected[i] == ELLIPSIS:
            ok = any(go(i + 1, k) for k in range(j, len(actual) + 1))
        else:
            ok = j < len(actual) and _line_matches(expected[i], actual[j]) and go(i + 1, j + 1)
        memo[i, j] = ok
        return ok

    return go(0, 0)


def first_difference(expected: list[str], actual: list[str]) -> str:
    """A readable pointer at where the two stop agreeing (for the failure message)."""
    for n, (w, g) in enumerate(zip(expected, actual, strict=False), 1):
        if w == ELLIPSIS:
            return f"line {n}: after a `…` line; compare the rest by eye:\n" + "\n".join(actual)
        if not _line_matches(w, g):
            return f"line {n}:\n  README: {w}\n  tool:   {g}"
    return f"README has {len(expected)} lines, the tool printed {len(actual)}:\n" + "\n".join(
        actual
    )


def expected_exit(expected: list[str]) -> int:
    codes = [int(m) for line in expected for m in re.findall(r"\(exit (\d)\)$", line)]
    return codes[-1] if codes else 0


def argv_of(command: str) -> list[str]:
    """`isr ARGS` as `python -m isr ARGS`, with the repository's files named absolutely."""
    words = shlex.split(command)
    assert words[0] == "isr", f"a console block runs only `isr` commands: {command}"
    args = [str(ROOT / w) if (ROOT / w).is_file() and "/" in w else w for w in words[1:]]
    return [sys.executable, "-m", "isr", *args]


BLOCKS = console_blocks(README.read_text())
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]


def test_readme_has_a_quick_start_the_test_runs():
    commands = [c for block in BLOCKS for c, _ in block]
    assert len(commands) >= 3, commands
    assert any(c.startswith("isr check ") and "--trace-out" in c for c in commands)
    assert any(c.startswith("isr explain ") for c in commands)


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_console_block_is_what_the_tool_prints(page, tmp_path):
    """All blocks of a page in its order, in one directory: a later block may read a file an
    earlier one wrote (the quick start's `isr explain cx.ndjson`). Every command is run and every
    mismatch reported."""
    failures = []
    for block in console_blocks(page.read_text()):
        for command, expected in block:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            proc = subprocess.run(
                argv_of(command), cwd=tmp_path, capture_output=True, text=True, timeout=300
            )
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            actual = proc.stdout.splitlines()
            if not matches(expected, actual):
                failures.append(f"$ {command}\n" + first_difference(expected, actual))
            if proc.returncode != expected_exit(expected):
                failures.append(
                    f"$ {command}\nexit {proc.returncode}, README says {expected_exit(expected)}"
                    f"\n{proc.stderr[-2000:]}"
                )
            if cpu >= CPU_SECONDS_PER_COMMAND:
                failures.append(f"$ {command}\n{cpu:.1f} CPU s, README promises under 10")
    assert not failures, "\n\n".join(failures)


# The comparison itself: it must fail on a changed count, and pass on changed timings.

_OUT = [
    "complete (2,902 distinct states, 7,359 generated, depth 15, 0.1 s, 35,060 distinct/s)",
    "  StrongIsr  always      VIOLATED (5 steps, found after 0.0 s at 535 distinct states)",
    "verdict: all properties hold (exit 0)",
]


def test_timings_and_rates_may_differ():
    run = [
        "complete (2,902 distinct states, 7,359 generated, depth 15, 12.3 s, 1,234 distinct/s)",
        "  StrongIsr  always      VIOLATED (5 steps, found after 10.5 s at 535 distinct states)",
        "verdict: all properties hold (exit 0)",
    ]
    assert matches(_OUT, run)


@pytest.mark.parametrize(
    "edit",
    [
        ("2,902 distinct", "2,903 distinct"),
        ("7,359 generated", "7,360 generated"),
        ("depth 15", "depth 16"),
        ("5 steps", "6 steps"),
        ("at 535 distinct", "at 536 distinct"),
        ("all properties hold", "VIOLATED"),
        ("(exit 0)", "(exit 1)"),
    ],
)
def test_a_changed_count_or_verdict_fails(edit):
    old, new = edit
    edited = [line.replace(old, new) for line in _OUT]
    assert edited != _OUT
    assert not matches(edited, _OUT)


def test_ellipsis_lines_and_inline_ellipsis():
    run = ["a", "b", "c /abs/path/x.py d", "e"]
    assert matches(["a", ELLIPSIS, "c …/x.py d", "e"], run)
    assert matches([ELLIPSIS, "e"], run)
    assert not matches(["a", ELLIPSIS, "c …/y.py d", "e"], run)
    assert not matches(["a", "c /abs/path/x.py d", "e"], run)  # a line left out needs `…`
