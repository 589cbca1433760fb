"""What every engine adapter provides: build a :class:`~bench.scenes.Scene`, step it, read state back.

The harness owns the stepping loop and the clock (:mod:`bench.run`); an adapter only hands it a
zero-argument ``step`` callable that advances one ``scene.dt``, and a ``state()`` that returns the bodies'
state as NumPy arrays in scene order and in tumble's conventions (world frame, quaternions (w, x, y, z)).
Every accuracy figure is then computed by :mod:`bench.metrics` from those arrays, the same way for all
engines.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from bench.scenes import Scene

__all__ = ["State", "Sim", "Adapter"]


@dataclass(frozen=True)
class State:
    """Dynamic bodies' state in scene order, tumble's conventions.

    Attributes:
        x: (n, 3) centre of mass, world [m].
        q: (n, 4) orientation (w, x, y, z), body → world.
        v: (n, 3) linear velocity, world [m/s].
        w: (n, 3) angular velocity, world [rad/s].
    """

    x: np.ndarray
    q: np.ndarray
    v: np.ndarray
    w: np.ndarray


class Sim(ABC):
    """One built scene in one engine."""

    step: Callable[[], None]
    """Advance one ``scene.dt``. Bound once at build, so the timed loop calls it directly."""

    @abstractmethod
    def state(self) -> State:
        """Read every dynamic body's state (never called inside the timed loop)."""

    def reset(self) -> bool:
        """Return to the scene's initial state exactly as a fresh build would; False if not supported
        (the harness then builds again)."""
        return False

    def engine_contact_count(self) -> int | None:
        """The engine's own number of contact points now, or None if it does not report one."""
        return None

    def warnings(self) -> list[str]:
        """Anything the engine flagged during the run (buffer overflows, instabilities)."""
        return []

    def close(self) -> None:  # noqa: B027 - optional hook, most engines need nothing
        """Release the engine's resources."""


class Adapter(ABC):
    """An engine in one configuration (e.g. PyBullet with maximal coordinates)."""

    engine: str = ""
    """``"tumble"``, ``"pybullet"`` or ``"mujoco"``."""
    config: str = "default"
    """Configuration name shown in the tables."""

    @property
    def label(self) -> str:
        """``engine/config`` as used in tables and JSON keys."""
        return f"{self.engine}/{self.config}"

    def available(self) -> tuple[bool, str]:
        """(True, "") if the engine can be imported, else (False, why — e.g. "not installed"). The peers'
        module is named like the engine; tumble's adapter overrides this with its own checks."""
        try:
            importlib.import_module(self.engine)
        except ImportError:
            return False, "not installed"
        return True, ""

    @abstractmethod
    def version(self) -> str:
        """The engine's version string."""

    @abstractmethod
    def settings(self) -> dict[str, str]:
        """The settings this configuration uses, for the tables (name → value with a short reason)."""

    def supported(self, scene: Scene) -> tuple[bool, str]:
        """(True, "") if this engine can run ``scene`` now, else (False, the reason shown in the table)."""
        return True, ""

    def applies(self, scene: Scene) -> bool:
        """Whether this configuration has a row for ``scene`` at all (a configuration that only differs from
        another on some scenes leaves the others out)."""
        return True

    def scene_notes(self, scene: Scene) -> list[str]:
        """Per-scene remarks on how the scene was modelled in this engine (e.g. restitution via solref)."""
        return []

    @abstractmethod
    def build(self, scene: Scene) -> Sim:
        """Create the scene in a fresh engine instance, ready to step from ``scene``'s initial state."""
