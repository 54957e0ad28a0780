"""Qt bindings for the GUI: PySide6 first, then pyqtgraph (docs/design/STYLE.md).

PySide6 6.12.0 on Python 3.11 drops references to ``None``/``True`` on signal emission
(it treats them as immortal, as they only are from Python 3.12 on) and aborts the
interpreter within seconds of using a plot; ``pyproject.toml`` excludes that combination.
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")

import PySide6  # noqa: E402
from PySide6 import QtCore  # noqa: E402  (PySide6 before pyqtgraph)

if sys.version_info < (3, 12) and PySide6.__version__ == "6.12.0":  # pragma: no cover - guarded by the pin
    raise ImportError(
        "PySide6 6.12.0 crashes on Python 3.11 (reference-count bug on signal emission); "
        "reinstall with ./install.sh, which picks a working PySide6"
    )

import pyqtgraph as pg  # noqa: E402

pg.setConfigOptions(antialias=False, background="w", foreground="k")  # antialiasing costs 3x per frame

__all__ = ["QtCore", "pg"]
