"""The time-stepping method's step with contacts, as one kernel (DESIGN.md "Two ways to advance time").

    velocity stage → rows (+ warm start by feature id) → Gauss–Seidel sweeps → position stage
                   → position correction → restitution → impulses stored for the next step

The rows are rebuilt for the current pose after every position stage (``contact_rows.refresh_rows``), so
that every impulse of the step, in every sub-step, the position correction and the restitution pass, acts
on both bodies at one common world point with the current inverse inertias: the contacts then conserve the
total angular momentum about any fixed point, as they conserve linear momentum (Baraff II (8-12)).

Detection has run before this kernel and filled the contact buffer. Two ways of removing penetration
without injecting energy (ArtiSynth notes 0.11; measured against each other in docs/contact.md):

- ``CORRECTION_SPLIT`` (Bullet's split impulse): the velocity sweeps are rigid; a separate sweep finds
  pseudo-velocities that remove a fraction β of each penetration beyond a slop; they move the bodies in the
  position stage and are then dropped;
- ``CORRECTION_SOFT`` (Catto's soft step, Box2D v3): the velocity sweeps use regularized rows that push
  out of penetration (frequency, damping ratio); after the position stage, rigid "relax" sweeps remove
  the push velocity again.

Shapes: ``body`` is the tuple of ``BODY_ARRAYS`` (n rows each); ``pairs`` and ``slots`` the contact
buffer's live arrays (``contact_buffer.PAIR_FIELDS`` / ``SLOT_FIELDS``); ``old`` = (pair_key,
pair_contacts, feature, point, normal_impulse, friction_impulse) of the last step.
"""

from __future__ import annotations

import numpy as np

from ..collision.sat import MAX_CONTACTS
from ..constraints.contact_rows import prepare_rows, refresh_rows
from ..integration.integrate import inertia_stage, position_stage, velocity_stage
from ..jit import njit
from ..math3d import exp_map_t, qmul_t, qrot_inv_t, qrot_t
from ..solvers import sequential_impulse as si
from ..solvers.joint_stage import joints_and_contacts_solve, joints_begin, joints_project
from ..solvers.velocity_solve import velocity_solve

BODY_ARRAYS = ("mass", "inv_mass", "principal_q", "principal_moments", "inv_principal_moments", "x", "q", "v", "w",
               "force", "torque", "inv_inertia_world", "v_pseudo", "w_pseudo", "awake")

CORRECTION_SPLIT, CORRECTION_SOFT = 0, 1

# settings (float64 array) layout
S_HERTZ, S_DAMPING, S_MAX_PUSH, S_BAUMGARTE, S_SLOP, S_RESTITUTION_THRESHOLD, S_MATCH_DISTANCE = range(7)
SETTINGS_SIZE = 7
# isettings (int64 array) layout
I_RELAX_ITERATIONS, I_CORRECTION, I_FRICTION, I_SUBSTEPS, I_FRICTION_DIRECTIONS = range(5)
# and I_JOINT_SOLVER (5), I_JOINT_PROJECTION (6), read by solvers/joint_stage.py
ISETTINGS_SIZE = 7
# stats_out layout
STAT_CONTACTS, STAT_ITERATIONS, STAT_RESIDUAL, STAT_STATUS = range(4)
STATS_SIZE = 4


@njit(cache=True)   # with reference counting: the solver it calls by overload may allocate (APGD, CG, Lemke)
def contact_step(scheme, body, pairs, slots, old, gravity, h, solver, settings, isettings, integrate_positions,
                 stats_out, joints):
    """Advance every body by h [s] with the contacts in the buffer (module docstring).

    ``scheme``: Integrator code of the velocity and position stages (SPLITTING, SYMPLECTIC_EULER or
    IMPLICIT_GYRO). ``solver``: the settings tuple of the velocity solve (solvers/velocity_solve.py; its type
    picks the solver, so each solver compiles its own specialization of this kernel). ``integrate_positions``
    False stops after the velocity solve and, with the split correction, its pseudo sweep (the ODE integrators
    then take the contact impulses as an initial kick, and move the bodies by the pseudo-velocities v_pseudo,
    w_pseudo after their step: step._kick_pseudo_move). stats_out (4,): contacts, the solver's iterations
    summed over the sub-steps, the last sub-step's residual [m/s], and the worst sub-step's status
    (velocity_solve.STATUS_*).
    """
    (mass, inv_mass, principal_q, principal_moments, inv_principal_moments, x, q, v, w, force, torque,
     inv_inertia_world, v_pseudo, w_pseudo, awake) = body
    (pair_key, pair_geom, pair_body, pair_witness, pair_contacts, pair_friction, pair_restitution, pair_awake,
     pair_radius, pair_ellipsoid) = pairs
    rounding = (pair_radius, pair_ellipsoid)
    (point, normal, depth, kind, feature, normal_impulse, friction_impulse, tangent, tangent_impulse, ang_a, ang_b,
     inv_ang_a, inv_ang_b, normal_mass, tangent_k, approach, normal_accel, recycled_from, separation,
     pseudo_impulse, anchor_a, anchor_b) = slots
    old_key, old_contacts, old_feature, old_point, old_normal_impulse, old_friction_impulse = old
    joints_begin(joints)
    substeps = isettings[I_SUBSTEPS]
    hs = h / substeps
    for i in range(v.shape[0]):     # the velocities before any load acts, for the rows' approach velocity
        for c in range(3):          # (a loop: an array-to-array slice assignment may allocate a copy)
            v_pseudo[i, c] = v[i, c]
            w_pseudo[i, c] = w[i, c]
    velocity_stage(scheme, mass, inv_mass, principal_q, principal_moments, inv_principal_moments, q, v, w, force,
                   torque, gravity, hs, inv_inertia_world, awake, substeps == 1)
    count = prepare_rows(pair_key, pair_body, pair_contacts, rounding, point, normal, depth, feature, normal_impulse,
                         friction_impulse, tangent, tangent_impulse, ang_a, ang_b, inv_ang_a, inv_ang_b, normal_mass,
                         tangent_k, approach, normal_accel, separation, recycled_from, old_key, old_contacts,
                         old_feature, old_point, old_normal_impulse, old_friction_impulse, settings[S_MATCH_DISTANCE],
                         x, q, v, w, v_pseudo, w_pseudo, hs, inv_mass, inv_inertia_world, anchor_a, anchor_b)
    correction = isettings[I_CORRECTION]
    soft = correction == CORRECTION_SOFT
    # Soft rows stay stable up to about a quarter of the sub-step rate (Catto, Box2D v3).
    hertz = min(settings[S_HERTZ], 0.25 / hs)
    bias_rate, mass_scale, impulse_scale = si.soft_coefficients(hertz, settings[S_DAMPING], hs)
    max_push = settings[S_MAX_PUSH]
    friction_model, directions = isettings[I_FRICTION], isettings[I_FRICTION_DIRECTIONS]
    rows = (pair_body, pair_contacts, pair_awake, pair_friction, normal, tangent, normal_impulse, tangent_impulse,
            ang_a, ang_b, inv_ang_a, inv_ang_b, normal_mass, tangent_k, separation, inv_mass)
    touch_band = settings[S_SLOP]
    solve_bias = (hs, soft, bias_rate, mass_scale, impulse_scale, max_push, touch_band)
    relax_bias = (hs, False, 0.0, 1.0, 0.0, 0.0, touch_band)
    iterations = 0
    residual = 0.0
    status = 0
    for sub in range(substeps):
        if sub > 0:
            velocity_stage(scheme, mass, inv_mass, principal_q, principal_moments, inv_principal_moments, q, v, w,
                           force, torque, gravity, hs, inv_inertia_world, awake, sub == substeps - 1)
        # The impulses are per sub-step: each sub-step starts from the last one's (warm start).
        si.warm_start(pair_body, pair_contacts, pair_awake, normal, tangent, normal_impulse, tangent_impulse, inv_ang_a,
                      inv_ang_b, inv_mass, v, w)
        body_stage = (x, q, v, w, inv_mass, inv_inertia_world, awake, scheme, principal_q, principal_moments,
                      inv_principal_moments)
        done, residual, ended = joints_and_contacts_solve(joints, solver, rows, solve_bias, friction_model,
                                                          directions, body_stage, hs, isettings, integrate_positions)
        iterations += done
        status = max(status, ended)   # the worst sub-step: failed > max_iterations > converged
        if not soft:
            v_pseudo[:] = 0.0
            w_pseudo[:] = 0.0
            pseudo_impulse[:] = 0.0
            for _ in range(isettings[I_RELAX_ITERATIONS]):
                si.pseudo_sweep(pair_body, pair_contacts, pair_awake, normal, pseudo_impulse, ang_a, ang_b, inv_ang_a,
                                inv_ang_b, normal_mass, separation, inv_mass, v_pseudo, w_pseudo, hs,
                                settings[S_BAUMGARTE], settings[S_SLOP])
        if not integrate_positions:
            break       # (the ODE integrators apply the pseudo-velocities after their step: step._kick_pseudo_move)
        if not soft:
            si.advance_separation(pair_body, pair_contacts, pair_awake, normal, ang_a, ang_b, separation, v_pseudo,
                                  w_pseudo, hs)
        si.advance_separation(pair_body, pair_contacts, pair_awake, normal, ang_a, ang_b, separation, v, w, hs)
        position_stage(scheme, principal_q, principal_moments, inv_principal_moments, x, q, v, w, hs, awake)
        moved = False
        if not soft:
            moved = _apply_pseudo(principal_q, principal_moments, inv_principal_moments, x, q, w, v_pseudo,
                                  w_pseudo, hs)
        joints_project(joints, body_stage, isettings)
        # The bodies have moved: the rows follow them (the relax pass, the next sub-step and the restitution
        # pass use them), with I⁻¹ at the new orientations (the next velocity stage computes the same again).
        # Rows kept from the start of the step made each body's impulse act at its own stale point with a
        # stale I⁻¹: two boxes colliding in zero gravity changed L by 0.65 % with 4 sub-steps (1e-14 with 1).
        inertia_stage(principal_q, inv_principal_moments, q, inv_inertia_world, awake)
        relax = soft and isettings[I_RELAX_ITERATIONS] > 0
        refresh_rows(pair_body, pair_contacts, pair_awake, rounding, normal, depth, tangent, anchor_a, anchor_b, x,
                     q, inv_mass, inv_inertia_world, ang_a, ang_b, inv_ang_a, inv_ang_b, normal_mass, tangent_k,
                     pseudo_impulse, w, moved, sub == substeps - 1 and not relax, pair_restitution, approach,
                     normal_accel, settings[S_RESTITUTION_THRESHOLD], hs)
        if relax:
            # the rigid relax pass, by the same solver (a tolerance of −1: every iteration runs)
            velocity_solve(solver, rows, relax_bias, friction_model, directions, isettings[I_RELAX_ITERATIONS],
                           -1.0, v, w)
    if integrate_positions:
        for _ in range(isettings[I_RELAX_ITERATIONS]):
            si.restitution_sweep(pair_body, pair_contacts, pair_awake, pair_restitution, normal, normal_impulse, ang_a,
                                 ang_b, inv_ang_a, inv_ang_b, normal_mass, approach, normal_accel, depth, inv_mass, v,
                                 w, settings[S_RESTITUTION_THRESHOLD], hs)

    for k in range(pair_contacts.shape[0]):
        for j in range(pair_contacts[k]):
            s = MAX_CONTACTS * k + j
            for c in range(3):
                friction_impulse[s, c] = (tangent_impulse[s, 0] * tangent[s, 0, c]
                                          + tangent_impulse[s, 1] * tangent[s, 1, c])
    stats_out[STAT_CONTACTS] = count
    stats_out[STAT_ITERATIONS] = iterations
    stats_out[STAT_RESIDUAL] = residual
    stats_out[STAT_STATUS] = status


@njit(cache=True, refcount=False)
def _apply_pseudo(principal_q, principal_moments, inv_principal_moments, x, q, w, v_pseudo, w_pseudo, h):
    """Move every body by its split-impulse pseudo-velocities: x ← x + h v_p, q ← exp(½ h ω_p) q, keeping
    its world spin I ω: ω ← I(q')⁻¹ I(q) ω. Returns whether any body moved.

    The pseudo move is a correction of the pose, not a physical impulse, so it must not change the angular
    momentum: turning the body's inertia under a fixed ω changed I(q) ω (two boxes started 3 cm into each
    other: L changed 7.7 % with one sub-step and no restitution). Keeping I ω is what a torque-free rotation
    does (the splitting's exact rotation keeps it too). The orbital part Σ x × M v moves by h P × (v_a − v_b)
    for a pseudo impulse P on a sliding contact; ``contact_rows.refresh_rows`` (withdraw) balances it.
    """
    moved = False
    for i in range(x.shape[0]):
        wx, wy, wz = w_pseudo[i, 0], w_pseudo[i, 1], w_pseudo[i, 2]
        if wx == 0.0 and wy == 0.0 and wz == 0.0 and v_pseudo[i, 0] == 0.0 and v_pseudo[i, 1] == 0.0 \
                and v_pseudo[i, 2] == 0.0:
            continue
        moved = True
        for k in range(3):
            x[i, k] += h * v_pseudo[i, k]
        if wx == 0.0 and wy == 0.0 and wz == 0.0:
            continue
        # the world spin I ω = Rp diag(I) Rpᵀ ω at the old orientation (Rp = q principal_q)
        pw, px, py, pz = qmul_t(q[i, 0], q[i, 1], q[i, 2], q[i, 3],
                                principal_q[i, 0], principal_q[i, 1], principal_q[i, 2], principal_q[i, 3])
        a0, a1, a2 = qrot_inv_t(pw, px, py, pz, w[i, 0], w[i, 1], w[i, 2])
        l0, l1, l2 = qrot_t(pw, px, py, pz, principal_moments[i, 0] * a0, principal_moments[i, 1] * a1,
                            principal_moments[i, 2] * a2)
        dw, dx, dy, dz = exp_map_t(wx, wy, wz, h)
        a, b, c, d = qmul_t(dw, dx, dy, dz, q[i, 0], q[i, 1], q[i, 2], q[i, 3])
        inv = 1.0 / np.sqrt(a * a + b * b + c * c + d * d)
        q[i, 0], q[i, 1], q[i, 2], q[i, 3] = a * inv, b * inv, c * inv, d * inv
        # ω' = I(q')⁻¹ (I ω) at the new orientation
        pw, px, py, pz = qmul_t(q[i, 0], q[i, 1], q[i, 2], q[i, 3],
                                principal_q[i, 0], principal_q[i, 1], principal_q[i, 2], principal_q[i, 3])
        a0, a1, a2 = qrot_inv_t(pw, px, py, pz, l0, l1, l2)
        w[i, 0], w[i, 1], w[i, 2] = qrot_t(pw, px, py, pz, inv_principal_moments[i, 0] * a0,
                                           inv_principal_moments[i, 1] * a1, inv_principal_moments[i, 2] * a2)
    return moved
