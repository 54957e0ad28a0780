"""The window timeline plot: stream lanes, expected window borders, evaluations and emissions.

The core results view. Stream elements run along application time, one lane per
station/stream, drawn as per-pixel-bucket counts (peak-preserving: every non-empty bucket
shows) computed with one ``searchsorted`` per view change (`rsp_workbench.results.stream_lanes`), so millions of
elements pan and zoom smoothly; when few elements are in view they are drawn one by one.
Below the lanes, the expected windows for the chosen t0 and border convention (filled end
= inclusive border, hollow = exclusive), windows the oracle measured as diverging in red;
above, expected evaluation instants and, through :meth:`add_engine_emissions` and
:meth:`set_reconstructed_borders`, what engines did and the borders gracious mode
reconstructed (dashed, contrasting colour, shift labelled). Clicking a window lists its
content and expected vs actual bindings with missing/extra highlighted (the side panel,
:class:`~rsp_workbench.gui.results.timeline.bindings.WindowPanel`); the rows' layout, texts and
CSV are :mod:`rsp_workbench.gui.results.timeline.model`'s.
:meth:`rsp_workbench.gui.results.timeline.view.TimelineView.load_bundle_run` shows a run of a result bundle on it
(`rsp_workbench.results.run_timeline`).

Frame budget (benchmarks/bench_gui.py): every item is created once and updated with
``setData``; all lanes are ONE ``connect='pairs'`` curve; pens are opaque (alpha-blended
lines cost ~7× more in the raster engine, which is why the grid is drawn here and not by
the axis); a refresh for an unchanged range and size is skipped. Refresh runs on a 20 Hz timer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import QSplitter, QVBoxLayout, QWidget

from rsp_workbench.core.semantics import ReportPolicy
from rsp_workbench.core.windows import WindowInstance, WindowSpec
from rsp_workbench.gui.qt import pg
from rsp_workbench.gui.results.timeline.bindings import WindowPanel
from rsp_workbench.gui.results.timeline.export import captioned
from rsp_workbench.gui.results.common import export_svg
from rsp_workbench.gui.results.timeline.model import (
    WINDOW_ROW_HEIGHT,
    RowLayout,
    density_ticks,
    element_points,
    expected_evaluations,
    markers_in_view,
    segments,
    window_marks,
    write_shown_csv,
    write_window_csv,
)
from rsp_workbench.results.stream_lanes import StreamLanes, windows_in_range

POINT_LIMIT = 5_000  # draw single elements below this many in view
WINDOW_LIMIT = 300  # draw window bars below this many in view
LANE_COLOUR = "#37474f"
WINDOW_COLOUR = (21, 101, 192)
# opaque colours, pre-blended over the white background (alpha-blended lines are slow to draw)
WINDOW_BAR_COLOUR = (99, 152, 213)  # WINDOW_COLOUR at 2/3 opacity
BORDER_LINE_COLOUR = (200, 219, 240)  # WINDOW_COLOUR at 1/4 opacity
GRID_COLOUR = (236, 236, 236)
SELECTION_COLOUR = (255, 240, 197)
DIVERGING_COLOUR = "#e53935"
EXPECTED_COLOUR = "#2e7d32"
ENGINE_COLOURS = ("#d81b60", "#ef6c00", "#8e24aa", "#00897b", "#6d4c41")
RECONSTRUCTED_COLOUR = "#ff6f00"


def _curve(colour: Any, width: float = 1, **pen: Any) -> pg.PlotCurveItem:
    """A bare ``connect='pairs'`` curve: segments (x0,y0)-(x1,y1), … in one path, no per-point checks."""
    return pg.PlotCurveItem(pen=pg.mkPen(colour, width=width, **pen), connect="pairs", antialias=False,
                            skipFiniteCheck=True)


def _empty() -> np.ndarray:
    return np.zeros(0)


class WindowTimeline(QWidget):
    """Plot + side panel. Feed it with :meth:`load`, :meth:`set_window_spec` and the overlay hooks."""

    windowSelected = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("windowTimeline")
        self.lanes = StreamLanes([], [])
        self.spec: WindowSpec | None = None
        self.evaluation_times = np.zeros(0, dtype=np.int64)
        self._evaluation_order = np.zeros(0, dtype=np.int64)  # evaluation_times[i] is the order[i]-th given
        self._evaluation_windows: Sequence[WindowInstance] = ()
        self.engine_times: dict[str, np.ndarray] = {}
        self.reconstructed: dict[str, tuple[list[tuple[int, int]], tuple[int, int]]] = {}
        self._reconstructed_arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self.reconstructed_labels: dict[str, str] = {}
        self.diverging: list[tuple[int, int]] = []
        self._diverging_arrays = (np.zeros(0), np.zeros(0), np.zeros(0, dtype=np.int64))
        self.selected: WindowInstance | None = None
        self.refresh_count = 0
        self._shown: dict[str, Any] = {}
        self._version = 0
        self._drawn_key: tuple[Any, ...] | None = None
        self._y_extent = (-1.0, 1.0)
        self._shown_diverging: list[tuple[int, int]] = []

        self.plot = pg.PlotWidget(background="w")
        self.plot.setObjectName("timelinePlot")
        self.item = self.plot.getPlotItem()
        self.item.invertY(True)
        self.item.hideButtons()
        self.item.setLabel("bottom", "application time", units="s")
        self.item.getAxis("bottom").enableAutoSIPrefix(False)
        self.item.setMouseEnabled(x=True, y=False)
        self.item.getViewBox().setLimits(yMin=-6, yMax=60)
        self.item.getAxis("left").setCacheMode(pg.QtWidgets.QGraphicsItem.CacheMode.DeviceCoordinateCache)
        # no setClipToView: it drops points of connect='pairs' segments; refresh() clips itself

        self.grid = _curve(GRID_COLOUR)  # the axis' own grid uses alpha: slow
        self.grid.setZValue(-20)
        self.density = _curve(LANE_COLOUR)
        self.points = pg.ScatterPlotItem(size=6, pen=None, brush=pg.mkBrush(LANE_COLOUR))
        self.window_bars = _curve(WINDOW_BAR_COLOUR, width=6)
        self.diverging_bars = _curve(DIVERGING_COLOUR, width=6)
        self.border_lines = _curve(BORDER_LINE_COLOUR)
        self.inclusive_ends = pg.ScatterPlotItem(size=8, pen=pg.mkPen(WINDOW_COLOUR), brush=pg.mkBrush(WINDOW_COLOUR))
        self.exclusive_ends = pg.ScatterPlotItem(size=8, pen=pg.mkPen(WINDOW_COLOUR, width=1.5), brush=pg.mkBrush("w"))
        self.expected_markers = pg.ScatterPlotItem(size=10, symbol="t", pen=None, brush=pg.mkBrush(EXPECTED_COLOUR))
        self.selection = pg.LinearRegionItem(movable=False, brush=SELECTION_COLOUR, pen=pg.mkPen((230, 150, 0), width=1))
        self.selection.setVisible(False)
        self.selection.setZValue(-10)
        for item in (self.grid, self.selection, self.border_lines, self.density, self.points, self.window_bars,
                     self.diverging_bars, self.inclusive_ends, self.exclusive_ends, self.expected_markers):
            self.item.addItem(item)
        self.engine_items: dict[str, pg.ScatterPlotItem] = {}
        self.reconstructed_items: dict[str, tuple[pg.PlotCurveItem, pg.TextItem]] = {}

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(50)  # ≤ 20 Hz
        self._timer.timeout.connect(self.refresh)
        self.item.getViewBox().sigXRangeChanged.connect(self._on_range_changed)
        self.plot.scene().sigMouseClicked.connect(self._on_click)

        self.panel = WindowPanel()
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.plot)
        splitter.addWidget(self.panel)
        splitter.setStretchFactor(0, 4)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([900, 300])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(splitter)

    def _changed(self) -> None:
        """Data changed: the next refresh redraws even if the range did not."""
        self._version += 1

    # ------------------------------------------------------------------ data in
    def load(self, lanes: StreamLanes) -> None:
        """Show a stream (see :class:`StreamLanes`); resets the view to the whole stream."""
        self.lanes = lanes
        self.selected = None
        self.selection.setVisible(False)
        self.panel.clear()
        self._changed()
        self.show_all()

    def load_elements(self, elements: Sequence[Any]) -> None:
        self.load(StreamLanes.from_elements(elements))

    def set_window_spec(self, spec: WindowSpec | None) -> None:
        """The expected windows (size, slide, t0, border convention, leading partials)."""
        self.spec = spec
        self._changed()
        self._update_axis()
        self.set_diverging_windows(self.diverging)

    def set_evaluations(self, times: Iterable[int] | np.ndarray,
                        windows: Iterable[WindowInstance] | None = None) -> None:
        """Expected evaluation instants (e.g. from :func:`rsp_workbench.core.report.evaluation_instants`),
        optionally with the window each reads (then :meth:`jump_to` selects that window).

        An array of times and a sequence of windows are taken as they are (a content-change run
        has millions of evaluations: no Python loop over them on the GUI thread)."""
        given = times if isinstance(times, np.ndarray) else np.fromiter(times, dtype=np.int64)
        self._evaluation_order = np.argsort(given, kind="stable")  # the first of equal instants first
        self.evaluation_times = given[self._evaluation_order].astype(np.int64, copy=False)
        if windows is None:
            self._evaluation_windows = ()
        else:
            self._evaluation_windows = windows if isinstance(windows, Sequence) else list(windows)
        self._changed()
        self.refresh()

    def compute_expected_evaluations(self, policy: ReportPolicy) -> int:
        """Evaluation instants of ``policy`` over the loaded stream and the current spec (window-close
        and periodic are cheap; content-change walks every element)."""
        times, windows = expected_evaluations(self.lanes, self.spec, policy)
        self.set_evaluations(times, windows)
        return len(times)

    def add_engine_emissions(self, engine: str, times: Iterable[int]) -> None:
        """Overlay one engine's emission (or evaluation) instants as markers on their own row."""
        self.engine_times[engine] = np.sort(np.fromiter(times, dtype=np.int64))
        if engine not in self.engine_items:
            colour = ENGINE_COLOURS[len(self.engine_items) % len(ENGINE_COLOURS)]
            item = pg.ScatterPlotItem(size=10, symbol="d", pen=None, brush=pg.mkBrush(colour))
            self.item.addItem(item)
            self.engine_items[engine] = item
        self._changed()
        self._update_axis()
        self.refresh()

    def set_reconstructed_borders(self, engine: str, windows: Sequence[tuple[int, int]], shift: tuple[int, int],
                                  label: str | None = None) -> None:
        """Gracious mode: the borders the engine really used (dashed), labelled with the shift (ms);
        ``label`` replaces the shift text when shifts differ between windows."""
        self.reconstructed[engine] = (list(windows), shift)
        pairs = np.asarray(list(windows), dtype=float).reshape(-1, 2)
        self._reconstructed_arrays[engine] = (pairs[:, 0], pairs[:, 1])
        self.reconstructed_labels[engine] = label or f"start {shift[0]:+d} ms, end {shift[1]:+d} ms"
        if engine not in self.reconstructed_items:
            line = _curve(RECONSTRUCTED_COLOUR, width=2, style=Qt.PenStyle.DashLine)
            text = pg.TextItem(color=RECONSTRUCTED_COLOUR, anchor=(0, 1), fill=pg.mkBrush(255, 255, 255))
            self.item.addItem(line)
            self.item.addItem(text)
            self.reconstructed_items[engine] = (line, text)
        self.reconstructed_items[engine][1].setText(
            f"{engine}: reconstructed borders (gracious), {self.reconstructed_labels[engine]}")
        self._changed()
        self._update_axis()
        self.refresh()

    def set_diverging_windows(self, windows: Sequence[tuple[int, int]]) -> None:
        """Windows the oracle measured with precision or recall < 1 (or other borders): red bars."""
        self.diverging = sorted({(int(o), int(c)) for o, c in windows})
        opens = np.array([o for o, _ in self.diverging], dtype=float)
        closes = np.array([c for _, c in self.diverging], dtype=float)
        rows = np.zeros(len(self.diverging), dtype=np.int64)
        if self.spec is not None:
            for i, (_, close) in enumerate(self.diverging):
                window = self.spec.closing_at(close)
                rows[i] = window.index if window is not None else 0
        self._diverging_arrays = (opens, closes, rows)
        self._changed()
        self.refresh()

    def clear_overlays(self) -> None:
        """Forget engines, reconstructed borders, diverging windows and bindings (a new run is shown)."""
        for item in self.engine_items.values():
            self.item.removeItem(item)
        for line, text in self.reconstructed_items.values():
            self.item.removeItem(line)
            self.item.removeItem(text)
        self.engine_items.clear()
        self.engine_times.clear()
        self.reconstructed_items.clear()
        self.reconstructed.clear()
        self._reconstructed_arrays.clear()
        self.reconstructed_labels.clear()
        self.panel.forget_bindings()
        self.diverging = []
        self._diverging_arrays = (np.zeros(0), np.zeros(0), np.zeros(0, dtype=np.int64))
        self._changed()
        self._update_axis()

    # ------------------------------------------------------------------ layout rows
    def rows(self) -> RowLayout:
        """Where the lanes, marker rows, window rows and reconstructed rows are now."""
        return RowLayout(len(self.lanes.names), self.spec, tuple(self.engine_items), tuple(self.reconstructed_items))

    def _update_axis(self) -> None:
        rows = self.rows()
        ticks = [(float(i), name) for i, name in enumerate(self.lanes.names)]
        self.item.getAxis("left").setTicks([ticks + rows.row_ticks()])
        self._y_extent = rows.extent()
        self.item.setYRange(*self._y_extent, padding=0)

    # ------------------------------------------------------------------ view
    def data_span(self) -> tuple[int, int, int]:
        """(first, last, padding) in ms: the stream with its evaluations and emissions."""
        lo, hi = self.lanes.span
        for times in (self.evaluation_times, *self.engine_times.values()):
            if len(times):
                lo, hi = min(lo, int(times[0])), max(hi, int(times[-1]))
        return lo, hi, max(1, (hi - lo) // 50)

    def show_all(self) -> None:
        """The whole stream, and the evaluations and emissions after its last element."""
        lo, hi, pad = self.data_span()
        self._update_axis()
        self.item.setXRange((lo - pad) / 1000, (hi + pad) / 1000, padding=0)
        self.refresh()

    def set_time_range(self, lo_ms: float, hi_ms: float) -> None:
        self.item.setXRange(lo_ms / 1000, hi_ms / 1000, padding=0)

    def time_range(self) -> tuple[float, float]:
        lo, hi = self.item.getViewBox().viewRange()[0]
        return lo * 1000, hi * 1000

    def window_at(self, t_ms: int) -> WindowInstance | None:
        """The window evaluated at ``t_ms`` if an expected evaluation happens then, else the earliest containing it."""
        position = int(np.searchsorted(self.evaluation_times, int(t_ms), "left"))
        if self._evaluation_windows and position < len(self.evaluation_times) \
                and self.evaluation_times[position] == int(t_ms):
            return self._evaluation_windows[int(self._evaluation_order[position])]
        if self.spec is None:
            return None
        candidates = self.spec.containing(int(t_ms))
        return candidates[0] if candidates else None

    def jump_to(self, t_ms: int) -> WindowInstance | None:
        """Centre the view on ``t_ms`` at a zoom showing a few windows; select the window at it."""
        span = 4 * (self.spec.size + self.spec.slide) if self.spec is not None else 10_000
        first, _, pad = self.data_span()
        lo = max(t_ms - span / 2, first - pad)  # never a stretch of nothing before the data (e.g. −15 s)
        self.set_time_range(lo, lo + span)
        self.refresh()
        window = self.window_at(t_ms)
        if window is not None:
            self.select_window(window)
        return window

    @Slot()
    def _on_range_changed(self) -> None:
        if not self._timer.isActive():
            self._timer.start()

    @Slot()
    def refresh(self) -> None:
        """Redraw what is in view: lane densities or points, windows, markers (skipped if nothing changed)."""
        lo, hi = self.time_range()
        pixels = max(100, int(self.plot.width()))
        key = (lo, hi, pixels, self._version)
        if key == self._drawn_key:
            return
        self._drawn_key = key
        self.refresh_count += 1
        shown: dict[str, Any] = {"range": (lo, hi)}
        slices = self.lanes.visible(lo, hi)
        in_view = sum(b - a for a, b in slices)
        if in_view <= POINT_LIMIT:
            xs, ys = element_points(self.lanes, slices)
            self.points.setData(xs, ys)
            self.density.setData(_empty(), _empty())
            shown["mode"] = "points"
            shown["points"] = (xs, ys)
        else:
            buckets = min(pixels, 3000)  # a tick every 2 px is as fine as the eye resolves
            edges, counts = self.lanes.bin_counts(lo, hi, buckets)
            self.density.setData(*density_ticks(edges, counts))
            self.points.setData([], [])
            shown["mode"] = "density"
            shown["bins"] = (edges, counts)
        shown["in_view"] = in_view
        self._draw_grid(lo, hi, pixels)
        self._draw_windows(lo, hi, shown)
        self._draw_markers(lo, hi, shown)
        self._shown = shown

    def _draw_grid(self, lo: float, hi: float, pixels: int) -> None:
        """Vertical lines at the bottom axis' major ticks."""
        levels = self.item.getAxis("bottom").tickValues(lo / 1000, hi / 1000, pixels)
        values = np.asarray(levels[0][1] if levels else [], dtype=float)
        top, bottom = self._y_extent
        self.grid.setData(np.repeat(values, 2), np.tile([top, bottom], len(values)))

    def _draw_windows(self, lo: float, hi: float, shown: dict[str, Any]) -> None:
        windows = windows_in_range(self.spec, lo, hi, WINDOW_LIMIT) if self.spec is not None else []
        shown["windows"] = windows
        self._draw_diverging(lo, hi, bool(windows))
        if not windows:
            for curve in (self.window_bars, self.border_lines):
                curve.setData(_empty(), _empty())
            for scatter in (self.inclusive_ends, self.exclusive_ends):
                scatter.setData([], [])
            return
        marks = window_marks(windows, self.rows())
        self.window_bars.setData(*marks.bars)
        self.border_lines.setData(*marks.borders)
        self.inclusive_ends.setData(*marks.inclusive_ends)
        self.exclusive_ends.setData(*marks.exclusive_ends)

    def _draw_diverging(self, lo: float, hi: float, visible: bool) -> None:
        opens, closes, indices = self._diverging_arrays
        mask = (closes >= lo) & (opens <= hi) if visible else np.zeros(len(opens), dtype=bool)
        chosen = np.nonzero(mask)[0][:WINDOW_LIMIT]
        xs = segments(opens[chosen] / 1000, closes[chosen] / 1000)
        layout = self.rows()
        ys = np.repeat([layout.window_row_y(int(i)) for i in indices[chosen]], 2)
        self.diverging_bars.setData(xs, ys.astype(float))
        self._shown_diverging = [(int(opens[i]), int(closes[i])) for i in chosen]

    def _draw_markers(self, lo: float, hi: float, shown: dict[str, Any]) -> None:
        layout = self.rows()
        rows = dict((name, y) for y, name in layout.marker_rows())

        expected = markers_in_view(self.evaluation_times, lo, hi)
        self.expected_markers.setData(expected / 1000, np.full(len(expected), rows["expected ET"]))
        shown["evaluations"] = expected
        shown["engines"] = {}
        for engine, item in self.engine_items.items():
            times = markers_in_view(self.engine_times.get(engine, np.zeros(0, dtype=np.int64)), lo, hi)
            item.setData(times / 1000, np.full(len(times), rows[engine]))
            shown["engines"][engine] = times
        shown["diverging"] = self._shown_diverging
        shown["reconstructed"] = {}
        for engine, (line, text) in self.reconstructed_items.items():
            opens, closes = self._reconstructed_arrays[engine]
            chosen = np.nonzero((closes >= lo) & (opens <= hi))[0][:WINDOW_LIMIT]
            xs = segments(opens[chosen] / 1000, closes[chosen] / 1000)
            ys = np.repeat([layout.reconstructed_row_y(engine, int(i)) for i in chosen], 2).astype(float)
            line.setData(xs, ys)
            text.setPos(lo / 1000 + (hi - lo) / 1000 * 0.01, layout.reconstructed_row_y(engine, 0) - WINDOW_ROW_HEIGHT * 0.4)
            shown["reconstructed"][engine] = [(int(opens[i]), int(closes[i])) for i in chosen]

    # ------------------------------------------------------------------ selection
    @Slot(object)
    def _on_click(self, event: Any) -> None:
        if self.spec is None:
            return
        point = self.item.getViewBox().mapSceneToView(event.scenePos())
        self.select_at(point.x() * 1000, point.y())

    def select_at(self, t_ms: float, y: float | None = None) -> WindowInstance | None:
        """Select the window at time t (on a window row: that row's window; else the earliest)."""
        if self.spec is None:
            return None
        candidates = self.spec.containing(int(t_ms))
        if not candidates:
            return None
        chosen = candidates[0]
        if y is not None and y > len(self.lanes.names) - 0.2:
            layout = self.rows()
            for window in candidates:
                if abs(layout.window_row_y(window.index) - y) < WINDOW_ROW_HEIGHT / 2:
                    chosen = window
        self.select_window(chosen)
        return chosen

    def select_window(self, window: WindowInstance) -> None:
        """Highlight a window and list its content and bindings in the side panel."""
        self.selected = window
        self.selection.setRegion((window.open / 1000, window.close / 1000))
        self.selection.setVisible(True)
        self.panel.show_window(window, self.lanes, (window.open, window.close) in self.diverging)
        self.windowSelected.emit(window)

    def binding_rows(self) -> list[tuple[str, str]]:
        """(status, the binding's full text) per row of the bindings table."""
        return self.panel.binding_rows()

    # ------------------------------------------------------------------ export
    def export_png(self, path: str | Path, width: int | None = None, title: str = "") -> Path:
        from pyqtgraph.exporters import ImageExporter

        with captioned(self, title):
            exporter = ImageExporter(self.item)
            if width:
                exporter.parameters()["width"] = width
            exporter.export(str(path))
        return Path(path)

    def export_svg(self, path: str | Path, title: str = "") -> Path:
        """SVG of the plot through QSvgGenerator (pyqtgraph 0.14's SVGExporter fails on PySide6 6.12)."""
        with captioned(self, title):
            return export_svg(self.plot, path, "RSP Workbench window timeline")

    def export_csv(self, path: str | Path, runs: Sequence[Any] = ()) -> Path:
        """``runs`` (``BundleRun``s): a row per judged window; no run: the stream per window in view."""
        return write_window_csv(path, runs) if runs else write_shown_csv(
            path, self._shown or {}, self.lanes.names, self.diverging, self.reconstructed, self.lanes, self.spec)

    def closeEvent(self, event: Any) -> None:  # noqa: N802
        self._timer.stop()
        super().closeEvent(event)


__all__ = ["WindowTimeline"]
