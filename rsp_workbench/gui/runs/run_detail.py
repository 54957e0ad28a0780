"""The Runs tab's detail of the selected run: header, per-stage progress with ETA, error, the engine
runs, the live RSS/CPU chart of one engine run, and the log.

Drawn from the run's :class:`~rsp_workbench.gui.runs.model.ExperimentRun` only when it changed
(its version and log count), so the 10 Hz refresh costs nothing while nothing happens.
"""

from __future__ import annotations

from typing import Any, Callable

from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGridLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QProgressBar,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from rsp_workbench.gui.fit import fit_samples, shown_path
from rsp_workbench.gui.qt import pg  # PySide6 first, then pyqtgraph
from rsp_workbench.gui.runs.model import (
    CANCELLING,
    KEPT_LISTED,
    RUNNING,
    STAGES,
    STATUS_COLOURS,
    ExperimentRun,
    elapsed_text,
    engine_run_cells,
    verdict_colour,
)
from rsp_workbench.gui.text import escape_html, plural

LONE_SAMPLE_SPAN_S = 0.05  # a lone sample's time axis: its time either side, at least this
FEW_SAMPLES = 60  # up to this many samples, the chart marks each one
RSS_COLOUR, CPU_COLOUR = "#1565c0", "#d81b60"
STAGE_LABELS = {"generate": "Generate streams", "engines": "Engine runs", "oracle": "Oracle"}
RUN_ID_WIDTH = 170  # px: the run table's widest run-id / engine column
RUN_COLUMNS = ("engine run", "status / verdict", "engine", "responses", "stimuli", "peak RSS MB")  # verdict early: in view at 1024 px
VERDICT_COLUMN = RUN_COLUMNS.index("status / verdict")
NOTHING = (-1, -1, -1)


class RunDetail(QWidget):
    """One run's stages, engine runs, live chart, log and error; :meth:`show_run` draws what changed."""

    def __init__(self, clock: Callable[[], float], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.clock = clock
        self._drawn: tuple[int, int, int] = NOTHING  # (entry, version, log lines) last drawn
        self._entry: ExperimentRun | None = None
        self._log_entry: int | None = None
        self._log_shown = 0
        self.followed_run: str | None = None  # engine run picked in the table (None: follow the current one)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.header = QLabel()
        self.header.setObjectName("runHeader")
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.header.setWordWrap(True)  # with the bundle path elided: never wider than the window
        layout.addWidget(self.header)
        layout.addLayout(self._build_stages())
        self.error_label = QLabel()
        self.error_label.setObjectName("runError")
        self.error_label.setWordWrap(True)
        self.error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error_label.setStyleSheet("color: #c62828; background: #ffebee; padding: 4px")
        layout.addWidget(self.error_label)

        self.run_table = QTableWidget(0, len(RUN_COLUMNS))
        self.run_table.setObjectName("engineRuns")
        self.run_table.setHorizontalHeaderLabels(list(RUN_COLUMNS))
        self.run_table.verticalHeader().setVisible(False)
        self.run_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.run_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.run_table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        # sized to the contents on each redraw, the run ids capped (elided in the middle) so that the
        # verdict column stays in view at 1024 px
        self.run_table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.run_table.horizontalHeader().setStretchLastSection(True)
        self.run_table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.run_table.setWordWrap(False)
        self.run_table.itemSelectionChanged.connect(self._on_run_picked)

        self.log_pane = QPlainTextEdit()
        self.log_pane.setObjectName("runLog")
        self.log_pane.setReadOnly(True)
        self.log_pane.setMaximumBlockCount(10_000)
        # long lines wrap: unwrapped, each append scrolled sideways to the end of the longest line
        # and every line lost its beginning (at 1024 px)
        self.log_pane.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)

        middle = QSplitter(Qt.Orientation.Horizontal)
        middle.addWidget(self.run_table)
        middle.addWidget(self._build_chart())
        middle.setSizes([520, 480])
        vertical = QSplitter(Qt.Orientation.Vertical)
        vertical.addWidget(middle)
        vertical.addWidget(self.log_pane)
        vertical.setSizes([420, 200])
        layout.addWidget(vertical, 1)

    def _build_stages(self) -> QGridLayout:
        stages = QGridLayout()
        self.stage_bars: dict[str, QProgressBar] = {}
        for row, name in enumerate(STAGES):
            bar = QProgressBar()
            bar.setObjectName(f"stage_{name}")
            bar.setRange(0, 1000)
            bar.setTextVisible(True)
            self.stage_bars[name] = bar
            stages.addWidget(QLabel(STAGE_LABELS[name]), row, 0)
            stages.addWidget(bar, row, 1)
        self.current_label = QLabel()
        self.current_label.setObjectName("runCurrent")
        stages.addWidget(self.current_label, len(STAGES), 0, 1, 2)
        return stages

    def _build_chart(self) -> QWidget:
        chart_box = QWidget()
        chart_layout = QVBoxLayout(chart_box)
        chart_layout.setContentsMargins(0, 0, 0, 0)
        self.live_label = QLabel()
        self.live_label.setObjectName("liveCounters")
        self.live_label.setWordWrap(True)
        chart_layout.addWidget(self.live_label)
        self.chart = pg.GraphicsLayoutWidget()
        self.chart.setObjectName("kpiChart")
        self.rss_plot = self.chart.addPlot(row=0, col=0)
        self.cpu_plot = self.chart.addPlot(row=1, col=0)
        self.rss_plot.setLabel("left", "RSS", units="MB")
        self.cpu_plot.setLabel("left", "CPU", units="%")
        self.cpu_plot.setLabel("bottom", "time since engine start", units="s")
        self.cpu_plot.setXLink(self.rss_plot)
        # the time axis is the CPU plot's: values and label under it only, always in seconds (the RSS plot's
        # own tick values read as an RSS axis in seconds, and the SI prefix switched to ms at some widths)
        self.rss_plot.getAxis("bottom").setStyle(showValues=False)
        for axis in (self.cpu_plot.getAxis("bottom"), self.rss_plot.getAxis("left"), self.cpu_plot.getAxis("left")):
            axis.enableAutoSIPrefix(False)
        for plot in (self.rss_plot, self.cpu_plot):
            plot.showGrid(x=True, y=True, alpha=0.2)
            plot.setClipToView(True)
            plot.setDownsampling(auto=True, mode="peak")
            plot.setMouseEnabled(x=True, y=False)
        self.rss_curve = self.rss_plot.plot([], [], pen=pg.mkPen(RSS_COLOUR, width=2), symbolSize=5,
                                            symbolBrush=RSS_COLOUR, symbolPen=None)
        self.cpu_curve = self.cpu_plot.plot([], [], pen=pg.mkPen(CPU_COLOUR, width=2), symbolSize=5,
                                            symbolBrush=CPU_COLOUR, symbolPen=None)
        self.cpu_plot.setYRange(0, 100, padding=0.05)
        chart_layout.addWidget(self.chart, 1)
        return chart_box

    # ------------------------------------------------------------------ drawing
    def show_run(self, entry: ExperimentRun | None, *, force: bool = False) -> bool:
        """Draw ``entry`` (None: the empty state) if it changed since it was last drawn, or if ``force``;
        whether it was drawn (else at most the stages' clocks moved)."""
        self._entry = entry
        key = NOTHING if entry is None else (entry.ident, entry.version, entry.log_count)
        if not force and key == self._drawn:
            if entry is not None and entry.status in (RUNNING, CANCELLING):
                self.redraw_stages(entry)  # ETAs move with the clock
            return False
        rows_changed = force or entry is None or key[:1] != self._drawn[:1] or key[2] != self._drawn[2]
        self._drawn = key
        if entry is None:
            self._show_nothing()
            return True
        colour = STATUS_COLOURS.get(entry.status, "#000")
        folder = str(entry.bundle or entry.request.out_dir)
        self.header.setToolTip(f"bundle {folder}")
        where = f" · bundle <code>{shown_path(self.header, folder)}</code>"
        self.header.setText(f"<b>{escape_html(entry.name)}</b>"
                            + (f" · size {escape_html(entry.request.size)}" if entry.request.size else "")
                            + (f" · {plural(total, 'engine run')}" if (total := entry.stages["engines"].total) else "")
                            + f" · scheduler {entry.request.scheduler}"
                            + f" · <span style='color:{colour}'><b>{entry.status}</b></span>{where}")
        self.redraw_stages(entry)
        self._show_error(entry)
        if rows_changed:
            self._redraw_rows(entry)
        elif entry.current_run is not None:
            self._redraw_row(entry, entry.current_run)
        self._redraw_log(entry)
        self.redraw_chart(entry)
        return True

    def _show_nothing(self) -> None:
        self.header.setText("<i>Queue an experiment above: the designer's (Ctrl+R) or a file.</i>")
        self.error_label.hide()
        self.current_label.clear()
        for bar in self.stage_bars.values():
            bar.setValue(0)
            bar.setFormat("")
        self.run_table.setRowCount(0)
        self.log_pane.clear()
        self._log_entry = None
        self.live_label.clear()
        self.rss_curve.setData([], [])
        self.cpu_curve.setData([], [])

    def _show_error(self, entry: ExperimentRun) -> None:
        if not entry.error:
            self.error_label.hide()
            return
        kept = entry.completed_runs()
        done = (f"<br><b>Kept in the bundle</b>: {len(kept)} finished engine run(s): "
                + escape_html(", ".join(f"{t.run_id} ({t.verdict or t.status})" for t in kept[:KEPT_LISTED]))
                + (" …" if len(kept) > KEPT_LISTED else "")) if kept else "<br>No engine run finished."
        self.error_label.setText(f"<b>Error</b><br>{escape_html(entry.error).replace(chr(10), '<br>')}{done}")
        self.error_label.show()

    def redraw_stages(self, entry: ExperimentRun) -> None:
        now = self.clock()
        for name, bar in self.stage_bars.items():
            stage = entry.stages[name]
            fraction = stage.fraction()
            if fraction is None and stage.active and entry.status in (RUNNING, CANCELLING):
                bar.setRange(0, 0)  # busy: unknown total (Spark scheduler)
            else:
                bar.setRange(0, 1000)
                bar.setValue(int(1000 * (fraction or (1.0 if stage.expected == 0 else 0.0))))
            text = entry.stage_text(name, now)
            current = " ".join(stage.current.split())  # one line: a progress bar does not wrap
            bar.setToolTip(f"{text} · {current}" if current else text)
            if current:
                room = bar.contentsRect().width() - bar.fontMetrics().horizontalAdvance(text + " · ") - 16
                current = bar.fontMetrics().elidedText(current, Qt.TextElideMode.ElideMiddle, max(0, room))
            bar.setFormat(f"{text} · {current}" if current else text)
        self.current_label.setText(elapsed_text(entry, now))

    def _redraw_rows(self, entry: ExperimentRun) -> None:
        traces = list(entry.engine_runs.values())
        self.run_table.setRowCount(len(traces))
        for row, trace in enumerate(traces):
            self._fill_row(row, trace)
        self.run_table.resizeColumnsToContents()
        for column in (0, RUN_COLUMNS.index("engine")):  # long run ids and engine names: elided
            if self.run_table.columnWidth(column) > RUN_ID_WIDTH:
                self.run_table.setColumnWidth(column, RUN_ID_WIDTH)

    def _redraw_row(self, entry: ExperimentRun, run_id: str) -> None:
        for row, key in enumerate(entry.engine_runs):
            if key == run_id:
                self._fill_row(row, entry.engine_runs[key])
                self._widen_to_contents()
                return

    def _widen_to_contents(self) -> None:
        """A count that grew ("25/610" after "0/610") widens its column instead of being cut to "25…61"."""
        for column in range(self.run_table.columnCount()):
            if column not in (0, RUN_COLUMNS.index("engine")):
                wanted = self.run_table.sizeHintForColumn(column)
                if wanted > self.run_table.columnWidth(column):
                    self.run_table.setColumnWidth(column, wanted)

    def _fill_row(self, row: int, trace: Any) -> None:
        for column, text in enumerate(engine_run_cells(trace)):
            item = self.run_table.item(row, column)
            if item is None:
                item = QTableWidgetItem()
                self.run_table.setItem(row, column, item)
            if item.text() != text:
                item.setText(text)
            if column == VERDICT_COLUMN:
                item.setForeground(QBrush(QColor(verdict_colour(text))))
            if column == 0 and trace.error:
                item.setToolTip(trace.error)

    def _redraw_log(self, entry: ExperimentRun) -> None:
        if self._log_entry != entry.ident:
            self.log_pane.setPlainText("\n".join(entry.log))
            self._log_entry = entry.ident
            self._log_shown = entry.log_count
        new = entry.log_count - self._log_shown
        if new > 0:
            for line in list(entry.log)[-min(new, len(entry.log)):]:
                self.log_pane.appendPlainText(line)
            self._log_shown = entry.log_count

    @Slot()
    def _on_run_picked(self) -> None:
        rows = self.run_table.selectionModel().selectedRows()
        if rows:
            item = self.run_table.item(rows[0].row(), 0)
            self.followed_run = item.text() if item is not None else None
            self.redraw_chart(self._entry)

    def redraw_chart(self, entry: ExperimentRun | None) -> None:
        """RSS and CPU of the followed engine run (picked in the table, else the current or last one)."""
        if entry is None:
            return
        if not entry.request.live_kpis:
            self.live_label.setText("Live RSS/CPU samples are not available with the Spark scheduler "
                                    "(engines run on executors); the bundle's P_*.csv files have them.")
            self.rss_curve.setData([], [])
            self.cpu_curve.setData([], [])
            return
        run_id = self.followed_run or entry.current_run or next(reversed(entry.engine_runs), None)
        trace = entry.engine_runs.get(run_id) if run_id else None
        if trace is None:
            self.live_label.setText("RSS and CPU of the engine process appear here while an engine runs.")
            self.rss_curve.setData([], [])
            self.cpu_curve.setData([], [])
            return
        stimuli = f"{trace.stimuli_done}/{trace.stimuli}" if trace.stimuli is not None else str(trace.stimuli_done)
        rss = f"{trace.rss_mb[-1]:.1f} MB" if trace.rss_mb else "–"
        cpu = f"{trace.cpu_percent[-1]:.0f} %" if trace.cpu_percent else "–"
        self.live_label.setText(f"<b>{escape_html(trace.run_id)}</b> · responses <b>{trace.responses}</b> · "
                                f"stimuli {stimuli} · RSS {rss} · CPU {cpu} · {plural(len(trace.times), 'sample')}")
        symbol = "o" if len(trace.times) <= FEW_SAMPLES else None  # a lone sample is still visible
        for curve in (self.rss_curve, self.cpu_curve):
            curve.setSymbol(symbol)
        self.rss_curve.setData(trace.times, trace.rss_mb)
        self.cpu_curve.setData(trace.times, trace.cpu_percent)
        # one sample too: no −10…10 s, no RSS < 0, and a lone sample at 0.05 s on 0…0.1 s, not 0…1 s
        lone_span = min(1.0, max([LONE_SAMPLE_SPAN_S, *trace.times[:1]]))
        fit_samples(self.rss_plot, [trace.times], [trace.rss_mb], x_span=lone_span)
        self.cpu_plot.setYRange(0, max(100.0, max(trace.cpu_percent, default=0.0)), padding=0.05)
