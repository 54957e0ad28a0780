"""Small line charts as inline SVG text, for the HTML report (no JavaScript, no network, prints as drawn).

Series are downsampled to what a reader can see before they are written, as the GUI's plots
do (pyqtgraph's ``mode='peak'``): per pixel column the lowest and the highest value, so a
spike in a million windows still shows and the report stays small.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape
from typing import Any

import numpy as np

#: Colours of the series (the GUI's palette order: engines keep their colour across charts).
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf")
MARGIN_LEFT, MARGIN_RIGHT, MARGIN_TOP, MARGIN_BOTTOM = 56, 12, 26, 34
MARKED_POINTS = 60  # series with at most this many points show each point


@dataclass(frozen=True)
class Series:
    """One line: its label in the legend, x and y values (NaN: a gap), its colour."""

    label: str
    x: np.ndarray
    y: np.ndarray
    colour: str = PALETTE[0]


def peak_downsample(x: np.ndarray, y: np.ndarray, columns: int) -> tuple[np.ndarray, np.ndarray]:
    """At most ``2 * columns`` points: per column of the x range its lowest and highest value, in x order
    (NaN values are dropped). Fewer points than that are returned as they are."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    if len(x) <= 2 * columns:
        return x, y
    order = np.argsort(x, kind="stable")
    x, y = x[order], y[order]
    span = x[-1] - x[0] or 1.0
    bins = np.minimum(((x - x[0]) / span * columns).astype(np.int64), columns - 1)
    starts = np.flatnonzero(np.r_[True, bins[1:] != bins[:-1]])
    low = np.minimum.reduceat(y, starts)
    high = np.maximum.reduceat(y, starts)
    ends = np.r_[starts[1:], len(x)]
    centre = (x[starts] + x[ends - 1]) / 2
    return np.repeat(centre, 2), np.column_stack([low, high]).ravel()


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values (steps of 1, 2, 2.5 or 5 × 10^k) covering ``[low, high]``."""
    if not math.isfinite(low) or not math.isfinite(high):
        return []
    if high <= low:
        high = low + 1.0
    raw = (high - low) / max(count, 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = math.ceil(low / step - 1e-9) * step
    ticks = []
    value = first
    while value <= high + step * 1e-9:
        ticks.append(round(value, 10))
        value += step
    return ticks


def _label(value: float) -> str:
    if value == int(value) and abs(value) < 1e7:
        return f"{int(value):,}"
    return f"{value:.3g}"


def line_chart(series: list[Series], *, title: str, x_label: str, y_label: str, width: int = 900, height: int = 200,
               y_range: tuple[float, float] | None = None, columns: int | None = None) -> str:
    """An ``<svg>`` element: the series as polylines over labelled axes, a legend in the title line.

    ``columns``: how many pixel columns the series are downsampled to (default: the plot's width)."""
    plot_w = width - MARGIN_LEFT - MARGIN_RIGHT
    plot_h = height - MARGIN_TOP - MARGIN_BOTTOM
    drawn = [(s, *peak_downsample(s.x, s.y, columns or plot_w)) for s in series]
    xs = np.concatenate([x for _, x, _ in drawn]) if drawn else np.zeros(0)
    ys = np.concatenate([y for _, _, y in drawn]) if drawn else np.zeros(0)
    parts = [f'<svg class="chart" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
             f'role="img" xmlns="http://www.w3.org/2000/svg"><title>{escape(title)}</title>',
             f'<text x="{MARGIN_LEFT}" y="16" class="ct">{escape(title)}</text>']
    if not len(xs):
        parts.append(f'<text x="{width / 2}" y="{height / 2}" text-anchor="middle" class="empty">no data</text></svg>')
        return "".join(parts)
    x0, x1 = float(xs.min()), float(xs.max())
    if x1 <= x0:
        x0, x1 = x0 - 0.5, x1 + 0.5
    y0, y1 = y_range if y_range is not None else (min(0.0, float(ys.min())), float(ys.max()))
    if y1 <= y0:
        y1 = y0 + 1.0

    def px(value: Any) -> Any:
        """Pixel x of a value or an array of values."""
        return MARGIN_LEFT + (value - x0) / (x1 - x0) * plot_w

    def py(value: Any) -> Any:
        return MARGIN_TOP + plot_h - (value - y0) / (y1 - y0) * plot_h

    parts.append(f'<rect x="{MARGIN_LEFT}" y="{MARGIN_TOP}" width="{plot_w}" height="{plot_h}" class="frame"/>')
    for tick in nice_ticks(y0, y1, 4):
        y = py(tick)
        parts.append(f'<line x1="{MARGIN_LEFT}" x2="{MARGIN_LEFT + plot_w}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>'
                     f'<text x="{MARGIN_LEFT - 4}" y="{y + 4:.1f}" text-anchor="end">{_label(tick)}</text>')
    for tick in nice_ticks(x0, x1, 8):
        x = px(tick)
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{MARGIN_TOP + plot_h}" y2="{MARGIN_TOP + plot_h + 4}" '
                     f'class="axis"/><text x="{x:.1f}" y="{MARGIN_TOP + plot_h + 16}" text-anchor="middle">'
                     f'{_label(tick)}</text>')
    parts.append(f'<text x="{MARGIN_LEFT + plot_w / 2}" y="{height - 4}" text-anchor="middle" class="al">'
                 f'{escape(x_label)}</text>')
    parts.append(f'<text x="12" y="{MARGIN_TOP + plot_h / 2}" text-anchor="middle" class="al" '
                 f'transform="rotate(-90 12 {MARGIN_TOP + plot_h / 2})">{escape(y_label)}</text>')
    legend_x = width - MARGIN_RIGHT
    for item, x, y in reversed(drawn):
        points = " ".join(f"{a:.1f},{b:.1f}" for a, b in zip(px(x), py(np.clip(y, y0, y1))))
        if len(x) <= MARKED_POINTS:  # few windows: each one marked (a window without a value has none)
            parts.extend(f'<circle cx="{a:.1f}" cy="{b:.1f}" r="2.2" fill="{item.colour}"/>'
                         for a, b in zip(px(x), py(np.clip(y, y0, y1))))
        parts.append(f'<polyline points="{points}" fill="none" stroke="{item.colour}" stroke-width="1.4"/>')
        label_w = 7 * len(item.label) + 16
        legend_x -= label_w
        parts.append(f'<rect x="{legend_x}" y="8" width="10" height="3" fill="{item.colour}"/>'
                     f'<text x="{legend_x + 13}" y="14">{escape(item.label)}</text>')
    parts.append("</svg>")
    return "".join(parts)
