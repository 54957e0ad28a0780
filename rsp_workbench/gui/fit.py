"""Fitting what a tab shows into its room: a path elided to a label's width, a chart's range to its samples.

Shared by the Runs tab and the Results views (the shell, not one tab).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import numpy as np
from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtWidgets import QWidget

from rsp_workbench.gui.text import escape_html

FRAME_ALLOWANCE = QSize(16, 48)  # px: a window manager's frame and title bar around a window's contents
PATH_WIDTH = 360  # px: a folder path shown in running text is elided to this (the full one goes in a tooltip)


def shown_path(widget: QWidget, path: str | Path, width: int = PATH_WIDTH) -> str:
    """``path`` elided in the middle to ``width`` px of ``widget``'s font, HTML-escaped.

    A long path in a label would otherwise set the label's minimum width and widen the
    whole window; callers put the full path in a tooltip.
    """
    return escape_html(widget.fontMetrics().elidedText(str(path), Qt.TextElideMode.ElideMiddle, width))


def fit_samples(plot: Any, xs: Sequence[Any], ys: Sequence[Any], *, x_floor: float | None = 0.0,
                y_floor: float | None = 0.0, x_span: float = 1.0) -> None:
    """Range a chart of samples over the data, also when there is one sample (or one value):
    pyqtgraph's autorange then centres a zero-width range (an axis of −10…10 s, RSS below 0 MB).
    A lone time becomes ±``x_span`` around it, a lone value 0…1.25 × it; neither axis goes below
    its floor (times since start, MB, % and threads are never negative)."""
    x = np.concatenate([np.asarray(v, dtype=float).ravel() for v in xs]) if xs else np.zeros(0)
    y = np.concatenate([np.asarray(v, dtype=float).ravel() for v in ys]) if ys else np.zeros(0)
    x, y = x[np.isfinite(x)], y[np.isfinite(y)]
    if not len(x) or not len(y):
        plot.enableAutoRange()
        return
    low, high = float(x.min()), float(x.max())
    if high - low < 1e-9:
        low, high = low - x_span, high + x_span
    else:
        pad = 0.02 * (high - low)
        low, high = low - pad, high + pad
    if x_floor is not None:
        low = max(low, x_floor)
    plot.setXRange(low, high, padding=0)
    bottom, top = float(y.min()), float(y.max())
    if top - bottom < 1e-9:
        bottom, top = (0.0, top * 1.25) if top > 0 else (top - 1.0, top + 1.0)
    else:
        pad = 0.05 * (top - bottom)
        bottom, top = bottom - pad, top + pad
    if y_floor is not None:
        bottom = max(bottom, y_floor)
        top = max(top, bottom + 1.0)
    plot.setYRange(bottom, top, padding=0)


def size_for_screen(wanted: QSize, available: QRect) -> QSize:
    """The contents size of a window that would like ``wanted``: never larger than the screen's
    available area less the window frame (at 1024×700 a 1280×820 window hid its status bar)."""
    return QSize(min(wanted.width(), available.width() - FRAME_ALLOWANCE.width()),
                 min(wanted.height(), available.height() - FRAME_ALLOWANCE.height()))


def fit_to_screen(widget: QWidget, width: int, height: int) -> QSize:
    """Resize a top-level window to ``width``×``height`` or the available screen, whichever is
    smaller, and keep its top-left corner on that screen."""
    from PySide6.QtGui import QGuiApplication

    screen = widget.screen() or QGuiApplication.primaryScreen()
    if screen is None:
        widget.resize(width, height)
        return QSize(width, height)
    available = screen.availableGeometry()
    size = size_for_screen(QSize(width, height), available)
    widget.resize(size)
    if widget.isWindow() and not available.contains(widget.pos()):
        widget.move(available.topLeft())
    return size


def thin_to_pixels(x: np.ndarray, y: np.ndarray, pixels: int, lo: float | None = None,
                   hi: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The points of a curve sorted by ``x`` that can be seen ``pixels`` wide between ``lo`` and
    ``hi``: per pixel column its lowest and highest point, in x order (so every dip and peak
    stays; 210 k windows drawn point by point froze the GUI for seconds). The neighbours just
    outside the range are kept so that the line runs to the edges; few points come back as they are."""
    first = 0 if lo is None else max(0, int(np.searchsorted(x, lo, "left")) - 1)
    last = len(x) if hi is None else min(len(x), int(np.searchsorted(x, hi, "right")) + 1)
    x, y = x[first:last], y[first:last]
    if len(x) <= 2 * pixels:
        return x, y
    start, stop = float(x[0]), float(x[-1])
    columns = np.minimum(((x - start) / max(stop - start, 1e-12) * pixels).astype(np.int64), pixels - 1)
    starts = np.flatnonzero(np.r_[True, columns[1:] != columns[:-1]])  # x is sorted: columns are runs
    ends = np.r_[starts[1:], len(x)]
    order = np.arange(len(x))
    low = np.minimum.reduceat(np.where(np.isfinite(y), y, np.inf), starts)
    high = np.maximum.reduceat(np.where(np.isfinite(y), y, -np.inf), starts)
    # the index of each column's min and max: the first index in the column holding that value
    at_low = np.minimum.reduceat(np.where(y == np.repeat(low, ends - starts), order, len(x)), starts)
    at_high = np.minimum.reduceat(np.where(y == np.repeat(high, ends - starts), order, len(x)), starts)
    picked = np.unique(np.concatenate([at_low, at_high, starts[:1], ends[-1:] - 1]))
    picked = picked[picked < len(x)]
    return x[picked], y[picked]
