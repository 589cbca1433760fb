"""Engine adapters: tumble, PyBullet and MuJoCo, each in the configurations the tables report.

Importing this package imports no engine: each adapter imports its engine when it builds a scene, so a
missing peer shows up as "not installed" in the tables instead of an ImportError.
"""

from __future__ import annotations

from bench.adapters.base import Adapter, Sim, State
from bench.adapters.mujoco_adapter import MujocoAdapter
from bench.adapters.pybullet_adapter import PyBulletAdapter
from bench.adapters.tumble_adapter import TumbleAdapter

__all__ = ["Adapter", "Sim", "State", "ENGINES", "all_adapters", "make_adapters"]

ENGINES = ("tumble", "pybullet", "mujoco")


def all_adapters() -> list[Adapter]:
    """Every engine configuration, in table order: tumble (default threads, 1 thread, no sleeping, and on scenes
    without contacts with collision detection running anyway); PyBullet reduced, maximal; MuJoCo Newton, CG.
    (Both peers step on one thread.)"""
    return [TumbleAdapter(), TumbleAdapter(threads=1), TumbleAdapter(sleep=False), TumbleAdapter(detection=True),
            PyBulletAdapter(maximal=False), PyBulletAdapter(maximal=True), MujocoAdapter("Newton"),
            MujocoAdapter("CG")]


def make_adapters(spec: str) -> list[Adapter]:
    """Adapters for a comma-separated list of engines (``"pybullet"``) or configurations
    (``"pybullet/maximal"``), in table order.

    Raises:
        ValueError: an unknown engine or configuration.
    """
    tokens = [t.strip() for t in spec.split(",") if t.strip()]
    if not tokens:
        raise ValueError("--engines is empty")
    known = all_adapters()
    chosen: list[Adapter] = []
    for tok in tokens:
        match = [a for a in known if tok in (a.engine, a.label)]
        if not match:
            labels = ", ".join(a.label for a in known)
            raise ValueError(f"unknown engine {tok!r}; expected one of {', '.join(ENGINES)} or {labels}")
        chosen += [a for a in match if a not in chosen]
    return [a for a in known if a in chosen]
