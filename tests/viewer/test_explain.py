"""The counterexample viewer: `isr explain TRACE --html OUT.html`, rendered in headless
Chromium (Debian's `chromium`, listed in scripts/debian-packages.txt)."""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
import tempfile
import zlib
from pathlib import Path

import pytest

from cli.main import main

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _chromium() -> str:
    exe = shutil.which("chromium")
    assert exe, "chromium is not installed: apt-get install chromium (scripts/debian-packages.txt)"
    return exe


def _run_chromium(args: list[str]) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(
            [_chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
            capture_output=True,
            text=True,
            timeout=120,
        )


def decode_png(data: bytes) -> tuple[int, int, int, bytes]:
    """(width, height, bytes per pixel, raw pixel rows without filter bytes): 8-bit RGB/RGBA."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        ctype = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        if ctype == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and color in (2, 6) and interlace == 0, "unsupported PNG"
            bpp = 3 if color == 2 else 4
        elif ctype == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    out = bytearray()
    prev = bytearray(stride)
    i = 0
    for _ in range(height):
        f = raw[i]
        line = bytearray(raw[i + 1 : i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[x] = (line[x] + pred) & 255
        out += line
        prev = line
    return width, height, bpp, bytes(out)


def non_white_fraction(png: bytes) -> float:
    w, h, bpp, px = decode_png(png)
    non_white = sum(
        1 for k in range(0, len(px), bpp) if px[k] < 235 or px[k + 1] < 235 or px[k + 2] < 235
    )
    return non_white / (w * h)


@pytest.fixture(scope="module")
def traces(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("traces")
    safety, lasso = d / "safety.ndjson", d / "lasso.ndjson"
    model = ["--replicas", "2", "--records", "1"]
    assert (
        main(
            ["check", "--protocol", "hw-truncation", *model, "--crashes", "2", "--quiet"]
            + ["--trace-out", str(safety)]
        )
        == 1
    )
    assert (
        main(
            ["liveness", "--protocol", "kip-320", *model, "--crashes", "1"]
            + ["--trace-out", str(lasso)]
        )
        == 1
    )
    return {"safety": safety, "lasso": lasso}


def _steps(trace: Path) -> int:
    return len(trace.read_text().splitlines()) - 2


@pytest.mark.parametrize("which", ["safety", "lasso"])
def test_page_is_self_contained_and_holds_every_step(traces, tmp_path, which):
    out = tmp_path / "cx.html"
    assert main(["explain", str(traces[which]), "--html", str(out)]) == 0
    page = out.read_text()
    assert not re.search(r"(src|href)=\"?https?:", page), "the page must not load anything"
    n = _steps(traces[which])
    for i in range(n + 1):
        assert f'id="step-{i}"' in page
    assert "broken" in page if which == "safety" else "loop" in page


@pytest.mark.parametrize("which", ["safety", "lasso"])
def test_rendered_in_headless_chromium(traces, tmp_path, which):
    html_file = tmp_path / "cx.html"
    assert main(["explain", str(traces[which]), "--html", str(html_file)]) == 0
    url = html_file.resolve().as_uri()
    shot = tmp_path / "cx.png"
    r = _run_chromium([f"--screenshot={shot}", "--window-size=1200,900", url])
    assert shot.exists(), f"chromium wrote no screenshot: {r.stderr[-2000:]}"
    frac = non_white_fraction(shot.read_bytes())
    assert frac > 0.02, f"the screenshot is blank ({frac:.4f} non-white)"
    dom = _run_chromium(["--dump-dom", url]).stdout
    n = _steps(traces[which])
    ids = set(re.findall(r'id="step-(\d+)"', dom))
    assert ids == {str(i) for i in range(n + 1)}
    header = json.loads(traces[which].read_text().splitlines()[0])
    assert header["property"] in dom
    # the JS ran: the last step is selected
    assert re.search(rf'class="step[^"]*sel"[^>]*id="step-{n}"', dom)


def test_blank_page_is_detected(tmp_path):
    """The blank check can fail: a white page is blank."""
    page = tmp_path / "blank.html"
    page.write_text("<html><body style='background:#fff'></body></html>")
    shot = tmp_path / "blank.png"
    _run_chromium([f"--screenshot={shot}", "--window-size=400,300", page.resolve().as_uri()])
    assert non_white_fraction(shot.read_bytes()) < 0.001


def test_bad_trace_is_a_usage_error(tmp_path):
    bad = tmp_path / "bad.ndjson"
    bad.write_text("{}\n")
    assert main(["explain", str(bad), "--html", str(tmp_path / "x.html")]) == 2
