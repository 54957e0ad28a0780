"""Compare: the open bundle (A) beside another one (B), own or a published YABench folder.

Above, one row per run of either bundle: its verdict, precision, recall, windows, responses and
costs, a cell reading ``A → B`` and highlighted where the two differ, a run in one bundle only
marked so. Below, for the selected pair of runs, their per-window quality side by side — precision
and recall per window of both runs on one chart, and the windows in a table whose differing cells
are highlighted ("only differing windows" hides the rest). The pairing and the comparison are
:mod:`rsp_workbench.gui.results.model` (Qt-free); bundle B and the windows are read on the browser's
background tasks, with progress and Cancel (a content-change run has millions of windows).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Slot
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QSizePolicy,
    QPushButton,
    QSplitter,
    QTableView,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from rsp_workbench.errors import UserError
from rsp_workbench.gui.fit import shown_path, thin_to_pixels
from rsp_workbench.gui.qt import pg
from rsp_workbench.gui.results.common import ResultsView, new_chart, style_plot
from rsp_workbench.gui.results.model import (
    BOTH,
    COMPARED_COLUMNS,
    JUDGED_KEYS,
    ONLY_A,
    WINDOW_METRICS,
    BundleComparison,
    WindowComparison,
    compare_bundles,
    open_for_comparison,
    read_window_comparison,
)
from rsp_workbench.gui.text import escape_html
from rsp_workbench.results.bundle import Bundle
from rsp_workbench.results.reader import not_a_bundle

DIFFERS = "#ffe08a"  # a cell whose values differ
COST_DIFFERS = "#eceff4"  # a cost (RSS, latency, wall time) that differs: it does between any two runs
ONE_SIDE = {ONLY_A: "#dbe9f6", "only B": "#f6e3d4"}  # a run or window in one bundle only
RUN_HEADERS = ("in", "engine", "run", *(header for header, _ in COMPARED_COLUMNS))
WINDOW_HEADERS = ("start\ns", "end\ns", *(f"{metric.replace('_size', '')}\n{side}"
                                           for metric in WINDOW_METRICS for side in ("A", "B")))
COLOURS = {"A": "#0072b2", "B": "#d55e00"}


class WindowTable(QAbstractTableModel):
    """The aligned windows of two runs (all, or only those that differ), read on demand: millions stay cheap."""

    def __init__(self) -> None:
        super().__init__()
        self.comparison: WindowComparison | None = None
        self.rows = np.zeros(0, dtype=np.int64)

    def show(self, comparison: WindowComparison | None, only_differing: bool) -> None:
        self.beginResetModel()
        self.comparison = comparison
        if comparison is None:
            self.rows = np.zeros(0, dtype=np.int64)
        else:
            self.rows = np.flatnonzero(comparison.differing) if only_differing else np.arange(len(comparison))
        self.endResetModel()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(WINDOW_HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return WINDOW_HEADERS[section]
        return None

    def cell(self, row: int, column: int) -> str:
        assert self.comparison is not None
        index = int(self.rows[row])
        if column < 2:
            return f"{(self.comparison.start if column == 0 else self.comparison.end)[index] / 1000:g}"
        metric, side = WINDOW_METRICS[(column - 2) // 2], "AB"[(column - 2) % 2]
        return self.comparison.value_text(side, metric, index)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if self.comparison is None or not index.isValid():
            return None
        row, column = index.row(), index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self.cell(row, column)
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.BackgroundRole:
            return self._background(int(self.rows[row]), column)
        return None

    def _background(self, index: int, column: int) -> QBrush | None:
        comparison = self.comparison
        assert comparison is not None
        if comparison.in_a[index] != comparison.in_b[index]:
            return QBrush(QColor(ONE_SIDE[ONLY_A if comparison.in_a[index] else "only B"]))
        if column >= 2 and comparison.differs[WINDOW_METRICS[(column - 2) // 2]][index]:
            return QBrush(QColor(DIFFERS))
        return None


class CompareView(ResultsView):
    """Bundle A (the open one) and bundle B (chosen here) run by run and, for a pair, window by window."""

    title = "Compare"

    def __init__(self, tasks: Any = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("resultsCompare")
        self.tasks = tasks
        self.a: Bundle | None = None
        self.b: Bundle | None = None
        self.comparison: BundleComparison | None = None
        self.summary = ""  # the status line between reads (a read's progress shows there meanwhile)
        self.reading = ""  # what the running task reads: "B" or "windows"
        self.windows: WindowComparison | None = None
        self.task: Any = None
        self._pending: tuple[Callable[..., None], dict[str, Any]] = (lambda result: None, {})
        self.ask_folder: Callable[[], str | None] = self._ask_folder
        self.choose_button = QPushButton("Bundle B…")
        self.choose_button.setObjectName("compareChoose")
        self.choose_button.setToolTip("Choose bundle B: another result bundle or a published YABench test folder")
        self.choose_button.clicked.connect(self.choose)
        self.names = QLabel()
        self.names.setObjectName("compareNames")
        self.names.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)  # long paths never widen the window
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        self.progress.setMaximumWidth(160)
        self.progress.setVisible(False)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("compareCancel")
        self.cancel_button.setVisible(False)
        self.cancel_button.clicked.connect(self.cancel)
        self.controls.addWidget(self.choose_button)
        self.controls.addWidget(self.names, 10)  # most of the row (the export buttons' spacer gets 1)
        self.controls.addWidget(self.progress)
        self.controls.addWidget(self.cancel_button)
        self.add_export_buttons()

        self.runs_table = QTableWidget(0, len(RUN_HEADERS))
        self.runs_table.setObjectName("compareRuns")
        self.runs_table.setHorizontalHeaderLabels(list(RUN_HEADERS))
        self.runs_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.runs_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.runs_table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.runs_table.verticalHeader().setVisible(False)
        self.runs_table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.runs_table.horizontalHeader().setStretchLastSection(True)
        self.runs_table.itemSelectionChanged.connect(self._on_run_selected)
        self.window_caption = QLabel()
        self.window_caption.setObjectName("compareWindowCaption")
        self.window_caption.setWordWrap(True)
        self.metric_combo = QComboBox()
        for metric in ("precision", "recall"):
            self.metric_combo.addItem(metric, metric)
        self.metric_combo.currentIndexChanged.connect(lambda _: self._draw_windows())
        self.only_differing = QCheckBox("only differing windows")
        self.only_differing.setObjectName("compareOnlyDiffering")
        self.only_differing.toggled.connect(lambda _: self._fill_windows())
        self.chart = new_chart()
        self.plot = self.chart.addPlot()
        style_plot(self.plot, bottom="window end (s)", left="precision")
        self.plot.addLegend(offset=(-10, -10))  # bottom right: precision and recall are mostly near 1
        self.window_model = WindowTable()
        self.window_table = QTableView()
        self.window_table.setObjectName("compareWindows")
        self.window_table.setModel(self.window_model)
        self.window_table.verticalHeader().setVisible(False)
        self.window_table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.window_table.horizontalHeader().setStretchLastSection(True)

        options = QWidget()
        row = QHBoxLayout(options)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.window_caption, 1)
        row.addWidget(QLabel("chart"))
        row.addWidget(self.metric_combo)
        row.addWidget(self.only_differing)
        lower = QSplitter(Qt.Orientation.Horizontal)
        lower.addWidget(self.chart)
        lower.addWidget(self.window_table)
        lower.setSizes([500, 500])
        below = QWidget()
        below_layout = QVBoxLayout(below)
        below_layout.setContentsMargins(0, 0, 0, 0)
        below_layout.addWidget(options)
        below_layout.addWidget(lower, 1)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.runs_table)
        splitter.addWidget(below)
        splitter.setSizes([220, 380])
        layout = QVBoxLayout(self.body)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(splitter)
        self.show_message("Open a result bundle, then choose another one with <b>Compare with…</b> "
                          "(an own bundle or a published YABench folder).")

    # ------------------------------------------------------------------ bundles
    def set_data(self, data: Any) -> None:
        """The browser opened bundle A: compare it with B again (B stays chosen)."""
        self.a = data.bundle
        if self.task is not None and self.reading == "B":
            return  # bundle B is being read: it is compared with this A when it arrives
        self._compare()

    @Slot()
    def choose(self) -> Any:
        folder = self.ask_folder()
        return self.compare_with(folder) if folder else None

    def compare_with(self, folder: str | Path) -> Any:
        """Read bundle B (on a task when there are tasks) and compare; returns the task or None."""
        refused = not_a_bundle(Path(folder).expanduser())
        if refused is not None:
            self.status.setText(f"<span style='color:#c62828'>Not compared: {escape_html(str(refused))}</span>")
            return None
        self.reading = "B"
        return self._start(f"read {Path(folder).name} for comparison",
                           lambda state: open_for_comparison(Path(folder).expanduser(), lambda: state.cancelled,
                                                             state.report_progress),
                           self._on_b_read)

    @Slot(object)
    def _on_b_read(self, bundle: Bundle | None) -> None:
        self._finish_task()
        if bundle is None:
            self.status.setText("cancelled: bundle B was not read")
            return
        self.b = bundle
        self._compare()

    def _compare(self) -> None:
        """Pair the runs of A and B afresh: nothing of the previous pair stays (its windows, chart, caption)."""
        if self.task is not None:  # the windows of a pair of the previous comparison: not wanted any more
            self.cancel()
            self._finish_task()
        self.windows = None
        self.window_model.show(None, False)
        self._draw_windows()
        self.window_caption.setText("")
        self.runs_table.clearSelection()
        if self.a is None or self.b is None:
            if self.a is not None:
                self.show_message(f"Bundle A is <b>{escape_html(self.a.name)}</b>. Choose bundle B with "
                                  "<b>Compare with…</b> (an own bundle or a published YABench folder).")
            return
        self.comparison = compare_bundles(self.a, self.b)
        self.names.setText(" &nbsp; ".join(f"<b>{side}</b> <code>{shown_path(self.names, _short(bundle.folder), 260)}</code>"
                                           for side, bundle in (("A", self.a), ("B", self.b))))
        self.names.setToolTip(f"A: {self.a.folder}\nB: {self.b.folder}")
        self._fill_runs()
        self.show_content()
        self.summary = self.comparison.summary_text() + "; select a run in both to compare its windows"
        self.status.setText(self.summary)
        first = next((i for i, run in enumerate(self.comparison.runs) if run.side == BOTH), None)
        if first is not None:
            self.runs_table.selectRow(first)
        else:
            self.window_caption.setText("No run is in both bundles: nothing to compare window by window.")

    def _fill_runs(self) -> None:
        assert self.comparison is not None
        table = self.runs_table
        table.setRowCount(len(self.comparison.runs))
        for r, run in enumerate(self.comparison.runs):
            runs = run.run_a if run.run_a == run.run_b or not run.run_b else (
                f"{run.run_a} ↔ {run.run_b}" if run.run_a else run.run_b)
            texts = [run.side, run.engine, runs or "", *(cell.text for cell in run.cells)]
            for c, text in enumerate(texts):
                item = QTableWidgetItem(text)
                if c >= 3 and run.cells[c - 3].differs and run.side == BOTH:
                    judged = COMPARED_COLUMNS[c - 3][1] in JUDGED_KEYS
                    item.setBackground(QBrush(QColor(DIFFERS if judged else COST_DIFFERS)))
                    item.setToolTip(f"A: {run.cells[c - 3].a}\nB: {run.cells[c - 3].b}")
                elif run.side != BOTH:
                    item.setBackground(QBrush(QColor(ONE_SIDE[run.side])))
                    item.setToolTip(f"this run is {run.side.replace('only', 'only in')}")
                table.setItem(r, c, item)

    def run_cell(self, row: int, header: str) -> str:
        return self.runs_table.item(row, RUN_HEADERS.index(header)).text()

    # ------------------------------------------------------------------ windows
    @Slot()
    def _on_run_selected(self) -> None:
        rows = {index.row() for index in self.runs_table.selectedIndexes()}
        if self.comparison is None or len(rows) != 1:
            return
        run = self.comparison.runs[rows.pop()]
        if run.side != BOTH:
            self.windows = None
            self.window_model.show(None, False)
            self._draw_windows()
            self.window_caption.setText(f"{escape_html(run.run_a or run.run_b or '')} is {run.side.replace('only', 'only in')}"
                                        ": no windows to compare")
            return
        a, b = self.a, self.b
        assert a is not None and b is not None and run.run_a and run.run_b
        self.window_caption.setText(f"reading the windows of {escape_html(run.run_a)} …")
        self.reading = "windows"
        self._start(f"compare windows of {run.run_a}",
                    lambda state: read_window_comparison(a, str(run.run_a), b, str(run.run_b),
                                                         lambda: state.cancelled, state.report_progress),
                    self._on_windows_read, run_label=f"{run.run_a} (A) and {run.run_b} (B)")

    def _on_windows_read(self, windows: WindowComparison | None, run_label: str = "") -> None:
        self._finish_task()
        if windows is None:
            self.window_caption.setText("cancelled: the windows were not compared")
            return
        self.windows = windows
        self.window_caption.setText(f"{escape_html(run_label)}: {escape_html(windows.summary_text())}")
        self._fill_windows()

    def _fill_windows(self) -> None:
        self.window_model.show(self.windows, self.only_differing.isChecked())
        self._draw_windows()

    def _draw_windows(self) -> None:
        self.plot.clear()
        metric = str(self.metric_combo.currentData())
        self.plot.setLabel("left", metric)
        windows = self.windows
        if windows is None or not len(windows):
            return
        order = np.argsort(windows.end, kind="stable")
        x = windows.end[order] / 1000.0
        pixels = max(200, self.chart.width())  # a run of millions of windows is drawn as the pixels show it
        for side, values in (("A", windows.a[metric][order]), ("B", windows.b[metric][order])):
            shown = ~np.isnan(values)
            xs, ys = thin_to_pixels(x[shown], values[shown], pixels)
            style = Qt.PenStyle.SolidLine if side == "A" else Qt.PenStyle.DashLine
            self.plot.plot(xs, ys, name=side, pen=pg.mkPen(COLOURS[side], width=2, style=style),
                           symbol="o" if len(xs) <= 200 else None, symbolSize=5, symbolBrush=COLOURS[side])
        differing = windows.differing[order]
        if differing.any():
            y = np.where(np.isnan(windows.a[metric]), windows.b[metric], windows.a[metric])[order]
            xs, ys = thin_to_pixels(x[differing], np.nan_to_num(y[differing]), pixels)
            self.plot.plot(xs, ys, pen=None, symbol="x", symbolSize=11, symbolPen=pg.mkPen("#c62828", width=2),
                           name="differ")
        self.plot.setYRange(-0.05, 1.05)

    # ------------------------------------------------------------------ background reads
    def _start(self, name: str, work: Callable[[Any], Any], deliver: Callable[..., None], **extra: Any) -> Any:
        """Run ``work(state)`` on a task with progress and Cancel, or at once without tasks."""
        self.cancel()
        if self.tasks is None:
            try:
                result = work(_NoState())
            except (UserError, OSError) as error:
                self._on_failed(error, "")
                return None
            deliver(result, **extra)
            return None
        task = self.tasks.start(name, work, user_work=False)
        self._pending = (deliver, extra)
        task.finished.connect(self._on_task_finished)
        task.failed.connect(self._on_failed)
        task.progress.connect(self._on_progress)
        self.task = task
        self.progress.setValue(0)
        self.progress.setVisible(True)
        self.cancel_button.setVisible(True)
        return task

    @Slot(object)
    def _on_task_finished(self, result: Any) -> None:
        if self.sender() is not None and self.sender() is not self.task:
            return  # superseded (cancelled) by a newer read
        deliver, extra = self._pending
        deliver(result, **extra)

    @Slot()
    def cancel(self) -> None:
        if self.task is not None and self.task.is_running():
            self.task.cancel()
            self.status.setText("cancelling …")

    def _finish_task(self) -> None:
        self.task = None
        self.status.setText(self.summary)
        self.progress.setVisible(False)
        self.cancel_button.setVisible(False)

    @Slot(float, str)
    def _on_progress(self, fraction: float, message: str) -> None:
        self.progress.setValue(int(fraction * 100))
        self.status.setText(escape_html(message) + " …")

    @Slot(object, str)
    def _on_failed(self, error: object, trace: str) -> None:
        if self.sender() is not None and self.sender() is not self.task:
            return
        self._finish_task()
        kind = "" if isinstance(error, UserError) else f"{type(error).__name__}: "
        self.status.setText(f"<span style='color:#c62828'>Not compared: {escape_html(kind + str(error))}</span>")

    # ------------------------------------------------------------------ export
    def chart_widget(self) -> QWidget:
        return self.body

    def csv_table(self) -> tuple[list[str], Iterable[Sequence[Any]]]:
        header = ["in", "engine", "run A", "run B", *(f"{key} {side}" for _, key in COMPARED_COLUMNS for side in "AB")]
        runs = self.comparison.runs if self.comparison is not None else ()
        return header, ([run.side, run.engine, run.run_a, run.run_b, *(v for cell in run.cells for v in (cell.a, cell.b))]
                        for run in runs)

    def _ask_folder(self) -> str | None:
        start = str(self.a.folder.parent) if self.a is not None else str(Path.cwd())
        return QFileDialog.getExistingDirectory(self, "Bundle B: a result bundle or a YABench test folder", start) or None


def _short(folder: Path) -> str:
    """A bundle as the names line shows it: its folder and the one above (Experiment_1/csparql)."""
    return "/".join(folder.parts[-2:])


class _NoState:
    """What a worker sees when it runs at once (no tasks): never cancelled, progress unseen."""

    cancelled = False

    def report_progress(self, fraction: float, message: str = "") -> None:
        pass
