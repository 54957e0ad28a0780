"""The Runs tab: a queue of experiment runs with per-stage progress, live RSS/CPU, log and Cancel.

A thin view over :mod:`rsp_workbench.gui.runs.model`. Each run is one TaskRegistry task (user
work, so closing the window asks and cancels it) whose plain worker calls
``run_experiment``; its progress events go into a thread-safe buffer that a 10 Hz timer
drains into the model and draws (never one redraw per sample, so the GUI thread stays
free). External engine commands are listed in a dialog *before* a run is queued;
declining queues nothing. When a run ends (ok, failed or cancelled) ``bundleReady``
carries its result bundle folder.
"""

from __future__ import annotations

import queue
import time
from datetime import datetime
from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtGui import QBrush, QCloseEvent, QColor, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QButtonGroup,
    QComboBox,
    QFileDialog,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QRadioButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from rsp_workbench.errors import UserError
from rsp_workbench.experiment.model import Experiment
from rsp_workbench.experiment.runs import expand_runs
from rsp_workbench.gui.qt import pg  # PySide6 first, then pyqtgraph
from rsp_workbench.gui.results.common import fit_samples, plural, shown_path
from rsp_workbench.gui.runs.model import (
    CANCELLING,
    FINISHED,
    QUEUED,
    RUNNING,
    SCHEDULERS,
    STAGES,
    ExperimentRun,
    RunQueue,
    RunRequest,
    bundle_folder,
    default_results_dir,
    default_size,
    execute_request,
    experiment_from_designer,
    external_commands_text,
    format_duration,
    sized,
)
from rsp_workbench.gui.tasks import Task, TaskRegistry, TaskState

REFRESH_MS = 100  # 10 Hz: buffered events are applied and drawn at this rate
FEW_SAMPLES = 60  # up to this many samples, the chart marks each one
STATUS_COLOURS = {QUEUED: "#616161", RUNNING: "#1565c0", CANCELLING: "#ef6c00", "ok": "#2e7d32",
                  "failed": "#c62828", "cancelled": "#ef6c00"}
RSS_COLOUR, CPU_COLOUR = "#1565c0", "#d81b60"
STAGE_LABELS = {"generate": "Generate streams", "engines": "Engine runs", "oracle": "Oracle"}
ID_ROLE = Qt.ItemDataRole.UserRole
RUN_ID_WIDTH = 170  # px: the run table's widest run-id / engine column
RUN_COLUMNS = ("engine run", "status / verdict", "engine", "responses", "stimuli", "peak RSS MB")  # verdict early: in view at 1024 px
VERDICT_COLUMN = RUN_COLUMNS.index("status / verdict")


class RunManagerView(QWidget):
    """Queue list, enqueue controls, and the selected run's stages, engine runs, live chart, log and error."""

    bundleReady = Signal(str)  # a run finished: its bundle (Results loads it in the background)
    resultsRequested = Signal(str)  # the user asked to see a bundle ("Open results")

    def __init__(self, tasks: TaskRegistry, designer: Any = None, *, results_dir: Path | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("runs")
        self.tasks = tasks
        self.designer = designer
        self.model = RunQueue()
        self._events: queue.SimpleQueue[tuple[int, Any]] = queue.SimpleQueue()
        self._task: Task | None = None
        self._closing = False
        self._drawn: tuple[int, int, int] = (-1, -1, -1)  # (entry, version, log lines) last drawn
        self._log_entry: int | None = None
        self._log_shown = 0
        self._followed_run: str | None = None  # engine run picked in the table (None: follow the current one)
        self._source_experiment: Experiment | None = None
        self.clock: Callable[[], float] = time.monotonic
        # dialogs are attributes so that tests and scripts can replace them
        self.ask_confirm: Callable[[str], bool] = self._ask_confirm
        self.ask_open_path: Callable[[], str | None] = self._ask_open_path
        self.ask_results_dir: Callable[[], str | None] = self._ask_results_dir
        self.show_error: Callable[[str, str], None] = self._show_error

        self.timer = QTimer(self)
        self.timer.setInterval(REFRESH_MS)
        self.timer.timeout.connect(self.drain)

        layout = QVBoxLayout(self)
        layout.addWidget(self._build_enqueue_box(results_dir or default_results_dir()))
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self._build_queue_panel())
        splitter.addWidget(self._build_detail_panel())
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 4)
        splitter.setSizes([260, 1000])
        layout.addWidget(splitter, 1)
        self.refresh_source()
        self._show_selected()

    # ------------------------------------------------------------------ building
    def _build_enqueue_box(self, results_dir: Path) -> QGroupBox:
        box = QGroupBox("New run")
        self.designer_radio = QRadioButton("Designer's experiment")
        self.file_radio = QRadioButton("File:")
        self.designer_radio.setChecked(self.designer is not None)
        self.file_radio.setChecked(self.designer is None)
        self.designer_radio.setEnabled(self.designer is not None)
        self._source_group = QButtonGroup(self)
        self._source_group.addButton(self.designer_radio)
        self._source_group.addButton(self.file_radio)
        self.designer_radio.toggled.connect(self.refresh_source)
        self.file_edit = QLineEdit()
        self.file_edit.setPlaceholderText("experiment file (YAML)")
        self.file_edit.editingFinished.connect(self._on_file_edited)
        browse = QPushButton("Browse…")
        browse.clicked.connect(self.browse_file)
        self.source_label = QLabel()
        self.source_label.setObjectName("runSource")
        self.source_label.setWordWrap(True)
        self.size_combo = QComboBox()
        self.size_combo.setObjectName("runSize")
        self.size_combo.currentIndexChanged.connect(self._describe_source)
        self.scheduler_combo = QComboBox()
        for name in SCHEDULERS:
            self.scheduler_combo.addItem(name, name)
        self.scheduler_combo.setToolTip("local: one measured engine run at a time, live KPIs; "
                                        "spark: one Spark task per run on the configured master (no live KPIs)")
        self.results_edit = QLineEdit(str(results_dir))
        self.results_edit.setObjectName("resultsDir")
        self.results_edit.setToolTip("each run writes a new bundle folder NAME-YYYYmmdd-HHMMSS here")
        results_browse = QPushButton("Choose…")
        results_browse.clicked.connect(self.browse_results_dir)
        self.enqueue_button = QPushButton("Run ▶")
        self.enqueue_button.setObjectName("enqueueRun")
        self.enqueue_button.setToolTip("queue this experiment; runs start one after another")
        self.enqueue_button.clicked.connect(self.enqueue_selected_source)

        first = QHBoxLayout()
        first.addWidget(self.designer_radio)
        first.addSpacing(12)
        first.addWidget(self.file_radio)
        first.addWidget(self.file_edit, 2)
        first.addWidget(browse)
        first.addSpacing(12)
        first.addWidget(self.source_label, 3)
        second = QHBoxLayout()
        for label, widget in (("Size", self.size_combo), ("Scheduler", self.scheduler_combo)):
            second.addWidget(QLabel(label))
            second.addWidget(widget)
            second.addSpacing(12)
        second.addWidget(QLabel("Results folder"))
        second.addWidget(self.results_edit, 1)
        second.addWidget(results_browse)
        second.addSpacing(12)
        second.addWidget(self.enqueue_button)
        rows = QVBoxLayout(box)
        rows.addLayout(first)
        rows.addLayout(second)
        return box

    def _build_queue_panel(self) -> QWidget:
        panel = QWidget()
        layout = QVBoxLayout(panel)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel("<b>Queue</b> (one run at a time)"))
        self.queue_list = QListWidget()
        self.queue_list.setObjectName("runQueue")
        self.queue_list.currentItemChanged.connect(self._show_selected)
        layout.addWidget(self.queue_list, 1)
        buttons = QHBoxLayout()
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("cancelRun")
        self.cancel_button.setToolTip("stop the running experiment: its engine process and Spark jobs")
        self.cancel_button.clicked.connect(self.cancel_selected)
        self.remove_button = QPushButton("Remove")
        self.remove_button.setToolTip("take a queued (or finished) run off the list")
        self.remove_button.clicked.connect(self.remove_selected)
        self.open_button = QPushButton("Open results")
        self.open_button.setToolTip("show the bundle in the Results tab")
        self.open_button.clicked.connect(self.open_selected_bundle)
        for button in (self.cancel_button, self.remove_button, self.open_button):
            buttons.addWidget(button)
        layout.addLayout(buttons)
        return panel

    def _build_detail_panel(self) -> QWidget:
        panel = QWidget()
        layout = QVBoxLayout(panel)
        layout.setContentsMargins(0, 0, 0, 0)
        self.header = QLabel()
        self.header.setObjectName("runHeader")
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.header.setWordWrap(True)  # with the bundle path elided: never wider than the window
        layout.addWidget(self.header)
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
        layout.addLayout(stages)
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

        self.log_pane = QPlainTextEdit()
        self.log_pane.setObjectName("runLog")
        self.log_pane.setReadOnly(True)
        self.log_pane.setMaximumBlockCount(10_000)
        self.log_pane.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)

        middle = QSplitter(Qt.Orientation.Horizontal)
        middle.addWidget(self.run_table)
        middle.addWidget(chart_box)
        middle.setSizes([520, 480])
        vertical = QSplitter(Qt.Orientation.Vertical)
        vertical.addWidget(middle)
        vertical.addWidget(self.log_pane)
        vertical.setSizes([420, 200])
        layout.addWidget(vertical, 1)
        return panel

    # ------------------------------------------------------------------ choosing what to run
    def refresh_source(self) -> None:
        """Describe the chosen experiment and offer its sizes (keeping the current choice if it has it)."""
        self._source_experiment = None
        try:
            experiment = self.source_experiment()
        except UserError as error:
            self.source_label.setText(f"<span style='color:#c62828'>{_esc(str(error))}</span>")
            sizes: tuple[str, ...] = ()
        else:
            self._source_experiment = experiment
            sizes = tuple(experiment.sizes)
        previous = self.size_combo.currentData()
        self.size_combo.blockSignals(True)
        self.size_combo.clear()
        self.size_combo.addItem("none (as written)", None)
        for size in sizes:
            self.size_combo.addItem(size, size)
        chosen = default_size(sizes, previous)
        self.size_combo.setCurrentIndex(max(0, self.size_combo.findData(chosen)) if chosen else 0)
        self.size_combo.blockSignals(False)
        self._describe_source()

    @Slot()
    def _describe_source(self) -> None:
        """Name, run count *at the chosen size* and sizes of the chosen experiment."""
        experiment = self._source_experiment
        if experiment is None:
            return
        size = self.size_combo.currentData()
        try:
            runs = len(expand_runs(sized(experiment, size)))
        except UserError as error:
            self.source_label.setText(f"<span style='color:#c62828'>{_esc(str(error))}</span>")
            return
        at = f" at size {_esc(size)}" if size else ""
        self.source_label.setText(f"<b>{_esc(experiment.name)}</b> · {plural(runs, 'run')}{at}"
                                  + (f" · sizes: {_esc(', '.join(experiment.sizes))}" if experiment.sizes else ""))

    def source_experiment(self) -> Experiment:
        """The experiment of the chosen source (UserError naming file/line/field if it is not valid)."""
        if self.designer_radio.isChecked() and self.designer is not None:
            self.designer.flush_pending_edits()
            return experiment_from_designer(self.designer.model)
        text = self.file_edit.text().strip()
        if not text:
            raise UserError("choose an experiment file")
        from rsp_workbench.experiment import load_experiment

        return load_experiment(Path(text).expanduser())

    @Slot()
    def browse_file(self) -> None:
        path = self.ask_open_path()
        if path:
            self.file_edit.setText(path)
            self.file_radio.setChecked(True)
            self.refresh_source()

    @Slot()
    def _on_file_edited(self) -> None:
        if self.file_edit.text().strip():
            self.file_radio.setChecked(True)
        self.refresh_source()

    @Slot()
    def browse_results_dir(self) -> None:
        path = self.ask_results_dir()
        if path:
            self.results_edit.setText(path)

    def results_dir(self) -> Path:
        return Path(self.results_edit.text().strip() or str(default_results_dir())).expanduser()

    # ------------------------------------------------------------------ queueing
    @Slot()
    def enqueue_selected_source(self) -> ExperimentRun | None:
        """Queue the chosen experiment at the chosen size (after confirming its external commands)."""
        try:
            experiment = self.source_experiment()
        except UserError as error:
            self.show_error("Cannot run this experiment", str(error))
            return None
        size = self.size_combo.currentData()
        if size is not None and size not in experiment.sizes:
            size = default_size(tuple(experiment.sizes), None)
        source = "designer" if self.designer_radio.isChecked() else self.file_edit.text().strip()
        return self.enqueue(experiment, size=size, scheduler=self.scheduler_combo.currentData(), source=source)

    def enqueue_designer(self) -> ExperimentRun | None:
        """The window's Run action (Ctrl+R): queue what the designer shows now."""
        if self.designer is None:
            return None
        self.designer_radio.setChecked(True)
        self.refresh_source()
        return self.enqueue_selected_source()

    def enqueue_file(self, path: str | Path) -> ExperimentRun | None:
        self.file_edit.setText(str(path))
        self.file_radio.setChecked(True)
        self.refresh_source()
        return self.enqueue_selected_source()

    def enqueue(self, experiment: Experiment, *, size: str | None = None, scheduler: str = "local",
                source: str = "") -> ExperimentRun | None:
        """Queue one run; external commands are shown and must be confirmed first (declined: nothing queued)."""
        try:
            question = external_commands_text(experiment, size)
        except UserError as error:
            self.show_error("Cannot run this experiment", str(error))
            return None
        confirmed = False
        if question is not None:
            if not self.ask_confirm(question):
                self._note_status(f"{experiment.name}: not queued (external commands not confirmed)")
                return None
            confirmed = True
        try:
            out = bundle_folder(self.results_dir(), experiment.name, datetime.now())
            out.mkdir(parents=True)  # reserves the name for this queue entry
        except OSError as error:
            self.show_error("Cannot create the result folder", f"{self.results_dir()}: {error}")
            return None
        request = RunRequest(experiment, out, size, scheduler, source, confirmed)
        entry = self.model.enqueue(request)
        item = QListWidgetItem()
        item.setData(ID_ROLE, entry.ident)
        self.queue_list.addItem(item)
        self._update_queue_item(entry)
        self.queue_list.setCurrentItem(item)
        self.start_next()
        return entry

    def _note_status(self, text: str) -> None:
        self.source_label.setText(f"<span style='color:#ef6c00'>{_esc(text)}</span>")

    # ------------------------------------------------------------------ running
    def start_next(self) -> None:
        """Start the first queued run if none is running (one at a time)."""
        if self._closing or self._task is not None:
            return
        entry = self.model.next_to_start()
        if entry is None:
            return
        request, events, ident = entry.request, self._events, entry.ident

        def run(state: TaskState) -> Any:  # worker thread: only the queue is touched
            return execute_request(request, state.cancel_event, lambda event: events.put((ident, event)))

        entry.start(self.clock())
        self._task = self.tasks.start(f"run {entry.name}", run, user_work=True)
        self._task.finished.connect(self._on_finished)
        self._task.failed.connect(self._on_failed)
        self._followed_run = None
        self.timer.start()
        self._update_queue_item(entry)
        self._redraw(force=True)

    @Slot()
    def drain(self) -> None:
        """Apply the buffered events (10 Hz) and redraw what changed."""
        now = self.clock()
        while True:
            try:
                ident, event = self._events.get_nowait()
            except queue.Empty:
                break
            entry = self.model.get(ident)
            if entry is not None:
                entry.apply(event, now)
        running = self.model.running()
        if running is not None:
            self._update_queue_item(running)
        self._redraw()

    @Slot(object)
    def _on_finished(self, summary: Any) -> None:
        entry = self._end_task()
        if entry is not None:
            entry.finish(summary, self.clock())
            self._after_run(entry)

    @Slot(object, str)
    def _on_failed(self, error: object, trace: str) -> None:
        entry = self._end_task()
        if entry is not None:
            entry.fail(error if isinstance(error, BaseException) else RuntimeError(str(error)), self.clock())
            if not isinstance(error, UserError):
                entry.note(self.clock(), trace.rstrip())
            self._after_run(entry)

    def _end_task(self) -> ExperimentRun | None:
        self.drain()  # the events the worker reported before it returned
        self._task = None
        self.timer.stop()
        return self.model.running()

    def _after_run(self, entry: ExperimentRun) -> None:
        self._update_queue_item(entry)
        self._redraw(force=True)
        if entry.bundle is not None and not self._closing:  # no new loading while the window closes
            self.bundleReady.emit(str(entry.bundle))
        self.start_next()

    @Slot()
    def cancel_selected(self) -> None:
        """Cancel the running experiment (the selected one if it runs, else the current one)."""
        entry = self.model.running()
        if entry is None or self._task is None:
            return
        entry.request_cancel(self.clock())
        self._task.cancel()
        self._update_queue_item(entry)
        self._redraw(force=True)

    @Slot()
    def remove_selected(self) -> None:
        entry = self.selected_entry()
        if entry is None:
            return
        if entry.status not in (QUEUED, *FINISHED):
            self.show_error("Cannot remove", f"{entry.name} is running; cancel it first")
            return
        self.model.remove(entry.ident)
        if entry.status == QUEUED:
            try:
                entry.request.out_dir.rmdir()  # the reserved, still empty bundle folder
            except OSError:
                pass
        row = self._row_of(entry.ident)
        if row is not None:
            self.queue_list.takeItem(row)
        self._redraw(force=True)

    @Slot()
    def open_selected_bundle(self) -> None:
        entry = self.selected_entry()
        if entry is not None and entry.bundle is not None:
            self.resultsRequested.emit(str(entry.bundle))

    def is_running(self) -> bool:
        return self._task is not None

    def stop_queue(self) -> None:
        """The window closes: start nothing more (the registry cancels the running task)."""
        self._closing = True
        self.timer.stop()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        self.stop_queue()
        super().closeEvent(event)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802
        super().showEvent(event)
        self.refresh_source()  # the designer may have changed meanwhile

    # ------------------------------------------------------------------ drawing
    def selected_entry(self) -> ExperimentRun | None:
        item = self.queue_list.currentItem()
        return None if item is None else self.model.get(int(item.data(ID_ROLE)))

    def _row_of(self, ident: int) -> int | None:
        for row in range(self.queue_list.count()):
            if self.queue_list.item(row).data(ID_ROLE) == ident:
                return row
        return None

    def _update_queue_item(self, entry: ExperimentRun) -> None:
        row = self._row_of(entry.ident)
        if row is None:
            return
        item = self.queue_list.item(row)
        status = entry.status
        if status == RUNNING:  # cancelling: no ETA, the run stops
            eta = entry.eta_s(self.clock())
            status += f" · ETA {format_duration(eta)}" if eta is not None else ""
        size = f" [{entry.request.size}]" if entry.request.size else ""
        item.setText(f"{entry.name}{size}\n  {status}")
        item.setForeground(QBrush(QColor(STATUS_COLOURS.get(entry.status, "#000"))))
        item.setToolTip(f"{entry.request.source or 'experiment'} → {entry.request.out_dir}")

    @Slot()
    def _show_selected(self) -> None:
        self._followed_run = None
        self._redraw(force=True)

    @Slot()
    def _on_run_picked(self) -> None:
        rows = self.run_table.selectionModel().selectedRows()
        if rows:
            item = self.run_table.item(rows[0].row(), 0)
            self._followed_run = item.text() if item is not None else None
            self._redraw_chart(self.selected_entry())

    def _redraw(self, *, force: bool = False) -> None:
        entry = self.selected_entry()
        key = (-1, -1, -1) if entry is None else (entry.ident, entry.version, entry.log_count)
        if not force and key == self._drawn:
            if entry is not None and entry.status in (RUNNING, CANCELLING):
                self._redraw_stages(entry)  # ETAs move with the clock
            return
        rows_changed = force or entry is None or key[:1] != self._drawn[:1] or key[2] != self._drawn[2]
        self._drawn = key
        self.cancel_button.setEnabled(self._task is not None)
        self.remove_button.setEnabled(entry is not None and entry.status in (QUEUED, *FINISHED))
        self.open_button.setEnabled(entry is not None and entry.bundle is not None)
        if entry is None:
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
            return
        colour = STATUS_COLOURS.get(entry.status, "#000")
        folder = str(entry.bundle or entry.request.out_dir)
        self.header.setToolTip(f"bundle {folder}")
        where = f" · bundle <code>{shown_path(self.header, folder)}</code>"
        self.header.setText(f"<b>{_esc(entry.name)}</b>"
                            + (f" · size {_esc(entry.request.size)}" if entry.request.size else "")
                            + (f" · {plural(total, 'engine run')}" if (total := entry.stages["engines"].total) else "")
                            + f" · scheduler {entry.request.scheduler}"
                            + f" · <span style='color:{colour}'><b>{entry.status}</b></span>{where}")
        self._redraw_stages(entry)
        if entry.error:
            kept = entry.completed_runs()
            done = (f"<br><b>Kept in the bundle</b>: {len(kept)} finished engine run(s): "
                    + _esc(", ".join(f"{t.run_id} ({t.verdict or t.status})" for t in kept[:12]))
                    + (" …" if len(kept) > 12 else "")) if kept else "<br>No engine run finished."
            self.error_label.setText(f"<b>Error</b><br>{_esc(entry.error).replace(chr(10), '<br>')}{done}")
            self.error_label.show()
        else:
            self.error_label.hide()
        if rows_changed:
            self._redraw_rows(entry)
        elif entry.current_run is not None:
            self._redraw_row(entry, entry.current_run)
        self._redraw_log(entry)
        self._redraw_chart(entry)

    def _redraw_stages(self, entry: ExperimentRun) -> None:
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
        eta = entry.eta_s(now) if entry.status == RUNNING else None
        if entry.status in (RUNNING, CANCELLING):
            elapsed = format_duration(now - (entry.started or now))
            self.current_label.setText(f"elapsed {elapsed}" + (f" · remaining ≈ {format_duration(eta)}" if eta is not None else ""))
        elif entry.finished is not None and entry.started is not None:
            self.current_label.setText(f"took {format_duration(entry.finished - entry.started)}")
        else:
            self.current_label.setText("waiting in the queue")

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
                return

    def _fill_row(self, row: int, trace: Any) -> None:
        stimuli = f"{trace.stimuli_done}/{trace.stimuli}" if trace.stimuli is not None else str(trace.stimuli_done or "")
        values = (trace.run_id, trace.verdict or trace.status, trace.engine, str(trace.responses), stimuli,
                  "" if trace.peak_rss_mb is None else f"{trace.peak_rss_mb:.1f}")
        for column, text in enumerate(values):
            item = self.run_table.item(row, column)
            if item is None:
                item = QTableWidgetItem()
                self.run_table.setItem(row, column, item)
            if item.text() != text:
                item.setText(text)
            if column == VERDICT_COLUMN:
                item.setForeground(QBrush(QColor(_verdict_colour(text))))
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

    def _redraw_chart(self, entry: ExperimentRun | None) -> None:
        if entry is None:
            return
        if not entry.request.live_kpis:
            self.live_label.setText("Live RSS/CPU samples are not available with the Spark scheduler "
                                    "(engines run on executors); the bundle's P_*.csv files have them.")
            self.rss_curve.setData([], [])
            self.cpu_curve.setData([], [])
            return
        run_id = self._followed_run or entry.current_run or next(reversed(entry.engine_runs), None)
        trace = entry.engine_runs.get(run_id) if run_id else None
        if trace is None:
            self.live_label.setText("RSS and CPU of the engine process appear here while an engine runs.")
            self.rss_curve.setData([], [])
            self.cpu_curve.setData([], [])
            return
        stimuli = f"{trace.stimuli_done}/{trace.stimuli}" if trace.stimuli is not None else str(trace.stimuli_done)
        rss = f"{trace.rss_mb[-1]:.1f} MB" if trace.rss_mb else "–"
        cpu = f"{trace.cpu_percent[-1]:.0f} %" if trace.cpu_percent else "–"
        self.live_label.setText(f"<b>{_esc(trace.run_id)}</b> · responses <b>{trace.responses}</b> · "
                                f"stimuli {stimuli} · RSS {rss} · CPU {cpu} · {plural(len(trace.times), 'sample')}")
        symbol = "o" if len(trace.times) <= FEW_SAMPLES else None  # a lone sample is still visible
        for curve in (self.rss_curve, self.cpu_curve):
            curve.setSymbol(symbol)
        self.rss_curve.setData(trace.times, trace.rss_mb)
        self.cpu_curve.setData(trace.times, trace.cpu_percent)
        fit_samples(self.rss_plot, [trace.times], [trace.rss_mb])  # one sample too: no −10…10 s, no RSS < 0
        self.cpu_plot.setYRange(0, max(100.0, max(trace.cpu_percent, default=0.0)), padding=0.05)

    # ------------------------------------------------------------------ dialogs
    def _ask_confirm(self, question: str) -> bool:
        box = QMessageBox(QMessageBox.Icon.Warning, "Run external programs?", question,
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, self)
        box.setDefaultButton(QMessageBox.StandardButton.No)
        return box.exec() == QMessageBox.StandardButton.Yes

    def _ask_open_path(self) -> str | None:
        path, _ = QFileDialog.getOpenFileName(self, "Experiment to run", str(Path.cwd()),
                                              "Experiments (*.yaml *.yml);;All files (*)")
        return path or None

    def _ask_results_dir(self) -> str | None:
        path = QFileDialog.getExistingDirectory(self, "Results folder", str(self.results_dir()))
        return path or None

    def _show_error(self, title: str, text: str) -> None:
        QMessageBox.warning(self, title, text)


def _verdict_colour(text: str) -> str:
    return {"correct": "#2e7d32", "ok": "#2e7d32", "incorrect": "#c62828", "failed": "#c62828", "timeout": "#c62828",
            "error": "#c62828", "cancelled": "#ef6c00", RUNNING: "#1565c0"}.get(text, "#000")


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
