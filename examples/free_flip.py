"""The Dzhanibekov effect: a box spinning about its intermediate axis flips over and over, while its
kinetic energy and angular momentum stay constant (the default integrator conserves |L| to rounding)."""

import numpy as np
from scipy.spatial.transform import Rotation

import tumble as tb

world = tb.World(gravity=(0, 0, 0))
world.add_body(tb.Box(0.2, 0.4, 0.8), density=1000.0, angular_velocity=(1e-3, 5.0, 1e-3))
traj = world.simulate(20.0, 1e-3, record_every=10)

attitude = Rotation.from_quat(traj.orientations[:, 0], scalar_first=True)   # tumble is (w, x, y, z)
spin = attitude.inv().apply(traj.angular_velocities[:, 0])[:, 1]          # ω about the body's y axis
flips = np.count_nonzero(np.diff(np.sign(spin)))
e = traj.kinetic_energy
L = np.linalg.norm(traj.angular_momentum, axis=1)
print(f"{flips} flips in {traj.times[-1]:g} s; kinetic energy drift {np.ptp(e) / e[0]:.1e}, "
      f"|L| drift {np.ptp(L) / L[0]:.1e}")
