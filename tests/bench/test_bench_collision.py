"""The collision-stage benchmark: its states are what the docstring says (the lattice, the settled pile and its
cached poses), its section lands in RESULTS.md."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from bench import collision
from bench.collision import (
    PILE_KEYS,
    PILE_SIDE,
    SETTLE_SPEED,
    SETTLE_SPIN,
    lattice_world,
    load_pile,
    measure,
    measure_settled,
    nudge,
    pile_cache_path,
    render_collision,
    render_settled,
    save_pile,
)
from bench.geometry import quat_to_matrix
from bench.report import render_markdown
from tumble.model.fields import MAX_CONTACTS


def test_lattice_is_packed_with_slight_overlaps_and_nudges_are_small():
    world = lattice_world("boxes", 27, seed=0)
    x0 = world._live()["x"].copy()
    nearest = np.sort(np.linalg.norm(x0[:, None] - x0[None], axis=2), axis=1)[:, 1]
    # spacing 0.195 m ± 2 mm jitter on each coordinate: neighbours 0.2 m boxes overlap by ~5 mm
    assert np.all(np.abs(nearest - 0.195) < 0.007)
    nudge(world, np.random.default_rng(0))
    assert np.max(np.abs(world._live()["x"] - x0)) <= 1e-4
    np.testing.assert_allclose(np.linalg.norm(world._live()["q"], axis=1), 1.0, rtol=1e-12)


def test_measure_counts_pairs_and_contacts_and_renders_into_results_md():
    row = measure("boxes", 8, steps=2)
    # 2×2×2 lattice: 12 face neighbours overlap (+ diagonals within the AABB margin); every box touches
    assert row["n"] == 8 and row["pairs"] >= 12 and row["contacts"] >= 4 * 12
    fig = {"quick": True, "steps": 2, "date": "2026-11-21", "machine": "test cpu, 2 cores",
           "versions": {"tumble": "0", "numpy": "0", "numba": "0", "python": "3"},
           "piles": [row], "scaling": [dict(row, brute_ms=0.01)], "exponent": 1.0,
           "settled": {"n": 125, "skipped": "skipped: no cached poses"}}
    lines = render_collision(fig)
    assert lines[0] == "## Collision stage alone"
    assert any("fitted exponent of time vs n = **1.00**" in ln for ln in lines)
    assert "### Settled pile: 125 boxes" in lines and "Settled pile skipped: no cached poses." in lines
    results = {"meta": {"quick": True, "command": "python -m bench --quick", "date": "d",
                        "machine": {"cpu": "c", "cores": 2, "memory": "m", "os": "o"},
                        "versions": {"python": "3"}, "numba_threads": 1,
                        "timing": {"repeats": 1, "warmup": 1, "budget_s": 1.0}},
               "cases": {}, "collision": fig}
    assert "## Collision stage alone" in render_markdown(results)


# ------------------------------------------------------------------------------------------------------------
# settled pile


@pytest.mark.parametrize("per_side", sorted(set(PILE_SIDE.values())))
def test_cached_settled_pile_loads_without_pickle_and_is_settled(per_side):
    path = pile_cache_path(per_side)
    assert path.exists(), f"{path.name} missing: regenerate with `python -m bench.collision --settle`"
    with np.load(path, allow_pickle=False) as z:  # plain arrays only: this raises on any pickled object
        assert set(PILE_KEYS) <= set(z.files)
        assert all(z[k].dtype != object for k in z.files)
    pile = load_pile(path)
    n = per_side**3
    x, q = pile["x"], pile["q"]
    assert x.shape == (n, 3) and int(pile["per_side"]) == per_side
    np.testing.assert_allclose(np.linalg.norm(q, axis=1), 1.0, rtol=1e-9)
    reach = 0.5 * float(pile["edge"]) * np.abs(quat_to_matrix(q)).sum(axis=2)  # (n, 3) half extents of each AABB
    # on the ground, not in it (MuJoCo's soft contacts let a box sink by about a millimetre, as recorded) …
    assert 0.0 <= float(pile["max_penetration"]) < 5e-3  # under tumble's 5 mm contact margin
    assert np.all(x[:, 2] - reach[:, 2] >= -float(pile["max_penetration"]) - 1e-9)
    # … inside the pen (centres: a box may lean over a wall's top edge) …
    assert np.all(np.abs(x[:, :2]) < 0.5 * float(pile["pen_inner"]))
    # … fallen from the grid (top layer released at 0.5 + 0.3 (per_side - 1) m), not resting on the initial lattice …
    assert x[:, 2].max() < 0.5 + 0.3 * (per_side - 1) - 0.1
    # … and at rest
    assert np.linalg.norm(pile["v"], axis=1).max() < SETTLE_SPEED
    assert np.linalg.norm(pile["w"], axis=1).max() < SETTLE_SPIN


def test_save_pile_writes_atomically_and_load_refuses_pickles(tmp_path):
    pile = load_pile(pile_cache_path(PILE_SIDE[True]))
    path = tmp_path / "pile.npz"
    save_pile(path, pile)
    assert [p.name for p in tmp_path.iterdir()] == ["pile.npz"]  # no temporary file left behind
    again = load_pile(path)
    for k in PILE_KEYS:
        np.testing.assert_array_equal(again[k], pile[k])
    with pytest.raises(KeyError):  # a failed write leaves neither a file nor its temporary
        save_pile(tmp_path / "broken.npz", {k: v for k, v in pile.items() if k != "w"})
    assert [p.name for p in tmp_path.iterdir()] == ["pile.npz"]
    bad = dict(pile, engine=np.array([{"not": "plain"}], dtype=object))
    np.savez(tmp_path / "pickled.npz", **bad)
    with pytest.raises(ValueError):
        load_pile(tmp_path / "pickled.npz")
    save_pile(tmp_path / "short.npz", dict(pile, x=pile["x"][:-1]))
    with pytest.raises(ValueError):
        load_pile(tmp_path / "short.npz")


def test_settled_pile_is_skipped_without_a_cache_or_mujoco(monkeypatch, tmp_path):
    monkeypatch.setattr(collision, "HERE", tmp_path)
    monkeypatch.setitem(sys.modules, "mujoco", None)  # `import mujoco` raises ImportError
    pile, why = collision.settled_pile(3)
    assert pile is None and "skipped" in why and "settled_pile_27.npz" in why
    assert not list(tmp_path.iterdir())
    lines = render_settled({"n": 27, "skipped": why})
    assert lines[0] == "### Settled pile: 27 boxes" and why in lines[-1]


def test_measure_settled_counts_pairs_and_contacts_consistently():
    import numba

    threads_before = numba.get_num_threads()
    pile = load_pile(pile_cache_path(PILE_SIDE[True]))
    r = measure_settled(pile, steps=2, threads=(1, 2), coal_repeats=1)
    assert numba.get_num_threads() == threads_before
    assert r["n"] == 125 and r["pairs"] > r["touching"] > 0 and r["contacts"] > 0
    kinds = r["pair_kinds"]
    assert sum(k["pairs"] for k in kinds.values()) == r["pairs"]
    assert sum(k["touching"] for k in kinds.values()) == r["touching"]
    assert sum(k["penetrating"] for k in kinds.values()) == r["penetrating"] <= r["touching"]
    assert all(k["pairs"] >= k["touching"] > 0 for k in kinds.values())  # boxes touch boxes, walls and ground
    # the boxes whose lowest corner is within the 5 mm margin of the floor are the ones touching the ground
    lowest = pile["x"][:, 2] - 0.5 * float(pile["edge"]) * np.abs(quat_to_matrix(pile["q"])[:, 2]).sum(axis=1)
    assert np.sum(lowest < 0.004) <= kinds["box-ground"]["touching"] <= np.sum(lowest < 0.006)
    assert sum(r["contact_kinds"].values()) == r["contacts"]
    assert r["touching"] <= r["contacts"] <= MAX_CONTACTS * r["touching"]
    # tumble sees the geometry MuJoCo left: penetrations of a millimetre or so, not centimetres
    assert 0.0 < r["max_depth"] < float(pile["max_penetration"]) + 1e-3
    expected = list(dict.fromkeys(min(t, numba.config.NUMBA_NUM_THREADS) for t in (1, 2)))
    assert [run["threads"] for run in r["runs"]] == expected
    for run in r["runs"]:
        st = run["stages"]
        assert set(st) == {"aabb", "broadphase", "narrowphase", "other", "total"}
        assert all(s["ms"] >= 0.0 for s in st.values())
        assert st["total"]["ms"] >= max(st[k]["ms"] for k in ("aabb", "broadphase", "narrowphase"))
        np.testing.assert_allclose(st["total"]["us_per_pair"] * r["pairs"], st["total"]["ms"] * 1e3)
        np.testing.assert_allclose(st["total"]["us_per_contact"] * r["contacts"], st["total"]["ms"] * 1e3)
    c = r["coal"]
    if "skipped" not in c:
        # the independent library, on the same pairs, finds (nearly) the same pairs within the margin
        assert c["pairs"] == r["pairs"] and c["agree"] >= 0.98 * r["pairs"]
        assert abs(c["colliding"] - r["touching"]) <= 0.02 * r["pairs"]
        assert c["us_per_pair_own_timer"] > 0.0 and c["us_per_pair_with_patch"] > 0.0
    lines = render_settled(r)
    assert lines[0] == "### Settled pile: 125 boxes"
    assert sum(ln.startswith("| whole call |") for ln in lines) == 1
    assert any(f"Broadphase pairs: **{r['pairs']}**" in ln for ln in lines)
