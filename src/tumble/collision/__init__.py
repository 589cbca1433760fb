"""Collision detection: world AABBs, the sweep-and-sort broadphase (Baraff II 7.2), the narrowphase by shape
pair families, and the contact buffer it fills (docs/architecture.md)."""
