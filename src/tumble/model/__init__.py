"""The data: the field registry, its storage, and the Model and State containers (DESIGN.md "Containers by
lifetime"); the contact buffers, the third container, are collision/contacts.py's."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from .model import Model
    from .state import State


def body_arrays(model: Model, state: State) -> dict[str, np.ndarray]:
    """Every body field's live rows by name, the model's and the state's (for NumPy code; kernels take the
    containers ``model.bodies()`` and ``state.bodies()``)."""
    views = {f.name: model.body.live(f.name) for f in model.body.fields}
    views.update({f.name: state.body.live(f.name) for f in state.body.fields})
    return views
