"""Constraint rows: what the solver needs from each contact (and, later, each joint)."""
