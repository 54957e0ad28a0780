"""The Runs tab: a queue of experiment runs with per-stage progress, live RSS/CPU, log and Cancel.

A thin view over :mod:`rsp_workbench.gui.runs.model`, in three parts: the "New run" form
(:class:`~rsp_workbench.gui.runs.enqueue.EnqueueForm`), the queue
(:class:`~rsp_workbench.gui.runs.queue_panel.QueuePanel`) and the selected run's detail
(:class:`~rsp_workbench.gui.runs.run_detail.RunDetail`). This class runs the queue: each run
is one TaskRegistry task (user work, so closing the window asks and cancels it) whose plain
worker calls ``run_experiment``; its progress events go into a thread-safe buffer that a
10 Hz timer drains into the model and draws (never one redraw per sample, so the GUI thread
stays free). External engine commands are listed in a dialog *before* a run is queued;
declining queues nothing. When a run ends (ok, failed or cancelled) ``bundleReady`` carries
its result bundle folder.
"""

from __future__ import annotations

import queue
import time
from datetime import datetime
from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtGui import QCloseEvent, QShowEvent
from PySide6.QtWidgets import QApplication, QMessageBox, QSplitter, QStyle, QSystemTrayIcon, QVBoxLayout, QWidget

from rsp_workbench.errors import UserError
from rsp_workbench.experiment.model import Experiment
from rsp_workbench.gui.runs.enqueue import EnqueueForm
from rsp_workbench.gui.runs.model import (
    FINISHED,
    QUEUED,
    ExperimentRun,
    RunQueue,
    RunRequest,
    bundle_folder,
    default_results_dir,
    execute_request,
    external_commands_text,
    finish_message,
    finish_notice,
)
from rsp_workbench.gui.runs.queue_panel import QueuePanel
from rsp_workbench.gui.runs.run_detail import RunDetail
from rsp_workbench.gui.tasks import Task, TaskRegistry, TaskState

REFRESH_MS = 100  # 10 Hz: buffered events are applied and drawn at this rate


class RunManagerView(QWidget):
    """The enqueue form above; the queue and the selected run's detail side by side below."""

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
        self.clock: Callable[[], float] = time.monotonic
        # dialogs are attributes so that tests and scripts can replace them
        self.ask_confirm: Callable[[str], bool] = self._ask_confirm
        self.show_error: Callable[[str, str], None] = self._show_error
        # how a run that ends in the background is announced (replaceable by tests and scripts)
        self.window_active: Callable[[], bool] = lambda: self.window().isActiveWindow()
        self.tray_available: Callable[[], bool] = QSystemTrayIcon.isSystemTrayAvailable
        self.notify: Callable[[str, str, str], None] = self._notify
        self._tray: QSystemTrayIcon | None = None

        self.timer = QTimer(self)
        self.timer.setInterval(REFRESH_MS)
        self.timer.timeout.connect(self.drain)

        self.form = EnqueueForm(designer, results_dir or default_results_dir())
        self.form.enqueue_button.clicked.connect(self.enqueue_selected_source)
        self.queue = QueuePanel()
        self.queue.queue_list.currentItemChanged.connect(self._show_selected)
        self.queue.cancel_button.clicked.connect(self.cancel_selected)
        self.queue.remove_button.clicked.connect(self.remove_selected)
        self.queue.open_button.clicked.connect(self.open_selected_bundle)
        self.detail = RunDetail(lambda: self.clock())
        layout = QVBoxLayout(self)
        layout.addWidget(self.form)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.queue)
        splitter.addWidget(self.detail)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 4)
        splitter.setSizes([260, 1000])
        layout.addWidget(splitter, 1)
        self.form.refresh_source()
        self._show_selected()

    # ------------------------------------------------------------------ queueing
    @Slot()
    def enqueue_selected_source(self) -> ExperimentRun | None:
        """Queue the chosen experiment at the chosen size (after confirming its external commands)."""
        try:
            experiment = self.form.source_experiment()
        except UserError as error:
            self.show_error("Cannot run this experiment", str(error))
            return None
        return self.enqueue(experiment, size=self.form.chosen_size(experiment), scheduler=self.form.scheduler(),
                            source=self.form.chosen_source())

    def enqueue_designer(self) -> ExperimentRun | None:
        """The window's Run action (Ctrl+R): queue what the designer shows now."""
        if self.designer is None:
            return None
        self.form.choose_designer()
        return self.enqueue_selected_source()

    def enqueue_file(self, path: str | Path) -> ExperimentRun | None:
        self.form.choose_file(path)
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
                self.form.note_status(f"{experiment.name}: not queued (external commands not confirmed)")
                return None
            confirmed = True
        results_dir = self.form.results_dir()
        try:
            out = bundle_folder(results_dir, experiment.name, datetime.now())
            out.mkdir(parents=True)  # reserves the name for this queue entry
        except OSError as error:
            self.show_error("Cannot create the result folder", f"{results_dir}: {error}")
            return None
        entry = self.model.enqueue(RunRequest(experiment, out, size, scheduler, source, confirmed))
        self.queue.add(entry, self.clock())
        self.start_next()
        return entry

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
        self.detail.followed_run = None
        self.timer.start()
        self.queue.update_item(entry, self.clock())
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
            self.queue.update_item(running, self.clock())
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
        self.queue.update_item(entry, self.clock())
        self._redraw(force=True)
        if entry.bundle is not None and not self._closing:  # no new loading while the window closes
            self.bundleReady.emit(str(entry.bundle))
        kind = finish_notice(entry, window_active=self.window_active(), tray_available=self.tray_available())
        if kind and not self._closing:
            self.notify(kind, *finish_message(entry))
        self.start_next()

    @Slot()
    def cancel_selected(self) -> None:
        """Cancel the running experiment (the selected one if it runs, else the current one)."""
        entry = self.model.running()
        if entry is None or self._task is None:
            return
        entry.request_cancel(self.clock())
        self._task.cancel()
        self.queue.update_item(entry, self.clock())
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
        self.queue.remove(entry.ident)
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
        self.form.refresh_source()  # the designer may have changed meanwhile

    # ------------------------------------------------------------------ drawing
    def selected_entry(self) -> ExperimentRun | None:
        ident = self.queue.selected_ident()
        return None if ident is None else self.model.get(ident)

    @Slot()
    def _show_selected(self) -> None:
        self.detail.followed_run = None
        self._redraw(force=True)

    def _redraw(self, *, force: bool = False) -> None:
        entry = self.selected_entry()
        if self.detail.show_run(entry, force=force):
            self.queue.enable_buttons(self._task is not None, entry)

    # ------------------------------------------------------------------ dialogs
    def _ask_confirm(self, question: str) -> bool:
        box = QMessageBox(QMessageBox.Icon.Warning, "Run external programs?", question,
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, self)
        box.setDefaultButton(QMessageBox.StandardButton.No)
        return box.exec() == QMessageBox.StandardButton.Yes

    def _notify(self, kind: str, title: str, text: str) -> None:
        """A tray message ("tray"), else the taskbar entry flashes until the window is activated."""
        if kind == "tray":
            if self._tray is None:
                icon = self.window().windowIcon()
                if icon.isNull():
                    icon = self.style().standardIcon(QStyle.StandardPixmap.SP_DialogApplyButton)
                self._tray = QSystemTrayIcon(icon, self)
            self._tray.show()
            self._tray.showMessage(title, text, QSystemTrayIcon.MessageIcon.Information, 10_000)
        else:
            QApplication.alert(self.window())

    def _show_error(self, title: str, text: str) -> None:
        QMessageBox.warning(self, title, text)
