"""PyBullet adapter (``p.DIRECT``, one physics client per build).

Peer pitfalls handled here (and stated in the tables):

- PyBullet combines a contact's friction and restitution as the PRODUCT of the two bodies' values, so every
  body, wall and the ground gets √μ and √e: each pair then gets exactly μ and e;
- bodies default to linear and angular damping 0.04: set to 0;
- mass and inertia are explicit: ``changeDynamics(mass=m, localInertiaDiagonal=I)`` in ONE call. (Giving
  ``localInertiaDiagonal`` without ``mass`` zeroes a maximal-coordinates body's mass and its state becomes
  NaN; giving ``mass`` alone afterwards resets the inertia to the collision shape's.)
- scenes without contacts (S1): bodies get no collision shape at all (the fastest correct set-up, faster
  than a zero collision mask);
- configurations: ``default`` (reduced coordinates, ``btMultiBody``) and ``maximal``
  (``useMaximalCoordinates=True``, ``btRigidBody``: 1.3–3.3× faster on multi-body scenes).
  Solver, iterations, ERP, sleeping and the restitution velocity threshold stay at PyBullet's defaults.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from bench.adapters.base import Adapter, Sim, State
from bench.scenes import Scene

__all__ = ["PyBulletAdapter"]


def _xyzw(q: tuple[float, float, float, float] | np.ndarray) -> list[float]:
    """(w, x, y, z) → PyBullet's (x, y, z, w)."""
    return [float(q[1]), float(q[2]), float(q[3]), float(q[0])]


class _PyBulletSim(Sim):
    def __init__(self, scene: Scene, maximal: bool) -> None:
        import pybullet as p

        self._p = p
        cid = p.connect(p.DIRECT)
        self.cid = cid
        p.setGravity(*scene.gravity, physicsClientId=cid)
        p.setTimeStep(scene.dt, physicsClientId=cid)
        shapes: dict[tuple, int] = {}

        def shape_for(kind: str, size: tuple[float, ...]) -> int:
            key = (kind, tuple(size))
            if key not in shapes:
                if kind == "box":
                    shapes[key] = p.createCollisionShape(p.GEOM_BOX, halfExtents=[0.5 * s for s in size],
                                                         physicsClientId=cid)
                elif kind == "sphere":
                    shapes[key] = p.createCollisionShape(p.GEOM_SPHERE, radius=size[0], physicsClientId=cid)
                else:
                    shapes[key] = p.createCollisionShape(p.GEOM_PLANE, physicsClientId=cid)
            return shapes[key]

        def material(body: int, friction: float, restitution: float) -> None:
            p.changeDynamics(body, -1, lateralFriction=math.sqrt(friction), restitution=math.sqrt(restitution),
                             physicsClientId=cid)

        if scene.ground is not None:
            g = scene.ground
            gid = p.createMultiBody(baseMass=0.0, baseCollisionShapeIndex=shape_for("plane", ()),
                                    basePosition=[0.0, 0.0, g.height], physicsClientId=cid)
            material(gid, g.friction, g.restitution)
        for w in scene.walls:
            wid = p.createMultiBody(baseMass=0.0, baseCollisionShapeIndex=shape_for("box", w.size),
                                    basePosition=list(w.position), baseOrientation=_xyzw(w.orientation),
                                    physicsClientId=cid)
            material(wid, w.friction, w.restitution)
        self.ids: list[int] = []
        for b in scene.bodies:
            shape = shape_for(b.shape.kind, b.shape.size) if scene.contacts else -1
            bid = p.createMultiBody(baseMass=b.mass, baseCollisionShapeIndex=shape, basePosition=list(b.position),
                                    baseOrientation=_xyzw(b.orientation), useMaximalCoordinates=maximal,
                                    physicsClientId=cid)
            p.changeDynamics(bid, -1, mass=b.mass, localInertiaDiagonal=list(b.inertia), linearDamping=0.0,
                             angularDamping=0.0, lateralFriction=math.sqrt(b.friction),
                             restitution=math.sqrt(b.restitution), physicsClientId=cid)
            p.resetBaseVelocity(bid, list(b.velocity), list(b.angular_velocity), physicsClientId=cid)
            self.ids.append(bid)
        self.step = functools.partial(p.stepSimulation, physicsClientId=cid)

    def state(self) -> State:
        p, cid, n = self._p, self.cid, len(self.ids)
        x, q, v, w = np.empty((n, 3)), np.empty((n, 4)), np.empty((n, 3)), np.empty((n, 3))
        for k, bid in enumerate(self.ids):
            pos, orn = p.getBasePositionAndOrientation(bid, physicsClientId=cid)
            lin, ang = p.getBaseVelocity(bid, physicsClientId=cid)
            x[k], v[k], w[k] = pos, lin, ang
            q[k] = (orn[3], orn[0], orn[1], orn[2])
        return State(x=x, q=q, v=v, w=w)

    def engine_contact_count(self) -> int | None:
        return len(self._p.getContactPoints(physicsClientId=self.cid))

    def close(self) -> None:
        if self.cid is not None and self._p.isConnected(physicsClientId=self.cid):
            self._p.disconnect(physicsClientId=self.cid)
        self.cid = None


class PyBulletAdapter(Adapter):
    """PyBullet in reduced coordinates (``default``) or maximal coordinates (``maximal``)."""

    engine = "pybullet"

    def __init__(self, maximal: bool = False) -> None:
        self.maximal = maximal
        self.config = "maximal" if maximal else "default"

    def version(self) -> str:
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("pybullet")
        except PackageNotFoundError:
            import pybullet

            return f"API {pybullet.getAPIVersion()}"

    def settings(self) -> dict[str, str]:
        return {
            "coordinates": "maximal (useMaximalCoordinates=True, btRigidBody)" if self.maximal
            else "reduced (btMultiBody, PyBullet's default)",
            "damping": "linear 0, angular 0 (PyBullet's default is 0.04)",
            "friction, restitution": "√μ and √e on every body and the ground (PyBullet multiplies the pair)",
            "mass, inertia": "explicit: changeDynamics(mass, localInertiaDiagonal) in one call",
            "solver": "defaults (sequential impulse, 50 iterations, sleeping on)",
            "no-contact scenes": "no collision shape",
        }

    def build(self, scene: Scene) -> Sim:
        return _PyBulletSim(scene, self.maximal)
