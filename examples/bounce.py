"""A ball dropped from 1 m bounces with restitution e = 0.5: each apex is e² = 0.25 of the one before
(Baraff II (8-10): the separating velocity is −e times the closing one, and height goes with v²)."""

import tumble as tb

dt = 1.0 / 240.0
world = tb.World()                                    # gravity (0, 0, -9.81), z up, SI units
world.add_ground(restitution=0.5, friction=0.0)
ball = world.add_body(tb.Sphere(0.1), mass=1.0, position=(0, 0, 1.1), restitution=0.5, friction=0.0)

heights, rising, last = [1.0], False, ball.position[2]
for _ in range(int(3.0 / dt)):
    world.step(dt)
    z = ball.position[2]
    if rising and z < last:                           # the apex was the previous step
        heights.append(last - 0.1)
    rising, last = z > last, z
for before, after in zip(heights[:3], heights[1:4], strict=True):
    print(f"apex {after:.4f} m = {after / before:.4f} × the previous (e² = 0.25)")
