"""The counterexample viewer: `isr explain TRACE --html OUT.html` (and `--format text`),
rendered in headless Chromium (Debian's `chromium`, listed in scripts/debian-packages.txt).

Pages of 5, 11 and 14 steps and a liveness lasso are checked two ways, one Chromium call each:
- a screenshot read pixel by pixel: the breaking step is outlined in pure red (#d50000), so a
  screenshot with enough of that red shows it in the viewport after load;
- the DOM after a measuring script (MEASURE, appended to a copy of the page) has laid it out:
  no element's text overflows its box, no step's border or selection outline overlaps another's,
  red is used only for what breaks the property, unchanged fields are grey, every step has its
  sentence, and the breaking step is in view.
Control pages that break each rule show that the checks can fail."""

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
# An 11-step StrongIsr counterexample of original-design (2 replicas, 2 records, 3 epochs, 1
# crash): `isr simulate --protocol original-design --replicas 2 --records 2 --epochs 3
# --crashes 1 --seed 3 --walks 200 --depth 30`, confirmed by `isr replay`.
ELEVEN = Path(__file__).parent / "data" / "original-design-11-steps.ndjson"


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
    return {"safety": safety, "lasso": lasso, "long": LONG, "eleven": ELEVEN}


def _steps(trace: Path) -> int:
    return len(trace.read_text().splitlines()) - 2


def _page(traces, tmp_path: Path, which: str) -> Path:
    out = tmp_path / f"{which}.html"
    assert main(["explain", str(traces[which]), "--html", str(out)]) == 0
    return out


@pytest.mark.parametrize("which", ["safety", "eleven", "long", "lasso"])
def test_page_is_self_contained_and_holds_every_step(traces, tmp_path, which):
    page = _page(traces, tmp_path, which).read_text()
    assert not re.search(r"(src|href)=\"?https?:", page), "the page must not load anything"
    n = _steps(traces[which])
    for i in range(n + 1):
        assert f'id="step-{i}"' in page
    assert ("broken" in page) if which != "lasso" else ('id="cycle"' in page)
    text = html.unescape(page)
    assert re.search(r'id="config">[a-z0-9-]+ · 2 replicas · ', text), "config is not one line"
    assert "{&quot;replicas" not in text, "raw config JSON on the page"
    assert 'id="means">' in page and 'id="means"></p>' not in page, "the property is not said"


# Run after the page's own script (appended at the end of a copy of the page): measures the
# laid-out page and writes what it found, as JSON, into <pre id="measure">.
MEASURE = r"""
<script>
(function(){
  var out={overflow:[],overlap:[],red:[],loud:[],steps:0,said:0,sel:null,inView:false};
  function name(el){var c=typeof el.className==='string'?el.className.trim():'';
    return el.tagName.toLowerCase()+(el.id?'#'+el.id:'')+(c?'.'+c.split(/\s+/).join('.'):'')
      +' "'+(el.textContent||'').trim().slice(0,50)+'"';}
  function rgb(c){var m=/rgba?\(([\d.]+), ([\d.]+), ([\d.]+)(?:, ([\d.]+))?\)/.exec(c);
    return m&&(m[4]===undefined||+m[4]>0)?[+m[1],+m[2],+m[3]]:null;}
  function red(c){var x=rgb(c);return !!x&&x[0]>=120&&x[1]<=60&&x[2]<=60;}
  var main=document.querySelector('main');
  if(document.documentElement.scrollWidth>window.innerWidth+1)out.overflow.push('the page');
  [].forEach.call(document.body.querySelectorAll('*'),function(el){
    if(/^(SCRIPT|STYLE)$/.test(el.tagName))return;
    var cs=getComputedStyle(el);
    if(el.clientWidth>0&&el.scrollWidth>el.clientWidth+1)out.overflow.push(name(el));
    if(el!==main&&el.clientHeight>0&&cs.overflowY!=='visible'&&el.scrollHeight>el.clientHeight+1)
      out.overflow.push(name(el)+' (clipped)');
    var reds=red(cs.color)||red(cs.backgroundColor)
      ||(parseFloat(cs.borderTopWidth)>0&&red(cs.borderTopColor))
      ||(parseFloat(cs.borderLeftWidth)>0&&red(cs.borderLeftColor))
      ||(cs.outlineStyle!=='none'&&red(cs.outlineColor));
    if(reds&&!el.matches('.broken,.cycle,.culprit')
      &&!el.closest('.why,.bad,.tag,.note,.legend,.culprit>.lname'))
      out.red.push(name(el));
    if(el.matches('.step .f:not(.chg)')){var x=rgb(cs.color);
      if(!x||Math.max(x[0],x[1],x[2])-Math.min(x[0],x[1],x[2])>8||x[0]<100)out.loud.push(name(el));}
  });
  // a step's box grown by its selection outline (2px, 3px off): none may touch another's, nor
  // the border of the lasso frame around it
  var steps=[].slice.call(document.querySelectorAll('.step')), P=5;
  function grow(r,d){return {l:r.left-d,t:r.top-d,r:r.right+d,b:r.bottom+d};}
  function meet(a,b){return a.l<b.r&&b.l<a.r&&a.t<b.b&&b.t<a.b;}
  steps.forEach(function(s,i){var a=grow(s.getBoundingClientRect(),P);
    steps.slice(i+1).forEach(function(t){if(meet(a,grow(t.getBoundingClientRect(),P)))
      out.overlap.push(s.id+' / '+t.id);});
    [].forEach.call(document.querySelectorAll('.cycle'),function(c){
      var r=c.getBoundingClientRect(), cs=getComputedStyle(c), bw=parseFloat(cs.borderTopWidth);
      var inner=grow(r,-bw);
      if(c.contains(s)){if(a.l<inner.l||a.t<inner.t||a.r>inner.r||a.b>inner.b)
        out.overlap.push(s.id+' / its cycle frame');}
      else if(meet(a,grow(r,0)))out.overlap.push(s.id+' / cycle frame');});
    out.steps++; var say=s.querySelector('.say');
    if(say&&say.textContent.trim().length>10)out.said++;});
  var sel=document.querySelector('.step.sel'); out.sel=sel&&sel.id;
  var b=document.querySelector('.broken')||document.querySelector('.cycle');
  if(b&&main){var rb=b.getBoundingClientRect(), rm=main.getBoundingClientRect();
    out.inView=rb.top>=rm.top-1&&(rb.bottom<=rm.bottom+1||rb.height>rm.height);}
  var pre=document.createElement('pre'); pre.id='measure'; pre.textContent=JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
"""


def measure(tmp_path: Path, page: Path, size: str = "1200,900") -> dict:
    """What MEASURE finds in ``page`` laid out in a window of ``size``."""
    probe = tmp_path / (page.stem + "-measured.html")
    probe.write_text(page.read_text().replace("</body>", MEASURE + "</body>"))
    r = _run_chromium([f"--window-size={size}", "--dump-dom", probe.resolve().as_uri()])
    m = re.search(r'<pre id="measure">(.*?)</pre>', r.stdout, re.S)
    assert m, f"the measuring script did not run: {r.stderr[-2000:]}"
    return json.loads(html.unescape(m.group(1)))


def _shot(tmp_path: Path, page: Path, size: str = "1200,900") -> bytes:
    shot = tmp_path / (page.stem + ".png")
    r = _run_chromium([f"--screenshot={shot}", f"--window-size={size}", page.resolve().as_uri()])
    assert shot.exists(), f"chromium wrote no screenshot: {r.stderr[-2000:]}"
    return shot.read_bytes()


@pytest.mark.parametrize("which,steps", [("safety", 5), ("eleven", 11), ("long", 14), ("lasso", 6)])
def test_the_page_reads_well_in_chromium(traces, tmp_path, which, steps):
    """At 5, 11 and 14 steps and on a lasso, one layout: the breaking step (the lasso's cycle)
    is on screen after load, no text overflows its box, no border overlaps another, red marks
    only what breaks the property and unchanged fields are grey; every step has its sentence."""
    assert _steps(traces[which]) == steps
    page = _page(traces, tmp_path, which)
    png = _shot(tmp_path, page)
    assert non_white_fraction(png) > 0.02, "the screenshot is blank"
    assert red_pixels(png) > 1500, "what breaks the property is not in view"
    m = measure(tmp_path, page)
    assert m["overflow"] == [], f"text overflows its box: {m['overflow'][:5]}"
    assert m["overlap"] == [], f"borders overlap: {m['overlap'][:5]}"
    assert m["red"] == [], f"red used for what does not break the property: {m['red'][:5]}"
    assert m["loud"] == [], f"unchanged fields not grey: {m['loud'][:5]}"
    assert m["steps"] == m["said"] == steps + 1, "a step without its sentence"
    assert m["inView"], "the breaking step is not in view after load"
    assert m["sel"] == f"step-{steps}", "the script did not select the last step"


def test_the_checks_can_fail(tmp_path):
    """A control page breaking each rule: overflowing text, overlapping steps, a red unchanged
    field, the broken step below the fold."""
    page = tmp_path / "control.html"
    page.write_text(
        "<html><body style='margin:0;height:100%;display:flex;flex-direction:column'>"
        "<main style='flex:1;overflow:auto;height:500px'>"
        "<div class='step' id='step-0'><p class='say'>fine sentence here</p>"
        "<div style='width:80px;white-space:nowrap'>a very long line that cannot wrap</div></div>"
        "<div class='step' id='step-1' style='margin-top:-30px;border:1px solid #ccc'><p class='say'>overlaps the "
        "first</p><span class='f' style='color:#b71c1c'>alive · leader</span></div>"
        "<div style='height:3000px'></div>"
        "<div class='step broken' id='step-2' style='border:3px solid #d50000'>"
        "<p class='say'>down below the fold</p></div></main></body></html>"
    )
    m = measure(tmp_path, page, "800,600")
    assert any("very long line" in x for x in m["overflow"])
    assert "step-0 / step-1" in m["overlap"]
    assert any("alive · leader" in x for x in m["red"])
    assert any("alive · leader" in x for x in m["loud"])
    assert not m["inView"]


def test_blank_page_is_detected(tmp_path):
    """The blank check can fail: a white page is blank."""
    page = tmp_path / "blank.html"
    page.write_text("<html><body style='background:#fff'></body></html>")
    shot = tmp_path / "blank.png"
    _run_chromium([f"--screenshot={shot}", "--window-size=400,300", page.resolve().as_uri()])
    assert non_white_fraction(shot.read_bytes()) < 0.001


def test_red_check_fails_when_the_broken_step_is_below_the_fold(tmp_path):
    page = tmp_path / "fold.html"
    page.write_text(
        "<html><body><div style='height:2000px'>top</div>"
        "<div style='box-shadow:inset 0 0 0 3px #d50000;height:300px'>broken</div></body></html>"
    )
    assert red_pixels(_shot(tmp_path, page, "800,600")) == 0


def test_bad_trace_is_a_usage_error(tmp_path):
    bad = tmp_path / "bad.ndjson"
    bad.write_text("{}\n")
    assert main(["explain", str(bad), "--html", str(tmp_path / "x.html")]) == 2


def _card(page: str, i: int) -> str:
    m = re.search(rf'<section class="[^"]*" id="step-{i}".*?</section>', page, re.S)
    assert m, f"no card for step {i}"
    return m.group(0)


def test_every_changed_field_is_highlighted(traces, tmp_path):
    """Step 3 of the StrongIsr trace (the second FollowerFetch) moves both HWs, empties the
    purgatory and acknowledges record 1: each of those fields is marked, unchanged ones not;
    the replicas' roles did not change and are not marked either."""
    card = _card(_page(traces, tmp_path, "safety").read_text(), 3)
    marked = [
        re.sub("<[^>]+>", "", m) for m in re.findall(r'class="f chg"[^>]*>(.*?)</span>', card)
    ]
    assert marked.count("HW 1") == 2
    assert "acknowledged (acks=all): record 1 at offset 0" in marked
    assert "awaiting acks: none" in marked
    assert not any(m.startswith(("LEO", "epoch", "ISR")) for m in marked)
    assert "badge chg" not in card and "badge warn" not in card


def test_roles_and_a_lost_request_are_marked(traces, tmp_path):
    """The lasso: broker 0, the controller's leader at an old epoch, is a zombie with a stale
    zkVersion (it can never shrink the ISR), and its LeaderAndIsr request is lost; the 14-step
    trace: broker 0, moved off leadership, is a deposed leader."""
    page = _page(traces, tmp_path, "lasso").read_text()
    lost = _card(page, 5)
    assert "is lost" in lost and '<div class="req gone lost"><b>lost</b>' in lost
    last = _card(page, 6)
    for role in ("zombie (session expired)", "stale zkVersion: ISR writes fail"):
        assert f'<span class="badge warn">{role}</span>' in last
    long = _card(_page(traces, tmp_path, "long").read_text(), 3)
    assert '<span class="badge warn">deposed leader (epoch 1 &lt; 2)</span>' in long


def test_text_mode_tells_the_same_story(traces, tmp_path, capsys):
    assert main(["explain", str(traces["safety"]), "--format", "text"]) == 0
    out = capsys.readouterr().out
    assert (
        "WHY: replica 1 is in the ISR but lacks offset 0 (record 1), below leader 0's HW 1" in out
    )
    assert "step 5. BrokerRestart(replica=1)   <-- StrongIsr breaks here" in out
    assert "*HW 1*" in out and "hw-truncation · 2 replicas · 1 record" in out
    assert "*acknowledged (acks=all): record 1 at offset 0*" in out
    page = html.unescape(_page(traces, tmp_path, "safety").read_text())
    said = re.findall(r"^step \d+\. .*\n  (.*)$", out, re.M)
    assert len(said) == 6 and said[5].startswith("Broker 1 restarts and reads its HW checkpoint")
    for sentence in said:
        assert sentence in page, "the page and the text tell different stories"
    assert main(["explain", str(traces["safety"]), "--format", "html"]) == 2  # needs --html


def test_an_unknown_action_is_told_not_fatal(traces, tmp_path, capsys):
    """A protocol file of the user's own may add actions: the page and the text still come,
    with the fallback sentence for the step."""
    lines = traces["safety"].read_text().splitlines()
    step = json.loads(lines[3])  # step 2, the first FollowerFetch
    step["action"] = "OperatorNudgesFetcher"
    lines[3] = json.dumps(step)
    odd = tmp_path / "odd.ndjson"
    odd.write_text("\n".join(lines) + "\n")
    out = tmp_path / "odd.html"
    assert main(["explain", str(odd), "--html", str(out), "--format", "text"]) == 0
    said = "OperatorNudgesFetcher(follower=1, leader=0), an action this page does not describe"
    assert said in capsys.readouterr().out
    assert said in html.unescape(out.read_text())
