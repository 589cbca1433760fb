"""bench/solvers.py: the solver × scene table runs each configuration and renders what it measured."""

from __future__ import annotations

import tumble.methods.timestepping
from bench.solvers import render, run_one


def test_a_short_run_reports_its_figures_and_renders():
    """With a zero budget a configuration stops right after the warm-up steps and says it is partial; the
    figures are those of the steps it ran (S3 rests: tiny residuals, the stack stands)."""
    r = run_one("S3", {"solver": "apgd"}, budget_s=0.0)
    assert r["partial"] and r["steps"] == 6 and r["of"] == 2400
    assert r["steps_per_s"] > 0 and r["failed"] == 0 and r["stands"] is True
    assert 0.0 <= r["median_residual"] <= r["max_residual"] < 1e-2
    r.update(solver="apgd", friction="cone")
    table = render([r], {"when": "today", "tumble": "0", "machine": "here", "budget": "0"})
    assert "| S3 | apgd (cone) |" in table and "partial: 6 of 2400 steps" in table


def test_lemke_beyond_its_size_is_reported_as_refused(monkeypatch):
    monkeypatch.setattr(tumble.methods.timestepping, "MAX_LEMKE_SIZE", 10)
    r = run_one("S3", {"solver": "lemke", "friction": "pyramid"}, budget_s=0.0)
    assert "refused" in r and r["steps"] == 0
    r.update(solver="lemke", friction="pyramid")
    table = render([r], {"when": "today", "tumble": "0", "machine": "here", "budget": "0"})
    assert "refused at step 0: an LCP of 800 unknowns > MAX_LEMKE_SIZE" in table
