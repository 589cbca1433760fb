"""A small pile of mixed shapes falls onto the ground; the run is saved as a trajectory and as a
self-contained HTML replay (open examples-out/pile.html in any browser, no server needed)."""

import numpy as np

import tumble as tb

rng = np.random.default_rng(1)
world = tb.World()
world.add_ground(friction=0.6)
shapes = [tb.Box(0.2, 0.15, 0.1), tb.Sphere(0.08), tb.Capsule(0.05, 0.15), tb.Cylinder(0.07, 0.12)]
for k in range(24):
    world.add_body(shapes[k % 4], density=800.0, position=(*rng.uniform(-0.3, 0.3, 2), 0.3 + 0.15 * k),
                   angular_velocity=rng.normal(size=3), name=f"body {k}")

traj = world.simulate(2.0, 1.0 / 240.0, record_every=4, record_contacts=True)
traj.save("examples-out/pile.npz")                                # loads with allow_pickle=False
print("wrote", traj.to_html("examples-out/pile.html", title="a small pile"))
print(f"{traj.contact_count[-1]} contacts at the end, deepest {1e3 * traj.max_penetration.max():.2f} mm")
