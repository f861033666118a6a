"""The three pictures of issue 30, item 4, rendered in headless Chromium: the matrix heat map
(`isr matrix --html`), the history timeline (`isr history --html`) and the run report's growth
plot (`isr check --html-report`). Each screenshot must show something (not a white page); the
timeline's must show the lost writes' red. The screenshots are kept in /tmp/pictures-shots/
for a person to look at."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from isr.cli.main import main

from tests.viewer.synthetic_history import history
from tests.viewer.test_explain import _run_chromium, decode_png

SHOTS = Path("/tmp/pictures-shots")


def _shot(page: Path, size: str) -> bytes:
    SHOTS.mkdir(parents=True, exist_ok=True)
    shot = SHOTS / (page.stem + ".png")
    shot.unlink(missing_ok=True)
    r = _run_chromium([f"--screenshot={shot}", f"--window-size={size}", page.resolve().as_uri()])
    assert shot.exists(), f"chromium wrote no screenshot: {r.stderr[-2000:]}"
    return shot.read_bytes()


def _pixels(png: bytes) -> tuple[float, int]:
    """(the fraction of pixels that are not white, the pixels of the lost writes' red
    #d50000), from one decoding."""
    w, h, bpp, px = decode_png(png)
    non_white = red = 0
    for k in range(0, len(px), bpp):
        r, g, b = px[k], px[k + 1], px[k + 2]
        if r < 235 or g < 235 or b < 235:
            non_white += 1
            if r >= 200 and g <= 20 and b <= 20:
                red += 1
    return non_white / (w * h), red


def _growth(d: Path) -> Path:
    page = d / "growth.html"
    argv = ["check", "--protocol", "hw-truncation", "--replicas", "2", "--records", "1"]
    assert main([*argv, "--crashes", "1", "--quiet", "--html-report", str(page)]) == 1
    return page


def _matrix(d: Path) -> Path:
    page = d / "matrix.html"
    argv = ["matrix", "--protocols", "hw-truncation,kip-320", "--modes", "none,acks-1"]
    argv += ["--crashes", "1", "--max-seconds", "20", "--jobs", "1", "--html", str(page)]
    assert main(argv) == 0
    return page


def _timeline(d: Path) -> Path:
    src = d / "history.json"
    src.write_text(json.dumps(history()))
    page = d / "timeline.html"
    assert main(["history", str(src), "--html", str(page)]) == 1
    return page


@pytest.mark.parametrize(
    "make,size", [(_growth, "900,700"), (_matrix, "800,500"), (_timeline, "1300,420")]
)
def test_the_picture_renders(tmp_path, capsys, make, size):
    page = make(tmp_path)
    frac, red = _pixels(_shot(page, size))
    assert frac > 0.02, f"{page.name}: the screenshot is blank ({frac:.4f} non-white)"
    if make is _timeline:
        assert red > 20, "the lost writes' red is not on the screen"
