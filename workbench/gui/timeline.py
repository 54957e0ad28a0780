"""The window timeline: stream lanes, expected window borders, evaluations and emissions.

The core results view (issue 6). Stream elements run along application time, one lane per
station/stream, drawn as per-bucket counts (peak-preserving: every non-empty bucket shows)
computed from sorted arrays on each view change, so millions of elements pan and zoom
smoothly; when few elements are in view they are drawn one by one. Below the lanes, the
expected windows for the chosen t0 and border convention (filled end = inclusive border,
hollow = exclusive); above, evaluation instants and, through :meth:`add_engine_emissions`
and :meth:`set_reconstructed_borders`, what engines did and the borders gracious mode
reconstructed (dashed, contrasting colour, shift labelled). Clicking a window lists its
content and, when given, expected vs actual bindings with missing/extra highlighted.
Plot items are created once and updated with ``setData``; refresh runs on a 20 Hz timer.
"""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path
from typing import Any, Hashable, Iterable, Mapping, Sequence

import numpy as np
from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from workbench.core.semantics import BorderConvention, ReportPolicy
from workbench.core.windows import WindowInstance, WindowSpec
from workbench.errors import UserError
from workbench.gui.qt import pg
from workbench.gui.timeline_data import StreamLanes, windows_in_range

POINT_LIMIT = 5_000  # draw single elements below this many in view
WINDOW_LIMIT = 300  # draw window bars below this many in view
WINDOW_ROW_HEIGHT = 0.35
LANE_COLOUR = "#37474f"
WINDOW_COLOUR = (21, 101, 192)
EXPECTED_COLOUR = "#2e7d32"
ENGINE_COLOURS = ("#d81b60", "#ef6c00", "#8e24aa", "#00897b", "#6d4c41")
RECONSTRUCTED_COLOUR = "#ff6f00"
MISSING_BRUSH = QColor("#ffcdd2")
EXTRA_BRUSH = QColor("#ffe0b2")


class WindowTimeline(QWidget):
    """Plot + side panel. Feed it with :meth:`load`, :meth:`set_window_spec` and the overlay hooks."""

    windowSelected = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("windowTimeline")
        self.lanes = StreamLanes([], [])
        self.spec: WindowSpec | None = None
        self.evaluation_times = np.zeros(0, dtype=np.int64)
        self.engine_times: dict[str, np.ndarray] = {}
        self.reconstructed: dict[str, tuple[list[tuple[int, int]], tuple[int, int]]] = {}
        self.bindings: dict[tuple[int, int], tuple[Counter[Hashable], Counter[Hashable]]] = {}
        self.selected: WindowInstance | None = None
        self.refresh_count = 0
        self._shown: dict[str, Any] = {}

        self.plot = pg.PlotWidget(background="w")
        self.plot.setObjectName("timelinePlot")
        self.item = self.plot.getPlotItem()
        self.item.invertY(True)
        self.item.hideButtons()
        self.item.showGrid(x=True, y=False, alpha=0.15)
        self.item.setLabel("bottom", "application time", units="s")
        self.item.getAxis("bottom").enableAutoSIPrefix(False)
        self.item.setMouseEnabled(x=True, y=False)
        self.item.getViewBox().setLimits(yMin=-6, yMax=60)
        # no setClipToView: it drops points of connect='pairs' segments; refresh() clips itself

        self.density = pg.PlotDataItem(pen=pg.mkPen(LANE_COLOUR, width=1), connect="pairs", antialias=False)
        self.points = pg.ScatterPlotItem(size=6, pen=None, brush=pg.mkBrush(LANE_COLOUR))
        self.window_bars = pg.PlotDataItem(pen=pg.mkPen((*WINDOW_COLOUR, 170), width=6), connect="pairs")
        self.border_lines = pg.PlotDataItem(pen=pg.mkPen((*WINDOW_COLOUR, 60), width=1), connect="pairs")
        self.inclusive_ends = pg.ScatterPlotItem(size=8, pen=pg.mkPen(WINDOW_COLOUR), brush=pg.mkBrush(WINDOW_COLOUR))
        self.exclusive_ends = pg.ScatterPlotItem(size=8, pen=pg.mkPen(WINDOW_COLOUR, width=1.5), brush=pg.mkBrush("w"))
        self.expected_markers = pg.ScatterPlotItem(size=10, symbol="t", pen=None, brush=pg.mkBrush(EXPECTED_COLOUR))
        self.selection = pg.LinearRegionItem(movable=False, brush=(255, 193, 7, 60), pen=pg.mkPen((230, 150, 0), width=1))
        self.selection.setVisible(False)
        self.selection.setZValue(-10)
        for item in (self.selection, self.border_lines, self.density, self.points, self.window_bars,
                     self.inclusive_ends, self.exclusive_ends, self.expected_markers):
            self.item.addItem(item)
        self.engine_items: dict[str, pg.ScatterPlotItem] = {}
        self.reconstructed_items: dict[str, tuple[pg.PlotDataItem, pg.TextItem]] = {}

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(50)  # ≤ 20 Hz
        self._timer.timeout.connect(self.refresh)
        self.item.getViewBox().sigXRangeChanged.connect(self._on_range_changed)
        self.plot.scene().sigMouseClicked.connect(self._on_click)

        self.panel_title = QLabel("Click a window to list its content.")
        self.panel_title.setWordWrap(True)
        self.content_table = QTableWidget(0, 4)
        self.content_table.setObjectName("windowContent")
        self.content_table.setHorizontalHeaderLabels(["t (ms)", "subject", "predicate", "object"])
        self.content_table.horizontalHeader().setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        self.content_table.verticalHeader().setVisible(False)
        self.bindings_table = QTableWidget(0, 2)
        self.bindings_table.setObjectName("windowBindings")
        self.bindings_table.setHorizontalHeaderLabels(["status", "binding"])
        self.bindings_table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.bindings_table.verticalHeader().setVisible(False)
        panel = QWidget()
        panel_layout = QVBoxLayout(panel)
        panel_layout.setContentsMargins(0, 0, 0, 0)
        panel_layout.addWidget(self.panel_title)
        panel_layout.addWidget(QLabel("<b>Content</b>"))
        panel_layout.addWidget(self.content_table, 2)
        panel_layout.addWidget(QLabel("<b>Expected vs actual bindings</b>"))
        panel_layout.addWidget(self.bindings_table, 1)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.plot)
        splitter.addWidget(panel)
        splitter.setStretchFactor(0, 4)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([900, 300])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(splitter)

    # ------------------------------------------------------------------ data in
    def load(self, lanes: StreamLanes) -> None:
        """Show a stream (see :class:`StreamLanes`); resets the view to the whole stream."""
        self.lanes = lanes
        self.selected = None
        self.selection.setVisible(False)
        ticks = [(float(i), name) for i, name in enumerate(lanes.names)]
        self.item.getAxis("left").setTicks([ticks + self._row_ticks()])
        self.show_all()

    def load_elements(self, elements: Sequence[Any]) -> None:
        self.load(StreamLanes.from_elements(elements))

    def set_window_spec(self, spec: WindowSpec | None) -> None:
        """The expected windows (size, slide, t0, border convention, leading partials)."""
        self.spec = spec
        self._update_axis()
        self.refresh()

    def set_evaluations(self, times: Iterable[int]) -> None:
        """Expected evaluation instants (e.g. from :func:`workbench.core.report.evaluation_instants`)."""
        self.evaluation_times = np.sort(np.fromiter(times, dtype=np.int64))
        self.refresh()

    def compute_expected_evaluations(self, policy: ReportPolicy) -> int:
        """Evaluation instants of ``policy`` over the loaded stream and the current spec (window-close
        and periodic are cheap; content-change walks every element)."""
        from workbench.core.report import evaluation_instants

        if self.spec is None or not self.lanes.count:
            self.set_evaluations([])
            return 0
        times = self.lanes.all_times.tolist()
        evaluations = evaluation_instants(times, self.spec, policy, start=self.spec.t0, end=times[-1])
        self.set_evaluations(e.time for e in evaluations)
        return len(evaluations)

    def add_engine_emissions(self, engine: str, times: Iterable[int]) -> None:
        """Overlay one engine's emission (or evaluation) instants as markers on their own row."""
        self.engine_times[engine] = np.sort(np.fromiter(times, dtype=np.int64))
        if engine not in self.engine_items:
            colour = ENGINE_COLOURS[len(self.engine_items) % len(ENGINE_COLOURS)]
            item = pg.ScatterPlotItem(size=10, symbol="d", pen=None, brush=pg.mkBrush(colour))
            self.item.addItem(item)
            self.engine_items[engine] = item
        self._update_axis()
        self.refresh()

    def set_reconstructed_borders(self, engine: str, windows: Sequence[tuple[int, int]], shift: tuple[int, int]) -> None:
        """Gracious mode: the borders the engine really used (dashed), labelled with the shift (ms)."""
        self.reconstructed[engine] = (list(windows), shift)
        if engine not in self.reconstructed_items:
            line = pg.PlotDataItem(pen=pg.mkPen(RECONSTRUCTED_COLOUR, width=2, style=Qt.PenStyle.DashLine), connect="pairs")
            label = pg.TextItem(color=RECONSTRUCTED_COLOUR, anchor=(0, 1), fill=pg.mkBrush(255, 255, 255, 200))
            self.item.addItem(line)
            self.item.addItem(label)
            self.reconstructed_items[engine] = (line, label)
        self._update_axis()
        self.refresh()

    def set_window_bindings(self, bindings: Mapping[tuple[int, int], tuple[Counter[Hashable], Counter[Hashable]]]) -> None:
        """Expected and actual bags per window, keyed by (open, close) in ms."""
        self.bindings = dict(bindings)
        if self.selected is not None:
            self.select_window(self.selected)

    # ------------------------------------------------------------------ layout rows
    def _window_rows(self) -> int:
        if self.spec is None:
            return 0
        # one more row than windows overlap, so that windows sharing a row never touch
        return min(8, -(-self.spec.size // self.spec.slide) + 1)

    def _window_row_y(self, index: int) -> float:
        return len(self.lanes.names) + 0.3 + (index % max(1, self._window_rows())) * WINDOW_ROW_HEIGHT

    def _marker_rows(self) -> list[tuple[float, str]]:
        """Rows above the lanes: expected evaluation instants, then one per engine."""
        rows = [(-0.8, "expected ET")]
        for offset, engine in enumerate(self.engine_items):
            rows.append((-1.3 - 0.5 * offset, engine))
        return rows

    def _reconstructed_row_y(self, engine: str, index: int) -> float:
        """Rows below the expected windows: each engine's reconstructed windows, staggered the same way."""
        rows = max(1, self._window_rows())
        band = list(self.reconstructed_items).index(engine)
        return self._window_row_y(0) + (rows + 1.4 + band * (rows + 1.4)) * WINDOW_ROW_HEIGHT + (index % rows) * WINDOW_ROW_HEIGHT

    def _row_ticks(self) -> list[tuple[float, str]]:
        ticks = self._marker_rows()
        if self.spec is not None:
            ticks.append((self._window_row_y(0), f"windows {self.spec.border.value}"))
            for engine in self.reconstructed_items:
                ticks.append((self._reconstructed_row_y(engine, 0), f"{engine} reconstructed"))
        return ticks

    def _update_axis(self) -> None:
        ticks = [(float(i), name) for i, name in enumerate(self.lanes.names)]
        self.item.getAxis("left").setTicks([ticks + self._row_ticks()])
        bottom = len(self.lanes.names) + 0.4 + self._window_rows() * WINDOW_ROW_HEIGHT
        if self.reconstructed_items and self.spec is not None:
            last = list(self.reconstructed_items)[-1]
            bottom = self._reconstructed_row_y(last, self._window_rows() - 1) + 0.5
        top = min(row for row, _ in self._marker_rows()) - 0.4
        self.item.setYRange(top, bottom, padding=0)

    # ------------------------------------------------------------------ view
    def show_all(self) -> None:
        lo, hi = self.lanes.span
        pad = max(1, (hi - lo) // 50)
        self._update_axis()
        self.item.setXRange((lo - pad) / 1000, (hi + pad) / 1000, padding=0)
        self.refresh()

    def set_time_range(self, lo_ms: float, hi_ms: float) -> None:
        self.item.setXRange(lo_ms / 1000, hi_ms / 1000, padding=0)

    def time_range(self) -> tuple[float, float]:
        lo, hi = self.item.getViewBox().viewRange()[0]
        return lo * 1000, hi * 1000

    @Slot()
    def _on_range_changed(self) -> None:
        if not self._timer.isActive():
            self._timer.start()

    @Slot()
    def refresh(self) -> None:
        """Redraw what is in view: lane densities or points, windows, markers."""
        self.refresh_count += 1
        lo, hi = self.time_range()
        pixels = max(100, int(self.plot.width()))
        shown: dict[str, Any] = {"range": (lo, hi)}
        slices = self.lanes.visible(lo, hi)
        in_view = sum(b - a for a, b in slices)
        if in_view <= POINT_LIMIT:
            xs = np.concatenate([t[a:b] for t, (a, b) in zip(self.lanes.times, slices)] or [np.zeros(0)]) / 1000
            ys = np.concatenate([np.full(b - a, i, dtype=float) for i, (a, b) in enumerate(slices)] or [np.zeros(0)])
            self.points.setData(xs, ys)
            self.density.setData([], [])
            shown["mode"] = "points"
            shown["points"] = (xs, ys)
        else:
            buckets = min(pixels // 2, 1500)  # a tick every 2 px is as fine as the eye resolves
            edges, counts = self.lanes.bin_counts(lo, hi, buckets)
            peak = max((int(c.max()) for c in counts if len(c)), default=1) or 1
            centres = (edges[:-1] + edges[1:]) / 2000
            xs_parts, ys_parts = [], []
            for lane, count in enumerate(counts):
                # a vertical tick per non-empty bucket, its height ∝ count (peak mode: never dropped)
                nonzero = np.nonzero(count)[0]
                heights = 0.12 + 0.33 * count[nonzero] / peak
                x = np.repeat(centres[nonzero], 2)
                y = np.empty(len(nonzero) * 2)
                y[0::2] = lane + heights
                y[1::2] = lane - heights
                xs_parts.append(x)
                ys_parts.append(y)
            xs = np.concatenate(xs_parts) if xs_parts else np.zeros(0)
            ys = np.concatenate(ys_parts) if ys_parts else np.zeros(0)
            self.density.setData(xs, ys)
            self.points.setData([], [])
            shown["mode"] = "density"
            shown["bins"] = (edges, counts)
        shown["in_view"] = in_view
        self._draw_windows(lo, hi, shown)
        self._draw_markers(lo, hi, shown)
        self._shown = shown

    def _draw_windows(self, lo: float, hi: float, shown: dict[str, Any]) -> None:
        windows = windows_in_range(self.spec, lo, hi, WINDOW_LIMIT) if self.spec is not None else []
        shown["windows"] = windows
        if not windows:
            for item in (self.window_bars, self.border_lines, self.inclusive_ends, self.exclusive_ends):
                item.setData([], [])
            return
        opens = np.array([w.open for w in windows], dtype=float) / 1000
        closes = np.array([w.close for w in windows], dtype=float) / 1000
        rows = np.array([self._window_row_y(w.index) for w in windows])
        bar_x = np.empty(len(windows) * 2)
        inset = (closes - opens) * 0.01  # keep the end markers of touching windows apart
        bar_x[0::2], bar_x[1::2] = opens + inset, closes - inset
        bar_y = np.repeat(rows, 2)
        self.window_bars.setData(bar_x, bar_y)
        lanes_bottom = len(self.lanes.names) - 0.5
        borders = np.unique(np.concatenate([opens, closes]))
        self.border_lines.setData(np.repeat(borders, 2), np.tile([-0.5, lanes_bottom], len(borders)))
        border = windows[0].border
        open_inclusive = border is not BorderConvention.OPEN_CLOSED
        close_inclusive = border is not BorderConvention.CLOSED_OPEN
        inc_x = np.concatenate([opens if open_inclusive else [], closes if close_inclusive else []])
        inc_y = np.concatenate([rows if open_inclusive else [], rows if close_inclusive else []])
        exc_x = np.concatenate([opens if not open_inclusive else [], closes if not close_inclusive else []])
        exc_y = np.concatenate([rows if not open_inclusive else [], rows if not close_inclusive else []])
        self.inclusive_ends.setData(inc_x, inc_y)
        self.exclusive_ends.setData(exc_x, exc_y)

    def _draw_markers(self, lo: float, hi: float, shown: dict[str, Any]) -> None:
        rows = dict((name, y) for y, name in self._marker_rows())

        def clip(times: np.ndarray) -> np.ndarray:
            a, b = np.searchsorted(times, lo, "left"), np.searchsorted(times, hi, "right")
            step = max(1, (b - a) // 5000)  # markers: at most ~5000 drawn
            return times[a:b:step]

        expected = clip(self.evaluation_times)
        self.expected_markers.setData(expected / 1000, np.full(len(expected), rows["expected ET"]))
        shown["evaluations"] = expected
        shown["engines"] = {}
        for engine, item in self.engine_items.items():
            times = clip(self.engine_times.get(engine, np.zeros(0, dtype=np.int64)))
            item.setData(times / 1000, np.full(len(times), rows[engine]))
            shown["engines"][engine] = times
        for engine, (line, label) in self.reconstructed_items.items():
            windows, (start_shift, end_shift) = self.reconstructed[engine]
            visible = [(i, o, c) for i, (o, c) in enumerate(windows) if c >= lo and o <= hi][:WINDOW_LIMIT]
            xs = np.array([v for _, o, c in visible for v in (o, c)], dtype=float) / 1000
            ys = np.repeat([self._reconstructed_row_y(engine, i) for i, _, _ in visible], 2)
            line.setData(xs, ys)
            label.setText(f"{engine}: reconstructed borders (gracious), start {start_shift:+d} ms, end {end_shift:+d} ms")
            label.setPos(lo / 1000 + (hi - lo) / 1000 * 0.01, self._reconstructed_row_y(engine, 0) - WINDOW_ROW_HEIGHT * 0.4)

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
            for window in candidates:
                if abs(self._window_row_y(window.index) - y) < WINDOW_ROW_HEIGHT / 2:
                    chosen = window
        self.select_window(chosen)
        return chosen

    def select_window(self, window: WindowInstance) -> None:
        """Highlight a window and list its content and bindings in the side panel."""
        self.selected = window
        self.selection.setRegion((window.open / 1000, window.close / 1000))
        self.selection.setVisible(True)
        lo, hi = self.lanes.window_positions(window)
        self.panel_title.setText(f"<b>Window {window.index}</b> {window} — {hi - lo} element(s)")
        elements = self.lanes.elements
        rows = min(hi - lo, 1000)
        self.content_table.setRowCount(rows)
        for row in range(rows):
            if elements is not None and lo + row < len(elements):
                element = elements[lo + row]
                values = (str(element.t), element.subject, element.predicate, element.object)
            else:
                values = (str(int(self.lanes.all_times[lo + row])), "", "", "")
            for column, value in enumerate(values):
                self.content_table.setItem(row, column, QTableWidgetItem(value))
        self._show_bindings(window)
        self.windowSelected.emit(window)

    def _show_bindings(self, window: WindowInstance) -> None:
        expected, actual = self.bindings.get((window.open, window.close), (Counter(), Counter()))
        rows: list[tuple[str, str, QColor | None]] = []
        for mapping in sorted(set(expected) | set(actual), key=str):
            both = min(expected[mapping], actual[mapping])
            text = _mapping_text(mapping)
            rows += [("ok", text, None)] * both
            rows += [("missing", text, MISSING_BRUSH)] * (expected[mapping] - both)
            rows += [("extra", text, EXTRA_BRUSH)] * (actual[mapping] - both)
        self.bindings_table.setRowCount(len(rows))
        for row, (status, text, colour) in enumerate(rows):
            for column, value in enumerate((status, text)):
                cell = QTableWidgetItem(value)
                if colour is not None:
                    cell.setBackground(QBrush(colour))
                self.bindings_table.setItem(row, column, cell)

    def binding_rows(self) -> list[tuple[str, str]]:
        return [(self.bindings_table.item(r, 0).text(), self.bindings_table.item(r, 1).text())
                for r in range(self.bindings_table.rowCount())]

    # ------------------------------------------------------------------ export
    def export_png(self, path: str | Path, width: int | None = None) -> Path:
        from pyqtgraph.exporters import ImageExporter

        exporter = ImageExporter(self.item)
        if width:
            exporter.parameters()["width"] = width
        exporter.export(str(path))
        return Path(path)

    def export_svg(self, path: str | Path) -> Path:
        """SVG of the plot. pyqtgraph 0.14's SVGExporter fails on PySide6 6.12 (it cannot parse
        the generator's path data), so the plot widget is rendered through QSvgGenerator."""
        from PySide6.QtCore import QRect, QSize
        from PySide6.QtGui import QPainter
        from PySide6.QtSvg import QSvgGenerator

        size = self.plot.size()
        generator = QSvgGenerator()
        generator.setFileName(str(path))
        generator.setSize(QSize(size.width(), size.height()))
        generator.setViewBox(QRect(0, 0, size.width(), size.height()))
        generator.setTitle("RSP Workbench window timeline")
        painter = QPainter(generator)
        try:
            self.plot.render(painter)
        finally:
            painter.end()
        return Path(path)

    def export_csv(self, path: str | Path) -> Path:
        """What is shown: lane counts per bucket (or elements), windows, markers."""
        shown = self._shown or {}
        with open(path, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(["kind", "lane", "start_ms", "end_ms", "count"])
            if shown.get("mode") == "density":
                edges, counts = shown["bins"]
                for lane, count in zip(self.lanes.names, counts):
                    for i in np.nonzero(count)[0]:
                        writer.writerow(["elements", lane, int(edges[i]), int(edges[i + 1]), int(count[i])])
            elif shown.get("mode") == "points":
                xs, ys = shown["points"]
                for x, y in zip(xs, ys):
                    writer.writerow(["element", self.lanes.names[int(y)], int(round(x * 1000)), int(round(x * 1000)), 1])
            for window in shown.get("windows", []):
                left, right = window.border.brackets()
                writer.writerow([f"window {left}{right}", window.index, window.open, window.close, ""])
            for t in shown.get("evaluations", []):
                writer.writerow(["expected evaluation", "", int(t), int(t), ""])
            for engine, times in shown.get("engines", {}).items():
                for t in times:
                    writer.writerow(["emission", engine, int(t), int(t), ""])
            for engine, (windows, shift) in self.reconstructed.items():
                for o, c in windows:
                    writer.writerow([f"reconstructed (start {shift[0]:+d}, end {shift[1]:+d})", engine, o, c, ""])
        return Path(path)

    def closeEvent(self, event: Any) -> None:  # noqa: N802
        self._timer.stop()
        super().closeEvent(event)


def _mapping_text(mapping: Hashable) -> str:
    try:
        return ", ".join(f"?{k}={v}" for k, v in sorted(dict(mapping).items()))  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return str(mapping)


# ---------------------------------------------------------------------- the Results tab


def _load_stream(path: str, fmt: str | None) -> Any:
    """Worker: read a stream file into lanes (runs off the GUI thread)."""
    from workbench.streams.readers import detect_format, read_stream

    def run(state: Any) -> StreamLanes:
        elements = []
        for index, element in enumerate(read_stream(path, fmt or detect_format(path))):
            elements.append(element)
            if index % 100_000 == 0:
                if state.cancelled:
                    raise UserError("cancelled")
                state.report_progress(0.0, f"{index:,} elements read")
        return StreamLanes.from_elements(elements)

    return run


class TimelineView(QWidget):
    """Results tab (until result bundles exist): a stream file + window spec on the timeline."""

    def __init__(self, tasks: Any = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("timelineView")
        self.tasks = tasks
        self.timeline = WindowTimeline()
        self.open_button = QPushButton("Open stream…")
        self.open_button.clicked.connect(self.open_dialog)
        self.size_edit = QLineEdit("10s")
        self.slide_edit = QLineEdit("10s")
        self.t0_edit = QLineEdit("0s")
        for edit in (self.size_edit, self.slide_edit, self.t0_edit):
            edit.setMaximumWidth(70)
            edit.editingFinished.connect(self.apply_spec)
        self.border_combo = QComboBox()
        self.border_combo.addItems([b.value for b in BorderConvention])
        self.border_combo.activated.connect(lambda _: self.apply_spec())
        self.partial_box = QCheckBox("leading partial")
        self.partial_box.clicked.connect(lambda _: self.apply_spec())
        self.policy_combo = QComboBox()
        self.policy_combo.setEditable(True)
        self.policy_combo.addItems(["window-close", "window-close & non-empty", "periodic(5s)", "(none)"])
        self.policy_combo.activated.connect(lambda _: self.apply_spec())
        self.fit_button = QPushButton("Fit")
        self.fit_button.clicked.connect(self.timeline.show_all)
        export_png = QPushButton("PNG…")
        export_png.clicked.connect(lambda: self._export("png"))
        export_svg = QPushButton("SVG…")
        export_svg.clicked.connect(lambda: self._export("svg"))
        export_csv = QPushButton("CSV…")
        export_csv.clicked.connect(lambda: self._export("csv"))
        self.status = QLabel("No stream loaded. Open a stream file (YABench text, N-Quads, Parquet, CSRBench folder).")
        controls = QHBoxLayout()
        controls.addWidget(self.open_button)
        for label, widget in (("size", self.size_edit), ("slide", self.slide_edit), ("t0", self.t0_edit),
                              ("border", self.border_combo)):
            controls.addWidget(QLabel(label))
            controls.addWidget(widget)
        controls.addWidget(self.partial_box)
        controls.addWidget(QLabel("report"))
        controls.addWidget(self.policy_combo)
        controls.addStretch(1)
        for button in (self.fit_button, export_png, export_svg, export_csv):
            controls.addWidget(button)
        layout = QVBoxLayout(self)
        layout.addLayout(controls)
        layout.addWidget(self.status)
        layout.addWidget(self.timeline, 1)
        self.ask_save_path = self._ask_save_path
        self.apply_spec()

    def spec(self) -> WindowSpec:
        from workbench.core.time import parse_duration

        return WindowSpec(
            parse_duration(self.size_edit.text(), field="size"),
            parse_duration(self.slide_edit.text(), field="slide"),
            parse_duration(self.t0_edit.text(), field="t0"),
            BorderConvention(self.border_combo.currentText()),
            self.partial_box.isChecked(),
        )

    @Slot()
    def apply_spec(self) -> None:
        try:
            spec = self.spec()
        except UserError as error:
            self.status.setText(f"<span style='color:#c62828'>{error}</span>")
            return
        self.timeline.set_window_spec(spec)
        text = self.policy_combo.currentText().strip()
        if text and text != "(none)":
            try:
                count = self.timeline.compute_expected_evaluations(ReportPolicy.parse(text))
            except UserError as error:
                self.status.setText(f"<span style='color:#c62828'>report: {error}</span>")
                return
        else:
            self.timeline.set_evaluations([])
            count = 0
        if self.timeline.lanes.count:
            left, right = spec.border.brackets()
            self.status.setText(
                f"{self.timeline.lanes.count:,} elements in {len(self.timeline.lanes.names)} lane(s); {spec.kind} window "
                f"ω={spec.size} ms β={spec.slide} ms t0={spec.t0} ms, borders {left}o, c{right}; "
                f"{count:,} expected evaluations")

    def show_lanes(self, lanes: StreamLanes, source: str = "") -> None:
        self.timeline.load(lanes)
        self.apply_spec()
        if source:
            self.status.setText(f"{source}: " + self.status.text())

    @Slot()
    def open_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open stream", str(Path.cwd()),
                                              "Streams (*.stream *.nq *.nquads *.parquet *.txt);;All files (*)")
        if path:
            self.open_stream(path)

    def open_stream(self, path: str, fmt: str | None = None) -> Any:
        """Read the file in the background (TaskRegistry) or inline when no registry is given."""
        function = _load_stream(path, fmt)
        if self.tasks is None:
            from workbench.gui.tasks import TaskState

            self.show_lanes(function(TaskState()), path)
            return None
        self.status.setText(f"reading {path} …")
        task = self.tasks.start(f"read {Path(path).name}", function)
        task.finished.connect(lambda lanes: self.show_lanes(lanes, path))
        task.failed.connect(lambda error, _: self.status.setText(f"<span style='color:#c62828'>{_esc(str(error))}</span>"))
        task.progress.connect(lambda _, message: self.status.setText(f"reading {path}: {message}"))
        return task

    def _export(self, kind: str) -> None:
        path = self.ask_save_path(kind)
        if not path:
            return
        {"png": self.timeline.export_png, "svg": self.timeline.export_svg, "csv": self.timeline.export_csv}[kind](path)
        self.status.setText(f"exported {path}")

    def _ask_save_path(self, kind: str) -> str | None:
        path, _ = QFileDialog.getSaveFileName(self, f"Export {kind.upper()}", f"timeline.{kind}", f"*.{kind}")
        return path or None


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def synthetic_lanes(elements: int, stations: int = 10, interval_ms: int = 1000, seed: int = 0) -> StreamLanes:
    """A stream like SG1's shape without terms (benchmarks, screenshots): ``stations`` lanes,
    one element every ``interval_ms`` per station with random phases."""
    rng = np.random.default_rng(seed)
    per_station = max(1, elements // stations)
    phases = rng.integers(0, interval_ms, stations)
    times = (np.arange(per_station)[None, :] * interval_ms + phases[:, None]).ravel()
    lanes = np.repeat(np.arange(stations), per_station)
    return StreamLanes.from_arrays(times, lanes, [f"A{i}" for i in range(stations)])


__all__ = ["TimelineView", "WindowTimeline", "synthetic_lanes"]
