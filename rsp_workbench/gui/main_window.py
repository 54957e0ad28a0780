"""The main window: Library, Designer, Runs, Results, Teaching; shortcuts; Spark status.

Interactive at once: the SparkSession warms up on a background thread (``get_spark`` is
imported inside the worker, so neither PySpark nor the JVM delays the window) and its
state shows in the status bar; a missing Java becomes an actionable message there and a
dialog on click, never a crash. Closing while user work runs asks, then cancels it and
waits for the threads to end.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import QSettings, Qt, Slot
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QMainWindow,
    QMenu,
    QMessageBox,
    QTabWidget,
    QToolButton,
    QWidget,
)

from rsp_workbench import APP_NAME, __version__
from rsp_workbench.errors import UserError
from rsp_workbench.gui.fit import fit_to_screen
from rsp_workbench.gui.tasks import TaskRegistry, TaskState
from rsp_workbench.gui.text import escape_html

NO_WARMUP_ENV = "RSPWB_NO_SPARK_WARMUP"
TAB_NAMES = ("Library", "Designer", "Runs", "Results", "Teaching")
DOCS_DIR = Path(__file__).resolve().parents[2] / "docs"  # a source checkout's documentation


def warm_up_spark(state: TaskState) -> str:
    """Worker: start (or reuse) the SparkSession; returns a one-line description."""
    started = time.monotonic()
    from rsp_workbench.pipeline.spark import get_spark  # lazy: PySpark/JVM only in the worker

    spark = get_spark()
    master = spark.sparkContext.master
    return f"{master}, Spark {spark.version}, started in {time.monotonic() - started:.1f} s"


class SparkStatus(QToolButton):
    """Status-bar widget: starting… / ready / unavailable (click for details)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sparkStatus")
        self.setAutoRaise(True)
        self.state = "idle"
        self.detail = ""
        self.clicked.connect(self.show_details)
        self.show_dialog: Callable[[str, str], None] = self._dialog
        self.set_state("idle", "Spark warm-up skipped; it starts with the first run")

    def set_state(self, state: str, detail: str) -> None:
        self.state, self.detail = state, detail
        text = {
            "idle": "Spark: not started",
            "starting": "Spark: starting…",
            "ready": "Spark: ready",
            "unavailable": "Spark: unavailable — click for help",
        }[state]
        colour = {"idle": "#666", "starting": "#ef6c00", "ready": "#2e7d32", "unavailable": "#c62828"}[state]
        self.setText(text)
        self.setStyleSheet(f"color: {colour}")
        self.setToolTip(detail)

    @Slot()
    def show_details(self) -> None:
        title = "Spark" if self.state != "unavailable" else "Spark is unavailable"
        self.show_dialog(title, self.detail)

    def _dialog(self, title: str, text: str) -> None:
        box = QMessageBox(QMessageBox.Icon.Information if self.state != "unavailable" else QMessageBox.Icon.Warning,
                          title, text, QMessageBox.StandardButton.Ok, self)
        box.exec()


class MainWindow(QMainWindow):
    """The workbench shell."""

    def __init__(self, *, settings: QSettings | None = None, samples_dir: Path | None = None,
                 spark_warmup: bool | None = None) -> None:
        super().__init__()
        from rsp_workbench.gui.designer.view import DesignerView
        from rsp_workbench.gui.library.model import add_recent_file, results_dir_setting
        from rsp_workbench.gui.library.view import LibraryView
        from rsp_workbench.gui.runs.view import RunManagerView
        from rsp_workbench.gui.teaching.view import TeachingView
        from rsp_workbench.gui.results.browser import ResultsBrowser

        self._add_recent_file = add_recent_file
        self.setObjectName("mainWindow")
        self.setWindowTitle(f"{APP_NAME} {__version__}")
        self.settings = settings or QSettings("rsp-workbench", "RSP Workbench")
        self.tasks = TaskRegistry(self)
        self.probe_dialog: Any = None
        self.ask_close: Callable[[str], bool] = self._ask_close
        self.error_box: QMessageBox | None = None

        self.library = LibraryView(self.settings, samples_dir)
        self.designer = DesignerView()
        self.runs = RunManagerView(self.tasks, self.designer, results_dir=self._results_dir(results_dir_setting))
        self.results = ResultsBrowser(self.tasks, self.settings)  # .timeline_view: the window timeline
        self.teaching = TeachingView()
        self.tabs = QTabWidget()
        self.tabs.setObjectName("mainTabs")
        for widget, name in zip((self.library, self.designer, self.runs, self.results, self.teaching), TAB_NAMES):
            self.tabs.addTab(widget, name)
        self.setCentralWidget(self.tabs)
        self.library.openRequested.connect(self.open_experiment)
        self.designer.fileChanged.connect(self._remember_file)
        self.designer.statusMessage.connect(self._show_status)
        self.results.statusMessage.connect(self._show_status)
        self.designer.titleChanged.connect(self._show_title)
        self.runs.bundleReady.connect(self.results.open_bundle)  # each finished run's bundle opens in Results
        self.runs.resultsRequested.connect(self.show_bundle)  # "Open results": load it and show it
        self.results.rerunRequested.connect(self.rerun_bundle)
        from rsp_workbench.gui.library.yabench_import import YabenchImport

        self.yabench_import = YabenchImport(self)  # File › Import YABench folder… (its dialogs replaceable)
        self.library.importRequested.connect(self.import_yabench)

        self.spark_status = SparkStatus()
        self.statusBar().addPermanentWidget(self.spark_status)
        self._build_menus()
        fit_to_screen(self, 1280, 820)
        if spark_warmup is None:
            spark_warmup = os.environ.get(NO_WARMUP_ENV, "") not in ("1", "true", "yes")
        self.spark_task = self.start_spark_warmup() if spark_warmup else None

    # ------------------------------------------------------------------ menus & shortcuts
    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        self.open_action = self._action("&Open experiment…", "Ctrl+O", self.open_dialog)
        self.save_action = self._action("&Save", "Ctrl+S", self.designer.save)
        self.save_as_action = self._action("Save &as…", "Ctrl+Shift+S", self.designer.save_as)
        self.quit_action = self._action("&Quit", "Ctrl+Q", self.close)
        self.import_action = self._action("&Import YABench folder…", "", self.import_yabench)
        for action in (self.open_action, self.save_action, self.save_as_action, self.import_action):
            file_menu.addAction(action)
        file_menu.addSeparator()
        self.settings_action = self._action("Se&ttings…", "Ctrl+,", self.open_settings)
        file_menu.addAction(self.settings_action)
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)
        run_menu = self.menuBar().addMenu("&Run")
        self.run_action = self._action("&Run the designer's experiment", "Ctrl+R", self.run_designer_experiment)
        run_menu.addAction(self.run_action)
        self.probe_action = self._action("&Probe engine…", "Ctrl+Shift+P", self.open_probe_dialog)
        run_menu.addAction(self.probe_action)
        edit_menu = self.menuBar().addMenu("&Edit")
        self.undo_action = self._action("&Undo", "Ctrl+Z", self.undo)
        self.redo_action = self._action("&Redo", "Ctrl+Shift+Z", self.redo)
        edit_menu.addAction(self.undo_action)
        edit_menu.addAction(self.redo_action)
        view_menu = self.menuBar().addMenu("&View")
        self.tab_actions = []
        for index, name in enumerate(TAB_NAMES):
            action = self._action(name, f"Ctrl+{index + 1}", lambda _=False, i=index: self.tabs.setCurrentIndex(i))
            view_menu.addAction(action)
            self.tab_actions.append(action)
        help_menu = self.menuBar().addMenu("&Help")
        self.shortcuts_action = self._action("&Keyboard shortcuts", "F1", self.show_shortcuts)
        self.docs_action = self._action("&Documentation", "", self.open_docs)
        self.about_action = self._action("&About RSP Workbench", "", self.show_about)
        for action in (self.shortcuts_action, self.docs_action, self.about_action):
            help_menu.addAction(action)
        # the designer's own Ctrl+Z/Ctrl+Shift+Z (WidgetWithChildrenShortcut) would clash with
        # the window's; the window's actions delegate to the designer instead
        self.designer.undo_action.setShortcut(QKeySequence())
        self.designer.redo_action.setShortcuts([])

    def _action(self, text: str, shortcut: str, slot: Callable[..., Any]) -> QAction:
        action = QAction(text, self)
        if shortcut:
            action.setShortcut(QKeySequence(shortcut))
        action.triggered.connect(slot)
        self.addAction(action)
        return action

    # ------------------------------------------------------------------ settings
    def _results_dir(self, chosen: Callable[[Any], Path | None]) -> Path | None:
        """The Settings' results folder, unless the environment names one (it wins)."""
        from rsp_workbench.gui.runs.model import RESULTS_DIR_ENV

        return None if os.environ.get(RESULTS_DIR_ENV) else chosen(self.settings)

    def settings_dialog(self) -> Any:
        """A Settings dialog on this window's settings and the user settings file."""
        from rsp_workbench.gui.library.settings_dialog import SettingsDialog
        from rsp_workbench.experiment.spark_master import settings_path

        return SettingsDialog(self.settings, settings_path(), self)

    @Slot()
    def open_settings(self) -> None:
        """Settings…: on OK, new runs go to the chosen results folder (the queue's field shows it)."""
        from rsp_workbench.gui.library.model import results_dir_setting
        from rsp_workbench.gui.runs.model import default_results_dir

        dialog = self.settings_dialog()
        if dialog.exec() and dialog.saved is not None:
            self.runs.form.results_edit.setText(str(self._results_dir(results_dir_setting) or default_results_dir()))
            self._show_status("Settings saved")

    # ------------------------------------------------------------------ help
    def shortcut_rows(self) -> list[tuple[str, str]]:
        """(keys, what) of every menu action with a shortcut, in menu order."""
        rows = []
        for menu in self.menuBar().findChildren(QMenu):
            for action in menu.actions():
                if not action.shortcut().isEmpty():
                    keys = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
                    rows.append((keys, f"{menu.title().replace('&', '')} › {action.text().replace('&', '')}"))
        return rows

    def about_text(self) -> str:
        """The version, where the data and the settings are, and where the documentation is."""
        rows = [("version", __version__), ("settings file", self.settings.fileName()),
                ("new runs' bundles", str(self.runs.form.results_dir())),
                ("sample experiments", str(self.library.samples_dir)), ("documentation", str(DOCS_DIR))]
        cells = "".join(f"<tr><td><b>{escape_html(k)}</b></td><td>{escape_html(v)}</td></tr>" for k, v in rows)
        return (f"<h3>{escape_html(APP_NAME)} {escape_html(__version__)}</h3><p>Design RDF Stream Processing "
                f"experiments, run engines, judge their answers and see why they differ.</p><table>{cells}</table>"
                "<p>Press F1 for the keyboard shortcuts.</p>")

    @Slot()
    def show_shortcuts(self) -> Any:
        rows = "".join(f"<tr><td><b>{escape_html(k)}</b></td><td>{escape_html(w)}</td></tr>" for k, w in self.shortcut_rows())
        return self._info("Keyboard shortcuts", f"<table>{rows}</table>")

    @Slot()
    def show_about(self) -> Any:
        return self._info(f"About {APP_NAME}", self.about_text())

    @Slot()
    def open_docs(self) -> None:
        from PySide6.QtCore import QUrl
        from PySide6.QtGui import QDesktopServices

        if not QDesktopServices.openUrl(QUrl.fromLocalFile(str(DOCS_DIR))):
            self.show_error("Documentation", f"The documentation is in {DOCS_DIR} (no program opens folders here).")

    def _info(self, title: str, html: str) -> QMessageBox:
        box = QMessageBox(QMessageBox.Icon.Information, title, html, QMessageBox.StandardButton.Ok, self)
        box.setObjectName("helpBox")
        box.setTextFormat(Qt.TextFormat.RichText)
        box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        box.open()
        return box

    @Slot()
    def run_designer_experiment(self) -> None:
        """Queue what the designer shows (unsaved edits included) and show the Runs tab."""
        if self.runs.enqueue_designer() is not None:
            self.tabs.setCurrentWidget(self.runs)

    @Slot(str)
    def rerun_bundle(self, folder: str) -> Any:
        """Results › Re-run: queue the bundle's exact experiment (its copy: seed, size applied, engines) into a
        new bundle and show the Runs tab; one message when it cannot be re-run."""
        from rsp_workbench.gui.results.model import experiment_to_rerun, rerun_source
        from rsp_workbench.gui.runs.model import SCHEDULERS
        from rsp_workbench.results.reader import open_bundle

        try:
            bundle = open_bundle(folder, partial=True)
            experiment = experiment_to_rerun(bundle)
        except UserError as error:
            self.show_error("Cannot re-run", str(error))
            return None
        scheduler = str(bundle.manifest.get("scheduler") or "local")
        entry = self.runs.enqueue(experiment, size=None, scheduler=scheduler if scheduler in SCHEDULERS else "local",
                                  source=rerun_source(bundle))
        if entry is not None:
            self.tabs.setCurrentWidget(self.runs)
        return entry

    @Slot()
    def import_yabench(self) -> Path | None:
        """File › Import YABench folder…: write its experiment file (as ``rspwb import yabench-config``) and open it."""
        from rsp_workbench.gui.library.yabench_import import imported_message

        try:
            done = self.yabench_import.run()
        except (UserError, OSError) as error:
            self.show_error("Cannot import", str(error))
            return None
        if done is None:
            return None
        out, imported = done
        self.open_experiment(str(out))
        self._show_status(imported_message(out, imported), 15000)
        return out

    @Slot()
    def open_probe_dialog(self) -> Any:
        """Run > Probe engine…: infer an engine's semantics (built-in, or one of the designer's experiment)."""
        from rsp_workbench.gui.probe.view import ProbeDialog
        from rsp_workbench.gui.runs.model import experiment_from_designer

        if self.probe_dialog is None:
            def designer_experiment() -> Any:
                self.designer.flush_pending_edits()
                return experiment_from_designer(self.designer.model)

            self.probe_dialog = ProbeDialog(self.tasks, designer_experiment, self)
        else:
            self.probe_dialog.refresh_engines()
        self.probe_dialog.show()
        self.probe_dialog.raise_()
        return self.probe_dialog

    @Slot()
    def undo(self) -> None:
        if self.tabs.currentWidget() is self.designer:
            self.designer.undo()

    @Slot()
    def redo(self) -> None:
        if self.tabs.currentWidget() is self.designer:
            self.designer.redo()

    # ------------------------------------------------------------------ files
    @Slot()
    def open_dialog(self) -> None:
        self.tabs.setCurrentWidget(self.designer)
        self.designer.open_dialog()

    @Slot(str)
    def open_experiment(self, path: str) -> None:
        """Open a file in the designer (a corrupt one too: the designer shows where it breaks); a
        file that is no experiment is refused and the experiment shown stays. A sample of the
        library opens as a template: Save asks for a new place (the shipped file stays as it is)."""
        from rsp_workbench.gui.designer.model import read_experiment_text
        from rsp_workbench.gui.library.model import is_sample

        try:
            read_experiment_text(Path(path))
        except UserError as error:
            self.show_error("Cannot open", str(error))
            return
        if not self.designer.confirm_discard():
            return
        self.designer.open_file(path, template=is_sample(Path(path), self.library.samples_dir))
        self.tabs.setCurrentWidget(self.designer)

    @Slot(str)
    def show_bundle(self, path: str) -> None:
        """Runs → "Open results": the bundle in the Results tab, which comes to the front."""
        self.results.open_bundle(path)
        self.tabs.setCurrentWidget(self.results)

    def open_path(self, path: str | Path) -> None:
        """``rsp-workbench FILE|DIR``: a result bundle (or published YABench folder) opens in Results,
        another folder becomes the library, a file opens in the designer; a path that does not
        exist is said in a message that stays (not a blank template)."""
        from rsp_workbench.results.reader import not_a_bundle

        path = Path(path).expanduser()
        if not path.exists():
            self.tabs.setCurrentWidget(self.library)
            self.show_error("Cannot open", f"{path}: no such file or directory")
        elif path.is_dir() and not_a_bundle(path) is None:
            self.results.open_bundle(path)
            self.tabs.setCurrentWidget(self.results)
        elif path.is_dir():
            self.library.set_samples_dir(path)
            self.tabs.setCurrentWidget(self.library)
        else:
            self.open_experiment(str(path))

    def show_error(self, title: str, text: str) -> None:
        """An error the user must see: a message box (not modal: the window stays usable) and the
        same text in the status bar until the next message."""
        self._show_status(text, 0)
        if self.error_box is not None:
            self.error_box.close()
        self.error_box = QMessageBox(QMessageBox.Icon.Warning, title, text, QMessageBox.StandardButton.Ok, self)
        self.error_box.setObjectName("errorMessage")
        self.error_box.open()

    @Slot(str)
    def _remember_file(self, path: str) -> None:
        if Path(path).exists():
            self._add_recent_file(self.settings, path)
            self.library.refresh()

    @Slot(str)
    def _show_title(self, name: str) -> None:
        """The designer's file (``*``: unsaved edits) before the program's name."""
        self.setWindowTitle(f"{name} — {APP_NAME} {__version__}")

    @Slot(str)
    def _show_status(self, text: str, timeout_ms: int = 5000) -> None:
        """A message in the status bar, elided in the middle to the room it has (both ends stay
        readable; a cut message lost its end), the whole of it in the tooltip."""
        bar = self.statusBar()
        room = max(100, bar.width() - self.spark_status.sizeHint().width() - 40)
        bar.showMessage(bar.fontMetrics().elidedText(text, Qt.TextElideMode.ElideMiddle, room), timeout_ms)
        bar.setToolTip(text)

    # ------------------------------------------------------------------ Spark
    def start_spark_warmup(self, function: Callable[[TaskState], str] = warm_up_spark) -> Any:
        self.spark_status.set_state("starting", "The SparkSession is starting in the background (a JVM start takes ~10 s).")
        task = self.tasks.start("spark warm-up", function, user_work=False)
        task.finished.connect(self._on_spark_ready)
        task.failed.connect(self._on_spark_failed)
        return task

    @Slot(object)
    def _on_spark_ready(self, description: object) -> None:
        self.spark_status.set_state("ready", f"SparkSession ready: {description}")

    @Slot(object, str)
    def _on_spark_failed(self, error: object, trace: str) -> None:
        from rsp_workbench.errors import UserError

        if isinstance(error, UserError):
            detail = str(error)  # SparkUnavailable says what to install
        else:
            detail = f"Spark did not start: {type(error).__name__}: {error}\n\n{trace}"
        self.spark_status.set_state("unavailable", detail)
        self._show_status("Spark is unavailable: runs cannot start (click the status for help)", 10000)

    # ------------------------------------------------------------------ closing
    def _ask_close(self, question: str) -> bool:
        answer = QMessageBox.question(self, "Quit", question,
                                      QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No)
        return answer == QMessageBox.StandardButton.Yes

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        """Ask about unsaved edits and running work; then cancel tasks and wait for their threads."""
        if not self.designer.confirm_discard():
            event.ignore()
            return
        running = self.tasks.running(user_work_only=True)
        if running:
            names = ", ".join(task.name for task in running)
            if not self.ask_close(f"{len(running)} task(s) still running ({names}). Stop them and quit?"):
                event.ignore()
                return
        self.runs.stop_queue()  # queued runs must not start while the window closes
        self.tasks.cancel_all(timeout_ms=15_000)
        for view in (self.designer, self.teaching, self.results):
            view.close()
        if self.probe_dialog is not None:
            self.probe_dialog.close()
        event.accept()
