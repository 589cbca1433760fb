"""World.distance against coal on the 1,620 seeded poses of the contact tests (tests/collision/test_differential.py).

Every pair family (21 pairs of shape kinds and 6 kinds against the ground) on its ``CASES`` = 60 poses from
``test_differential.make_case``: 40 % overlapping by 0.1–30 mm, 10 % deeply, 35 % apart within the contact
margin, 15 % apart by 3–6 margins. The reference is coal's signed distance with exact cylinders
(``coal.Cylinder``, as tumble's distance query uses; coal_reference.signed_distance(true_cylinder=True)); where
coal runs EPA on a curved support (an ellipsoid or a cylinder, off the ground) and the pair overlaps, coal's
depth is also checked against the support functions (coal_reference.verified, as test_differential does: coal's
EPA can stop on a non-minimal face), and tumble passes if it agrees with either answer.

Tolerance ``TOL`` = 1e-6 m on every pose of every family (issue 51's acceptance figure). Measured: worst
7.0e-9 m (ellipsoid–ellipsoid), 5.8e-10 m cylinder–box, 2.4e-11 m cylinder–hull, ~1e-16 m for polytopes, spheres,
capsules and the ground. Cost: the poses are test_differential's (``make_case`` places each with coal and is
cached), so run in one process with it this file adds ~1 s a family; alone it takes ~3 min on 2 cores, nearly
all of it building the poses and compiling.
"""

import sys
import time
from pathlib import Path

import pytest

import tumble as tb

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "collision"))
from coal_reference import Ground, verified  # noqa: E402
from test_differential import CASES, PAIRS, _true_cylinder, make_case  # noqa: E402

TOL = 1e-6
"""m: |World.distance − coal's signed distance| on every pose."""

CURVED = (tb.Ellipsoid, tb.Cylinder)


def _world(case):
    world = tb.World(gravity=(0, 0, 0))
    a = world.add_body(case.shape_a, position=case.pos_a, orientation=case.quat_a)
    if isinstance(case.shape_b, Ground):
        b = world.add_ground(case.shape_b.height)
    else:
        b = world.add_body(case.shape_b, position=case.pos_b, orientation=case.quat_b)
    return world, a, b


def pose_error(pair, index):
    """(|tumble − reference| [m], tumble's distance, coal's) for case ``index`` of ``pair``."""
    case = make_case(pair, index)
    world, a, b = _world(case)
    d = world.distance(a, b)
    ref = _true_cylinder(pair, index)
    err = abs(d.distance - ref.distance)
    curved = not isinstance(case.shape_b, Ground) and any(isinstance(s, CURVED) for s in (case.shape_a, case.shape_b))
    if curved and err > TOL and ref.distance < 0.0:
        checked = verified(case.shape_a, case.pos_a, case.quat_a, case.shape_b, case.pos_b, case.quat_b, ref,
                           seeds=[d.normal], true_cylinder=True)
        err = min(err, abs(d.distance - checked.distance))
    return err, d.distance, ref.distance


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: "-".join(p))
def test_distance_matches_coal_on_the_contact_poses(pair):
    started = time.perf_counter()
    errors = [pose_error(pair, i) for i in range(CASES)]
    worst = max(e[0] for e in errors)
    bad = [(i, *e) for i, e in enumerate(errors) if e[0] > TOL]
    print(f"{'-'.join(pair)}: {CASES} poses, worst |d - coal| {worst:.2e} m, {time.perf_counter() - started:.2f} s")
    assert not bad, "\n".join(f"case {i}: error {e:.3g} m (tumble {t:.9g}, coal {c:.9g})" for i, e, t, c in bad)
