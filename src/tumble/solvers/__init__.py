"""Contact and constraint solvers.

``sequential_impulse`` is the time-stepping method's solver: projected Gauss–Seidel over the contact
rows of the step's buffer, inside kernels (ArtiSynth notes 0.15–0.16).
"""
