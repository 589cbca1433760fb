"""A chain of 12 links hung from the world by ball joints with a payload attached to its free end, released
horizontal 1 m above the ground: it swings down, hits the ground and keeps together. The direct joint solver
holds every joint to rounding (docs/joints.md); the payload is a point mass attached by null-space reduction
(docs/attachments.md)."""

import numpy as np

import tumble as tb

world = tb.World()
world.add_ground()
links, previous = [], None
for i in range(12):
    link = world.add_body(tb.Box(0.1, 0.03, 0.03), mass=0.1, position=(0.05 + 0.1 * i, 0, 1.0))
    world.add_joint(tb.BallJoint(link, previous, anchor=(0.1 * i, 0, 1.0)))
    links.append(link)
    previous = link
world.attach_point_mass(links[-1], point=(1.2, 0, 1.0), mass=0.5)          # a payload at the free end
top = world.joints[0]

worst = 0.0
for _ in range(4):
    world.simulate(0.5, 1 / 240)
    worst = max(worst, max(j.error for j in world.joints))
    lowest = min(b.position[2] for b in links)
    print(f"t = {world.time:.1f} s: lowest link centre {lowest:.3f} m, force on the top joint "
          f"{np.linalg.norm(top.force):.2f} N")
print(f"largest joint error seen: {worst:.1e} m; chain and payload {sum(b.mass for b in links):.2f} kg")
