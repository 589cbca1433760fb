"""``tumble.user.validate``: the analytic checks behind ``tumble validate``.

Every check must pass (quick durations, the same tolerances), the table must list every check and the
"N of M passed" line, and a check must be able to fail: a perturbed closed form, a wrong tolerance or a
failed precondition gives FAIL.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tumble.user import validate
from tumble.user.validate import CHECKS, Check, compare, format_line, format_table, run_checks


@pytest.fixture(scope="module")
def quick_checks() -> list[Check]:
    """All checks, quick, run once for the module (about 1 s warm; contact kernels compile on a cold cache)."""
    return run_checks(quick=True)


def test_the_registry_holds_the_required_checks():
    required = {"free-fall-position", "free-fall-velocity", "inertia-box", "inertia-cylinder", "inertia-capsule",
                "precession-rate", "precession-momentum", "precession-energy", "dzhanibekov-energy",
                "dzhanibekov-momentum", "resting-box", "bounce", "incline-slide", "incline-stick",
                "collision-momentum", "pendulum-period", "pendulum-energy-rk4"}
    assert required <= set(CHECKS)


def test_every_check_passes_quick(quick_checks):
    assert [c.name for c in quick_checks] == list(CHECKS)  # registry order, one row each
    failed = [format_line(c) for c in quick_checks if not c.passed]
    assert not failed, "\n".join(failed)
    for c in quick_checks:
        assert math.isfinite(c.value) and math.isfinite(c.expected)
        assert 0.0 <= c.error <= c.tolerance
        assert c.tolerance > 0.0
        assert c.seconds >= 0.0
        assert c.quantity and c.reference


def test_progress_is_called_with_each_finished_check():
    seen: list[Check] = []
    checks = run_checks(["inertia-box", "free-fall-velocity"], quick=True, progress=seen.append)
    assert seen == checks
    assert [c.name for c in checks] == ["free-fall-velocity", "inertia-box"]  # registry order


def test_table_lists_every_check_and_the_count(quick_checks):
    table = format_table(quick_checks)
    lines = table.splitlines()
    assert lines[-1] == f"{len(quick_checks)} of {len(quick_checks)} passed"
    assert len(lines) == 2 + len(quick_checks) + 1  # header, rule, one row per check, the count
    for c, line in zip(quick_checks, lines[2:-1], strict=True):
        assert line.startswith(c.name)
        assert "PASS" in line
        assert c.reference in line
    for column in validate.TABLE_COLUMNS:
        assert column in lines[0]
    # Aligned: every row's "result" cell starts in the header's "result" column.
    col = lines[0].index("result")
    assert all(line[col:col + 4] == "PASS" for line in lines[2:-1])


def test_table_counts_a_failure():
    good = compare("a", "x [m] (abs.)", 1.0, 1.0, 1e-9, "x = 1", relative=False)
    bad = compare("b", "y [m] (rel.)", 1.1, 1.0, 1e-3, "y = 1", relative=True)
    table = format_table([good, bad])
    assert "FAIL" in table.splitlines()[3]
    assert table.splitlines()[-1] == "1 of 2 passed"


def test_compare_fails_beyond_its_tolerance():
    check = compare("c", "q [1] (rel.)", 1.0 + 2e-6, 1.0, 1e-6, "q = 1", relative=True)
    assert not check.passed
    assert check.error == pytest.approx(2e-6)
    assert compare("c", "q", 1.0 + 2e-6, 1.0, 1e-5, "q = 1", relative=True).passed


def test_a_wrong_tolerance_fails_a_real_check(quick_checks):
    """Re-judge each simulated value with a tolerance just below its own error: every check with a nonzero
    error must then fail (the comparison is live, not a constant PASS)."""
    for c in quick_checks:
        if c.error > 0.0:
            rejudged = compare(c.name, c.quantity, c.value, c.expected, 0.5 * c.error, c.reference,
                               relative=False, miss=c.error)
            assert not rejudged.passed, c.name


def test_a_perturbed_closed_form_fails(monkeypatch):
    """1% off in the expected slide acceleration is far outside the 4e-4 tolerance."""
    exact = validate.coulomb_slide_acceleration
    monkeypatch.setattr(validate, "coulomb_slide_acceleration", lambda g, th, mu: 1.01 * exact(g, th, mu))
    (check,) = run_checks(["incline-slide"], quick=True)
    assert not check.passed
    assert check.error == pytest.approx(0.01 / 1.01, rel=1e-6)


def test_a_perturbed_precession_rate_fails(monkeypatch):
    exact = validate.symmetric_top_rate
    monkeypatch.setattr(validate, "symmetric_top_rate", lambda i1, i3, w3: exact(i1, i3, w3) * (1 + 1e-5))
    (check,) = run_checks(["precession-rate"], quick=True)
    assert not check.passed


def test_a_perturbed_gravity_in_the_closed_form_fails(monkeypatch):
    """The free-fall velocity is exact to rounding: 0.1% more gravity in the formula fails it."""
    exact = validate.projectile_velocity
    monkeypatch.setattr(validate, "projectile_velocity", lambda v0, g, t: exact(v0, 1.001 * g, t))
    (check,) = run_checks(["free-fall-velocity"], quick=True)
    assert not check.passed
    assert check.error == pytest.approx(1e-3 * 9.81, rel=1e-6)


def test_a_wrong_inertia_formula_fails(monkeypatch):
    exact = validate.capsule_inertia
    monkeypatch.setattr(validate, "capsule_inertia", lambda d, r, length: exact(d, r, length) * (1 + 1e-9))
    (check,) = run_checks(["inertia-capsule"], quick=True)
    assert not check.passed


def test_a_perturbed_pendulum_period_fails(monkeypatch):
    """The elliptic period with the amplitude 1e-3 rad off moves it by ~4e-4, beyond the 2.65e-6 tolerance."""
    exact = validate.pendulum_period
    monkeypatch.setattr(validate, "pendulum_period", lambda i, m, g, d, a: exact(i, m, g, d, a + 1e-3))
    (check,) = run_checks(["pendulum-period"], quick=True)
    assert not check.passed


def test_a_failed_precondition_or_nan_fails():
    assert not compare("p", "q", 1.0, 1.0, 1.0, "q = 1", relative=False, precondition=False).passed
    assert not compare("n", "q", math.nan, 1.0, 1.0, "q = 1", relative=True).passed
    assert not compare("z", "q", 1.0, 0.0, 1.0, "q = 0", relative=True).passed  # relative to 0: inf


def test_names_filter_runs_only_those():
    checks = run_checks(["bounce", "inertia-cylinder"], quick=True)
    assert [c.name for c in checks] == ["inertia-cylinder", "bounce"]
    assert all(c.passed for c in checks)
    assert [c.name for c in run_checks("inertia-box")] == ["inertia-box"]  # one name as a string


def test_unknown_name_is_a_value_error_naming_it():
    with pytest.raises(ValueError, match="no-such-check"):
        run_checks(["inertia-box", "no-such-check"])


def test_closed_forms_agree_with_each_other():
    """The capsule's closed form tends to the sphere's 2/5 m r² as its cylinder vanishes, and to the
    cylinder's as its radius is small against its length (independent of the engine)."""
    r, density = 0.3, 1000.0
    sphere = 0.4 * density * 4.0 / 3.0 * np.pi * r**3 * r * r
    np.testing.assert_allclose(validate.capsule_inertia(density, r, 1e-12), sphere * np.eye(3), rtol=1e-9)
    length = 2.0
    cyl = validate.cylinder_inertia(density * np.pi * 1e-4**2 * length, 1e-4, length)
    np.testing.assert_allclose(validate.capsule_inertia(density, 1e-4, length)[0, 0], cyl[0, 0], rtol=1e-3)
