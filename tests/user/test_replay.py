"""The self-contained HTML replay (tumble.user.replay.write_replay): what the file holds (three.js inlined, no
network), that user strings cannot break out of their JSON, that the stored poses are the given ones in
three.js's quaternion order, the size bound for a 1000-body pile, input validation, and, in a real headless
Chromium (skipped when none is installed), that the page plays, draws every instance and shows the bodies."""

from __future__ import annotations

import base64
import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tumble.user.replay import THREE_VERSION, body_colour, write_replay

IMG_NAME = "<img src=x onerror=\"document.title='pwned'\">"

_PARTS = {
    "box": {"type": "box", "half_extents": [0.2, 0.1, 0.05]},
    "sphere": {"type": "sphere", "radius": 0.1},
    "capsule": {"type": "capsule", "radius": 0.05, "half_length": 0.1},
    "cylinder": {"type": "cylinder", "radius": 0.08, "half_height": 0.06},
    "ellipsoid": {"type": "ellipsoid", "semi_axes": [0.1, 0.07, 0.05]},
    "hull": {"type": "hull", "vertices": [[0, 0, 0], [0.2, 0, 0], [0, 0.2, 0], [0, 0, 0.2]],
             "faces": [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]},
}


def _part(kind: str, position=(0.0, 0.0, 0.0), orientation=(1.0, 0.0, 0.0, 0.0), **sizes) -> dict:
    return {**_PARTS[kind], "position": list(position), "orientation": list(orientation), **sizes}


def _random_run(n: int, T: int, duration: float, seed: int = 0):
    """n bodies of mixed parts (every type, some compound) with random poses over T frames."""
    rng = np.random.default_rng(seed)
    times = np.linspace(0.0, duration, T)
    positions = rng.uniform(-2.0, 2.0, (T, n, 3)) + [0.0, 0.0, 2.5]
    q = rng.normal(size=(T, n, 4))
    orientations = q / np.linalg.norm(q, axis=2, keepdims=True)
    kinds = list(_PARTS)
    bodies = []
    for i in range(n):
        parts = [_part(kinds[i % len(kinds)])]
        if i % 7 == 0:  # a compound body: a second part off the COM, turned
            parts.append(_part("sphere", position=(0.0, 0.0, 0.2), orientation=(0.0, 1.0, 0.0, 0.0)))
        bodies.append({"name": f"body {i}", "fixed": i % 50 == 0, "parts": parts})
    return times, positions, orientations, bodies


def _meta(page: str) -> dict:
    blocks = re.findall(r'<script type="application/json" id="tumble-meta">(.*?)</script>', page, re.S)
    assert len(blocks) == 1
    return json.loads(blocks[0])


def _blob(page: str, name: str) -> bytes:
    match = re.search(rf'<script type="application/octet-stream" id="tumble-{name}">(.*?)</script>', page, re.S)
    assert match is not None
    return base64.b64decode(match.group(1), validate=True)


# --------------------------------------------------------------------------------------------- the file

def test_file_is_self_contained(tmp_path: Path) -> None:
    times, positions, orientations, bodies = _random_run(12, 31, 1.0)
    out = write_replay(tmp_path / "sub" / "r.html", times=times, positions=positions, orientations=orientations,
                       bodies=bodies, ground=0.0)
    assert out == tmp_path / "sub" / "r.html"
    assert [p.name for p in out.parent.iterdir()] == ["r.html"]  # no temporary file left behind
    page = out.read_text(encoding="utf-8")
    # No resource fetched from anywhere: no src/href attribute on any element, no import, no fetch.
    tags = re.findall(r"<(?:script|link|img|iframe|object|embed|source)\b[^>]*>", page, re.I)
    assert tags and not [t for t in tags if re.search(r"\b(?:src|href)\s*=", t, re.I)]
    # three.js itself is inside, once, at the vendored version (its loaders, unused here, mention fetch and
    # URLs); apart from it the page names no URL and loads nothing.
    three = (Path(__file__).parents[2] / "src/tumble/user/replay/three.min.js").read_text(encoding="utf-8")
    assert page.count(three) == 1 and f'="{THREE_VERSION.split(".")[1]}",' in three
    rest = page.replace(three, "")
    for word in ("http:", "https:", "//cdn", "<link", "fetch(", "XMLHttpRequest", "import(", "import "):
        assert word not in rest
    assert len(page.encode()) < 2_000_000


def test_poses_are_stored_as_given_in_three_order(tmp_path: Path) -> None:
    # A 1 kHz recording over 1 s, stored at 60 fps: 61 frames, each the recorded one at or after its tick.
    times, positions, orientations, bodies = _random_run(5, 1001, 1.0, seed=3)
    orientations[:, 1] *= 3.0  # not unit: the replay normalises
    page = write_replay(tmp_path / "r.html", times=times, positions=positions, orientations=orientations,
                        bodies=bodies, fps=60.0).read_text(encoding="utf-8")
    meta = _meta(page)
    kept = np.searchsorted(times, np.asarray(meta["times"]))
    assert len(kept) == 61 and kept[0] == 0 and kept[-1] == 1000
    np.testing.assert_allclose(times[kept], meta["times"])
    assert np.all(np.diff(meta["times"]) <= 1.0 / 60.0 + 1e-3)
    poses = np.frombuffer(_blob(page, "poses"), dtype="<f4").reshape(61, 5, 7)
    np.testing.assert_allclose(poses[..., :3], positions[kept], rtol=1e-6, atol=1e-6)
    unit = orientations / np.linalg.norm(orientations, axis=2, keepdims=True)
    np.testing.assert_allclose(poses[..., 3:], unit[kept][..., [1, 2, 3, 0]], atol=1e-6)  # (x, y, z, w)
    # every drawn part is an instance of its body; boxes, spheres and ellipsoids share meshes
    assert len(meta["instances"]) == sum(len(b["parts"]) for b in bodies)
    assert {m["type"] for m in meta["meshes"]} <= {"box", "sphere", "cylinder", "capsule", "hull"}
    assert [m["type"] for m in meta["meshes"]].count("sphere") == 1
    assert meta["colours"] == [body_colour(i, b["fixed"]) for i, b in enumerate(bodies)]


def test_the_camera_frames_the_parts_as_they_move(tmp_path: Path) -> None:
    # A box (half extents 1, 0.5, 0.25) turned 90 degrees about z at (2, 0, 1), then moved to (2, 3, 1);
    # a body with nothing drawn far away must not count.
    times = np.array([0.0, 1.0])
    positions = np.array([[[2.0, 0.0, 1.0], [50.0, 50.0, 50.0]], [[2.0, 3.0, 1.0], [50.0, 50.0, 50.0]]])
    s = np.sqrt(0.5)
    orientations = np.array([[[s, 0.0, 0.0, s], [1.0, 0.0, 0.0, 0.0]]] * 2)
    bodies = [{"name": "box", "fixed": False, "parts": [_part("box", half_extents=[1.0, 0.5, 0.25])]},
              {"name": "marker", "fixed": True, "parts": []}]
    page = write_replay(tmp_path / "r.html", times=times, positions=positions, orientations=orientations,
                        bodies=bodies, ground=-0.5).read_text(encoding="utf-8")
    np.testing.assert_allclose(_meta(page)["bounds"], [1.5, -1.0, -0.5, 2.5, 4.0, 1.25], atol=1e-12)


def test_contacts_follow_the_stored_frames(tmp_path: Path) -> None:
    times, positions, orientations, bodies = _random_run(2, 7, 6.0)  # 1 frame per second
    counts = np.array([0, 2, 1, 0, 3, 1, 2])
    offsets = np.concatenate([[0], np.cumsum(counts)])
    points = np.arange(offsets[-1] * 3, dtype=float).reshape(-1, 3)
    normals = np.tile([0.0, 0.0, 1.0], (offsets[-1], 1))
    page = write_replay(tmp_path / "r.html", times=times, positions=positions, orientations=orientations,
                        bodies=bodies, contacts={"offsets": offsets, "points": points, "normals": normals},
                        fps=0.5).read_text(encoding="utf-8")  # keeps frames 0, 2, 4, 6
    meta = _meta(page)
    assert meta["times"] == [0.0, 2.0, 4.0, 6.0]
    assert meta["contacts"]["offsets"] == [0, 0, 1, 4, 6] and meta["contacts"]["maxCount"] == 3
    rows = np.frombuffer(_blob(page, "contacts"), dtype="<f4").reshape(-1, 6)
    expected = np.concatenate([np.arange(offsets[k], offsets[k + 1]) for k in (0, 2, 4, 6)])
    np.testing.assert_array_equal(rows[:, :3], points[expected])
    np.testing.assert_array_equal(rows[:, 3:], normals[expected])


def test_user_strings_cannot_escape(tmp_path: Path) -> None:
    names = ["<script>alert(1)</script>", IMG_NAME, "a & b \u2028 \u2029 <!-- x", "{{PLAYER}}"]
    title = "run </script><b>bold</b> & {{THREE}}"
    times, positions, orientations, bodies = _random_run(len(names), 3, 0.1)
    for body, name in zip(bodies, names, strict=True):
        body["name"] = name
    page = write_replay(tmp_path / "r.html", times=times, positions=positions, orientations=orientations,
                        bodies=bodies, title=title).read_text(encoding="utf-8")
    for literal in ["<script>alert(1)", "</script><b>", "<b>bold", "<img", "<!-- x", "\u2028", "\u2029"]:
        assert literal not in page
    assert page.count("</script>") == page.count("<script") == 5  # only the page's own elements close
    assert f"<title>{html.escape(title)}</title>" in page
    meta = _meta(page)
    assert meta["names"] == names and meta["title"] == title  # the JSON gives back exactly the strings
    # marker-like strings in the data stay as they are (title element + JSON; JSON), never substituted
    assert page.count("{{THREE}}") == 2 and page.count("{{PLAYER}}") == 1


def test_a_1000_body_pile_over_3_s_stays_small(tmp_path: Path) -> None:
    times, positions, orientations, bodies = _random_run(1000, 721, 3.0, seed=1)  # recorded at 240 Hz
    out = write_replay(tmp_path / "pile.html", times=times, positions=positions, orientations=orientations,
                       bodies=bodies, ground=0.0, fps=60.0)
    size = out.stat().st_size
    assert size <= 20_000_000, f"{size / 1e6:.1f} MB"
    meta = _meta(out.read_text(encoding="utf-8"))
    assert len(meta["times"]) == 181 and meta["bodyCount"] == 1000


# ------------------------------------------------------------------------------------------ validation

def _good():
    times, positions, orientations, bodies = _random_run(3, 4, 0.3)
    return {"times": times, "positions": positions, "orientations": orientations, "bodies": bodies}


def _with(**changes):
    def make():
        kwargs = _good()
        for key, value in changes.items():
            kwargs[key] = value(kwargs) if callable(value) else value
        return kwargs
    return make


def _bad_body(**part):
    def change(kw):
        kw["bodies"][1]["parts"] = [part]
        return kw["bodies"]
    return change


@pytest.mark.parametrize(("make", "argument"), [
    (_with(times=np.zeros((4, 1))), "times"),
    (_with(times=lambda kw: kw["times"][::-1]), "times"),
    (_with(positions=lambda kw: kw["positions"][:, :, :2]), "positions"),
    (_with(positions=lambda kw: kw["positions"][:3]), "positions"),
    (_with(positions=lambda kw: np.where(np.arange(3)[None, None, :] == 2, np.nan, kw["positions"])), "positions"),
    (_with(orientations=lambda kw: kw["orientations"][:, :2]), "orientations"),
    (_with(orientations=lambda kw: kw["orientations"] * 0.0), "orientations"),
    (_with(orientations=lambda kw: kw["orientations"] * np.inf), "orientations"),
    (_with(bodies=lambda kw: kw["bodies"][:2]), "bodies"),
    (_with(bodies=lambda kw: [kw["bodies"][0], "box", kw["bodies"][2]]), r"bodies\[1\]"),
    (_with(bodies=_bad_body(type="cone", radius=1.0)), r"bodies\[1\]\['parts'\]\[0\]\['type'\]"),
    (_with(bodies=_bad_body(type="box", half_extents=[1.0, -1.0, 1.0])), "half_extents"),
    (_with(bodies=_bad_body(type="sphere")), "radius"),
    (_with(bodies=_bad_body(type="capsule", radius=0.1, half_length=float("nan"))), "half_length"),
    (_with(bodies=_bad_body(type="hull", vertices=[[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]],
                            faces=[[0, 1, 2], [0, 1, 3], [0, 2, 3], [1, 2, 4]])), "faces"),
    (_with(bodies=_bad_body(type="box", half_extents=[1, 1, 1], position=[0, 0])), "position"),
    (_with(ground="floor"), "ground"),
    (_with(fps=0.0), "fps"),
    (_with(title=None), "title"),
    (_with(contacts={"offsets": np.zeros(3, dtype=int), "points": np.zeros((0, 3)), "normals": np.zeros((0, 3))}),
     "offsets"),
    (_with(contacts={"offsets": np.array([0, 1, 1, 1, 1]), "points": np.zeros((2, 3)), "normals": np.zeros((2, 3))}),
     "points"),
])
def test_bad_input_raises_naming_the_argument(tmp_path: Path, make, argument: str) -> None:
    path = tmp_path / "r.html"
    with pytest.raises(ValueError, match=argument):
        write_replay(path, **make())
    assert not path.exists() and list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------------------------------ in a browser

def _chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("chromium not installed (apt-get install chromium)")


def _browse(page: Path, tmp_path: Path, *args: str, budget_ms: int = 3000) -> str:
    """Open the page from file:// in headless Chromium (software WebGL, no network); return its stdout."""
    profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"
    command = [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--disable-extensions", f"--user-data-dir={profile}", "--use-angle=swiftshader",
               "--enable-unsafe-swiftshader", "--hide-scrollbars", f"--virtual-time-budget={budget_ms}",
               "--window-size=800,600", *args, page.as_uri()]
    result = subprocess.run(command, capture_output=True, text=True, timeout=90)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def _body_attributes(dom: str) -> dict[str, str]:
    tag = re.search(r"<body\b([^>]*)>", dom)
    assert tag is not None, dom[:2000]
    return {k: html.unescape(v) for k, v in re.findall(r'([\w-]+)="([^"]*)"', tag.group(1))}


def test_browser_plays_and_draws_every_instance(tmp_path: Path) -> None:
    _chromium()
    # 100 s of run in 2001 frames: the page cannot reach its end (and loop) within the longest budget below,
    # and one frame is 0.05 s, so a few ticks move it on (with 201 frames, 0.5 s each, a loaded CI machine
    # rendered twice without leaving frame 0 in 30 s of virtual time).
    times, positions, orientations, bodies = _random_run(9, 2001, 100.0, seed=2)
    bodies[0]["name"] = IMG_NAME
    bodies[1]["parts"] = [{"type": "plane", "position": [0, 0, 0], "orientation": [1, 0, 0, 0]}]  # not drawn
    drawn = sum(len(b["parts"]) for b in bodies) - 1
    title = "browser check"
    page = write_replay(tmp_path / "r.html", times=times, positions=positions, orientations=orientations,
                        bodies=bodies, ground=0.0, title=title)
    # Headless Chromium's virtual-time budget does not pace requestAnimationFrame: how many frames a budget
    # holds depends on the machine's load (7 to 90 renders in 3 s measured here; 1 on a loaded CI machine).
    # So the budget grows until the page has drawn twice and moved on a frame, up to 30 s.
    for budget_ms in (3000, 10000, 30000):
        attrs = _body_attributes(dom := _browse(page, tmp_path, "--dump-dom", budget_ms=budget_ms))
        if "data-error" in attrs or (int(attrs.get("data-renders", 0)) >= 2 and int(attrs.get("data-frame", 0)) > 0):
            break
    assert "data-error" not in attrs, attrs.get("data-error")
    assert attrs["data-ready"] == "1" and int(attrs["data-renders"]) >= 2
    assert 0 < int(attrs["data-frame"]) < 2000  # the frames advanced (and did not reach the end)
    assert attrs["data-frames"] == "2001" and attrs["data-bodies"] == "9"
    assert int(attrs["data-drawn"]) == int(attrs["data-instances"]) == drawn
    # The hostile name is shown as text: no img element appeared and the title is untouched.
    assert re.search(r"<img\b", dom, re.I) is None and "pwned" not in re.search(r"<title>(.*?)</title>", dom).group(1)
    assert f"<title>{title}</title>" in dom
    assert html.escape(IMG_NAME, quote=False) in dom  # in the body list, as text


def _screenshot(page: Path, tmp_path: Path) -> np.ndarray:
    image = pytest.importorskip("matplotlib.image")
    shot = tmp_path / f"{page.stem}.png"
    _browse(page, tmp_path, f"--screenshot={shot}", budget_ms=1500)
    return image.imread(shot)[..., :3]


def test_browser_shows_the_bodies(tmp_path: Path) -> None:
    _chromium()
    # One big box, still, at the centre of the view (the camera looks at the middle of the scene), on a ground.
    times = np.array([0.0, 1.0])
    positions = np.zeros((2, 1, 3)) + [0.0, 0.0, 1.0]
    orientations = np.tile([1.0, 0.0, 0.0, 0.0], (2, 1, 1))
    box = [{"name": "big box", "fixed": False, "parts": [_part("box", half_extents=[1.0, 1.0, 1.0])]}]
    empty = [{"name": "nothing", "fixed": False, "parts": []}]
    with_box = _screenshot(write_replay(tmp_path / "box.html", times=times, positions=positions,
                                        orientations=orientations, bodies=box, ground=0.0), tmp_path)
    without = _screenshot(write_replay(tmp_path / "empty.html", times=times, positions=positions,
                                       orientations=orientations, bodies=empty, ground=0.0), tmp_path)
    assert with_box.shape == without.shape == (600, 800, 3)
    # The body's colour, lit and shaded, keeps its hue: red well above green above blue (0xE4572E).
    r, g, b = (c / 255 for c in body_colour(0, False).to_bytes(3, "big"))
    assert r > g > b

    def body_like(img: np.ndarray) -> np.ndarray:
        return (img[..., 0] - img[..., 1] > 0.15) & (img[..., 1] - img[..., 2] > 0.02) & (img[..., 0] > 0.3)

    centre = (slice(270, 330), slice(370, 430))
    assert body_like(with_box[centre]).mean() > 0.9
    assert body_like(without).mean() == 0.0  # grey ground and background only
    assert body_like(with_box).mean() > 0.05  # a big box fills a good part of the view
    assert np.abs(with_box[centre] - without[centre]).max() > 0.3
