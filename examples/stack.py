"""Ten boxes stacked on the ground stand still, fall asleep, and the ground carries their weight:
the contact forces under the bottom box sum to m g for the whole stack."""

import numpy as np

import tumble as tb

world = tb.World()
ground = world.add_ground()
boxes = [world.add_body(tb.Box(0.5, 0.5, 0.5), mass=1.0, position=(0, 0, 0.25 + 0.5 * k)) for k in range(10)]
world.simulate(3.0, 1.0 / 240.0)

c = world.contacts()
on_ground = c.body_b == ground.index                              # the fixed body is always B
print(f"top box moved {1e3 * np.linalg.norm(boxes[-1].position - (0, 0, 4.75)):.3f} mm in 3 s")
print(f"ground force {c.force[on_ground, 2].sum():.3f} N, weight of the stack {10 * 9.81:.3f} N")
print(f"bodies asleep: {world.step_stats.sleeping} of {len(boxes)}")
