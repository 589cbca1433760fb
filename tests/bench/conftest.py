"""Make the repository root importable so ``import bench`` works however pytest is started.

No ``__init__.py`` in this folder on purpose: with one, pytest's default import mode would put ``tests/`` on
``sys.path`` under the package name ``bench`` and shadow the real ``bench`` package.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
