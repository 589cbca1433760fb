"""Robots: articulations in reduced coordinates (q, q̇) — the kinematic tree and its recursive dynamics
(dynamics.py: RNEA, CRBA with its sparse LTDL factorization, ABA), robot files (urdf.py, mjcf.py → the
format-free description.py), the Model's forest of articulations (forest.py), their stages in a
time-stepping step (step.py) and the ``Robot`` and ``Link`` handles (robot.py). See docs/robots.md."""

from .description import ClosureSpec, GeomSpec, JointSpec, LinkSpec, RobotDescription
from .ik import IKResult
from .robot import Link, Robot

__all__ = ["ClosureSpec", "GeomSpec", "IKResult", "JointSpec", "Link", "LinkSpec", "Robot", "RobotDescription"]
