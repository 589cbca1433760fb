"""The HTML replay: self-contained, escaped, small enough, refuses bad input, and really plays in Chromium."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import numpy as np
import pytest

from tumble.replay import write_replay

BOX = {"type": "box", "position": [0, 0, 0], "orientation": [1, 0, 0, 0], "half_extents": [0.5, 0.5, 0.5]}
SPHERE = {"type": "sphere", "position": [0, 0, 0], "orientation": [1, 0, 0, 0], "radius": 0.3}


def _motion(T: int, n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    times = np.linspace(0.0, 1.0, T)
    positions = rng.uniform(-2, 2, size=(T, n, 3))
    q = rng.normal(size=(T, n, 4))
    return times, positions, q / np.linalg.norm(q, axis=2, keepdims=True)


def _meta(html: str) -> dict:
    block = re.search(r'<script type="application/json" id="tumble-meta">(.*?)</script>', html, re.S)
    return json.loads(block.group(1))


def test_self_contained_and_escaped(tmp_path):
    times, positions, q = _motion(5, 2)
    evil = "<script>alert(1)</script>"
    path = write_replay(tmp_path / "r.html", times=times, positions=positions, orientations=q,
                        bodies=[{"name": evil, "fixed": False, "parts": [BOX]},
                                {"name": "a & b", "fixed": True, "parts": [SPHERE]}],
                        ground=0.0, title="</script><b>title")
    html = path.read_text()
    assert evil not in html and "</script><b>" not in html
    assert not re.search(r'<(script|link)[^>]+(src|href)="https?://', html)  # nothing fetched from a network
    meta = _meta(html)
    assert meta["names"] == [evil, "a & b"] and meta["title"] == "</script><b>title"


def test_a_1000_body_pile_over_3_s_stays_under_20_MB(tmp_path):
    times, positions, q = _motion(3 * 240 + 1, 1000)
    times = np.linspace(0.0, 3.0, times.shape[0])
    parts = [BOX, SPHERE, {"type": "capsule", "position": [0, 0, 0], "orientation": [1, 0, 0, 0], "radius": 0.1,
                           "half_length": 0.2}]
    bodies = [{"name": f"b{k}", "fixed": False, "parts": [parts[k % 3]]} for k in range(1000)]
    path = write_replay(tmp_path / "pile.html", times=times, positions=positions, orientations=q, bodies=bodies)
    assert path.stat().st_size < 20e6


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"positions": np.zeros((4, 2, 3))}, "positions"),
    ({"orientations": np.zeros((5, 2, 4))}, "orientations"),
    ({"times": np.array([0.0, 1.0, np.nan, 2.0, 3.0])}, "times"),
    ({"bodies": [{"name": "x", "fixed": False, "parts": [{"type": "torus"}]}] * 2}, "torus"),
])
def test_bad_input_names_the_argument(tmp_path, kwargs, match):
    times, positions, q = _motion(5, 2)
    args = {"times": times, "positions": positions, "orientations": q,
            "bodies": [{"name": "a", "fixed": False, "parts": [BOX]}] * 2} | kwargs
    with pytest.raises(ValueError, match=match):
        write_replay(tmp_path / "r.html", **args)
    assert not (tmp_path / "r.html").exists()


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        pytest.skip("chromium not installed (apt-get install chromium)")
    return found


def _browse(browser: str, page, tmp_path, *extra: str) -> subprocess.CompletedProcess:
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'profile'}", "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
             "--window-size=800,600", "--virtual-time-budget=3000"]
    return subprocess.run([browser, *flags, *extra, page.as_uri()], capture_output=True, text=True, timeout=120)


def _one_box_page(tmp_path, name: str, visible: bool = True):
    """A 2 m box spinning for 2 s in front of the camera (hidden far away when not ``visible``)."""
    T = 121
    times = np.linspace(0.0, 2.0, T)
    positions = np.zeros((T, 1, 3))
    positions[:, 0, 2] = 1.0 if visible else -1e3
    angle = np.linspace(0.0, np.pi, T)
    q = np.stack([np.cos(angle / 2), 0 * angle, 0 * angle, np.sin(angle / 2)], axis=1)[:, None, :]
    big = dict(BOX, half_extents=[1.0, 1.0, 1.0])
    return write_replay(tmp_path / f"{'box' if visible else 'empty'}.html", times=times, positions=positions,
                        orientations=q, bodies=[{"name": name, "fixed": False, "parts": [big]}], ground=0.0)


def _reddish(png) -> int:
    """Pixels of body 0's palette colour (#E4572E) under any shading: red well above green and blue."""
    import matplotlib.image as mpimg

    rgb = mpimg.imread(str(png))[..., :3]
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    return int(np.count_nonzero((r > 0.35) & (r > 1.6 * g) & (r > 2.0 * b)))


def test_chromium_plays_and_renders_the_replay(tmp_path):
    browser = _chromium()
    pytest.importorskip("matplotlib")
    page = _one_box_page(tmp_path, "box")
    dom = _browse(browser, page, tmp_path, "--dump-dom").stdout
    body = re.search(r"<body([^>]*)>", dom).group(1)
    attrs = dict(re.findall(r'data-([a-z]+)="([^"]*)"', body))
    assert "error" not in attrs, attrs.get("error")
    assert attrs["ready"] == "1" and int(attrs["frame"]) > 0  # frames advanced in virtual time
    assert attrs["drawn"] == "1" and int(attrs["renders"]) > 1
    shot, empty = tmp_path / "box.png", tmp_path / "empty.png"
    _browse(browser, page, tmp_path, f"--screenshot={shot}")
    _browse(browser, _one_box_page(tmp_path, "box", visible=False), tmp_path, f"--screenshot={empty}")
    assert _reddish(shot) > 2000 and _reddish(empty) < 50  # the box is drawn, and only where it is


def test_a_hostile_name_does_not_run_in_the_browser(tmp_path):
    browser = _chromium()
    page = _one_box_page(tmp_path, "<img src=x onerror=\"document.title='pwned'\">")
    dom = _browse(browser, page, tmp_path, "--dump-dom").stdout
    assert "pwned" not in re.search(r"<title>(.*?)</title>", dom, re.S).group(1)
    assert "<img" not in dom  # shown as text (escaped in the DOM dump), never parsed as an element
