"""Structure-of-arrays storage generated from the field registry (``fields.py``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .fields import Field


class ArrayGroup:
    """Arrays for one kind of entity, sized to a capacity that doubles as rows are added.

    Attributes are the full-capacity arrays named as in the registry; ``count`` rows are live.
    ``live(name)`` is one field's live rows; ``view()`` all of them as the group's container (the
    namedtuple class of ``fields.py`` given as ``container``), what stages and kernels take.
    """

    def __init__(self, fields: tuple[Field, ...], capacity: int = 16, container: Any = None) -> None:
        self.fields = fields
        self.container = container
        self._count = 0
        self._view: Any = None
        self._subviews: dict[Any, Any] = {}
        self._wholes: dict[Any, Any] = {}
        self.generation = 0
        """Counts the changes of ``count`` and of the arrays (a reallocation): what a caller built from this group's
        views (``view``, ``subview``, ``whole``) holds while it is unchanged."""
        self.capacity = max(1, capacity)
        for f in fields:
            setattr(self, f.name, np.zeros((self.capacity, *f.shape), dtype=f.dtype))

    @property
    def count(self) -> int:
        """Live rows."""
        return self._count

    @count.setter
    def count(self, value: int) -> None:
        if value > self.capacity:
            raise ValueError(f"count must be at most the capacity {self.capacity}, got {value}")
        self._count = value
        self._view = None
        self._subviews = {}
        self.generation += 1

    def live(self, name: str) -> np.ndarray:
        """The ``count`` live rows of field ``name`` (a view)."""
        return getattr(self, name)[: self._count]

    def view(self) -> Any:
        """Every field's live rows, as the group's container; made once per count and capacity, so a step that
        keeps them allocates nothing."""
        if self._view is None:
            self._view = self.container(*(getattr(self, f.name)[: self._count] for f in self.fields))
        return self._view

    def subview(self, container: Any) -> Any:
        """The live rows of the fields that the namedtuple class ``container`` names, as one: for a kernel that
        reads a few fields (a call unboxes every array it is given: ~5 ns each for a kernel without reference
        counting, ~35 ns with). Made once per count and capacity, like ``view``."""
        out = self._subviews.get(container)
        if out is None:
            out = self._subviews[container] = container(*(self.live(name) for name in container._fields))
        return out

    def whole(self, container: Any) -> Any:
        """Every row of capacity (live or not) of the fields that the namedtuple class ``container`` names, as
        one: for a kernel that writes rows before their number is known (the caller then sets ``count``, which
        keeps the rows when it does not pass the capacity). Made once per capacity."""
        out = self._wholes.get(container)
        if out is None:
            out = self._wholes[container] = container(*(getattr(self, name) for name in container._fields))
        return out

    def resize(self, count: int) -> None:
        """Make ``count`` rows live, growing by doubling; the rows' old contents are not kept."""
        if count > self.capacity:
            self._count = 0
            self.reserve(count)
        self.count = count

    def reserve(self, extra: int) -> None:
        """Make room for ``extra`` more rows, doubling the capacity as often as needed."""
        needed = self.count + extra
        if needed <= self.capacity:
            return
        capacity = self.capacity
        while capacity < needed:
            capacity *= 2
        for f in self.fields:
            old = getattr(self, f.name)
            new = np.zeros((capacity, *f.shape), dtype=f.dtype)
            new[: self.count] = old[: self.count]
            setattr(self, f.name, new)
        self.capacity = capacity
        self._view = None
        self._subviews = {}
        self._wholes = {}
        self.generation += 1

    def append(self, rows: dict[str, np.ndarray]) -> int:
        """Append rows given as {field: (k, *shape) array}; every field must be given. Returns the
        first new index. Callers validate first: this only copies."""
        k = len(next(iter(rows.values())))
        self.reserve(k)
        start = self.count
        for f in self.fields:
            getattr(self, f.name)[start:start + k] = rows[f.name]
        self.count += k
        return start

    def keep(self, mask: np.ndarray) -> None:
        """Keep the live rows where ``mask`` (count,) is True, moved up in order; the others are dropped."""
        kept = int(np.count_nonzero(mask))
        for f in self.fields:
            arr = getattr(self, f.name)
            arr[:kept] = arr[: self.count][mask]
            arr[kept: self.count] = 0
        self.count = kept

    def snapshot(self) -> dict[str, np.ndarray]:
        """Copies of the live rows of every state field (MuJoCo's mj_getState)."""
        return {f.name: self.live(f.name).copy() for f in self.fields if f.state}

    def restore(self, snap: dict[str, np.ndarray]) -> None:
        """Write back a ``snapshot`` taken with the same number of rows (mj_setState)."""
        for name, value in snap.items():
            if value.shape[0] != self.count:
                raise ValueError(f"snapshot has {value.shape[0]} rows for {name}, the world has {self.count}")
        for name, value in snap.items():
            self.live(name)[...] = value
