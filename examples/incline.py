"""A block on a tilted slab: with μ = 0.3 below tan 20° it slides at a = g (sin θ − μ cos θ);
with μ = 0.5 above it, Coulomb friction holds it still."""

import numpy as np

import tumble as tb

dt, theta, g = 1.0 / 240.0, np.radians(20.0), 9.81
tilt = (np.cos(theta / 2), 0.0, np.sin(theta / 2), 0.0)          # quaternion (w, x, y, z) about y
normal = np.array([np.sin(theta), 0.0, np.cos(theta)])

for mu in (0.3, 0.5):
    world = tb.World()
    world.add_body(tb.Box(4.0, 4.0, 0.2), orientation=tilt, fixed=True, friction=mu)
    block = world.add_body(tb.Box(0.2, 0.2, 0.2), mass=1.0, position=0.2 * normal, orientation=tilt, friction=mu)
    world.simulate(1.0, dt)
    v1 = np.linalg.norm(block.velocity)
    world.simulate(1.0, dt)
    a = np.linalg.norm(block.velocity) - v1                       # Δv over 1 s
    expected = max(0.0, g * (np.sin(theta) - mu * np.cos(theta)))
    print(f"mu = {mu}: acceleration {a:.5f} m/s², closed form {expected:.5f} m/s²")
