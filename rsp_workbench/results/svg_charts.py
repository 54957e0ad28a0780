"""Small line charts as inline SVG text, for the HTML report (no JavaScript, no network, prints as drawn).

Series are downsampled to what a reader can see before they are written, as the GUI's plots
do (pyqtgraph's ``mode='peak'``): per pixel column the lowest and the highest value, so a
spike in a million windows still shows and the report stays small.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape
from typing import Any, Sequence

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


def _frame(width: int, height: int, title: str) -> list[str]:
    return [f'<svg class="chart" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
            f'role="img" xmlns="http://www.w3.org/2000/svg"><title>{escape(title)}</title>',
            f'<text x="{MARGIN_LEFT}" y="16" class="ct">{escape(title)}</text>']


def _plot_size(width: int, height: int) -> tuple[int, int]:
    return width - MARGIN_LEFT - MARGIN_RIGHT, height - MARGIN_TOP - MARGIN_BOTTOM


def _empty(parts: list[str], width: int, height: int) -> str:
    parts.append(f'<text x="{width / 2}" y="{height / 2}" text-anchor="middle" class="empty">no data</text></svg>')
    return "".join(parts)


def _x_axis(parts: list[str], ticks: list[tuple[float, str]], width: int, height: int, x_label: str) -> None:
    """Tick marks and labels (pixel x, text) under the plot, and the axis' name."""
    plot_w, plot_h = _plot_size(width, height)
    bottom = MARGIN_TOP + plot_h
    for x, text in ticks:
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{bottom}" y2="{bottom + 4}" class="axis"/>'
                     f'<text x="{x:.1f}" y="{bottom + 16}" text-anchor="middle">{text}</text>')
    parts.append(f'<text x="{MARGIN_LEFT + plot_w / 2}" y="{height - 4}" text-anchor="middle" class="al">'
                 f'{escape(x_label)}</text>')


def _y_axis(parts: list[str], y0: float, y1: float, width: int, plot_h: float, y_label: str) -> Any:
    """The plot's frame, grid lines and labels of the y axis; the value → pixel function."""
    def py(value: Any) -> Any:
        return MARGIN_TOP + plot_h - (value - y0) / (y1 - y0) * plot_h

    parts.append(f'<rect x="{MARGIN_LEFT}" y="{MARGIN_TOP}" width="{width - MARGIN_LEFT - MARGIN_RIGHT}" '
                 f'height="{plot_h}" class="frame"/>')
    for tick in nice_ticks(y0, y1, 4):
        y = py(tick)
        parts.append(f'<line x1="{MARGIN_LEFT}" x2="{width - MARGIN_RIGHT}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>'
                     f'<text x="{MARGIN_LEFT - 4}" y="{y + 4:.1f}" text-anchor="end">{_label(tick)}</text>')
    parts.append(f'<text x="12" y="{MARGIN_TOP + plot_h / 2}" text-anchor="middle" class="al" '
                 f'transform="rotate(-90 12 {MARGIN_TOP + plot_h / 2})">{escape(y_label)}</text>')
    return py


def line_chart(series: list[Series], *, title: str, x_label: str, y_label: str, width: int = 900, height: int = 200,
               y_range: tuple[float, float] | None = None, columns: int | None = None) -> str:
    """An ``<svg>`` element: the series as polylines over labelled axes, a legend in the title line.

    ``columns``: how many pixel columns the series are downsampled to (default: the plot's width)."""
    plot_w, plot_h = _plot_size(width, height)
    drawn = [(s, *peak_downsample(s.x, s.y, columns or plot_w)) for s in series]
    xs = np.concatenate([x for _, x, _ in drawn]) if drawn else np.zeros(0)
    ys = np.concatenate([y for _, _, y in drawn]) if drawn else np.zeros(0)
    parts = _frame(width, height, title)
    if not len(xs):
        return _empty(parts, width, height)
    x0, x1 = float(xs.min()), float(xs.max())
    if x1 <= x0:
        x0, x1 = x0 - 0.5, x1 + 0.5
    y0, y1 = y_range if y_range is not None else (min(0.0, float(ys.min())), float(ys.max()))
    if y1 <= y0:
        y1 = y0 + 1.0
    py = _y_axis(parts, y0, y1, width, plot_h, y_label)

    def px(value: Any) -> Any:
        """Pixel x of a value or an array of values."""
        return MARGIN_LEFT + (value - x0) / (x1 - x0) * plot_w

    _x_axis(parts, [(px(tick), _label(tick)) for tick in nice_ticks(x0, x1, 8)], width, height, x_label)
    legend_x = width - MARGIN_RIGHT
    for item, x, y in reversed(drawn):
        pixels = list(zip(px(x), py(np.clip(y, y0, y1))))
        points = " ".join(f"{a:.1f},{b:.1f}" for a, b in pixels)
        if len(x) <= MARKED_POINTS:  # few windows: each one marked (a window without a value has none)
            parts.extend(f'<circle cx="{a:.1f}" cy="{b:.1f}" r="2.2" fill="{item.colour}"/>' for a, b in pixels)
        parts.append(f'<polyline points="{points}" fill="none" stroke="{item.colour}" stroke-width="1.4"/>')
        label_w = 7 * len(item.label) + 16
        legend_x -= label_w
        parts.append(f'<rect x="{legend_x}" y="8" width="10" height="3" fill="{item.colour}"/>'
                     f'<text x="{legend_x + 13}" y="14">{escape(item.label)}</text>')
    parts.append("</svg>")
    return "".join(parts)


@dataclass(frozen=True)
class Box:
    """One box: its label under the axis and its five numbers (lowest, quartiles, highest)."""

    label: str
    low: float
    q1: float
    median: float
    q3: float
    high: float


def box_chart(boxes: list[Box], *, title: str, x_label: str, y_label: str, colour: str = PALETTE[0],
              width: int = 900, height: int = 200, y_range: tuple[float, float] | None = None) -> str:
    """Boxplots side by side (YABench's per-window boxes over the repetitions): whiskers from the
    lowest to the highest value, the box from the first to the third quartile, the median as a line."""
    parts = _frame(width, height, title)
    if not boxes:
        return _empty(parts, width, height)
    plot_w, plot_h = _plot_size(width, height)
    y0, y1 = y_range if y_range is not None else (min(0.0, min(b.low for b in boxes)), max(b.high for b in boxes))
    if y1 <= y0:
        y1 = y0 + 1.0
    py = _y_axis(parts, y0, y1, width, plot_h, y_label)
    slot = plot_w / len(boxes)
    half = max(1.0, min(12.0, slot * 0.35))
    every = max(1, math.ceil(len(boxes) / 12))  # at most a dozen labels under the axis
    for index, box in enumerate(boxes):
        x = MARGIN_LEFT + slot * (index + 0.5)
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{py(box.low):.1f}" y2="{py(box.high):.1f}" stroke="{colour}"/>'
                     f'<rect x="{x - half:.1f}" y="{py(box.q3):.1f}" width="{2 * half:.1f}" '
                     f'height="{max(0.5, py(box.q1) - py(box.q3)):.1f}" fill="{colour}" fill-opacity="0.25" '
                     f'stroke="{colour}"/><line x1="{x - half:.1f}" x2="{x + half:.1f}" y1="{py(box.median):.1f}" '
                     f'y2="{py(box.median):.1f}" stroke="{colour}" stroke-width="2"/>')
    labels = [(MARGIN_LEFT + slot * (i + 0.5), escape(b.label)) for i, b in enumerate(boxes) if i % every == 0]
    _x_axis(parts, labels, width, height, x_label)
    parts.append("</svg>")
    return "".join(parts)


@dataclass(frozen=True)
class Point:
    """A point with its spread (Heaven Fig. 3: the mean of the repetitions, their min–max as whiskers)."""

    label: str
    x: float
    y: float
    x_low: float
    x_high: float
    y_low: float
    y_high: float
    colour: str = PALETTE[0]


def scatter_chart(points: list[Point], *, title: str, x_label: str, y_label: str, width: int = 900,
                  height: int = 320) -> str:
    """Labelled points with whiskers on both axes (latency × memory of each engine in each grid cell)."""
    parts = _frame(width, height, title)
    if not points:
        return _empty(parts, width, height)
    plot_w, plot_h = _plot_size(width, height)
    x1 = max(p.x_high for p in points) * 1.08 or 1.0
    y1 = max(p.y_high for p in points) * 1.08 or 1.0
    py = _y_axis(parts, 0.0, y1, width, plot_h, y_label)

    def px(value: float) -> float:
        return MARGIN_LEFT + value / x1 * plot_w

    _x_axis(parts, [(px(tick), _label(tick)) for tick in nice_ticks(0.0, x1, 8)], width, height, x_label)
    for p in points:
        x, y = px(p.x), py(p.y)
        parts.append(f'<line x1="{px(p.x_low):.1f}" x2="{px(p.x_high):.1f}" y1="{y:.1f}" y2="{y:.1f}" stroke="{p.colour}"/>'
                     f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{py(p.y_low):.1f}" y2="{py(p.y_high):.1f}" stroke="{p.colour}"/>'
                     f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{p.colour}"/>'
                     f'<text x="{x + 6:.1f}" y="{y - 5:.1f}">{escape(p.label)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def divergence_chart(*, span: tuple[int, int], windows: Sequence[tuple[int, int]], elements: np.ndarray,
                     expected_time: int | None, actual_time: int | None, title: str, width: int = 900) -> str:
    """An ``<svg>`` timeline of a first divergence: the query's windows for the closest t0 (one row
    per phase of the slide), the stream's elements, where the oracle expected the evaluation and
    where the engine made it (times in ms, drawn in s)."""
    ordered = sorted(windows)
    # one row per window that can overlap another (ω / β of them, at most 6 drawn apart)
    rows = max(1, min(6, max((sum(1 for o, c in ordered if o <= open_ < c) for open_, _ in ordered), default=1)))
    height = MARGIN_TOP + 14 * rows + 30 + MARGIN_BOTTOM
    parts = _frame(width, height, title)
    plot_w, plot_h = _plot_size(width, height)
    start, end = span
    if end <= start:
        end = start + 1

    def px(t: float) -> float:
        return MARGIN_LEFT + (t - start) / (end - start) * plot_w

    bottom = MARGIN_TOP + plot_h
    parts.append(f'<rect x="{MARGIN_LEFT}" y="{MARGIN_TOP}" width="{plot_w}" height="{plot_h}" class="frame"/>')
    for index, (open_, close) in enumerate(ordered):
        y = MARGIN_TOP + 3 + 14 * (index % rows)
        a, b = px(max(open_, start)), px(min(close, end))
        fill = ("#90caf9", "#bbdefb")[index % 2]  # neighbours told apart where they touch
        parts.append(f'<rect x="{a:.1f}" y="{y}" width="{max(1.0, b - a):.1f}" height="10" fill="{fill}" stroke="#1565c0" '
                     f'stroke-width="0.8"><title>window {open_}–{close} ms</title></rect>')
    lane = MARGIN_TOP + 14 * rows + 14
    parts.append(f'<line x1="{MARGIN_LEFT}" x2="{MARGIN_LEFT + plot_w}" y1="{lane}" y2="{lane}" class="grid"/>')
    shown = elements[(elements >= start) & (elements <= end)]
    for t in np.unique(shown)[:2000]:  # one mark per instant, what a reader can see
        x = px(float(t))
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{lane - 6}" y2="{lane + 6}" stroke="#333" stroke-width="1"/>')
    # the expected time wide and solid, the engine's narrow and dashed on top: both show where they coincide
    for time, colour, style, label in ((expected_time, "#2e7d32", 'stroke-width="5" opacity="0.7"', "expected evaluation"),
                                       (actual_time, "#c62828", 'stroke-width="2" stroke-dasharray="5,3"', "engine's evaluation")):
        if time is None or not start <= time <= end:
            continue
        x = px(time)
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{MARGIN_TOP}" y2="{bottom}" stroke="{colour}" {style}>'
                     f'<title>{escape(label)} at {time} ms</title></line>')
    _x_axis(parts, [(px(tick * 1000.0), _label(tick)) for tick in nice_ticks(start / 1000.0, end / 1000.0, 8)],
            width, height, "application time (s): windows of the closest t0 (blue), stream elements (ticks), "
            "expected evaluation (green), the engine's (red)")
    parts.append("</svg>")
    return "".join(parts)
