"""The counterexample viewer: `isr explain TRACE --html OUT.html` (and `--format text`),
rendered in headless Chromium (Debian's `chromium`, listed in scripts/debian-packages.txt).

Screenshots are read pixel by pixel: the breaking step is outlined in pure red (#d50000), so a
screenshot with enough of that red shows the broken step in the viewport; a control page with the
step pushed below the fold shows that the check can fail."""

from __future__ import annotations

import html
import json
import re
import shutil
import struct
import subprocess
import tempfile
import zlib
from pathlib import Path

import pytest
from isr.cli.main import main

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


def red_pixels(png: bytes) -> int:
    """Pixels of the broken step's outline colour (#d50000)."""
    _w, _h, bpp, px = decode_png(png)
    return sum(
        1 for k in range(0, len(px), bpp) if px[k] >= 200 and px[k + 1] <= 20 and px[k + 2] <= 20
    )


def non_white_fraction(png: bytes) -> float:
    w, h, bpp, px = decode_png(png)
    non_white = sum(
        1 for k in range(0, len(px), bpp) if px[k] < 235 or px[k + 1] < 235 or px[k + 2] < 235
    )
    return non_white / (w * h)


# A 14-step NoCommittedLoss counterexample of hw-truncation (2 replicas, 2 records, 3 epochs,
# 2 crashes), found by a seeded random walk of the spec (seed 140) and confirmed by `isr replay`.
LONG = Path(__file__).parent / "data" / "hw-truncation-14-steps.ndjson"


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
            + ["--session-expiries", "1"]  # R8: a live broker's requests are never lost
            + ["--trace-out", str(lasso)]
        )
        == 1
    )
    return {"safety": safety, "lasso": lasso, "long": LONG}


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


def _shot(tmp_path: Path, page: Path, size: str = "1200,900") -> bytes:
    shot = tmp_path / (page.stem + ".png")
    r = _run_chromium([f"--screenshot={shot}", f"--window-size={size}", page.resolve().as_uri()])
    assert shot.exists(), f"chromium wrote no screenshot: {r.stderr[-2000:]}"
    return shot.read_bytes()


@pytest.mark.parametrize(
    "which,steps,why",
    [
        (
            "safety",
            5,
            "replica 1 is in the ISR but lacks offset 0 (record 1), below leader 0's HW 1",
        ),
        ("long", 14, "record 2 was acknowledged to an acks=all producer at offset 0, but leader 1"),
    ],
)
def test_broken_step_and_why_are_on_screen(traces, tmp_path, which, steps, why):
    """A 5-step and a 14-step trace: the sentence naming the replica/offset/record is at the
    top, the config is one readable line, and the breaking step is in the first screenful."""
    page = tmp_path / f"{which}.html"
    assert main(["explain", str(traces[which]), "--html", str(page)]) == 0
    assert _steps(traces[which]) == steps
    png = _shot(tmp_path, page)
    assert non_white_fraction(png) > 0.02
    assert red_pixels(png) > 1500, "the broken step is not in view"
    text = html.unescape(page.read_text())  # (the test above checks the browser's DOM)
    assert why in text
    assert re.search(r'id="config">[a-z0-9-]+ · 2 replicas · ', text), "config is not one line"
    assert "{&quot;replicas" not in text, "raw config JSON on the page"
    assert ('class="vertical"' in text) == (steps >= 8)


def test_red_check_fails_when_the_broken_step_is_below_the_fold(tmp_path):
    page = tmp_path / "fold.html"
    page.write_text(
        "<html><body><div style='height:2000px'>top</div>"
        "<div style='box-shadow:inset 0 0 0 3px #d50000;height:300px'>broken</div></body></html>"
    )
    assert red_pixels(_shot(tmp_path, page, "800,600")) == 0


def test_every_changed_field_is_highlighted(traces, tmp_path):
    """Step 3 of the StrongIsr trace (the second FollowerFetch) moves both HWs, empties the
    purgatory and acknowledges record 1: each of those fields is marked, unchanged ones not."""
    page = tmp_path / "cx.html"
    assert main(["explain", str(traces["safety"]), "--html", str(page)]) == 0
    html = page.read_text()
    cells = re.findall(r'<td class="step[^"]*" data-step="3">(.*?)</td>', html, re.S)
    marked = [
        re.sub("<[^>]+>", "", m)
        for m in re.findall(r'class="f chg"[^>]*>(.*?)</span>', "".join(cells))
    ]
    assert "HW 1" in marked and marked.count("HW 1") == 2
    assert any(m.startswith("acked (acks=all)") for m in marked)
    assert not any(m.startswith("LEO") or m.startswith("epoch") for m in marked)


def test_text_mode_tells_the_same_story(traces, capsys):
    assert main(["explain", str(traces["safety"]), "--format", "text"]) == 0
    out = capsys.readouterr().out
    assert (
        "WHY: replica 1 is in the ISR but lacks offset 0 (record 1), below leader 0's HW 1" in out
    )
    assert "step 5. BrokerRestart(replica=1)   <-- StrongIsr breaks here" in out
    assert "*HW 1*" in out and "hw-truncation · 2 replicas · 1 record" in out
    assert main(["explain", str(traces["safety"]), "--format", "html"]) == 2  # needs --html
