"""README's and docs/'s relative links point at files that exist, and their #anchors at headings
(or `<a id>`s) of the page they name (issue 30: README's content moved to docs/ pages, which link
to each other)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def anchors(page: Path) -> set[str]:
    """GitHub's anchors of a page's headings, and its explicit `<a id="...">`s."""
    text = page.read_text()
    out = set(re.findall(r'<a id="([^"]+)"', text))
    for heading in re.findall(r"^#+ (.*)$", text, re.M):
        out.add(re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-"))
    return out


def links(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)  # code is not a link
    return [t for t in re.findall(r"\]\(([^)\s]+)\)", text) if not t.startswith(("http", "mailto"))]


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_relative_links_resolve(page):
    broken = []
    for target in links(page):
        path, _, anchor = target.partition("#")
        dest = (page.parent / path) if path else page
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no such heading in {dest.name}")
    assert broken == [], broken


def test_readme_links_every_docs_page_it_moved_content_to():
    text = (ROOT / "README.md").read_text()
    for name in ("model", "findings", "faults", "commands", "engines", "implementation"):
        assert f"(docs/{name}.md" in text, name
    assert "(docs/performance.md)" in text
