"""Robots: articulations in reduced coordinates (q, q̇) — the kinematic tree and its recursive dynamics
(dynamics.py: RNEA, CRBA with its sparse LTDL factorization, ABA), robot files (urdf.py, mjcf.py → the
format-free description.py), the Model's forest of articulations (forest.py), their stages in a
time-stepping step (step.py) and the ``Robot`` and ``Link`` handles (robot.py). See docs/robots.md."""

from importlib import import_module
from typing import Any

_HOMES = {"ClosureSpec": "description", "GeomSpec": "description", "JointSpec": "description",
          "LinkSpec": "description", "RobotDescription": "description", "IKResult": "ik", "Link": "robot",
          "Robot": "robot"}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    """The public names, imported on first use (PEP 562): importing robots/dynamics.py alone, as the contact
    rows' link sides do (constraints/link_rows.py), must not import the handles and the robots' stages, which
    import the contact rows in turn."""
    if name in _HOMES:
        return getattr(import_module(f".{_HOMES[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
