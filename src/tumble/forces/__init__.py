"""Force elements between bodies: springs (ArtiSynth notes 0.12, 0.14, 0.22)."""

from .springs import (
    AxialSpring,
    FrameSpring,
    MultiPointSpring,
    SpringArrays,
    pack_springs,
    spring_jacobian_blocks,
    spring_jacobians,
    spring_loads,
    spring_potential_energy,
)

__all__ = [
    "AxialSpring",
    "FrameSpring",
    "MultiPointSpring",
    "SpringArrays",
    "pack_springs",
    "spring_jacobian_blocks",
    "spring_jacobians",
    "spring_loads",
    "spring_potential_energy",
]
