"""The collision-stage benchmark: its state is what the docstring says, its section lands in RESULTS.md."""

from __future__ import annotations

import numpy as np

from bench.collision import lattice_world, measure, nudge, render_collision
from bench.report import render_markdown


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
           "piles": [row], "scaling": [dict(row, brute_ms=0.01)], "exponent": 1.0}
    lines = render_collision(fig)
    assert lines[0] == "## Collision stage alone"
    assert any("fitted exponent of time vs n = **1.00**" in ln for ln in lines)
    results = {"meta": {"quick": True, "command": "python -m bench --quick", "date": "d",
                        "machine": {"cpu": "c", "cores": 2, "memory": "m", "os": "o"},
                        "versions": {"python": "3"}, "numba_threads": 1,
                        "timing": {"repeats": 1, "warmup": 1, "budget_s": 1.0}},
               "cases": {}, "collision": fig}
    assert "## Collision stage alone" in render_markdown(results)
