"""The robots' stages inside the one time-stepping step (methods/timestepping.py ``contact_step``; issue 49).

A robot advances in the same sub-steps as the bodies, and its contacts are rows of the same solve
(constraints/link_rows.py). Per step and sub-step h [s]:

    ``tree_begin``     the start kept (q, q̇ and the warm starts, put back if the step goes non-finite), the loads on
                       the links' World bodies gathered as joint forces (robots/step.py ``gather_link_loads``),
                       q̇ at the start kept (the rows' approach velocity), M factored (``tree_factor``)
    ``tree_velocity``  q̇ ← q̇ + h M⁻¹ (τ − C q̇ − g) with M the CRBA's and C q̇ + g the RNEA's at q̈ = 0
                       (Featherstone §6.1), joint damping and the PD motors implicit (M + h D on the diagonal:
                       robots/step.py ``joint_forces``); then the robots' limit and dry friction rows
                       (link_rows ``tree_rows``)
    (the contact rows, the velocity solve, the position correction: solvers/, with the link sides)
    ``tree_position``  q ← q ⊕ h q̇ and, with the split impulse, q ⊕ h q̇_pseudo (robots/step.py
                       ``position_stage``); the links' World bodies placed at the new q (``write_bodies``) and M
                       factored there (``tree_factor``), for the rows refreshed at the new pose
    ``tree_end``       the limit and friction impulses of the step kept in the joint state (the next step's warm
                       start: a sub-step's share of them), the loads used, the links' bodies awake; a non-finite q
                       or q̇ reported

M = M(q) + armature + h damping + the motors' implicit share, factored M = Lᵀ D L (Featherstone Table 6.3): the
velocity stage and every link row (Z = M⁻¹ Jᵀ) use the same matrix, so that the impulses the solve finds are
those of the implicit step.

Each function takes ``links``: None in a world without robots (then it compiles to nothing), or the
``link_rows.LinkRows`` that ``link_context`` builds from the forest's packed buffers.
"""

from __future__ import annotations

from numba import types

from ..constraints.link_rows import (
    LinkRows,
    carry_tree_impulses,
    keep_tree_impulses,
    store_tree_impulses,
    to_joint_coordinates,
    to_solve_coordinates,
    tree_first,
    tree_rows,
)
from ..jit import overload
from ..robots.dynamics import FLOATING, crba, kinematics, l_times, ltdl_factor, ltdl_solve, rnea
from ..robots.step import (
    _non_finite,
    _save,
    _unpack,
    free_joint_world_rate,
    gather_link_loads,
    joint_forces,
    position_stage,
    turn_back,
    write_bodies,
)


def link_context(robots):
    """None, or the ``LinkRows`` of robots = (Forest.buffers, M (nv, nv), LinkArrays). Kernels only."""
    raise NotImplementedError("resolved by Numba inside kernels")


@overload(link_context)
def _link_context(robots):
    if isinstance(robots, types.NoneType):
        return lambda robots: None

    def impl(robots):
        buffers, M, rows = robots
        tree, link_body, st, work, sc = _unpack(buffers)
        return LinkRows(tree, link_body, st, work, sc, M, rows)

    return impl


def tree_factor(links, h):
    """M of the current joint state, with the implicit terms of a sub-step h [s], LTDL-factored in place (module
    docstring); the joint forces τ of the state in sc.tau_total. Kernels only."""
    raise NotImplementedError("resolved by Numba inside kernels")


@overload(tree_factor)
def _tree_factor(links, h):
    if isinstance(links, types.NoneType):
        return lambda links, h: None

    def impl(links, h):
        tree, st, work, sc, M = links.tree, links.st, links.work, links.sc, links.M
        if work.flags[0] == 0.0:
            kinematics(tree, st.q, work)
            work.flags[0] = 2.0
        joint_forces(tree, st, h, sc.tau_total, sc.armature, sc.tau_loads)
        crba(tree, work, M)
        for d in range(M.shape[0]):
            M[d, d] += sc.armature[d]
        ltdl_factor(tree.dof_parent, M)

    return impl


def tree_begin(links, state, h, substeps):
    """The step's start (module docstring): ``state`` the World's BodyState (the links' bodies' loads), h the
    sub-step [s] of ``substeps``. Kernels only."""
    raise NotImplementedError("resolved by Numba inside kernels")


@overload(tree_begin)
def _tree_begin(links, state, h, substeps):
    if isinstance(links, types.NoneType):
        return lambda links, state, h, substeps: None

    def impl(links, state, h, substeps):
        tree, st, work, sc, rows = links.tree, links.st, links.work, links.sc, links.rows
        _save(st, sc)
        gather_link_loads(tree, work, st.q, links.link_body, state.force, state.torque, sc.tau_loads)
        for d in range(st.qd.shape[0]):
            rows.qd_start[d] = st.qd[d]
            rows.qd_pseudo[d] = 0.0
        rows.counts[0] = 0
        rows.counts[1] = tree_first(rows)
        rows.counts[2] = -1
        carry_tree_impulses(links, substeps)
        tree_factor(links, h)
        l_times(tree.dof_parent, links.M, rows.qd_start, 0, st.qd.shape[0])   # (the solve's coordinates)

    return impl


def tree_velocity(links, gravity, h, baumgarte, max_push):
    """The velocity stage of a sub-step h [s] with M factored (module docstring), then the robots' own rows
    (link_rows ``tree_rows``: baumgarte and max_push [rad/s or m/s] of a limit's push). Kernels only."""
    raise NotImplementedError("resolved by Numba inside kernels")


@overload(tree_velocity)
def _tree_velocity(links, gravity, h, baumgarte, max_push):
    if isinstance(links, types.NoneType):
        return lambda links, gravity, h, baumgarte, max_push: None

    def impl(links, gravity, h, baumgarte, max_push):
        tree, st, work, sc, M = links.tree, links.st, links.work, links.sc, links.M
        qdd, bias = sc.qdd, sc.qd_free
        nv = qdd.shape[0]
        for d in range(nv):
            qdd[d] = 0.0
        rnea(tree, work, st.qd, qdd, gravity, bias)   # C q̇ + g
        for d in range(nv):
            qdd[d] = sc.tau_total[d] - bias[d]
        ltdl_solve(tree.dof_parent, M, qdd)
        for d in range(nv):
            bias[d] = st.qd[d] + h * qdd[d]
        free_joint_world_rate(tree, st.qd, bias, h)
        for d in range(nv):
            st.qd[d] = bias[d]
        tree_rows(links, h, baumgarte, max_push)
        to_solve_coordinates(links)

    return impl


def tree_position(links, h, state):
    """The position stage of a sub-step h [s] (module docstring); ``state`` the World's BodyState, whose link
    bodies are placed. Kernels only."""
    raise NotImplementedError("resolved by Numba inside kernels")


@overload(tree_position)
def _tree_position(links, h, state):
    if isinstance(links, types.NoneType):
        return lambda links, h, state: None

    def impl(links, h, state):
        tree, st, work, sc, rows = links.tree, links.st, links.work, links.sc, links.rows
        keep_tree_impulses(links)
        to_joint_coordinates(links)
        position_stage(tree, st.q, st.qd, h)
        pseudo = False
        for d in range(st.qd.shape[0]):
            sc.qd_stage[d] = rows.qd_pseudo[d]
            pseudo = pseudo or rows.qd_pseudo[d] != 0.0
            rows.qd_pseudo[d] = 0.0
        if pseudo:   # (a correction of the pose: the pseudo-velocities, turned as position_stage turns q̇, dropped)
            position_stage(tree, st.q, sc.qd_stage, h)
            # a free joint's velocities are in its body axes, which the pseudo turn exp(h [ω_p]) turned: turned
            # back, so that its world velocities, and the momenta, are kept (a body's are: timestepping
            # ``apply_pseudo``)
            for i in range(tree.parent.shape[0]):
                if tree.jtype[i] == FLOATING:
                    d = tree.v_start[i]
                    wx, wy, wz = sc.qd_stage[d + 3], sc.qd_stage[d + 4], sc.qd_stage[d + 5]
                    turn_back(st.qd, d, wx, wy, wz, h)
                    turn_back(st.qd, d + 3, wx, wy, wz, h)
        write_bodies(tree, work, st.q, st.qd, links.link_body, state.x, state.q, state.v, state.w)
        tree_factor(links, h)

    return impl


def tree_end(links, state):
    """The step's end (module docstring): counts[2] of the ``LinkArrays`` = the first non-finite coordinate
    (robots/step.py ``_non_finite``'s index, the robots then put back at the step's start) or −1. Kernels only."""
    raise NotImplementedError("resolved by Numba inside kernels")


@overload(tree_end)
def _tree_end(links, state):
    if isinstance(links, types.NoneType):
        return lambda links, state: None

    def impl(links, state):
        st, sc, work, rows = links.st, links.sc, links.work, links.rows
        store_tree_impulses(links)
        for d in range(st.qd.shape[0]):
            sc.tau_loads[d] = 0.0   # (used: each sub-step's velocity stage took them)
        rows.counts[2] = _non_finite(st, sc, work)
        for i in range(links.link_body.shape[0]):   # a robot never sleeps; its links' loads were gathered
            b = links.link_body[i]
            if b >= 0:
                state.awake[b] = True
                state.sleep_timer[b] = 0.0
                for e in range(3):
                    state.force[b, e] = 0.0
                    state.torque[b, e] = 0.0

    return impl
