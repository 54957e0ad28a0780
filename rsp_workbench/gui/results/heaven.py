"""Heaven dashboard: latency × memory per approach, and who dominates where (Heaven Sect. 7).

The scatter is Heaven's Fig. 3 (log-log; one marker per engine/baseline, bars = min–max
over the repetitions), for one grid cell or all of them (one symbol per cell). The two
tables are Heaven's Table 2: over the grid of the experiment's varying variables (e.g.
stimulus size × window width), the approach that dominates by more than 5 % in latency
and in memory, or "—" when they are within 5 %.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHeaderView,
    QLabel,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from rsp_workbench.gui.qt import pg
from rsp_workbench.gui.results.common import SYMBOLS, ResultsView, engine_colours, log_ticks, new_chart, style_plot
from rsp_workbench.results.view_data import (
    DOMINANCE_MARGIN,
    EVEN,
    ApproachPoint,
    BundleData,
    DominanceGrid,
    dominance_grid,
    engines_of,
)

ALL_CELLS = "all cells"
SCATTER_TITLE = "mean latency × mean peak RSS"  # short: a longer one was cut at 1024 px
LONE_SPAN = 0.02  # log10 units around a lone value (±5 %)
RANGE_MARGIN = 0.08  # of the span (log10) around every marker and bar end, so none is clipped at the frame
NO_VARIABLE = "(none)"


class HeavenDashboardView(ResultsView):
    """Latency vs memory scatter (log–log) and the dominance tables."""

    title = "Latency x memory"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("resultsHeaven")
        self.data: BundleData | None = None
        self.points: tuple[ApproachPoint, ...] = ()
        self.colours: dict[str, str] = {}
        self.grids: dict[str, DominanceGrid] = {}
        self.cell_combo = QComboBox()
        self.cell_combo.setObjectName("heavenCell")
        self.cell_combo.setMinimumContentsLength(24)
        self.row_combo = QComboBox()
        self.row_combo.setObjectName("heavenRows")
        self.column_combo = QComboBox()
        self.column_combo.setObjectName("heavenColumns")
        self.cell_combo.currentIndexChanged.connect(self._on_cell_changed)
        self.row_combo.currentIndexChanged.connect(self._on_axes_changed)
        self.column_combo.currentIndexChanged.connect(self._on_axes_changed)
        for label, widget in (("cell", self.cell_combo), ("table rows", self.row_combo),
                              ("columns", self.column_combo)):
            self.controls.addWidget(QLabel(label))
            self.controls.addWidget(widget)
        self.add_export_buttons()

        self.chart = new_chart()
        self.chart.setObjectName("heavenChart")
        self.plot = self.chart.addPlot(title=SCATTER_TITLE)  # what the bars are: the status line below
        style_plot(self.plot, bottom="latency per stimulus (ms, log)", left="peak RSS (MB, log)")
        for name in ("bottom", "left"):
            self.plot.getAxis(name).setLogMode(True)  # the data are log10 values (ErrorBarItem is not log-aware)
        self.legend = self.plot.addLegend(offset=(10, 10), labelTextSize="8pt")
        self.scatter: dict[str, pg.ScatterPlotItem] = {}
        self.bars: dict[str, pg.ErrorBarItem] = {}
        self._legend_samples: list[pg.ScatterPlotItem] = []

        self.tables: dict[str, QTableWidget] = {}
        self.table_titles: dict[str, QLabel] = {}
        side = QWidget()
        side_layout = QVBoxLayout(side)
        side_layout.setContentsMargins(0, 0, 0, 0)
        for kpi in ("latency", "memory"):
            title = QLabel()
            table = QTableWidget(0, 0)
            table.setObjectName(f"dominance_{kpi}")
            table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
            table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
            side_layout.addWidget(title)
            side_layout.addWidget(table, 1)
            self.tables[kpi] = table
            self.table_titles[kpi] = title
        self.grid_note = QLabel()
        self.grid_note.setWordWrap(True)
        self.grid_note.setStyleSheet("color: #555")
        side_layout.addWidget(self.grid_note)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.chart)
        splitter.addWidget(side)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        layout = QVBoxLayout(self.body)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(splitter)

    # ------------------------------------------------------------------ data in
    def set_data(self, data: BundleData) -> None:
        self.data = data
        self.points = data.heaven
        self.colours = engine_colours(engines_of(data.bundle.rows))
        if not self.points:
            self.show_message("No latency and memory to compare: no run of this bundle finished with a latency "
                              "and a peak RSS (run.json).")
            return
        cells = list(dict.fromkeys(p.cell for p in self.points))
        for combo in (self.cell_combo, self.row_combo, self.column_combo):
            combo.blockSignals(True)
            combo.clear()
        self.cell_combo.addItem(ALL_CELLS, None)
        for cell in cells:
            self.cell_combo.addItem(", ".join(f"{k}={v}" for k, v in cell) or "all runs", cell)
        for combo in (self.row_combo, self.column_combo):
            combo.addItem(NO_VARIABLE)
            combo.addItems(list(data.heaven_axes))
        self.row_combo.setCurrentIndex(1 if data.heaven_axes else 0)
        self.column_combo.setCurrentIndex(2 if len(data.heaven_axes) > 1 else 0)
        for combo in (self.cell_combo, self.row_combo, self.column_combo):
            combo.blockSignals(False)
        self.show_content()
        self.redraw()
        self.update_tables()

    @Slot(int)
    def _on_cell_changed(self, index: int) -> None:
        if self.points:
            self.redraw()

    @Slot(int)
    def _on_axes_changed(self, index: int) -> None:
        if self.points:
            self.update_tables()

    def shown_points(self) -> list[ApproachPoint]:
        cell = self.cell_combo.currentData()
        return [p for p in self.points if cell is None or p.cell == cell]

    # ------------------------------------------------------------------ scatter
    def redraw(self) -> None:
        shown = [p for p in self.shown_points() if p.latency_ms > 0 and p.memory_mb > 0]
        cells = list(dict.fromkeys(p.cell for p in self.points))
        per_cell = self.cell_combo.currentData() is None and len(cells) > 1
        self.legend.clear()
        engines = list(dict.fromkeys(p.engine for p in self.points))
        for engine in engines:
            if engine not in self.scatter:
                scatter = pg.ScatterPlotItem(size=12, hoverable=True, tip=self._tip)
                bars = pg.ErrorBarItem(beam=0.0)
                self.plot.addItem(bars)
                self.plot.addItem(scatter)
                self.scatter[engine] = scatter
                self.bars[engine] = bars
            mine = [p for p in shown if p.engine == engine]
            colour = self.colours.get(engine, "#333")
            x = np.log10([p.latency_ms for p in mine]) if mine else np.zeros(0)
            y = np.log10([p.memory_mb for p in mine]) if mine else np.zeros(0)
            symbols = [SYMBOLS[cells.index(p.cell) % len(SYMBOLS)] if per_cell else "o" for p in mine]
            self.scatter[engine].setData(x=x, y=y, symbol=symbols, brush=pg.mkBrush(colour), pen=pg.mkPen("w"),
                                         data=mine)
            left = x - np.log10([max(p.latency_min, 1e-12) for p in mine]) if mine else x
            right = np.log10([p.latency_max for p in mine]) - x if mine else x
            bottom = y - np.log10([max(p.memory_min, 1e-12) for p in mine]) if mine else y
            top = np.log10([p.memory_max for p in mine]) - y if mine else y
            self.bars[engine].setData(x=x, y=y, left=left, right=right, top=top, bottom=bottom,
                                      pen=pg.mkPen(colour, width=1.5))
            self.scatter[engine].setVisible(bool(mine))  # empty items would pull the auto-range to the origin
            self.bars[engine].setVisible(bool(mine))
            self.legend.addItem(self.scatter[engine], engine)
        for engine in [e for e in self.scatter if e not in engines]:  # another bundle's engines: empty
            # items would still pull the auto-range to the origin, so they go
            self.plot.removeItem(self.scatter.pop(engine))
            self.plot.removeItem(self.bars.pop(engine))
        self._legend_samples = []
        if per_cell:
            for index, cell in enumerate(cells):
                sample = pg.ScatterPlotItem(symbol=SYMBOLS[index % len(SYMBOLS)], brush=pg.mkBrush("#999"), pen=None)
                self._legend_samples.append(sample)
                self.legend.addItem(sample, ", ".join(f"{k}={v}" for k, v in cell) or "all runs")
        self.plot.getAxis("bottom").setTicks([log_ticks([v for p in shown for v in (p.latency_min, p.latency_max)])])
        self.plot.getAxis("left").setTicks([log_ticks([v for p in shown for v in (p.memory_min, p.memory_max)])])
        self._fit_range(shown)
        self.status.setText(f"{len(shown)} point(s): marker = mean over the repetitions, bars = min–max; "
                            f"hover a marker for its values")

    def _fit_range(self, shown: list[ApproachPoint]) -> None:
        """The view spans every bar end (min–max over the repetitions), not only the markers: autorange
        cut bars and half markers at the frame. A margin keeps the outermost marker whole."""
        if not shown:
            self.plot.enableAutoRange()
            return
        for axis, low, high in (("x", [p.latency_min for p in shown], [p.latency_max for p in shown]),
                                ("y", [p.memory_min for p in shown], [p.memory_max for p in shown])):
            lo = float(np.log10(max(min(low), 1e-12)))
            hi = float(np.log10(max(high)))
            span = hi - lo if hi - lo > 1e-9 else LONE_SPAN  # one value: a little room either side
            setter = self.plot.setXRange if axis == "x" else self.plot.setYRange
            setter(lo - RANGE_MARGIN * span, hi + RANGE_MARGIN * span, padding=0)

    @staticmethod
    def _tip(x: float, y: float, data: Any) -> str:
        if isinstance(data, ApproachPoint):
            return (f"{data.engine} ({data.cell_label()}, {data.runs} run(s))\n"
                    f"latency {data.latency_ms:.3g} ms [{data.latency_min:.3g}, {data.latency_max:.3g}]\n"
                    f"peak RSS {data.memory_mb:.4g} MB [{data.memory_min:.4g}, {data.memory_max:.4g}]")
        return f"{10 ** x:.3g} ms, {10 ** y:.4g} MB"

    # ------------------------------------------------------------------ dominance tables
    def update_tables(self) -> None:
        row_variable = self.row_combo.currentText()
        column_variable = self.column_combo.currentText()
        row_variable = "" if row_variable == NO_VARIABLE else row_variable
        column_variable = "" if column_variable == NO_VARIABLE else column_variable
        engines = list(dict.fromkeys(p.engine for p in self.points))
        for kpi, unit in (("latency", "mean latency"), ("memory", "mean peak RSS")):
            grid = dominance_grid(self.points, kpi, row_variable, column_variable)
            self.grids[kpi] = grid
            self.table_titles[kpi].setText(
                f"<b>{kpi.capitalize()}</b>: who dominates by more than {DOMINANCE_MARGIN:.0%} ({unit}; "
                f"{EVEN} within {DOMINANCE_MARGIN:.0%})")
            self._fill_table(self.tables[kpi], grid)
        if len(engines) < 2:
            self.grid_note.setText("Dominance needs at least two engines/baselines in a cell.")
        elif not self.data or not self.data.heaven_axes:
            self.grid_note.setText("The runs vary no case or sweep variable: the table has a single cell.")
        else:
            self.grid_note.setText(f"Rows {row_variable or '—'} × columns {column_variable or '—'} (varying variables "
                                   f"of the runs: {', '.join(self.data.heaven_axes)}); empty: not run.")

    def _fill_table(self, table: QTableWidget, grid: DominanceGrid) -> None:
        table.clear()
        table.setRowCount(len(grid.rows))
        table.setColumnCount(len(grid.columns))
        table.setVerticalHeaderLabels([f"{grid.row_variable}={v}" if grid.row_variable else "all" for v in grid.rows])
        table.setHorizontalHeaderLabels([f"{grid.column_variable}={v}" if grid.column_variable else "all"
                                         for v in grid.columns])
        for r, row_value in enumerate(grid.rows):
            for c, column_value in enumerate(grid.columns):
                text = grid.cell(row_value, column_value)
                item = QTableWidgetItem(text)
                item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                if text in self.colours:
                    item.setBackground(QBrush(QColor(self.colours[text]).lighter(170)))
                elif not text:
                    item.setBackground(QBrush(QColor("#eeeeee")))
                    item.setToolTip("not run")
                table.setItem(r, c, item)

    def table_rows(self, kpi: str) -> list[list[str]]:
        table = self.tables[kpi]
        return [[table.item(r, c).text() for c in range(table.columnCount())] for r in range(table.rowCount())]

    # ------------------------------------------------------------------ export
    def chart_widget(self) -> QWidget:
        return self.chart

    def csv_table(self) -> tuple[list[str], list[list[Any]]]:
        """The points, then one row per dominance cell (kind latency/memory)."""
        header = ["kind", "engine", "cell", "latency_ms", "latency_min", "latency_max", "memory_mb", "memory_min",
                  "memory_max", "runs"]
        rows: list[list[Any]] = [["point", p.engine, p.cell_label(), p.latency_ms, p.latency_min, p.latency_max,
                                  p.memory_mb, p.memory_min, p.memory_max, p.runs] for p in self.points]
        for kpi, grid in self.grids.items():
            for (row_value, column_value), winner in grid.cells.items():
                cell = ", ".join(f"{k}={v}" for k, v in ((grid.row_variable, row_value),
                                                         (grid.column_variable, column_value)) if k)
                rows.append([f"dominance {kpi}", winner, cell, None, None, None, None, None, None, None])
        return header, rows

