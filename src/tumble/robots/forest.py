"""The Model's articulations: every robot's tree in one forest, with the joint-space state a step advances.

A forest is a tree with several roots, so the recursive kernels of robots/dynamics.py run over all robots of
a world at once (one call per stage, whatever the number of robots): each robot's ``Tree`` is appended with
its link, q and q̇ indices shifted. M of the forest is block diagonal and its LTDL factorization keeps the
blocks apart (``dof_parent`` is −1 at every robot's first velocity coordinate).
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np

from ..jit import njit, view
from ..solvers.velocity_solve import PGS
from .dynamics import Work, work_size, work_views
from .tree import Tree, pack_tree, tree_views

JointState = namedtuple("JointState", ["q", "qd", "tau", "q_target", "qd_target", "kp", "kd", "lower_impulse",
                                       "upper_impulse", "friction_impulse"])
"""The forest's joint-space state and controls: q (nq,), qd (nv,) [rad, m, rad/s, m/s], tau (nv,) [N m, N]
applied each step, position and velocity targets (nv,) (q_target of a revolute or prismatic coordinate; 0
elsewhere) and their gains kp (nv,) [N m/rad, N/m], kd (nv,) [N m s/rad, N s/m] (0: no motor); the impulses
(nv,) [N m s, N s] of each coordinate's lower and upper limit rows and its dry friction row in the last contact
stage (robots/step.py ``contact_stage``; 0: no row there), which warm-start the next stage's (a step without
a contact stage leaves them)."""


Scratch = namedtuple("Scratch", ["tau_total", "armature", "qdd", "qd_free", "k_q", "k_v", "q_stage", "qd_stage",
                                 "q0", "qd0", "q_saved", "qd_saved", "tau_loads", "impulses_saved"])
"""The step's joint-space scratch: tau_total, armature, qdd, qd_free (nv,); k_q (4, nq), k_v (4, nv) the RK4
slopes; q_stage, q0 (nq,), qd_stage, qd0 (nv,) its stage and start states; q_saved (nq,), qd_saved (nv,) the
state at the step's start, put back if the step goes non-finite; tau_loads (nv,) [N m, N] the generalized force of
the loads on the links' World bodies, gathered at the step's start and used by its velocity stage (robots/step.py
``gather_link_loads``), zero between steps; impulses_saved (3, nv) the lower, upper and friction impulses (the
warm starts, ``JointState``) at the step's start, put back with q and q̇."""


def state_size(nq: int, nv: int) -> int:
    return nq + 9 * nv


@njit(cache=True, inline="always")   # returns views (tree.tree_views)
def state_views(sf, nq, nv):
    """The ``JointState`` as views into its float buffer (robots/tree.py, "packed storage")."""
    return JointState(sf[:nq], sf[nq:nq + nv], sf[nq + nv:nq + 2 * nv], sf[nq + 2 * nv:nq + 3 * nv],
                      sf[nq + 3 * nv:nq + 4 * nv], sf[nq + 4 * nv:nq + 5 * nv], sf[nq + 5 * nv:nq + 6 * nv],
                      sf[nq + 6 * nv:nq + 7 * nv], sf[nq + 7 * nv:nq + 8 * nv], sf[nq + 8 * nv:nq + 9 * nv])


def scratch_size(nq: int, nv: int) -> int:
    return 4 * nv + 4 * nq + 4 * nv + 3 * (nq + nv) + nv + 3 * nv


@njit(cache=True, inline="always")   # returns views (tree.tree_views)
def scratch_views(cf, nq, nv):
    """The ``Scratch`` as views into its float buffer."""
    o = 4 * nv
    k_q = view(cf, o, (4, nq))
    o += 4 * nq
    k_v = view(cf, o, (4, nv))
    o += 4 * nv
    q_stage, qd_stage = cf[o:o + nq], cf[o + nq:o + nq + nv]
    o += nq + nv
    q0, qd0 = cf[o:o + nq], cf[o + nq:o + nq + nv]
    o += nq + nv
    return Scratch(cf[:nv], cf[nv:2 * nv], cf[2 * nv:3 * nv], cf[3 * nv:4 * nv], k_q, k_v, q_stage, qd_stage, q0,
                   qd0, cf[o:o + nq], cf[o + nq:o + nq + nv], cf[o + nq + nv:o + nq + 2 * nv],
                   view(cf, o + nq + 2 * nv, (3, nv)))


class Forest:
    """All articulations of a world (``robots``: the ``Robot`` handles in the order added) and their arrays.

    ``tree`` is the concatenated ``Tree``; ``link_body`` (L,) the World body of each link (−1: a link without
    collision shapes has none); ``state`` the ``JointState``; ``work`` the kernels' scratch."""

    def __init__(self) -> None:
        self.robots: list[Any] = []
        self.trees: list[Tree] = []
        self.tree: Tree | None = None
        self.link_body = np.zeros(0, dtype=np.int64)
        self.buffers: tuple[np.ndarray, ...] = ()
        """(tree_i, tree_f, state_f, work_f, scratch_f): the packed storage the kernels take."""
        self.state = JointState(*(np.zeros(0) for _ in JointState._fields))
        self.work: Work = work_views(np.zeros(work_size(0)), 0)
        self.offsets: list[tuple[int, int, int]] = []
        """(first link, first q, first q̇) of each robot."""
        self.excluded = np.zeros(0, dtype=np.int64)
        """Sorted body-pair keys min(a, b) << 32 | max(a, b) that detection skips (a robot's own links)."""
        self.scratch: Scratch | None = None
        self.rows: Any = None
        """The link contact stage's row scratch (robots/step.py ``_row_capacity``): its ``Rows`` views, for reading;
        ``packed_rows`` the buffers the stage takes."""
        self.packed_rows: Any = None
        self.integrator = "euler"
        """How (q, q̇) advance: "euler" (semi-implicit Euler, the default) or "rk4" (robots/step.py)."""
        self._iterations = 20
        self._tolerance = 1e-6
        self._stage_solver: Any = None
        self.stage_settings: Any = None
        """The contact stage's settings tuple of the last step (robots/step.py ``_stage_arguments``), kept while
        the step's dt is the same; None after ``iterations`` or ``tolerance`` change."""
        self.stage_args: dict[int, tuple] = {}
        """The contact stage's (key, arguments) for each contact buffer of the last steps (robots/step.py
        ``_stage_arguments``); emptied when the row scratch, the sweeps, the tolerance or the robots change."""
        self.coupled = False
        """This step's robots touch something, reach a limit or have joint friction (robots/step.py
        ``contact_stage``)."""
        self.link_bodies = np.zeros(0, dtype=np.int64)
        """The World bodies of all links."""
        self.n_link_bodies = 0
        """How many links have a World body (``link_bodies``' length, kept for ``World.step``'s quick test)."""
        self.last_rows = 0
        """Rows of the last step's link contact stage (contacts × 3 + limits)."""
        self._body_link: np.ndarray | None = None
        self.alone = False
        self.joint_friction = False
        self.free_step_entry: Any = None
        """``free_step``'s compiled entry point for this forest's argument types (``World.step``)."""
        self.loads_pending = False
        """A link body holds a load put on it since the last step (``Body.apply_force``/``apply_torque``): the next
        step gathers it (robots/step.py ``gather_link_loads``), so it does not take ``World.step``'s one-kernel
        path of a robot alone."""
        self.moves = 0
        """Counts the steps and every change of the joint state from outside a step (set q or q̇, restore, a robot
        added): ``Robot`` keeps its links' kinematics while it is unchanged."""
        self._link_arrays: Any = None
        """The link rows of the one step (``one_solve_args``), None until a step needs them."""
        self._one_solve_args: tuple = ()
        self.kept_pairs = np.zeros(0, dtype=np.int64)
        """The contact counts of this step's link pairs while the World's solve runs (robots/step.py
        ``hide_link_pairs``); ``hidden`` of them."""
        self.hidden = 0

    @property
    def iterations(self) -> int:
        """The most Gauss–Seidel sweeps of the link contact stage (solver "pgs"). Warm-started, a robot at rest takes
        one; a humanoid settling onto the ground with friction μ = 1 seldom meets the tolerance in a few hundred
        (its contacts' normal and friction rows are strongly coupled through the floating base), and 20 sweeps keep
        its links from sinking more than 0.2 mm into the ground (60: none; bench/ROBOTS.md's drop, where MuJoCo's
        soft contacts sink 14 mm)."""
        return self._iterations

    @iterations.setter
    def iterations(self, value: int) -> None:
        self._iterations = int(value)
        self._stage_solver = self.stage_settings = None
        self.stage_args.clear()

    @property
    def tolerance(self) -> float:
        """The sweeps stop once no impulse moved by more than this fraction of the largest (solver "pgs")."""
        return self._tolerance

    @tolerance.setter
    def tolerance(self, value: float) -> None:
        self._tolerance = float(value)
        self._stage_solver = self.stage_settings = None
        self.stage_args.clear()

    def stage_solver(self, settings: Any) -> tuple:
        """The link contact stage's solver settings (robots/contact_solve.py) in a World of ``settings``
        (``ContactSettings``): the World's solver, PGS with this forest's ``iterations`` and ``tolerance``, another
        with the World's iterations per sub-step times its sub-steps (the stage solves once a step) and its
        tolerance [m/s]."""
        if self._stage_solver is None:
            world = settings.solver_settings
            if isinstance(world, PGS):
                self._stage_solver = PGS(self._iterations, self._tolerance)
            else:
                self._stage_solver = type(world)(world.iterations * settings.substeps, world.tolerance)
        return self._stage_solver

    def __len__(self) -> int:
        return len(self.robots)

    @property
    def nq(self) -> int:
        return self.state.q.shape[0]

    @property
    def nv(self) -> int:
        return self.state.qd.shape[0]

    @property
    def links(self) -> int:
        return self.link_body.shape[0]

    def body_link(self, bodies: int) -> np.ndarray:
        """(bodies,) int: the link each World body carries (−1: not a link's)."""
        if self._body_link is None or self._body_link.shape[0] != bodies:
            out = np.full(bodies, -1, dtype=np.int64)
            has = self.link_body >= 0
            out[self.link_body[has]] = np.flatnonzero(has)
            self._body_link = out
        return self._body_link

    def body_removed(self, index: int) -> None:
        """World body ``index`` (not a link's) was removed and the rows after it moved up one place: the links'
        body indices and the excluded pair keys follow."""
        if not len(self.robots):
            return
        # self.link_body is a view into the packed tree buffer: updated in place, the kernels see it
        self.link_body[self.link_body > index] -= 1
        self.link_bodies = self.link_body[self.link_body >= 0]
        self.n_link_bodies = int(self.link_bodies.shape[0])
        a, b = self.excluded >> 32, self.excluded & 0xFFFFFFFF
        a, b = a - (a > index), b - (b > index)
        self.excluded = np.unique((a << 32) | b).astype(np.int64)
        self._body_link = None
        self._link_arrays = None
        self.rows = None

    def append(self, robot: Any, tree: Tree, q0: np.ndarray, link_body: np.ndarray, excluded: np.ndarray) -> None:
        """Add ``robot`` with its ``tree``, initial q ``q0`` (nq,), its links' bodies and the body-pair keys its
        links must not collide in; the arrays are rebuilt with the existing robots' state kept."""
        L0, q0_off, v0_off = self.links, self.nq, self.nv
        self.robots.append(robot)
        self.trees.append(tree)
        self.offsets.append((L0, q0_off, v0_off))
        nv = tree.S.shape[0]
        fields = []
        for name, old in zip(Tree._fields, self.tree or [None] * len(Tree._fields), strict=True):
            new = getattr(tree, name)
            if name == "parent":
                new = np.where(new >= 0, new + L0, -1)
            elif name == "q_start":
                new = new + q0_off
            elif name == "v_start":
                new = new + v0_off
            elif name == "dof_parent":
                new = np.where(new >= 0, new + v0_off, -1)
            elif name == "dof_link":
                new = new + L0
            fields.append(new if old is None else np.concatenate([old, new]))
        tree_all = Tree(*fields)
        link_body_all = np.concatenate([self.link_body, link_body]).astype(np.int64)
        s = self.state
        nq, nv_all, L = s.q.shape[0] + q0.shape[0], s.qd.shape[0] + nv, link_body_all.shape[0]
        tree_i, tree_f = pack_tree(tree_all, nq, link_body_all)
        state_f = np.zeros(state_size(nq, nv_all))
        state = state_views(state_f, nq, nv_all)
        old_v = s.qd.shape[0]
        state.q[:] = np.concatenate([s.q, q0])
        for name in JointState._fields[1:]:
            getattr(state, name)[:old_v] = getattr(s, name)
        work_f = np.zeros(work_size(L))
        scratch_f = np.zeros(scratch_size(nq, nv_all))
        self.buffers = (tree_i, tree_f, state_f, work_f, scratch_f)
        self.tree, self.link_body = tree_views(tree_i, tree_f)
        self.state = state
        self.work = work_views(work_f, L)
        self.scratch = scratch_views(scratch_f, nq, nv_all)
        self.link_bodies = self.link_body[self.link_body >= 0]
        self.n_link_bodies = int(self.link_bodies.shape[0])
        self._body_link = None
        self.excluded = np.unique(np.concatenate([self.excluded, excluded])).astype(np.int64)
        self.joint_friction = bool(np.any(self.tree.friction > 0.0))
        """Some joint has dry friction: every step takes the contact stage (its friction rows)."""
        self.alone = len(self.robots) == 1 and excluded.shape[0] == (self.link_bodies.shape[0] * (
            self.link_bodies.shape[0] - 1)) // 2 and not self.joint_friction
        """One robot whose links never collide with each other and whose joints have no dry friction: with no other
        body, a step needs no contact stage (``World.step``'s one-kernel path)."""
        self.free_step_entry = None
        """``free_step``'s compiled entry point for this forest's argument types, once the first call found it."""
        self.rows = None
        self.packed_rows = None
        self.stage_args.clear()
        n = self.nv
        self.M = np.zeros((n, n))
        self._link_arrays = None

    def one_solve_args(self, bodies: int, pairs: int, slots: int, link_contacts: int) -> tuple:
        """(buffers, M, LinkArrays): the robots as the one time-stepping step takes them (methods/timestepping.py
        ``contact_step``, integration/articulation.py), the link rows (constraints/link_rows.py) grown by doubling
        to hold a step of ``link_contacts`` contacts that touch a link among ``pairs`` pairs and ``slots`` slots of
        a world of ``bodies`` bodies: three rows per contact, three per pair's torsional and rolling rows (at most
        one pair per contact) and three per coordinate (its limits and dry friction). Allocates only on growth."""
        from ..constraints.link_rows import LinkArrays

        rows = 6 * link_contacts + 3 * self.nv
        have = self._link_arrays
        if (have is None or have.J.shape[0] < rows or have.slot_row.shape[0] < slots
                or have.pair_row.shape[0] < pairs or have.body_link.shape[0] != bodies):
            R = max(rows, 2 * (0 if have is None else have.J.shape[0]), 16)
            S = max(slots, 2 * (0 if have is None else have.slot_row.shape[0]), 16)
            P = max(pairs, 2 * (0 if have is None else have.pair_row.shape[0]), 16)
            nv = self.nv
            lo = np.zeros(self.links, dtype=np.int64)
            hi = np.zeros(self.links, dtype=np.int64)
            ends = [v for _, _, v in self.offsets[1:]] + [nv]
            for (first_link, _, first_v), end_v, tree in zip(self.offsets, ends, self.trees, strict=True):
                lo[first_link:first_link + tree.parent.shape[0]] = first_v
                hi[first_link:first_link + tree.parent.shape[0]] = end_v
            self._link_arrays = LinkArrays(
                J=np.zeros((R, nv)), Z=np.zeros((R, nv)), row_lo=np.zeros(R, dtype=np.int64),
                row_hi=np.zeros(R, dtype=np.int64), slot_row=np.full(S, -1, dtype=np.int64),
                pair_row=np.full(P, -1, dtype=np.int64), body_link=self.body_link(bodies), link_lo=lo, link_hi=hi,
                qd_start=np.zeros(nv), qd_pseudo=np.zeros(nv), zero3=np.zeros((3, 3)),
                counts=np.array([0, 0, -1], dtype=np.int64), row_dof=np.zeros(R, dtype=np.int64),
                row_kind=np.zeros(R, dtype=np.int64), row_bound=np.zeros(R), row_target=np.zeros(R),
                row_lam=np.zeros(R), row_mass=np.zeros(R), joint_impulse=np.zeros((2, 3, nv)),
                qd_before=np.zeros(nv), u_before=np.zeros(nv))
            self._one_solve_args = (self.buffers, self.M, self._link_arrays)
        return self._one_solve_args
