"""An articulation's flat arrays: the kinematic tree of a ``RobotDescription`` as the kernels of
robots/dynamics.py read it.

Link 0 is the root, joined to the world by a fixed joint at the base pose (a fixed base) or by a floating
joint (a floating base, q = (x, y, z, qw, qx, qy, qz) first). Links are in the description's depth-first
order, so every parent comes before its children, and q and q̇ are the joints' coordinates in that order
(API.md: "URDF depth-first"). The expanded parent array ``dof_parent`` gives, for every velocity
coordinate, the previous coordinate on the path to the root (Featherstone §6.5, λ for the factorization
of M without fill-in).
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np

from ..jit import njit, view
from ..math3d import quat_to_matrix
from .description import RobotDescription
from .dynamics import FIXED, FLOATING, JOINT_CODES, NQ, NV, PRISMATIC, REVOLUTE, SPHERICAL

Tree = namedtuple("Tree", ["parent", "jtype", "axis", "origin_R", "origin_p", "q_start", "v_start", "nv_link",
                           "S", "spatial_inertia", "dof_parent", "dof_link", "armature", "damping", "friction",
                           "stiffness", "spring_ref", "lower", "upper", "effort", "velocity_limit", "mass", "com",
                           "inertia", "origin_RK", "origin_RK2"])
"""The tree of L links and nv velocity coordinates: parent (L,) int (−1: the world); jtype (L,) int
(dynamics.FIXED …); axis (L, 3) unit joint axes in the joint frame; origin_R (L, 3, 3), origin_p (L, 3) [m]
each joint frame's pose in its parent link's frame; q_start, v_start, nv_link (L,) int where each joint's
coordinates start in q and q̇ and how many velocities it has; S (nv, 6) the motion-subspace column of each
velocity coordinate in its link's frame (dynamics module docstring); spatial_inertia (L, 6, 6) about each
link's origin in its frame (Featherstone (2.63)); dof_parent, dof_link (nv,) int; per velocity coordinate:
armature [kg m² or kg], damping [N m s/rad or N s/m], friction [N m or N], stiffness [N m/rad or N/m] and
spring_ref [rad or m] of a joint spring τ = −stiffness (q − spring_ref), lower, upper [rad or m] (±inf: none),
effort [N m or N] (inf: none), velocity_limit; per link: mass (L,) [kg], com (L, 3) [m] in the link frame,
inertia (L, 3, 3) [kg m²] about the COM; origin_RK, origin_RK2 (L, 3, 3) a revolute joint's origin_R K
and origin_R K² with K the cross-product matrix of its axis (zero for other joints), so that its rotation
origin_R (I + sin q K + (1 − cos q) K²) (Rodrigues) costs no matrix product per step."""


def spatial_inertia(mass: float, com: np.ndarray, inertia: np.ndarray) -> np.ndarray:
    """(6, 6) spatial inertia about a frame's origin of a body of ``mass`` [kg] with its COM at ``com`` (3,)
    [m] and ``inertia`` (3, 3) [kg m²] about the COM, all in that frame (Featherstone (2.63))."""
    cx = np.array([[0.0, -com[2], com[1]], [com[2], 0.0, -com[0]], [-com[1], com[0], 0.0]])
    out = np.zeros((6, 6))
    out[:3, :3] = inertia + mass * cx @ cx.T
    out[:3, 3:] = mass * cx
    out[3:, :3] = mass * cx.T
    out[3:, 3:] = mass * np.eye(3)
    return out


def _check_spring(desc: RobotDescription, joint: Any) -> None:
    """ValueError unless ``joint``'s spring is a finite stiffness >= 0 about a finite spring_ref, on a revolute,
    continuous or prismatic joint when the stiffness is not 0 (a spring on one coordinate)."""
    k, ref = joint.stiffness, joint.spring_ref
    where = f"{desc.source or desc.name}: joint {joint.name!r}"
    if not isinstance(k, (int, float, np.number)) or isinstance(k, bool) or not (np.isfinite(k) and k >= 0.0):
        raise ValueError(f"{where} has stiffness {k!r}; it must be a finite number >= 0 [N m/rad or N/m]")
    if not isinstance(ref, (int, float, np.number)) or isinstance(ref, bool) or not np.isfinite(ref):
        raise ValueError(f"{where} has spring_ref {ref!r}; it must be a finite number [rad or m]")
    if k > 0.0 and joint.type not in ("revolute", "continuous", "prismatic"):
        raise ValueError(f"{where} is {joint.type!r} with stiffness {k:g}: a joint spring needs a revolute, "
                         "continuous or prismatic joint")


def build_tree(desc: RobotDescription, base_position: np.ndarray, base_orientation: np.ndarray,
               fixed_base: bool) -> tuple[Tree, np.ndarray]:
    """The ``Tree`` of ``desc`` with its root at ``base_position`` (3,) [m] and ``base_orientation`` (4,)
    (w, x, y, z), and the initial q (nq,): zero joint positions, identity spherical joints, the base pose
    for a floating base. The description is already checked (robots/validate.py ``check_description``)."""
    links = desc.links
    index = {link.name: i for i, link in enumerate(links)}
    L = len(links)
    joint_of = {j.child: j for j in desc.joints}
    parent = np.full(L, -1, dtype=np.int64)
    jtype = np.full(L, FIXED, dtype=np.int64)
    axis = np.zeros((L, 3))
    axis[:, 0] = 1.0
    origin_R = np.tile(np.eye(3), (L, 1, 1))
    origin_p = np.zeros((L, 3))
    base_R = np.empty((3, 3))
    quat_to_matrix(np.asarray(base_orientation, dtype=float), base_R)
    if fixed_base:
        origin_R[0], origin_p[0] = base_R, base_position
    else:
        jtype[0] = FLOATING
    specs = [None] * L
    for i in range(1, L):
        j = joint_of[links[i].name]
        specs[i] = j
        parent[i] = index[j.parent]
        jtype[i] = JOINT_CODES[j.type]
        given = np.asarray(j.axis, dtype=float)
        scaled = given / max(1.0, float(np.max(np.abs(given))))   # (|axis|² would overflow from ~1e154)
        norm = float(np.linalg.norm(scaled))
        if not norm > 0.0 or not np.isfinite(norm):
            raise ValueError(f"{desc.source or desc.name}: joint {j.name!r} has axis {list(j.axis)}; it must be a "
                             "non-zero finite vector")
        axis[i] = scaled / norm
        _check_spring(desc, j)
        origin_R[i], origin_p[i] = j.origin_rotation, j.origin_xyz
    nq_link = np.array([NQ[c] for c in jtype], dtype=np.int64)
    nv_link = np.array([NV[c] for c in jtype], dtype=np.int64)
    q_start = np.concatenate([[0], np.cumsum(nq_link)[:-1]]).astype(np.int64)
    v_start = np.concatenate([[0], np.cumsum(nv_link)[:-1]]).astype(np.int64)
    nq, nv = int(nq_link.sum()), int(nv_link.sum())
    S = np.zeros((nv, 6))
    dof_parent = np.full(nv, -1, dtype=np.int64)
    dof_link = np.zeros(nv, dtype=np.int64)
    per_dof = {name: np.zeros(nv) for name in ("armature", "damping", "friction", "stiffness", "spring_ref")}
    lower, upper = np.full(nv, -np.inf), np.full(nv, np.inf)
    effort, velocity_limit = np.full(nv, np.inf), np.full(nv, np.inf)
    last_dof = np.full(L, -1, dtype=np.int64)   # the last velocity coordinate on the path root → link
    q0 = np.zeros(nq)
    for i in range(L):
        above = last_dof[parent[i]] if parent[i] >= 0 else -1
        code, s0, k = jtype[i], v_start[i], nv_link[i]
        for j in range(k):
            dof_parent[s0 + j] = above if j == 0 else s0 + j - 1
            dof_link[s0 + j] = i
        if code == REVOLUTE:
            S[s0, :3] = axis[i]
        elif code == PRISMATIC:
            S[s0, 3:] = axis[i]
        elif code == SPHERICAL:
            S[s0:s0 + 3, :3] = np.eye(3)
            q0[q_start[i]] = 1.0
        elif code == FLOATING:
            S[s0:s0 + 3, 3:] = np.eye(3)     # q̇ = (v, ω): linear first, as Pinocchio's free flyer
            S[s0 + 3:s0 + 6, :3] = np.eye(3)
            # the root at the base pose; another free body (MJCF) at its joint's origin (identity)
            q0[q_start[i]:q_start[i] + 3] = base_position if i == 0 else 0.0
            q0[q_start[i] + 3:q_start[i] + 7] = base_orientation if i == 0 else (1.0, 0.0, 0.0, 0.0)
        last_dof[i] = s0 + k - 1 if k else above
        spec = specs[i]
        if spec is not None and k:
            for name in per_dof:
                per_dof[name][s0:s0 + k] = getattr(spec, name)
            effort[s0:s0 + k] = spec.effort
            velocity_limit[s0:s0 + k] = spec.velocity
            if code in (REVOLUTE, PRISMATIC) and spec.type != "continuous":
                lower[s0], upper[s0] = spec.lower, spec.upper
    mass = np.array([link.mass for link in links], dtype=float)
    com = np.array([link.com for link in links], dtype=float).reshape(L, 3)
    inertia = np.array([link.inertia for link in links], dtype=float).reshape(L, 3, 3)
    inertia6 = np.array([spatial_inertia(mass[i], com[i], inertia[i]) for i in range(L)])
    origin_RK, origin_RK2 = np.zeros((L, 3, 3)), np.zeros((L, 3, 3))
    for i in np.flatnonzero(jtype == REVOLUTE):
        a = axis[i]
        K = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
        origin_RK[i], origin_RK2[i] = origin_R[i] @ K, origin_R[i] @ K @ K
    tree = Tree(parent, jtype, axis, origin_R, origin_p, q_start, v_start, nv_link, S, inertia6, dof_parent,
                dof_link, per_dof["armature"], per_dof["damping"], per_dof["friction"], per_dof["stiffness"],
                per_dof["spring_ref"], lower, upper, effort,
                velocity_limit, mass, com, inertia, origin_RK, origin_RK2)
    return tree, q0



# ---------------------------------------------------------------- packed storage
# A kernel call unboxes every array argument (~0.2 µs each): a step of a 10-link robot spent two thirds of
# its time passing the 60 arrays of Tree, JointState and Work. They are stored packed instead — one int64
# and one float64 buffer for the tree, one float64 buffer each for the state, the scratch and the work —
# and the kernels take the buffers and make their views inside (``tree_views`` …) with ``jit.view``, a few
# instructions each (Numba's ``reshape`` calls a helper: the ~45 views cost 0.8 µs per step). Inside a kernel,
# a call that passes these namedtuples passes every view as ~10 scalars (~400 for a Tree and a Work), so the
# stages of a step (kinematics, aba, velocity_stage …) are ``forceinline``: one machine-code body per step
# (a 1-link step 1.12 → 0.30 µs, 10 links 3.0 → 1.6 µs, 50 links 10.1 → 7.5 µs, the kernel alone).

_TREE_INT = ("parent", "jtype", "q_start", "v_start", "nv_link", "dof_parent", "dof_link")
_TREE_FLOAT = ("axis", "origin_R", "origin_p", "S", "spatial_inertia", "armature", "damping", "friction",
               "stiffness", "spring_ref", "lower", "upper", "effort", "velocity_limit", "mass", "com", "inertia",
               "origin_RK", "origin_RK2")
HEADER = 5
"""tree_i starts with (L, nv, nq, links with a body, coordinates with a position limit)."""


def pack_tree(tree: Tree, nq: int, link_body: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(tree_i, tree_f): the ``Tree`` (and each link's World body) in one int64 and one float64 buffer, in the
    order ``tree_views`` reads them."""
    L, nv = tree.parent.shape[0], tree.S.shape[0]
    limited = int(np.count_nonzero(np.isfinite(tree.lower) | np.isfinite(tree.upper)))
    ints = [np.array([L, nv, nq, int(np.count_nonzero(link_body >= 0)), limited], dtype=np.int64)]
    ints += [np.asarray(getattr(tree, name), dtype=np.int64).ravel() for name in _TREE_INT]
    ints.append(np.asarray(link_body, dtype=np.int64))
    floats = [np.asarray(getattr(tree, name), dtype=np.float64).ravel() for name in _TREE_FLOAT]
    return np.concatenate(ints), np.concatenate(floats)


@njit(cache=True, inline="always")   # it returns views: a function without reference counting must not
def tree_views(ti, tf):
    """The ``Tree`` (views into the buffers of ``pack_tree``) and the links' World bodies (L,)."""
    L, nv = ti[0], ti[1]
    o = HEADER
    parent = ti[o:o + L]
    o += L
    jtype = ti[o:o + L]
    o += L
    q_start = ti[o:o + L]
    o += L
    v_start = ti[o:o + L]
    o += L
    nv_link = ti[o:o + L]
    o += L
    dof_parent = ti[o:o + nv]
    o += nv
    dof_link = ti[o:o + nv]
    o += nv
    link_body = ti[o:o + L]
    f = 0
    axis = view(tf, f, (L, 3))
    f += 3 * L
    origin_R = view(tf, f, (L, 3, 3))
    f += 9 * L
    origin_p = view(tf, f, (L, 3))
    f += 3 * L
    S = view(tf, f, (nv, 6))
    f += 6 * nv
    spatial = view(tf, f, (L, 6, 6))
    f += 36 * L
    per_dof = view(tf, f, (9, nv))
    f += 9 * nv
    mass = tf[f:f + L]
    f += L
    com = view(tf, f, (L, 3))
    f += 3 * L
    inertia = view(tf, f, (L, 3, 3))
    f += 9 * L
    origin_RK = view(tf, f, (L, 3, 3))
    f += 9 * L
    origin_RK2 = view(tf, f, (L, 3, 3))
    tree = Tree(parent, jtype, axis, origin_R, origin_p, q_start, v_start, nv_link, S, spatial, dof_parent,
                dof_link, per_dof[0], per_dof[1], per_dof[2], per_dof[3], per_dof[4], per_dof[5], per_dof[6],
                per_dof[7], per_dof[8], mass, com, inertia, origin_RK, origin_RK2)
    return tree, link_body
