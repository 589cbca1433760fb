"""Collision detection: world AABBs, the sweep-and-sort broadphase (Baraff II 7.2) and, later, the narrowphase."""
