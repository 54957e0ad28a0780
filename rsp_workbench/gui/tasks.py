"""Long work off the GUI thread: a plain ``run(state)`` function in a QThread.

Follows Orange3's ``concurrent.TaskState`` pattern (docs/design/STYLE.md): the work is a plain function
that polls ``state.cancelled`` and reports progress, testable without Qt. Results cross
to the GUI thread through queued signals connected to ``@Slot`` methods of a QObject that
lives in the GUI thread; no Qt object is touched from the worker.
"""

from __future__ import annotations

import gc
import threading
import traceback
from typing import Any, Callable

from PySide6.QtCore import QObject, QThread, QTimer, Signal, Slot

_LIVE: set["Task"] = set()
"""Every task whose thread has not been waited for. Python owns a task's QThread; were the task
collected while its thread still ran or was still finishing (its view or registry gone), Qt would
use freed memory: an intermittent segfault in the event loop. The set releases a task only after
``QThread.wait`` returned, and from a later event than the task's own slot."""

GC_CHECK_MS = 200  # how often the GUI thread runs the collector's threshold check while tasks run


class _GuiThreadCollector:
    """Python's cyclic garbage collector runs in whichever thread happens to allocate past a
    threshold. Were that a task's worker, it would destroy the GUI's collected Qt objects (a
    closed view's widgets in a reference cycle) outside the GUI thread, which Qt does not allow:
    a rare segfault later, in the GUI thread (``QApplication.topLevelWidgets`` met a freed
    widget). So while any task runs, pyqtgraph's ``GarbageCollector`` turns automatic
    collection off and collects by the same thresholds from a GUI-thread timer; with no task
    left, collection is automatic again, as before (the command line never gets here)."""

    def __init__(self) -> None:
        self._collector: Any = None  # pyqtgraph's GarbageCollector while tasks run
        self._was_enabled = False
        self._always = False

    def always(self) -> None:
        """Collect in the GUI thread for the rest of the process, tasks or not: other threads than
        the tasks' allocate too (Spark's log reader, a stand's sampler), and a view closed after its
        last task ended left its widgets to whichever thread collected next (a segfault in
        ``QApplication.topLevelWidgets`` in the GUI tests). The application calls it at start."""
        self._always = True
        self.tasks_started()

    def tasks_started(self) -> None:
        if self._collector is not None:
            return
        from pyqtgraph.util.garbage_collector import GarbageCollector

        self._was_enabled = gc.isenabled()
        self._collector = GarbageCollector(interval=GC_CHECK_MS / 1000)  # disables automatic collection

    def tasks_ended(self) -> None:
        if self._collector is None or self._always:
            return
        self._collector.timer.stop()
        self._collector.timer.deleteLater()
        self._collector = None
        if self._was_enabled:
            # collect the backlog here, at the top of the event loop: enabled with its counts
            # far past the thresholds, the collector would run at the next allocation, wherever
            # that is — inside a Qt call holding a signal-slot lock, a collected QObject's
            # destructor waits for that lock forever (seen: test_gui_main_flow hung)
            gc.collect()
            gc.enable()


_COLLECTOR = _GuiThreadCollector()


def collect_in_gui_thread() -> None:
    """From now on Python's cyclic garbage is collected by a GUI-thread timer only (`_GuiThreadCollector`);
    call it in the GUI thread, with the QApplication made."""
    _COLLECTOR.always()


def _release(task: "Task") -> None:
    """Forget a task whose thread was waited for; the last one gives automatic collection back."""
    _LIVE.discard(task)
    if not _LIVE:
        _COLLECTOR.tasks_ended()


class TaskState:
    """What a running task sees: a cancel flag and a progress callback (thread-safe)."""

    def __init__(self) -> None:
        self._cancelled = threading.Event()
        self._progress: Callable[[float, str], None] = lambda fraction, message: None

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def cancel(self) -> None:
        self._cancelled.set()

    @property
    def cancel_event(self) -> threading.Event:
        """The cancel flag as an Event, for pipeline functions taking ``cancel: threading.Event``."""
        return self._cancelled

    def report_progress(self, fraction: float, message: str = "") -> None:
        self._progress(fraction, message)


class _Thread(QThread):
    """Runs the function; emits its outcome (signals are queued to the GUI thread)."""

    succeeded = Signal(object)
    failed = Signal(object, str)
    progressed = Signal(float, str)

    def __init__(self, function: Callable[[TaskState], Any], state: TaskState) -> None:
        super().__init__()
        self._function = function
        self._state = state
        state._progress = self.progressed.emit

    def run(self) -> None:  # worker thread
        try:
            result = self._function(self._state)
        except BaseException as error:  # noqa: BLE001 - reported to the GUI, never lost
            self.failed.emit(error, traceback.format_exc())
        else:
            self.succeeded.emit(result)


class Task(QObject):
    """One background task. Connect to ``finished``/``failed``/``progress`` (GUI thread)."""

    finished = Signal(object)
    failed = Signal(object, str)
    progress = Signal(float, str)
    done = Signal()

    def __init__(self, name: str, function: Callable[[TaskState], Any], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self.state = TaskState()
        self._thread = _Thread(function, self.state)
        self._thread.succeeded.connect(self._on_succeeded)
        self._thread.failed.connect(self._on_failed)
        self._thread.progressed.connect(self._on_progress)
        self._thread.finished.connect(self._on_thread_finished)
        self.result: Any = None
        self.error: BaseException | None = None

    def start(self) -> "Task":
        _COLLECTOR.tasks_started()  # before the worker exists: it must never run the collector
        _LIVE.add(self)
        self._thread.start()
        return self

    def is_running(self) -> bool:
        return self._thread.isRunning()

    def cancel(self) -> None:
        self.state.cancel()

    def wait(self, timeout_ms: int = 10_000) -> bool:
        """Block until the thread ends (True) or the timeout passes (False)."""
        return self._thread.wait(timeout_ms)

    @Slot(object)
    def _on_succeeded(self, result: Any) -> None:
        self.result = result
        self.finished.emit(result)

    @Slot(object, str)
    def _on_failed(self, error: BaseException, trace: str) -> None:
        self.error = error
        self.failed.emit(error, trace)

    @Slot(float, str)
    def _on_progress(self, fraction: float, message: str) -> None:
        self.progress.emit(fraction, message)

    @Slot()
    def _on_thread_finished(self) -> None:
        self._thread.wait()  # run() has returned; this only waits for Qt's own thread epilogue
        self.done.emit()
        QTimer.singleShot(0, lambda task=self: _release(task))


class TaskRegistry(QObject):
    """The tasks of one window: start them, know which run, cancel and wait for all on close."""

    changed = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._tasks: list[Task] = []

    def start(self, name: str, function: Callable[[TaskState], Any], *, user_work: bool = True) -> Task:
        """Start a task. ``user_work`` tasks count as work that closing the window must confirm."""
        task = Task(name, function)  # not a child: a registry collected first must not delete running tasks
        task.user_work = user_work  # type: ignore[attr-defined]
        task.done.connect(self._on_done)
        self._tasks.append(task)
        task.start()
        self.changed.emit()
        return task

    def running(self, *, user_work_only: bool = False) -> list[Task]:
        return [t for t in self._tasks if t.is_running() and (not user_work_only or getattr(t, "user_work", True))]

    def cancel_all(self, timeout_ms: int = 10_000) -> bool:
        """Ask every task to stop and wait for them; True if all ended in time."""
        for task in self._tasks:
            task.cancel()
        ok = all(task.wait(timeout_ms) for task in list(self._tasks))
        return ok

    def wait_all(self, timeout_ms: int = 30_000) -> bool:
        return all(task.wait(timeout_ms) for task in list(self._tasks))

    @Slot()
    def _on_done(self) -> None:
        self._tasks = [t for t in self._tasks if t.is_running()]
        self.changed.emit()
