"""Keys, values, grids and samples; one variant run in this process; the command line's refusals. No cluster."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import tumble as tb
from tumble.sweep import grid, sample
from tumble.sweep.params import parse_values, parse_vary, resolve_key, with_values
from tumble.sweep.store import SUMMARY_TYPES, _param_column
from tumble.sweep.variant import Source, Task, run_variant
from tumble.user.cli import main
from tumble.user.runs import run_summary
from tumble.user.scene import read_scene_text, scene_document

from .figures import not_a_number
from .scenes import BALL, RADIUS, write

SCENE = """format = 1

[materials.rubber]
friction = 0.9

[ground]
friction = 0.5

[[bodies]]
name = "ball"
shape = { type = "sphere", radius = 0.1 }
material = "rubber"

[[bodies]]
name = "crate"
shape = { type = "box", size = [0.2, 0.4, 0.8] }
position = [1.0, 0.0, 0.4]
"""


@pytest.fixture
def doc(tmp_path):
    text, shown = read_scene_text(write(tmp_path / "scene.toml", SCENE))
    return scene_document(text, shown)


@pytest.mark.parametrize("text, path, default", [
    ("ground.friction", ("ground", "friction"), None),
    ("world.gravity", ("world", "gravity"), None),
    ("world.gravity.2", ("world", "gravity", 2), (0.0, 0.0, -9.81)),
    ("world.contact.iterations", ("world", "contact", "iterations"), None),
    ("materials.rubber.friction", ("materials", "rubber", "friction"), None),
    ("bodies.ball.restitution", ("bodies", 0, "restitution"), None),
    ("bodies.1.mass", ("bodies", 1, "mass"), None),
    ("bodies.ball.position.2", ("bodies", 0, "position", 2), (0.0, 0.0, 0.0)),
    ("bodies.crate.position.0", ("bodies", 1, "position", 0), None),
    ("bodies.crate.shape.size.1", ("bodies", 1, "shape", "size", 1), None),
    ("bodies.ball.shape.radius", ("bodies", 0, "shape", "radius"), None),
])
def test_keys_resolve_to_their_place_in_the_scene(doc, text, path, default):
    key = resolve_key(doc, text)
    assert key.path == path and key.default == default


@pytest.mark.parametrize("text, message", [
    ("ground.frition", "unknown key of [ground] 'frition' (did you mean 'friction'?)"),
    ("bodies.bal.mass", "no body named 'bal' in the scene (bodies: 'ball', 'crate'"),
    ("bodies.ball.colour", "unknown body key 'colour'"),
    ("bodies.ball.shape.size", "unknown size key of a sphere 'size'"),
    ("materials.steel.friction", "no material 'steel' in the scene (materials: 'rubber')"),
    ("world.gravity.3", "component '3' of 'gravity' must be 0 to 2"),
    ("bodies.ball.mass.0", "'mass' has no parts to pick"),
    ("run.dt", "the run's duration and dt are the sweep's own arguments"),
    ("gravity", "unknown table 'gravity'"),
    ("world.contact.iteration", "unknown key of [world.contact] 'iteration' (did you mean 'iterations'?)"),
    ("ground", "name a key of [ground] after ground"),
    ("bodies..mass", "must be a dotted path"),
])
def test_unknown_keys_are_refused_naming_the_key(doc, text, message):
    with pytest.raises(ValueError, match="^key " + repr(text).replace(".", r"\.").replace("[", r"\[")) as err:
        resolve_key(doc, text)
    assert message in str(err.value)


def test_a_ground_key_needs_a_ground(tmp_path):
    text, shown = read_scene_text(write(tmp_path / "s.toml", "format = 1\n"))
    with pytest.raises(ValueError, match="the scene has no \\[ground\\] table"):
        resolve_key(scene_document(text, shown), "ground.friction")


def test_values_set_in_a_copy_of_the_document(doc):
    keys = {k: resolve_key(doc, k) for k in ("bodies.ball.position.2", "world.gravity.0", "world.contact.iterations",
                                             "bodies.crate.shape.size.1")}
    out = with_values(doc, keys, {"bodies.ball.position.2": 2.5, "world.gravity.0": 1.0,
                                  "world.contact.iterations": 7, "bodies.crate.shape.size.1": 0.5})
    assert out["bodies"][0]["position"] == [0.0, 0.0, 2.5]
    assert out["world"] == {"gravity": [1.0, 0.0, -9.81], "contact": {"iterations": 7}}
    assert out["bodies"][1]["shape"]["size"] == [0.2, 0.5, 0.8]
    assert "world" not in doc and "position" not in doc["bodies"][0] and doc["bodies"][1]["shape"]["size"][1] == 0.4


def test_values_lists_ranges_vectors_and_words():
    assert parse_values("0.1,0.3,0.5") == [0.1, 0.3, 0.5]
    assert parse_values("0:1:5") == [0.0, 0.25, 0.5, 0.75, 1.0]          # inclusive linspace
    assert parse_values("2:1:1") == [2.0]
    assert parse_values("[0, 0, -9.81],[0, 0, -1.62]") == [[0, 0, -9.81], [0, 0, -1.62]]
    assert parse_values("pgs,apgd") == ["pgs", "apgd"]
    assert parse_values('"a,b",true,3') == ["a,b", True, 3]
    for bad, message in (("", "no values"), ("1:2:0", "is empty: count must be at least 1"), ("1,,2", "empty item"),
                         ("a:2:3", "start and stop must be numbers"), ("0:1:2.5", "count must be a whole number")):
        with pytest.raises(ValueError, match=message):
            parse_values(bad)
    assert parse_vary("ground.friction=0.2,0.4") == ("ground.friction", [0.2, 0.4])
    with pytest.raises(ValueError, match="--vary 'ground.friction': must be KEY=VALUES"):
        parse_vary("ground.friction")


def test_grid_and_seeded_sample():
    sets = grid({"a": [1, 2], "b": [3.0, 4.0, 5.0]})
    assert sets == [{"a": 1, "b": 3.0}, {"a": 1, "b": 4.0}, {"a": 1, "b": 5.0}, {"a": 2, "b": 3.0},
                    {"a": 2, "b": 4.0}, {"a": 2, "b": 5.0}]
    assert grid({"v": np.array([0.5, 1.0])}) == [{"v": 0.5}, {"v": 1.0}]
    with pytest.raises(ValueError, match=r"axes\['a'\] is empty"):
        grid({"a": []})
    one = sample({"mu": (0.1, 0.9), "e": (0.0, 0.5)}, 50, seed=7)
    assert one == sample({"mu": (0.1, 0.9), "e": (0.0, 0.5)}, 50, seed=7)       # the same bits, from the seed
    assert one != sample({"mu": (0.1, 0.9), "e": (0.0, 0.5)}, 50, seed=8)
    mu = np.array([s["mu"] for s in one])
    assert mu.min() >= 0.1 and mu.max() < 0.9 and len(set(mu)) == 50
    with pytest.raises(ValueError, match=r"ranges\['e'\] must be finite with low <= high"):
        sample({"e": (1.0, 0.0)}, 3, seed=1)
    with pytest.raises(TypeError, match="seed must be an integer"):
        sample({"e": (0.0, 1.0)}, 3, seed=None)


def test_one_variant_in_this_process(tmp_path):
    """run_variant never raises: a value the scene refuses, a world that is not one, a figure that is not a
    number each become the row's error; a good variant's row has every summary figure."""
    text, shown = read_scene_text(write(tmp_path / "ball.toml", BALL.format(radius=RADIUS)))
    keys = {"bodies.ball.mass": resolve_key(scene_document(text, shown), "bodies.ball.mass")}
    source = Source(shown="ball.toml", text=text, keys=keys)
    ok = run_variant(source, Task(params={"bodies.ball.mass": 2.0}, steps=10, dt=0.01, record_every=1,
                                  keep=("ball",)))
    assert ok["row"]["status"] == "ok" and list(ok["row"])[2:] == list(SUMMARY_TYPES)
    assert ok["trajectory"].positions.shape == (11, 1, 3) and list(ok["trajectory"].names) == ["ball"]
    bad = run_variant(source, Task(params={"bodies.ball.mass": -1.0}, steps=10, dt=0.01, record_every=1))
    assert bad["row"] == {"status": "error", "error": "ValueError: ball.toml:10: bodies[0].mass: must be positive, "
                                                      "got -1.0"}
    figure = run_variant(source, Task(params={}, steps=1, dt=0.01, record_every=1,
                                      figures=(("top", not_a_number),)))
    assert figure["row"]["error"] == "TypeError: figure 'top' must return a number, got 'high'"
    built = run_variant(Source(shown="f", builder=lambda params: "a world"), Task(params={}, steps=1, dt=0.01,
                                                                                   record_every=1))
    assert built["row"]["error"] == "TypeError: the builder must return a tumble.World, got str"
    missing = run_variant(source, Task(params={}, steps=1, dt=0.01, record_every=1, keep=("ghost",)))
    assert missing["row"]["error"].startswith("ValueError: no body named 'ghost' in the world")


def test_the_table_columns_follow_run_summary():
    """The table's summary columns are tumble run's summary.json figures, in their order."""
    world = tb.World()
    world.add_body(tb.Sphere(0.1), mass=1.0)
    summary = run_summary(world.simulate(0.02, 0.01), steps=2, dt=0.01, wall_s=0.1)
    assert list(summary) == list(SUMMARY_TYPES)
    assert str(_param_column([1, 2]).type) == "int64" and str(_param_column([1, 2.5]).type) == "double"
    assert str(_param_column([[0, 0, 1.0], None]).type) == "list<item: double>"
    assert _param_column(["a", 1]).to_pylist() == ['"a"', "1"]


@pytest.mark.parametrize("args, message", [
    (["--vary", "bodies.bal.restitution=0.5"], "tumble sweep: error: --vary: key 'bodies.bal.restitution': no body "
                                               "named 'bal'"),
    (["--vary", "bodies.ball.restitution=0.5:0.9:0"], "tumble sweep: error: --vary 'bodies.ball.restitution=0.5:0.9:0':"
                                                      " range '0.5:0.9:0' is empty"),
    (["--vary", "ground.friction=0.1", "--vary", "ground.friction=0.2"], "the key is given twice"),
    (["--vary", "ground.friction=0.1", "--keep", "ghost"], "keep: no body named 'ghost'"),
    (["--vary", "ground.friction=0.1", "--workers", "2", "--scheduler", "tcp://127.0.0.1:9"], "applies to a cluster "
                                                                                              "on this machine"),
    (["--vary", "ground.friction=0.1", "--scheduler", "nowhere"], "is not a Dask address"),
])
def test_sweep_command_refusals_are_one_line_before_anything_runs(tmp_path, capsys, args, message):
    scene = write(tmp_path / "ball.toml", BALL.format(radius=RADIUS))
    status = main(["sweep", str(scene), *args, "--duration", "0.5", "--dt", "0.01", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "o").exists()


def test_a_scene_no_variant_could_load_is_one_error_before_anything_runs(tmp_path, capsys):
    """A scene file every variant would refuse (here its format line is missing) is refused once, up front,
    not recorded as an error in every row."""
    scene = write(tmp_path / "ball.toml", BALL.format(radius=RADIUS).replace("format = 1", ""))
    status = main(["sweep", str(scene), "--vary", "ground.friction=0.1,0.2", "--duration", "0.5", "--dt", "0.01",
                   "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "format = 1" in err, err
    assert not (tmp_path / "o").exists()


def test_fit_command_refuses_malformed_bounds(tmp_path, capsys):
    scene = write(tmp_path / "ball.toml", BALL.format(radius=RADIUS))
    status = main(["fit", str(scene), "m.csv", "--fit", "ground.friction=1", "--dt", "0.01"])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "must be KEY=LOW:HIGH" in err


def test_without_dask_the_commands_say_what_to_install(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)     # what an import of a missing package sees
    scene = write(tmp_path / "ball.toml", BALL.format(radius=RADIUS))
    status = main(["sweep", str(scene), "--vary", "ground.friction=0.1", "--duration", "0.5", "--dt", "0.01",
                   "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and 'pip install "tumble[sweep]"' in err
