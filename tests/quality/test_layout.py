"""The package layout (issue 15 part 3): one importable name, every package shipped, no cycles.

* Every folder of spec/, checker/, traces/, cli/, impl/ with an ``__init__.py`` is listed in
  pyproject.toml's ``packages`` (else the wheel would silently lack it).
* No module imports the old top-level names (``spec``, ``checker``, ...): only ``isr.*`` and
  relative imports, so nothing generic is needed in site-packages.
* The module import graph (absolute and relative imports at any level, read with ``ast``) has no
  cycle between modules, and ``checker`` imports nothing of the Kafka packages (docs/DESIGN.md's
  boundary).
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[2]
TOPS = ("spec", "checker", "traces", "cli", "impl")


def modules() -> dict[str, Path]:
    out = {}
    for top in TOPS:
        for p in (ROOT / top).rglob("*.py"):
            parts = p.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out["isr." + ".".join(parts)] = p
    for p in (ROOT / "isr").glob("*.py"):
        out["isr" if p.stem == "__init__" else f"isr.{p.stem}"] = p
    return out


def imports(name: str, path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.add(mod)
            out.update(f"{mod}.{a.name}" for a in node.names)
    return out


def test_every_package_is_in_the_wheel():
    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    found = {n for n, p in modules().items() if p.name == "__init__.py"}
    assert found == listed


def test_no_module_imports_an_old_top_level_name():
    bad = []
    for top_dir in (*TOPS, "isr", "tests", "bench", "scripts"):
        for p in (ROOT / top_dir).rglob("*.py"):
            for node in ast.walk(ast.parse(p.read_text(), str(p))):
                names = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and not node.level:
                    names = [node.module or ""]
                bad += [
                    f"{p.relative_to(ROOT)}:{node.lineno} {n}"
                    for n in names
                    if n.split(".")[0] in TOPS
                ]
    assert not bad, bad


def test_no_text_runs_an_old_module_name():
    """`python -m cli` or `-m impl.adapter` would load a second copy of the package under its old
    name (two UsageError classes, two registries): every command line says `-m isr.X`, and so
    does Python code written into a string (a test's user file, `python -c`)."""
    import re
    import subprocess

    files = subprocess.run(
        ["git", "ls-files", "*.py", "*.md", "*.sh", "*.js", "Makefile"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    old = re.compile(
        r"-m (spec|checker|traces|cli|impl)\b"
        r"|\"-m\", \"(spec|checker|traces|cli|impl)\b"
        r"|[\"']from (spec|checker|traces|cli|impl)\."  # code in a string (a user file, -c)
    )
    bad = [
        f"{f}:{n}"
        for f in files
        if (ROOT / f).is_file() and f != "tests/quality/test_layout.py"  # its own pattern
        for n, line in enumerate((ROOT / f).read_text(errors="replace").splitlines(), 1)
        if old.search(line)
    ]
    assert not bad, bad


def test_no_import_cycle_and_the_checker_stays_generic():
    mods = modules()
    g = nx.DiGraph()
    for name, path in mods.items():
        g.add_node(name)
        for imp in imports(name, path):
            if imp in mods and imp != name:
                g.add_edge(name, imp)
    # a package's __init__ re-exporting its own modules is not a cycle of the code's flow
    cycles = [c for c in nx.strongly_connected_components(g) if len(c) > 1]
    assert not cycles, cycles
    # every isr.* import runs isr/__init__.py first: it must import nothing of the project back
    # (it once re-exported isr.api, which imports isr.checker: a loop through the parent)
    # but for isr._hotpath (the import finder of the compiled hot path), a leaf: it imports
    # nothing of the project itself
    top = {i for i in imports("isr", ROOT / "isr" / "__init__.py") if i.split(".")[0] == "isr"}
    assert not top - {"isr", "isr._hotpath"}, top
    leaf = imports("isr._hotpath", ROOT / "isr" / "_hotpath.py")
    assert not {i for i in leaf if i.split(".")[0] == "isr"}, leaf
    kafka = ("isr.spec", "isr.traces", "isr.impl", "isr.cli")
    leaks = [(a, b) for a, b in g.edges if a.startswith("isr.checker") and b.startswith(kafka)]
    assert not leaks, leaks
