"""tumble adapter: builds a scene through tumble's public API only (API.md) and reads state in one batch.

- bodies get the scene's exact mass and inertia (``add_body(shape, mass=m, inertia=diag(I))``), like the
  peers; the ground is ``world.add_ground``; walls are ``add_body(..., fixed=True)``;
- materials: tumble combines a pair as μ = √(μa μb) and e = max(ea, eb), so every body simply gets the
  scene's μ and e;
- the timed loop calls ``world.step(dt)`` only; state is read with ``world.state_arrays()`` outside it;
- :meth:`TumbleAdapter.supported` probes whether contacts work (a body resting on the ground must not sink
  through it) instead of assuming: scenes with contacts report "not yet" until they do.

If tumble is not installed, the repository's ``src/`` is put on ``sys.path`` so ``python -m bench`` works
from a plain checkout.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from bench.adapters.base import Adapter, Sim, State
from bench.scenes import Scene

__all__ = ["TumbleAdapter", "import_tumble", "NO_CONTACTS_REASON"]

REPO_SRC = Path(__file__).resolve().parents[2] / "src"

NO_CONTACTS_REASON = "not yet: tumble has no contact handling (issues 3+)"


def import_tumble() -> ModuleType:
    """Import tumble, from the installed package or else from this checkout's ``src/``."""
    try:
        import tumble
    except ImportError:
        if (REPO_SRC / "tumble" / "__init__.py").exists() and str(REPO_SRC) not in sys.path:
            sys.path.insert(0, str(REPO_SRC))
        import tumble
    return tumble


def _shape(tb: ModuleType, kind: str, size: tuple[float, ...]) -> Any:
    """tumble shape for a scene shape (Box takes FULL side lengths, as the scene does)."""
    return tb.Box(*size) if kind == "box" else tb.Sphere(size[0])


def build_world(scene: Scene, detection: bool = False, **options: Any) -> tuple[Any, list[Any]]:
    """Create a ``tb.World`` holding ``scene`` (``options``: further ``World`` keywords); returns (world,
    body handles in scene order). A scene without contacts (S1) gets bodies without collision
    (``collide=False``), as the peers run it (PyBullet: no collision shape, MuJoCo: contacts disabled), unless
    ``detection``: then detection runs every step and finds nothing."""
    tb = import_tumble()
    world = tb.World(gravity=tuple(scene.gravity), **options)
    # Dynamic bodies first, so they are rows 0 … n-1 of world.state_arrays(); then walls and ground.
    handles = []
    for b in scene.bodies:
        handles.append(world.add_body(
            _shape(tb, b.shape.kind, b.shape.size), mass=b.mass, inertia=np.diag(b.inertia),
            position=b.position, orientation=b.orientation, velocity=b.velocity,
            angular_velocity=b.angular_velocity, friction=b.friction, restitution=b.restitution,
            collide=scene.contacts or detection,
        ))
    for w in scene.walls:
        world.add_body(tb.Box(*w.size), position=w.position, orientation=w.orientation, friction=w.friction,
                       restitution=w.restitution, fixed=True)
    if scene.ground is not None:
        g = scene.ground
        world.add_ground(height=g.height, friction=g.friction, restitution=g.restitution)
    return world, handles


class _TumbleSim(Sim):
    def __init__(self, scene: Scene, threads: int | None = None, options: dict[str, Any] | None = None,
                 detection: bool = False) -> None:
        self._restore_threads: int | None = None
        if threads is not None:
            import numba

            self._restore_threads = numba.get_num_threads()
            numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
        self.world, _ = build_world(scene, detection, **(options or {}))
        self._rows = slice(0, scene.n_bodies)
        x0 = np.asarray(self.world.state_arrays()["x"])[self._rows]
        if x0.shape != scene.arrays["x"].shape or not np.allclose(x0, scene.arrays["x"]):
            raise RuntimeError("tumble's state_arrays() rows 0..n-1 are not the bodies in creation order")
        self.step = functools.partial(self.world.step, scene.dt)
        snapshot = getattr(self.world, "snapshot", None)
        self._initial = snapshot() if callable(snapshot) else None

    def reset(self) -> bool:
        """Restore the snapshot taken at build (``World.snapshot``/``restore``), when tumble has them."""
        if self._initial is None:
            return False
        self.world.restore(self._initial)
        return True

    def state(self) -> State:
        s = self.world.state_arrays()
        r = self._rows
        return State(x=np.asarray(s["x"])[r], q=np.asarray(s["q"])[r], v=np.asarray(s["v"])[r],
                     w=np.asarray(s["w"])[r])

    def engine_contact_count(self) -> int | None:
        return len(self.world.contacts())

    def close(self) -> None:
        if self._restore_threads is not None:
            import numba

            numba.set_num_threads(self._restore_threads)
            self._restore_threads = None


class TumbleAdapter(Adapter):
    """tumble with its default options (``default``: Numba's thread count), with its parallel kernels
    limited to ``threads`` threads (``1-thread``: like the single-threaded peers), with ``sleep=False``
    (``no-sleep``: every body stepped every step, so the speed of the solver itself is seen; PyBullet
    sleeps by default, MuJoCo does not), or, on a scene without contacts, with collision detection running
    all the same (``with-detection``: what a world whose bodies keep their shapes pays; the other
    configurations build such a scene without collision, as the peers do)."""

    engine = "tumble"

    def __init__(self, threads: int | None = None, sleep: bool = True, detection: bool = False) -> None:
        self.threads = threads
        self.options = {} if sleep else {"sleep": False}
        self.detection = detection
        self.config = ("default" if threads is None else f"{threads}-thread") + ("" if sleep else "-no-sleep")
        if self.config == "default-no-sleep":
            self.config = "no-sleep"
        if detection:
            self.config = "with-detection" if self.config == "default" else f"{self.config}-with-detection"
        self._contact_probe: tuple[bool, str] | None = None

    def available(self) -> tuple[bool, str]:
        try:
            tb = import_tumble()
        except ImportError as exc:
            return False, f"not importable ({exc})"
        missing = [name for name in ("World", "Box", "Sphere") if not hasattr(tb, name)]
        if missing:
            return False, f"not importable (tumble lacks {', '.join(missing)})"
        return True, ""

    def version(self) -> str:
        return str(getattr(import_tumble(), "__version__", "unknown"))

    def settings(self) -> dict[str, str]:
        if self.threads is None:
            threads = "Numba's default (NUMBA_NUM_THREADS)"
        else:
            threads = f"{self.threads} (numba.set_num_threads during the run)"
        return {
            "options": "World defaults" + (f", {self.options}" if self.options else ""),
            "threads": threads,
            "mass, inertia": "explicit: add_body(mass=m, inertia=diag(I))",
            "friction, restitution": "the scene's μ and e on every body (tumble: μ = √(μa μb), e = max)",
            "state reads": "world.state_arrays() after the timed loop",
        }

    def applies(self, scene: Scene) -> bool:
        return not (self.detection and scene.contacts)

    def supported(self, scene: Scene) -> tuple[bool, str]:
        if not scene.contacts:
            return True, ""
        if self._contact_probe is None:
            self._contact_probe = self._probe_contacts()
        return self._contact_probe

    @staticmethod
    def _probe_contacts() -> tuple[bool, str]:
        """Rest a box and a sphere on the ground and a box on a fixed box for 0.5 s: contacts work if
        none sinks by more than half its height."""
        from bench.scenes import Body, Ground, Scene, Shape, StaticBox

        box, ball = Shape("box", (0.2, 0.2, 0.2)), Shape("sphere", (0.1,))
        probe = Scene(
            case_id="probe", scene_id="probe", title="contact probe",
            bodies=(Body(box, 1.0, box.principal_inertia(1.0), (0.0, 0.0, 0.1)),
                    Body(ball, 1.0, ball.principal_inertia(1.0), (1.0, 0.0, 0.1)),
                    Body(box, 1.0, box.principal_inertia(1.0), (3.0, 0.0, 0.3))),
            ground=Ground(), walls=(StaticBox((0.4, 0.4, 0.2), (3.0, 0.0, 0.1)),),
            gravity=(0.0, 0.0, -9.81), dt=1.0 / 240.0, steps=120,
        )
        try:
            sim = _TumbleSim(probe)
            for _ in range(probe.steps):
                sim.step()
            z = sim.state().x[:, 2]
        except Exception as exc:  # any failure means "not yet"
            return False, f"{NO_CONTACTS_REASON} — probe: {type(exc).__name__}: {exc}"[:300]
        if not np.all(np.isfinite(z)) or np.any(z < np.array([0.05, 0.05, 0.25])):
            return False, NO_CONTACTS_REASON
        return True, ""

    def build(self, scene: Scene) -> Sim:
        return _TumbleSim(scene, self.threads, self.options, self.detection)
