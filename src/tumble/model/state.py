"""The State: what a step advances (MuJoCo's mjData state, Newton's State).

The bodies' x, q, v, ω, the loads accumulated for the next step, the sleep state, and the step's per-body
scratch (``fields.BODY_STATE_FIELDS``), with the simulated time. ``snapshot``/``restore`` save and put back
what changes as time advances (MuJoCo's mj_getState/mj_setState).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .fields import BODY_STATE_FIELDS, BodyState
from .storage import ArrayGroup


class State:
    """``body``: the bodies' state rows; ``time`` [s]; ``sleeping``: bodies asleep after the last island pass
    (constraints/islands.py)."""

    def __init__(self) -> None:
        self.body = ArrayGroup(BODY_STATE_FIELDS, container=BodyState)
        self.time = 0.0
        self.sleeping = 0

    def bodies(self) -> BodyState:
        """The bodies' state, n rows (``fields.BodyState``)."""
        return self.body.view()

    def wake_all(self, inv_mass: np.ndarray) -> None:
        """Wake every moving body (``inv_mass`` (n,) the model's)."""
        awake = self.body.live("awake")
        awake[inv_mass != 0.0] = True
        self.body.live("sleep_timer")[awake] = 0.0
        self.sleeping = 0

    def snapshot(self) -> dict[str, Any]:
        return {"time": self.time, "body": self.body.snapshot()}

    def restore(self, snap: dict[str, Any]) -> None:
        self.body.restore(snap["body"])
        self.sleeping = int(np.count_nonzero(~self.body.live("awake")))
        self.time = float(snap["time"])
