"""The Model: what changes only through the API (MuJoCo's mjModel, Newton's Model).

Masses and inertias, shapes and their polytopes, joints, springs, attachments, materials, gravity and every
setting. The World (the API layer) writes it as bodies, joints and springs are added, removed or changed;
the stages only read it. ``version`` counts the changes of bodies and shapes (``changed``), so what a method
derives from them (a collision detector, island scratch) is rebuilt when it moves on; joints and springs
coming or going drop what the model packed from them (``constraints_changed``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..collision.polytope import PolytopeTable
from ..robots.forest import Forest
from .fields import BODY_MODEL_FIELDS, GEOM_FIELDS, BodyModel, Geometry, Polytopes
from .joint_set import JointSet
from .settings import ContactSettings
from .storage import ArrayGroup


class Model:
    """The bodies' parameters (``body``: ``fields.BODY_MODEL_FIELDS``), their shapes (``geom``:
    ``GEOM_FIELDS``; ``polytopes``, the packed polytope tables), the joints (``joints``), springs
    (``springs``) and attachments (``attachments``), and the settings: ``gravity`` (3,) [m/s²] world,
    ``settings`` (the contact solver's), ``contact_margin`` [m], ``integrator`` (an ``Integrator`` code),
    ``event_settings`` (the event-driven method's, None for time-stepping).

    The containers kernels take: ``bodies()``, ``geometry()``, ``polytope_tables()``; ``spring_arrays()``
    and ``island_edges()`` are derived and cached until the next ``changed()``.
    """

    def __init__(self, gravity: np.ndarray, settings: ContactSettings, contact_margin: float, integrator: int,
                 event_settings: Any = None) -> None:
        self.gravity = gravity
        self.settings = settings
        self.contact_margin = contact_margin
        self.integrator = integrator
        self.event_settings = event_settings
        self.body = ArrayGroup(BODY_MODEL_FIELDS, container=BodyModel)
        self.geom = ArrayGroup(GEOM_FIELDS, container=Geometry)
        self.polytopes = PolytopeTable()
        self.joints = JointSet(direct=settings.joint_solver == "direct")
        self.springs: list[Any] = []
        self.attachments = Attachments()
        self.robots = Forest()
        """The articulations (robots/forest.py): every robot's tree, joint-space state and controls."""
        self.names: list[str | None] = []
        """Each body's name (or None), in body order."""
        self.version = 0
        self._springs_packed: Any = None
        self._edges: np.ndarray | None = None
        self._polytope_view: Polytopes | None = None

    @property
    def body_count(self) -> int:
        return self.body.count

    def excluded_pairs(self) -> np.ndarray:
        """(k,) int64 sorted body-pair keys min(a, b) << 32 | max(a, b) that detection skips: bodies joined by
        a joint made with ``collide=False`` and a robot's own links (robots/build.py)."""
        joints, robots = self.joints.excluded_pairs, self.robots.excluded
        if not robots.shape[0]:
            return joints
        if not joints.shape[0]:
            return robots
        return np.unique(np.concatenate([joints, robots]))

    def changed(self) -> None:
        """Bodies or shapes changed (added, removed, attached): drop what was derived from them; the methods
        rebuild their collision detector and island scratch (``version``)."""
        self.version += 1
        self._polytope_view = None
        self.joints.changed()
        self.constraints_changed()

    def constraints_changed(self) -> None:
        """Joints or springs were added or removed: drop the packed springs and the island edges."""
        self._springs_packed = None
        self._edges = None

    def bodies(self) -> BodyModel:
        """The bodies' parameters, n rows (``fields.BodyModel``)."""
        return self.body.view()

    def geometry(self) -> Geometry:
        """The shapes, g rows (``fields.Geometry``)."""
        return self.geom.view()

    def polytope_tables(self) -> Polytopes:
        """The packed polytope tables (``fields.Polytopes``)."""
        if self._polytope_view is None:
            tables = self.polytopes.arrays()
            self._polytope_view = Polytopes(*(tables[name] for name in Polytopes._fields))
        return self._polytope_view

    def spring_arrays(self) -> Any:
        """The springs packed for the kernels (``forces.springs.SpringArrays``), or None without springs."""
        if not self.springs:
            return None
        if self._springs_packed is None:
            from ..forces.springs import pack_springs

            self._springs_packed = pack_springs(self.springs)
        return self._springs_packed

    def island_edges(self) -> np.ndarray:
        """(k, 2) body pairs that join islands besides contacts (constraints/islands.py): every joint's two
        bodies and the consecutive bodies of every spring (−1 the world)."""
        if self._edges is None:
            edges = [self.joints.kernel_args(self.body.live("inv_mass"))[0][1]]
            for spring in self.springs:
                index = [-1 if b is None else b._index for b in spring_bodies(spring, keep_world=True)]
                edges.append(np.array(list(zip(index[:-1], index[1:], strict=True)), dtype=np.int64).reshape(-1, 2))
            self._edges = np.ascontiguousarray(np.concatenate(edges), dtype=np.int64)
        return self._edges


def spring_bodies(spring: Any, keep_world: bool = False) -> list[Any]:
    """The bodies a spring joins, in order (None, the world, left out unless ``keep_world``)."""
    bodies = list(spring.bodies) if hasattr(spring, "bodies") else [spring.a, spring.b]
    return bodies if keep_world else [b for b in bodies if b is not None]


class Attachments:
    """Attached bodies and the root masters they move with (World.attach; ArtiSynth notes 0.17–0.19), packed
    for ``constraints.attachments.sync_attached``: ``body`` (k,) and ``root`` (k,) body rows, ``position``
    (k, 3) [m] and ``orientation`` (k, 4), each attached body's pose in its root's frame. Empty without
    attachments."""

    def __init__(self) -> None:
        self.set([], [], np.zeros((0, 3)), np.zeros((0, 4)))

    def set(self, body: list[int], root: list[int], position: Any, orientation: Any) -> None:
        self.body = np.array(body, dtype=np.int64)
        self.root = np.array(root, dtype=np.int64)
        self.position = np.array(position, dtype=float).reshape(-1, 3)
        self.orientation = np.array(orientation, dtype=float).reshape(-1, 4)

    def __len__(self) -> int:
        return self.body.shape[0]
