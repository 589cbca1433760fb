"""Scene files at their limits and beyond: nesting, size, body count, values out of range, and a bounded fuzz
of the reader (issue 31).

Every refusal is one ``ValueError`` line naming the file (and its line and key where there is one); through
``tumble run`` it is one line on stderr and exit status 2.
"""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tumble as tb
from tumble.user import cli, scene

SPHERE = '[[bodies]]\nshape = { type = "sphere", radius = 0.1 }\n'


def _load_error(tmp_path, text: str | bytes, name: str = "scene.toml") -> str:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    with pytest.raises(ValueError) as info:
        tb.load_scene(path)
    message = str(info.value)
    assert "\n" not in message, message
    assert message.startswith(str(path)), message
    return message


def _cli(argv, capsys) -> tuple[int, str]:
    status = cli.main([str(a) for a in argv])
    _, err = capsys.readouterr()
    return status, err


# ---------------------------------------------------------------------------------------------- nesting
def test_100000_nested_brackets_are_refused_before_parsing(tmp_path, capsys):
    """The issue's reproduction: a RecursionError with 3,000 lines of traceback before."""
    text = "format = 1\nx = " + "[" * 100_000 + "\n"
    started = time.perf_counter()
    message = _load_error(tmp_path, text)
    assert time.perf_counter() - started < 5.0
    assert "scene.toml:2:" in message and "100,000 deep" in message and "MAX_SCENE_NESTING" in message
    status, err = _cli(["run", tmp_path / "scene.toml", "-o", tmp_path / "out", "-q"], capsys)
    assert status == 2 and len(err.splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize("opening, closing", [("[", "]"), ("{ a = ", "}")])
def test_nesting_up_to_the_limit_parses_and_one_more_is_refused(tmp_path, opening, closing):
    depth = scene.MAX_SCENE_NESTING
    fits = "format = 1\nx = " + opening * depth + "1" + closing * depth + "\n"
    message = _load_error(tmp_path, fits)
    assert "unknown top-level table or key 'x'" in message   # parsed: refused as a key, not for its depth
    over = "format = 1\nx = " + opening * (depth + 1) + "1" + closing * (depth + 1) + "\n"
    assert f"nest {depth + 1} deep" in _load_error(tmp_path, over)


def test_brackets_in_strings_and_comments_do_not_count(tmp_path):
    deep = "[" * 500
    text = (f'format = 1\n# {deep}\n[[bodies]]\nname = "{deep}"\nshape = {{ type = "sphere", radius = 0.1 }}\n'
            f"[[bodies]]\nname = '''\n{deep}\n'''\nshape = {{ type = \"sphere\", radius = 0.1 }}\n")
    path = tmp_path / "scene.toml"
    path.write_text(text)
    world = tb.load_scene(path)
    assert [b.name for b in world.bodies] == [deep, deep + "\n"]


def test_a_dotted_key_deeper_than_the_limit_is_refused(tmp_path):
    """tomllib takes 5 s for a 100,000-part dotted key: refused before it parses."""
    text = "format = 1\n[" + ".".join(["a"] * 100_000) + "]\nb = 1\n"
    started = time.perf_counter()
    message = _load_error(tmp_path, text)
    assert time.perf_counter() - started < 2.0
    assert "scene.toml:2:" in message and "dotted key" in message


def test_deep_nesting_missed_by_the_scan_is_still_one_line(tmp_path, monkeypatch):
    """The scan is a bound, not a parser: were it to miss a deep nest, tomllib's RecursionError is still
    turned into the same one-line error."""
    monkeypatch.setattr(scene, "_check_structure", lambda text, shown: None)
    message = _load_error(tmp_path, "format = 1\nx = " + "[" * 5000 + "\n")
    assert "nest too deeply" in message


# ---------------------------------------------------------------------------------------------- size
def test_a_file_over_the_size_limit_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "big.toml"
    with open(path, "wb") as fh:    # sparse: costs no disk
        fh.truncate(scene.MAX_SCENE_BYTES + 1)
    started = time.perf_counter()
    with pytest.raises(ValueError) as info:
        tb.load_scene(path)
    assert time.perf_counter() - started < 1.0
    message = str(info.value)
    assert message.startswith(f"{path}:") and f"{scene.MAX_SCENE_BYTES + 1:,} bytes" in message
    assert "MAX_SCENE_BYTES" in message


def test_a_device_is_read_no_further_than_the_limit(monkeypatch):
    """/dev/zero says it holds 0 bytes and never ends: read up to the limit, then refused."""
    monkeypatch.setattr(scene, "MAX_SCENE_BYTES", 4096)
    with pytest.raises(ValueError, match=r"^/dev/zero: the file holds more than 4,096 bytes"):
        tb.load_scene("/dev/zero")


# ---------------------------------------------------------------------------------------------- body count
def test_more_bodies_than_the_limit_are_refused_before_parsing(tmp_path, monkeypatch):
    monkeypatch.setattr(scene, "MAX_SCENE_BODIES", 10)
    text = "format = 1\n" + SPHERE * 11
    message = _load_error(tmp_path, text)
    assert "scene.toml:22: bodies: more than 10 [[bodies]] tables" in message
    path = tmp_path / "ten.toml"
    path.write_text("format = 1\n" + SPHERE * 10)
    assert tb.load_scene(path).body_count == 10


def test_bodies_as_an_inline_array_are_counted_after_parsing(tmp_path, monkeypatch):
    monkeypatch.setattr(scene, "MAX_SCENE_BODIES", 3)
    body = '{ shape = { type = "sphere", radius = 0.1 } }'
    message = _load_error(tmp_path, f"format = 1\nbodies = [{', '.join([body] * 4)}]\n")
    assert re.search(r"scene\.toml:2: bodies: 4 bodies; a scene file may hold at most 3", message), message


def test_joints_springs_and_attachments_are_held_to_the_same_count(tmp_path, monkeypatch):
    monkeypatch.setattr(scene, "MAX_SCENE_BODIES", 2)
    text = ('format = 1\n[[bodies]]\nname = "a"\nshape = { type = "sphere", radius = 0.1 }\n'
            + '[[joints]]\ntype = "ball"\na = "a"\nanchor = [0.0, 0.0, 0.0]\n' * 3)
    assert "joints: 3 joints; a scene file may hold at most 2" in _load_error(tmp_path, text)


def test_the_real_body_limit_counts_100001_headers(tmp_path):
    """No monkeypatch: the stated limit itself (the headers are counted without parsing: about 1 s)."""
    text = "format = 1\n" + "[[bodies]]\n" * (scene.MAX_SCENE_BODIES + 1)
    message = _load_error(tmp_path, text)
    assert f"more than {scene.MAX_SCENE_BODIES:,} [[bodies]] tables" in message


def test_save_scene_refuses_a_world_the_reader_would_refuse(tmp_path, monkeypatch):
    world = tb.World()
    for _ in range(3):
        world.add_body(tb.Sphere(0.1))
    monkeypatch.setattr(scene, "MAX_SCENE_BODIES", 2)
    with pytest.raises(ValueError, match="world has 3 bodies; a scene file may hold at most 2"):
        world.save_scene(tmp_path / "s.toml")
    monkeypatch.setattr(scene, "MAX_SCENE_BODIES", 100)
    monkeypatch.setattr(scene, "MAX_SCENE_BYTES", 100)
    with pytest.raises(ValueError, match="MAX_SCENE_BYTES"):
        world.save_scene(tmp_path / "s.toml")
    assert not (tmp_path / "s.toml").exists()


def test_run_duration_beyond_exact_step_counts_is_refused(tmp_path):
    """duration / dt = 1e600 used to raise OverflowError (a traceback) in round()."""
    message = _load_error(tmp_path, "format = 1\n[run]\ndt = 1e-300\nduration = 1e300\n")
    assert "scene.toml:4: run.duration: must be at most" in message


# ---------------------------------------------------------------------------------------------- values
BODY = 'format = 1\n[[bodies]]\nshape = {shape}\n{extra}'


@pytest.mark.parametrize("shape, extra, key", [
    ('{ type = "box", size = [1e-120, 1e-120, 1e-120] }', "", "3: bodies[0].shape.size[0]"),
    ('{ type = "box", size = [1.0, 1.0, 1e200] }', "", "3: bodies[0].shape.size[2]"),
    ('{ type = "sphere", radius = 1e200 }', "", "3: bodies[0].shape.radius"),
    ('{ type = "sphere", radius = 1.0 }', "density = 1e308\n", "4: bodies[0].density"),
    ('{ type = "sphere", radius = 1.0 }', "mass = 1e-320\n", "4: bodies[0].mass"),
    ('{ type = "capsule", radius = 0.1, length = 1e200 }', "", "3: bodies[0].shape.length"),
    ('{ type = "ellipsoid", semi_axes = [1.0, 1e-120, 1.0] }', "", "3: bodies[0].shape.semi_axes[1]"),
])
def test_sizes_and_masses_out_of_range_name_the_file_and_key(tmp_path, capsys, shape, extra, key):
    """The issue's reproductions: ZeroDivisionError, OverflowError and LinAlgError tracebacks with exit 1
    before. The API's range checks name the argument; the reader locates it at its key."""
    message = _load_error(tmp_path, BODY.format(shape=shape, extra=extra))
    assert f"scene.toml:{key}: must be " in message, message
    status, err = _cli(["run", tmp_path / "scene.toml", "-o", tmp_path / "out", "-q"], capsys)
    assert status == 2 and len(err.splitlines()) == 1 and "Traceback" not in err and key in err


def test_a_density_from_a_material_is_located_at_the_material(tmp_path):
    text = ('format = 1\n[materials.lead]\ndensity = 1e308\n[[bodies]]\nshape = { type = "sphere", radius = 1.0 }\n'
            'material = "lead"\n')
    assert "scene.toml:3: materials.lead.density: must be " in _load_error(tmp_path, text)


def test_an_api_error_is_located_at_the_argument_it_names(tmp_path):
    """A degenerate hull (the API names ``points``); an error that names no argument (Python's own overflow)
    is located at its body."""
    text = BODY.format(shape='{ type = "hull", points = [[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]] }', extra="")
    assert "scene.toml:3: bodies[0].shape.points: " in _load_error(tmp_path, text)
    unnamed = scene._located(("bodies", 0), OverflowError("(34, 'Numerical result out of range')"),
                             {"mass": ("bodies", 0, "mass")})
    assert unnamed.where == ("bodies", 0) and "out of range (OverflowError" in unnamed.problem
    named = scene._located(("joints", 0), ValueError("break_force must be positive, got -1"),
                           {"break_force": ("joints", 0, "break_force")})
    assert named.where == ("joints", 0, "break_force") and named.problem == "must be positive, got -1"


# ---------------------------------------------------------------------------------------------- fuzz
SEEDS = [
    'format = 1\n\n[world]\ngravity = [0.0, 0.0, -9.81]\n\n[world.contact]\nsolver = "pgs"\n\n[run]\ndt = 0.01\n'
    'duration = 0.3\n\n[ground]\nheight = 0.0\n\n[materials.rubber]\nfriction = 0.9\nrestitution = 0.7\n'
    'density = 1100.0\n\n[[bodies]]\nname = "ball"\nshape = { type = "sphere", radius = 0.1 }\nmass = 2.0\n'
    'position = [0.0, 0.0, 5.0]\nvelocity = [1.0, 0.0, 0.0]\n\n[[bodies]]\nname = "crate"\n'
    'shape = { type = "box", size = [0.4, 0.4, 0.4] }\nmaterial = "rubber"\nposition = [3.0, 0.0, 0.2]\n',
    'format = 1\n[[bodies]]\nname = "arm"\nparts = [\n  { type = "capsule", radius = 0.03, length = 0.5 },\n'
    '  { type = "cylinder", radius = 0.1, height = 0.2, position = [0.0, 0.0, 0.3], '
    'orientation = [1.0, 0.0, 0.0, 0.0] },\n]\nposition = [0.0, 0.0, 2.0]\n'
    'inertia = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]\nmass = 3.0\n\n[[bodies]]\nname = "rock"\n'
    'shape = { type = "hull", points = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]] }\n'
    '\n[[joints]]\ntype = "hinge"\na = "arm"\nanchor = [0.0, 0.0, 2.5]\naxis = [0.0, 1.0, 0.0]\n'
    'limits = [-1.0, 1.0]\n\n[[springs]]\ntype = "axial"\na = "arm"\nb = "rock"\nanchor_a = [0.0, 0.0, 2.0]\n'
    'anchor_b = [0.2, 0.2, 0.2]\nstiffness = 50.0\n\n[[attachments]]\nbody = "rock"\npoint = [0.0, 0.0, 0.0]\n'
    'mass = 0.5\n',
]
EXTREMES = ["1e-320", "1e-120", "1e200", "1e308", "-1e308", "0.0", "-0.0", "-1.0", "nan", "inf", "-inf",
            "99999999999999999999", "0", "true", '"x"', "[]", "{}", "[1.0, 2.0]", "[[1.0]]", '{ a = 1 }',
            "1979-05-27T07:32:00Z", "'''\n'''", "[" * 70, "{ a = " * 70, "[" * 600, "{ a = " * 600]
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e-?\d+)?")


@st.composite
def scene_texts(draw) -> str:
    """A seed scene mutated a few times: a number replaced by an extreme or a value of another kind, a line
    dropped, doubled or cut, random text inserted."""
    text = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["number"] * 4 + ["line", "insert", "cut"]))
        if kind == "number":
            spans = [m.span() for m in NUMBER.finditer(text)]
            if spans:
                a, b = draw(st.sampled_from(spans))
                text = text[:a] + draw(st.sampled_from(EXTREMES)) + text[b:]
        elif kind == "line":
            lines = text.split("\n")
            k = draw(st.integers(0, len(lines) - 1))
            how = draw(st.sampled_from(["drop", "double", "swap"]))
            if how == "drop":
                del lines[k]
            elif how == "double":
                lines.insert(k, lines[k])
            else:
                j = draw(st.integers(0, len(lines) - 1))
                lines[k], lines[j] = lines[j], lines[k]
            text = "\n".join(lines)
        elif kind == "insert":
            at = draw(st.integers(0, len(text)))
            text = text[:at] + draw(st.text(alphabet='[]{}=,."\'#\n \\0123456789.eaxyz-+_', max_size=12)) + text[at:]
        else:
            text = text[:draw(st.integers(0, len(text)))]
    return text


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(text=scene_texts())
def test_fuzz_the_reader_loads_or_gives_one_located_line(tmp_path, capsys, text):
    """Mutated scenes either load or raise ValueError/TypeError with one line naming the file; through
    ``tumble run`` (which stops before simulating: --duration is less than one --dt) the status is 2 and
    stderr one line, never a traceback."""
    path = tmp_path / "fuzz.toml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        tb.load_scene(path)
    except (ValueError, TypeError) as exc:
        message = str(exc)
        assert "\n" not in message and message.startswith(str(path)), message
    status, err = _cli(["run", path, "-o", tmp_path / "out", "-q", "--duration", "1", "--dt", "3"], capsys)
    assert status == 2, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err and err.startswith("tumble run: error: "), err


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=300))
def test_fuzz_random_bytes_give_one_line(tmp_path, data):
    path = tmp_path / "bytes.toml"
    path.write_bytes(data)
    try:
        tb.load_scene(path)
    except ValueError as exc:
        assert "\n" not in str(exc) and str(exc).startswith(str(path))


def test_an_attachment_that_overflows_is_located_at_it(tmp_path):
    """A point mass 1e308 m away: its inertia overflows inside ``attach_point_mass`` (NumPy warned, and the
    world held infinities)."""
    text = ('format = 1\n[[bodies]]\nname = "rock"\nshape = { type = "sphere", radius = 0.1 }\n'
            '[[attachments]]\nbody = "rock"\npoint = [0.0, 0.0, 1e308]\nmass = 0.5\n')
    assert re.search(r"scene\.toml:[57]: attachments\[0\](\.point)?: ", _load_error(tmp_path, text))
