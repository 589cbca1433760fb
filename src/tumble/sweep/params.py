"""Parameter sets of a sweep: dotted keys into a scene file, their values, grids and seeded samples.

A key is a dotted path into the scene file's tables (docs/scenes.md): ``ground.friction``, ``world.gravity``,
``world.contact.iterations``, ``materials.NAME.restitution``, ``bodies.NAME.mass`` (NAME a body's ``name``,
or its 0-based place among the ``[[bodies]]`` tables), ``bodies.NAME.shape.radius``; a last part that is an
integer picks one component of a vector: ``bodies.ball.position.2`` is the ball's height, ``world.gravity.2``
gravity's z. Keys are checked against the scene before anything runs (``resolve_key``); the values are
checked by the scene loader when each variant builds its world, so a bad value fails that variant alone.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..conventions import DEFAULT_GRAVITY
from ..user.scene import (
    _BODY_KEYS,
    _CONTACT_KEYS,
    _EVENT_KEYS,
    _GROUND_KEYS,
    _MATERIAL_KEYS,
    _SHAPE_KEYS,
    difflib_hint,
)

Value = bool | int | float | str | list
"""What a parameter takes: a TOML value (a vector is a list of numbers)."""

_WORLD_KEYS = ("gravity", "method", "integrator", "contact_margin", "contact", "event")
_BODY_SWEEP_KEYS = tuple(k for k in _BODY_KEYS if k not in ("name", "parts", "inertia"))
_GROUND_SWEEP_KEYS = tuple(k for k in _GROUND_KEYS if k not in ("name", "index"))
_VECTORS = {"gravity": list(DEFAULT_GRAVITY), "position": [0.0, 0.0, 0.0], "velocity": [0.0, 0.0, 0.0],
            "angular_velocity": [0.0, 0.0, 0.0], "orientation": [1.0, 0.0, 0.0, 0.0]}
"""Vector keys a component of which may be varied, with the value a scene takes when the file omits them."""
_SIZE_VECTORS = {"size": 3, "semi_axes": 3}
"""Shape keys that are vectors (always written in the file: a shape needs them)."""

_RANGE = re.compile(r"^\s*([^:]+):([^:]+):([^:]+)\s*$")

MAX_VARIANTS = 100_000
"""The most parameter sets of one sweep or one fit's coarse grid, and the most values of one range: each set is a
simulation (a Dask task, a row of the table, a file in ``variants/``): a hundred thousand of a 1 s scene at
0.1 s each are 3 hours on 1 core. Checked before any list is made (a 1000 x 1000 x 1000 grid would take ~100 GB
as Python dicts)."""


@dataclass(frozen=True)
class Key:
    """A varied key, resolved against a scene document.

    ``text``: the key as given (``bodies.ball.position.2``), the name of its column in the results;
    ``path``: where it sits in the document, a body's name replaced by its index in ``[[bodies]]``
    (``("bodies", 0, "position", 2)``); ``default``: for a component of a vector the file omits, the vector
    the scene would take (the component is set in a copy of it), else None.
    """

    text: str
    path: tuple[str | int, ...]
    default: tuple[float, ...] | None = None

    def set(self, doc: dict[str, Any], value: Value) -> None:
        """Set this key to ``value`` in ``doc`` (in place), making the tables on the way that the file omits."""
        node: Any = doc
        *inner, last = self.path
        if isinstance(last, int):
            *inner, vector = inner
        for part in inner:
            node = node.setdefault(part, {}) if isinstance(part, str) else node[part]
        if isinstance(last, int):
            node[vector] = list(node.get(vector, self.default))
            node[vector][last] = value
        else:
            node[last] = value


def resolve_key(doc: Mapping[str, Any], text: str) -> Key:
    """Resolve the dotted key ``text`` against the scene document ``doc`` (``scene_document``).

    Raises:
        TypeError: ``text`` is not a string.
        ValueError: the key is not one a sweep can vary (the message names the key, the part that is
            wrong and what is known there): an unknown table or key, a body or material the file does not
            have, a ``[ground]`` the file does not have, a component index out of range.
    """
    if not isinstance(text, str):
        raise TypeError(f"a key must be a string such as 'ground.friction', got {text!r}")
    parts = text.split(".")
    if not text or any(not p.strip() for p in parts):
        raise ValueError(f"key {text!r}: must be a dotted path such as 'ground.friction' or "
                         f"'bodies.NAME.restitution'")
    head, rest = parts[0], parts[1:]
    if head == "world":
        return _resolve_world(text, rest)
    if head == "ground":
        if "ground" not in doc:
            raise ValueError(f"key {text!r}: the scene has no [ground] table")
        return _leaf(text, ("ground",), rest, _GROUND_SWEEP_KEYS, "key of [ground]")
    if head == "materials":
        materials = doc.get("materials", {})
        if not rest or rest[0] not in materials:
            name = rest[0] if rest else ""
            raise ValueError(f"key {text!r}: no material {name!r} in the scene (materials: "
                             f"{_listed(materials)})")
        return _leaf(text, ("materials", rest[0]), rest[1:], _MATERIAL_KEYS, "material key")
    if head == "bodies":
        return _resolve_body(doc, text, rest)
    if head == "run":
        raise ValueError(f"key {text!r}: the run's duration and dt are the sweep's own arguments, not varied keys")
    hint = difflib_hint(head, ("world", "ground", "materials", "bodies"))
    raise ValueError(f"key {text!r}: unknown table {head!r}{hint}; a varied key starts with world, ground, "
                     f"materials or bodies")


def _resolve_world(text: str, rest: list[str]) -> Key:
    if rest and rest[0] in ("contact", "event"):
        allowed = _CONTACT_KEYS if rest[0] == "contact" else _EVENT_KEYS
        return _leaf(text, ("world", rest[0]), rest[1:], allowed, f"key of [world.{rest[0]}]")
    return _leaf(text, ("world",), rest, tuple(k for k in _WORLD_KEYS if k not in ("contact", "event")),
                 "key of [world]")


def _resolve_body(doc: Mapping[str, Any], text: str, rest: list[str]) -> Key:
    bodies = doc.get("bodies", [])
    bodies = bodies if isinstance(bodies, list) else []
    names = [b.get("name") if isinstance(b, dict) else None for b in bodies]
    if not rest:
        raise ValueError(f"key {text!r}: name a body: bodies.NAME.KEY")
    name = rest[0]
    if name in names:
        index = names.index(name)
    elif name.isdigit() and int(name) < len(bodies):
        index = int(name)
    else:
        shown = ", ".join(repr(n) for n in names if isinstance(n, str)) or "none named"
        raise ValueError(f"key {text!r}: no body named {name!r} in the scene (bodies: {shown}; or give a body's "
                         f"0-based place among the {len(bodies)} [[bodies]])")
    body = bodies[index]
    where: tuple[str | int, ...] = ("bodies", index)
    if len(rest) >= 2 and rest[1] == "shape":
        shape = body.get("shape")
        if not isinstance(shape, dict) or shape.get("type") not in _SHAPE_KEYS:
            raise ValueError(f"key {text!r}: body {name!r} has no shape table with a known type (a compound's "
                             f"parts cannot be varied)")
        sizes = _SHAPE_KEYS[shape["type"]]
        return _leaf(text, where + ("shape",), rest[2:], sizes, f"size key of a {shape['type']}",
                     vectors={k: n for k, n in _SIZE_VECTORS.items() if k in sizes}, node=shape)
    return _leaf(text, where, rest[1:], _BODY_SWEEP_KEYS, "body key", node=body)


def _leaf(text: str, where: tuple[str | int, ...], rest: list[str], allowed: tuple[str, ...], what: str, *,
          vectors: Mapping[str, int] | None = None, node: Any = None) -> Key:
    """The key ``where + rest``: one allowed name, optionally followed by a component index of a vector."""
    if not rest:
        raise ValueError(f"key {text!r}: name a {what} after {'.'.join(map(str, where))}: one of {', '.join(allowed)}")
    name, index = rest[0], rest[1:]
    if name not in allowed:
        raise ValueError(f"key {text!r}: unknown {what} {name!r}{difflib_hint(name, allowed)}; known: "
                         f"{', '.join(allowed)}")
    if not index:
        return Key(text, where + (name,))
    sizes = {k: len(v) for k, v in _VECTORS.items()} | dict(vectors or {})
    if len(index) > 1 or name not in sizes:
        raise ValueError(f"key {text!r}: {name!r} has no parts to pick; only a vector's component can be "
                         f"picked, as in bodies.NAME.position.2")
    if not index[0].isdigit() or int(index[0]) >= sizes[name]:
        raise ValueError(f"key {text!r}: component {index[0]!r} of {name!r} must be 0 to {sizes[name] - 1}")
    present = node.get(name) if isinstance(node, dict) else None
    default = None if isinstance(present, list) else tuple(_VECTORS.get(name, ()))
    return Key(text, where + (name, int(index[0])), default or None)


def _listed(table: Any) -> str:
    return ", ".join(repr(k) for k in table) if isinstance(table, dict) and table else "none"


# ====================================================================== values
def parse_values(text: str) -> list[Value]:
    """The values of ``--vary KEY=VALUES``: ``start:stop:count``, ``count`` numbers from ``start`` to ``stop``
    inclusive (``numpy.linspace``), or a comma list of TOML values (``0.1,0.3``, ``[0, 0, -9.81],[0, 0,
    -1.62]``, ``"pgs","apgd"``); a bare word that is not a TOML value is a string (``pgs,apgd``).

    Raises:
        ValueError: no values, an empty item, an empty or malformed range, a range of more than ``MAX_VARIANTS``
            values (the message quotes ``text``).
    """
    if not text.strip():
        raise ValueError("no values: give a comma list (0.1,0.3) or a range start:stop:count")
    found = _RANGE.match(text)
    if found and not text.lstrip().startswith(("[", '"', "'")):
        return _linspace(text, *found.groups())
    items = _split_top_level(text)
    out: list[Value] = []
    for item in items:
        if not item.strip():
            raise ValueError(f"values {text!r}: an empty item between commas")
        try:
            out.append(tomllib.loads(f"v = {item.strip()}")["v"])
        except tomllib.TOMLDecodeError:
            out.append(item.strip())
    return out


def _linspace(text: str, start: str, stop: str, count: str) -> list[Value]:
    try:
        lo, hi = float(start), float(stop)
    except ValueError:
        raise ValueError(f"range {text!r}: start and stop must be numbers (start:stop:count)") from None
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(f"range {text!r}: start and stop must be finite")
    if not count.strip().lstrip("+-").isdigit():
        raise ValueError(f"range {text!r}: count must be a whole number (start:stop:count)")
    n = int(count)
    if n < 1:
        raise ValueError(f"range {text!r} is empty: count must be at least 1, got {n}")
    if n > MAX_VARIANTS:
        raise ValueError(f"range {text!r}: count {n:,} is more than the {MAX_VARIANTS:,} variants a sweep may have "
                         f"(MAX_VARIANTS)")
    return [float(v) for v in np.linspace(lo, hi, n)]


def _split_top_level(text: str) -> list[str]:
    """``text`` split at the commas outside brackets and quotes."""
    items, depth, quote, start = [], 0, "", 0
    for i, c in enumerate(text):
        if quote:
            quote = "" if c == quote else quote
        elif c in "\"'":
            quote = c
        elif c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
        elif c == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return items


def parse_vary(option: str) -> tuple[str, list[Value]]:
    """``KEY=VALUES`` (one ``--vary``) as (key, values); raises ValueError naming the option."""
    key, sep, values = option.partition("=")
    if not sep or not key.strip():
        raise ValueError(f"--vary {option!r}: must be KEY=VALUES, e.g. ground.friction=0.1,0.3,0.5 or "
                         f"bodies.ball.restitution=0.2:0.8:4")
    try:
        return key.strip(), parse_values(values)
    except ValueError as exc:
        raise ValueError(f"--vary {option!r}: {exc}") from None


# ====================================================================== parameter sets
def grid(axes: Mapping[str, Sequence[Value]]) -> list[dict[str, Value]]:
    """Every combination of the values of ``axes`` (key → values), the first key varying slowest, as a list
    of parameter sets (key → value). ``grid({"a": [1, 2], "b": [3, 4, 5]})`` has 6 sets.

    Raises:
        TypeError: ``axes`` is not a mapping of keys to sequences of values.
        ValueError: ``axes`` or one key's values are empty, or more than ``MAX_VARIANTS`` combinations.
    """
    if not isinstance(axes, Mapping):
        raise TypeError(f"axes must be a mapping of keys to sequences of values, got {axes!r}")
    if not axes:
        raise ValueError("axes must name at least one key, got {}")
    for key, values in axes.items():
        if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray)):
            raise TypeError(f"axes[{key!r}] must be a sequence of values, got {values!r}")
        if len(values) == 0:
            raise ValueError(f"axes[{key!r}] is empty: give at least one value")
    check_count("a grid of " + " x ".join(f"{len(v):,}" for v in axes.values()),
                math.prod(len(v) for v in axes.values()))
    lists = {key: [_plain(key, v) for v in values] for key, values in axes.items()}
    return [dict(zip(lists, combo, strict=True)) for combo in itertools.product(*lists.values())]


def sample(ranges: Mapping[str, tuple[float, float]], count: int, *, seed: int) -> list[dict[str, float]]:
    """``count`` parameter sets drawn uniformly from ``ranges`` (key → (low, high)), reproducibly:
    ``numpy.random.default_rng(seed)`` draws ``count`` values for each key in turn, in the mapping's order.

    Raises:
        TypeError: ``count`` or ``seed`` is not an integer, or a range is not two numbers.
        ValueError: ``count`` < 1 or > ``MAX_VARIANTS``, a range is not finite, or ``ranges`` is empty.
    """
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)):
        raise TypeError(f"count must be an integer, got {count!r}")
    if count < 1:
        raise ValueError(f"count must be at least 1, got {count}")
    check_count(f"count={count:,}", int(count))
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an integer, got {seed!r}")
    if not isinstance(ranges, Mapping) or not ranges:
        raise ValueError(f"ranges must be a non-empty mapping of keys to (low, high), got {ranges!r}")
    rng = np.random.default_rng(seed)
    columns = {}
    for key, bounds in ranges.items():
        lo, hi = bounds_of(f"ranges[{key!r}]", bounds)
        columns[key] = rng.uniform(lo, hi, int(count))
    return [{key: float(values[i]) for key, values in columns.items()} for i in range(int(count))]


def check_count(what: str, count: int) -> None:
    """ValueError, naming ``what``, when ``count`` parameter sets are more than ``MAX_VARIANTS``."""
    if count > MAX_VARIANTS:
        raise ValueError(f"{what} is {count:,} variants; at most {MAX_VARIANTS:,} (MAX_VARIANTS): give fewer values "
                         f"per key")


def bounds_of(name: str, bounds: Any) -> tuple[float, float]:
    """``bounds`` as (low, high) finite floats with low <= high; errors name ``name``."""
    if (isinstance(bounds, (str, bytes)) or not isinstance(bounds, (Sequence, np.ndarray)) or len(bounds) != 2
            or any(isinstance(b, bool) or not isinstance(b, (int, float, np.number)) for b in bounds)):
        raise TypeError(f"{name} must be two numbers (low, high), got {bounds!r}")
    lo, hi = float(bounds[0]), float(bounds[1])
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi:
        raise ValueError(f"{name} must be finite with low <= high, got {bounds!r}")
    return lo, hi


def _plain(key: str, value: Any) -> Value:
    """``value`` as a plain JSON/TOML value (NumPy scalars and arrays become Python ones)."""
    if isinstance(value, np.generic):
        value = value.item()
    elif isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"value of {key!r} must be finite, got {value!r}")
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(key, v) for v in value]
    raise TypeError(f"value of {key!r} must be a number, string, boolean or a list of them, got {value!r}")


def plain_sets(variants: Any) -> list[dict[str, Value]]:
    """A sequence of parameter sets (mappings of keys to values) as plain dicts, checked.

    Raises:
        TypeError: ``variants`` is not a sequence of mappings with string keys and plain values.
        ValueError: ``variants`` is empty or longer than ``MAX_VARIANTS``, or a value is not finite.
    """
    if isinstance(variants, Mapping) or not isinstance(variants, Sequence) or isinstance(variants, (str, bytes)):
        raise TypeError(f"variants must be a sequence of parameter sets (dicts: key -> value), such as grid(...) "
                        f"or sample(...) return, got {type(variants).__name__}")
    if not variants:
        raise ValueError("variants is empty: give at least one parameter set")
    check_count(f"variants ({len(variants):,} parameter sets)", len(variants))
    out = []
    for i, params in enumerate(variants):
        if not isinstance(params, Mapping):
            raise TypeError(f"variants[{i}] must be a mapping of keys to values, got {params!r}")
        for key in params:
            if not isinstance(key, str):
                raise TypeError(f"variants[{i}] has a key that is not a string: {key!r}")
        out.append({key: _plain(key, value) for key, value in params.items()})
    return out


def digest(*parts: Any) -> str:
    """A short hex digest (80 bits of SHA-256) of JSON-able ``parts``: floats by ``repr``, keys sorted."""
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def with_values(doc: Mapping[str, Any], keys: Mapping[str, Key], params: Mapping[str, Value]) -> dict[str, Any]:
    """A deep copy of the scene document ``doc`` with each parameter set at its key."""
    out = copy.deepcopy(dict(doc))
    for name, value in params.items():
        keys[name].set(out, value)
    return out
