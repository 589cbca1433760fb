"""MuJoCo adapter: an MJCF model generated from the neutral scene description.

Modelling choices (stated in the tables):

- every dynamic body is a ``<body>`` with a ``<freejoint/>`` and an explicit ``<inertial>`` (the scene's
  mass and principal inertia, ``inertiafromgeom="false"``), so MuJoCo computes no mass properties itself;
- the ground is a plane geom and the walls are box geoms of the world body;
- friction: every geom gets the scene's μ (MuJoCo takes the max of the pair, which is then μ); condim 3,
  or condim 1 where μ = 0;
- MuJoCo has no coefficient of restitution. A scene with e > 0 gets ``solref = (0.02 s, ζ)`` on every geom,
  with ζ the damping ratio of a linear spring–damper whose coefficient of restitution is e:
  ``e = exp(−ζπ/√(1−ζ²))``, i.e. ``ζ = −ln e / √(π² + ln² e)`` (0.2155 for e = 0.5). Scenes with e = 0 keep
  MuJoCo's default ``solref = (0.02, 1)`` (critically damped, no bounce);
- scenes without contacts (S1): ``contype = conaffinity = 0`` on every geom and ``<flag contact="disable"/>``
  (the flag skips the broadphase too: about 1.8× faster on S1 than contype = 0 alone);
- ``<size memory=...>`` grows with the body count so 4096–8000 bodies and their contacts fit;
- configurations: ``default`` (Newton solver) and ``CG`` (conjugate gradient, MuJoCo's fast option for
  piles). Integrator, cone, tolerance and iterations stay at MuJoCo's defaults.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from bench.adapters.base import Adapter, Sim, State
from bench.geometry import quat_conj_rotate, quat_to_matrix
from bench.scenes import Scene

__all__ = ["MujocoAdapter", "mjcf", "damping_ratio_for_restitution"]

SOLREF_TIMECONST = 0.02
"""s, MuJoCo's default contact time constant, kept for the restitution model."""


def damping_ratio_for_restitution(e: float) -> float:
    """ζ of a linear spring–damper contact whose coefficient of restitution is ``e`` (0 < e < 1).

    From the damped oscillator's half period: ``e = exp(−ζπ/√(1−ζ²))`` ⇒ ``ζ = −ln e / √(π² + ln² e)``.
    """
    if not 0.0 < e < 1.0:
        raise ValueError(f"restitution must be in (0, 1), not {e!r}")
    le = math.log(e)
    return -le / math.sqrt(math.pi**2 + le**2)


def _f(values: Any) -> str:
    """Space-separated floats, exact (17 significant digits)."""
    return " ".join(f"{float(v):.17g}" for v in np.ravel(values))


def _memory_mb(scene: Scene) -> int:
    """Arena size for ``<size memory>``: generous per body when contacts are on (piles), small otherwise."""
    per_body_kb = 48 if scene.contacts else 8  # measured: ~17 KB per body at the end of the S2 box pile
    return max(64, math.ceil(scene.n_bodies * per_body_kb / 1024))


def mjcf(scene: Scene, solver: str = "Newton") -> str:
    """The MJCF text for ``scene`` (dynamic bodies are ``b0 … b{n-1}`` in scene order).

    Args:
        scene: the neutral description.
        solver: ``"Newton"`` (MuJoCo's default) or ``"CG"``.
    """
    mats = [(b.friction, b.restitution) for b in scene.bodies]
    if scene.ground is not None:
        mats.append((scene.ground.friction, scene.ground.restitution))
    mats += [(w.friction, w.restitution) for w in scene.walls]
    e = max((m[1] for m in mats), default=0.0)

    def material(friction: float) -> str:
        attrs = f'friction="{friction:.17g} 0.005 0.0001"'
        attrs += ' condim="1"' if friction == 0.0 else ' condim="3"'
        if e > 0.0:
            attrs += f' solref="{SOLREF_TIMECONST:g} {damping_ratio_for_restitution(e):.17g}"'
        if not scene.contacts:
            attrs += ' contype="0" conaffinity="0"'
        return attrs

    flags = "" if scene.contacts else '<flag contact="disable"/>'
    lines = [
        f'<mujoco model="tumble-bench {scene.case_id}">',
        '  <compiler angle="radian" inertiafromgeom="false"/>',
        f'  <option timestep="{scene.dt:.17g}" gravity="{_f(scene.gravity)}" solver="{solver}">{flags}</option>',
        f'  <size memory="{_memory_mb(scene)}M"/>',
        "  <worldbody>",
    ]
    if scene.ground is not None:
        g = scene.ground
        lines.append(f'    <geom name="ground" type="plane" size="0 0 1" pos="0 0 {g.height:.17g}" '
                     f"{material(g.friction)}/>")
    for k, w in enumerate(scene.walls):
        lines.append(f'    <geom name="wall{k}" type="box" size="{_f(np.array(w.size) / 2)}" pos="{_f(w.position)}" '
                     f'quat="{_f(w.orientation)}" {material(w.friction)}/>')
    for i, b in enumerate(scene.bodies):
        if b.shape.kind == "box":
            geom = f'type="box" size="{_f(np.array(b.shape.size) / 2)}"'
        else:
            geom = f'type="sphere" size="{b.shape.size[0]:.17g}"'
        lines += [
            f'    <body name="b{i}" pos="{_f(b.position)}" quat="{_f(b.orientation)}">',
            "      <freejoint/>",
            f'      <inertial pos="0 0 0" mass="{b.mass:.17g}" diaginertia="{_f(b.inertia)}"/>',
            f"      <geom {geom} {material(b.friction)}/>",
            "    </body>",
        ]
    lines += ["  </worldbody>", "</mujoco>"]
    return "\n".join(lines) + "\n"


class _MujocoSim(Sim):
    def __init__(self, scene: Scene, solver: str) -> None:
        import mujoco

        self._mj = mujoco
        self.model = mujoco.MjModel.from_xml_string(mjcf(scene, solver))
        self.data = mujoco.MjData(self.model)
        self._scene = scene
        self._n = scene.n_bodies
        self._set_initial_velocity()
        self.step = functools.partial(mujoco.mj_step, self.model, self.data)

    def _set_initial_velocity(self) -> None:
        a = self._scene.arrays
        qvel = self.data.qvel.reshape(self._n, 6)
        qvel[:, :3] = a["v"]
        qvel[:, 3:] = quat_conj_rotate(a["q"], a["w"])  # free-joint angular velocity is in the body frame
        self._mj.mj_forward(self.model, self.data)

    def reset(self) -> bool:
        self._mj.mj_resetData(self.model, self.data)  # qpos ← qpos0 (the scene's poses), all else zeroed
        self._set_initial_velocity()
        return True

    def state(self) -> State:
        qpos = self.data.qpos.reshape(self._n, 7)
        qvel = self.data.qvel.reshape(self._n, 6)
        q = qpos[:, 3:7].copy()
        w = np.einsum("nij,nj->ni", quat_to_matrix(q), qvel[:, 3:])
        return State(x=qpos[:, :3].copy(), q=q, v=qvel[:, :3].copy(), w=w)

    def engine_contact_count(self) -> int | None:
        return int(self.data.ncon)

    def warnings(self) -> list[str]:
        out = []
        for name, kind in self._mj.mjtWarning.__members__.items():
            if name == "mjNWARNING":
                continue
            count = int(self.data.warning[int(kind)].number)
            if count:
                out.append(f"{name} ×{count}")
        return out


class MujocoAdapter(Adapter):
    """MuJoCo with the Newton solver (``default``) or the CG solver (``CG``)."""

    engine = "mujoco"

    def __init__(self, solver: str = "Newton") -> None:
        if solver not in ("Newton", "CG"):
            raise ValueError(f"solver must be 'Newton' or 'CG', not {solver!r}")
        self.solver = solver
        self.config = "default" if solver == "Newton" else "CG"

    def version(self) -> str:
        import mujoco

        return str(mujoco.__version__)

    def settings(self) -> dict[str, str]:
        return {
            "solver": "Newton (default)" if self.solver == "Newton" else "CG (fast option for piles)",
            "integrator / cone": "Euler, pyramidal (defaults)",
            "mass, inertia": "explicit <inertial> (inertiafromgeom=false)",
            "friction": "μ on every geom (pair takes the max); condim 3, condim 1 where μ = 0",
            "restitution": "no coefficient in MuJoCo: modelled by solref = (0.02 s, ζ), "
                           "ζ = −ln e/√(π²+ln²e) (0.2155 for e = 0.5); default solref (0.02, 1) where e = 0",
            "no-contact scenes": 'contype = conaffinity = 0 and <flag contact="disable"/>',
            "memory": "<size memory> scaled with the body count",
        }

    def scene_notes(self, scene: Scene) -> list[str]:
        e = max([b.restitution for b in scene.bodies] + [scene.ground.restitution if scene.ground else 0.0])
        if e > 0:
            return [f"MuJoCo: e = {e:g} modelled as solref = ({SOLREF_TIMECONST:g} s, ζ = "
                    f"{damping_ratio_for_restitution(e):.4f}) (no restitution coefficient in MuJoCo)"]
        return []

    def build(self, scene: Scene) -> Sim:
        return _MujocoSim(scene, self.solver)
