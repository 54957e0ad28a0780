"""The Results tab: open a result bundle and browse it.

Header: the bundle's name, status and run counts, and what is wrong with it (file:line)
when it is corrupt or partial; then sub-tabs: Summary, Quality, Resources, Correctness,
Latency × memory, Eviction, Overlay (runs of several bundles, own and published, in one
chart), the window timeline and Compare (this bundle beside another; "Compare with…" in the
header). "Re-run" asks the window to queue the bundle's experiment again. A bundle with more than
``inline_runs`` runs is read on a background task (rsp_workbench/gui/tasks.py), and so are the
per-run files its views ask for; small bundles are read at once.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import QSettings, Signal, Slot
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from rsp_workbench.results.bundle import ORACLE_FILE, RUNS_DIR, YABENCH_DIR
from rsp_workbench.errors import UserError
from rsp_workbench.gui.fit import shown_path
from rsp_workbench.gui.results.common import ResultsView
from rsp_workbench.gui.text import escape_html, verdict_text
from rsp_workbench.gui.results.eviction import EvictionView
from rsp_workbench.gui.results.heaven import HeavenDashboardView
from rsp_workbench.gui.results.matrix import UNKNOWN_TIME, CorrectnessMatrixView
from rsp_workbench.gui.results.overlay import OverlayView
from rsp_workbench.gui.results.quality import QualityView
from rsp_workbench.gui.library.model import recent_size
from rsp_workbench.gui.results.resources import ResourcesView
from rsp_workbench.gui.results.summary import SummaryView
from rsp_workbench.gui.results.title import BundleTitle
from rsp_workbench.results.reader import not_a_bundle, open_bundle
from rsp_workbench.results.view_data import BundleData, bundle_data

RECENT_KEY = "results/recentBundles"
RECENT_LIMIT = 10
INLINE_RUNS = 40  # bundles with more run folders are read off the GUI thread
INLINE_BYTES = 8_000_000  # and bundles whose per-window files are bigger (one long run: millions of windows)
STATUS_COLOURS = {"ok": "#2e7d32", "failed": "#c62828", "running": "#ef6c00", "cancelled": "#616161",
                  "unreadable": "#c62828", "published": "#1565c0"}
RECENT_PROMPT = "Recent bundles…"
SHOWN_PROBLEMS = 3  # lines of problems/notes shown under the title; the rest in its tooltip


def _bytes_to_read(folder: Path) -> int:
    """The size of the files the views read per window (``oracle.json``, the YABench files), of a
    bundle with few runs: whether one of its runs is long enough to freeze the GUI thread."""
    files = [*folder.glob(f"{RUNS_DIR}/*/{ORACLE_FILE}"), *folder.glob(f"{YABENCH_DIR}/*/*")]
    total = 0
    for file in files:
        try:
            total += file.stat().st_size
        except OSError:
            continue
    return total


def load_bundle_python(folder: Path) -> str:
    """Python that opens the bundle at ``folder`` with the public API (the path as a Python literal,
    so quotes, backslashes and non-ASCII names survive)."""
    return (f"import rsp_workbench as rsp\n\nbundle = rsp.open_bundle({str(folder.resolve())!r})\n"
            "runs = bundle.runs()  # one row per run: engine, query, verdict, precision, recall, ...\n"
            "print(runs)\n")


class ResultsBrowser(QWidget):
    """Open a bundle folder and show it in the results views and the window timeline."""

    bundleLoaded = Signal(str)
    statusMessage = Signal(str)
    rerunRequested = Signal(str)  # "Re-run": the bundle whose experiment to queue again

    def __init__(self, tasks: Any = None, settings: QSettings | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        from rsp_workbench.gui.results.timeline.view import TimelineView

        self.setObjectName("resultsBrowser")
        self.tasks = tasks
        self.settings = settings
        self._recent_memory: list[str] = []
        self.data: BundleData | None = None
        self.folder: Path | None = None
        self.inline_runs = INLINE_RUNS
        self.inline_bytes = INLINE_BYTES
        self.background = False
        self.load_task: Any = None

        self.open_button = QPushButton("Open bundle…")
        self.open_button.setObjectName("openBundle")
        self.open_button.setToolTip("Open a result bundle folder (rspwb run EXPERIMENT --out DIR)")
        self.open_button.clicked.connect(self.open_dialog)
        self.recent_combo = QComboBox()
        self.recent_combo.setObjectName("recentBundles")
        self.recent_combo.setMinimumContentsLength(30)
        self.recent_combo.activated.connect(self._on_recent_activated)
        self.reload_button = QPushButton("Reload")
        self.reload_button.clicked.connect(self.reload)
        self.reload_button.setEnabled(False)
        self.report_button = QPushButton("Export report…")
        self.report_button.setObjectName("exportReport")
        self.report_button.setToolTip("One self-contained HTML file of the bundle (rspwb report DIR --html FILE): "
                                      "to attach to a paper's artifact or mail to a colleague")
        self.report_button.clicked.connect(self.export_report)
        self.report_button.setEnabled(False)
        self.copy_python_button = QPushButton("Copy Python")
        self.copy_python_button.setObjectName("copyPython")
        self.copy_python_button.setToolTip("Copy Python to load this bundle: the lines that open it with the "
                                           "library (import rsp_workbench as rsp; rsp.open_bundle(PATH))")
        self.copy_python_button.clicked.connect(self.copy_python)
        self.copy_python_button.setEnabled(False)
        self.compare_button = QPushButton("Compare with…")
        self.compare_button.setObjectName("compareWith")
        self.compare_button.setToolTip("This bundle beside another one (own or a published YABench folder): "
                                       "runs and per-window quality, differences highlighted")
        self.compare_button.clicked.connect(self.compare_with)
        self.compare_button.setEnabled(False)
        self.rerun_button = QPushButton("Re-run")
        self.rerun_button.setObjectName("rerunBundle")
        self.rerun_button.setToolTip("Queue this bundle's exact experiment (its experiment.yaml: same seed, size "
                                     "and engines) in the Runs tab, into a new bundle")
        self.rerun_button.clicked.connect(self._request_rerun)
        self.rerun_button.setEnabled(False)
        # a dialog attribute, so that tests (and scripts) can answer it
        self.ask_report_path: Callable[[Path], str | None] = lambda suggested: QFileDialog.getSaveFileName(
            self, "Export report", str(suggested), "HTML (*.html)")[0] or None
        self.report_task: Any = None
        self.title = BundleTitle("<b>No bundle open.</b> Open the folder <code>rspwb run EXPERIMENT --out DIR</code> wrote.")
        self.title.setObjectName("bundleTitle")
        self.problems = QLabel()
        self.problems.setObjectName("bundleProblems")
        self.problems.setWordWrap(True)
        self.problems.setVisible(False)
        self.open_error = QLabel()  # a folder that could not be opened: the bundle shown stays
        self.open_error.setObjectName("openError")
        self.open_error.setWordWrap(True)
        self.open_error.setStyleSheet("color: #c62828")
        self.open_error.setVisible(False)
        top = QHBoxLayout()
        top.addWidget(self.open_button)
        top.addWidget(self.recent_combo, 1)
        top.addWidget(self.reload_button)
        top.addWidget(self.report_button)
        top.addWidget(self.copy_python_button)
        top.addWidget(self.compare_button)
        top.addWidget(self.rerun_button)

        self.summary_view = SummaryView()
        self.quality_view = QualityView()
        self.resources_view = ResourcesView()
        self.matrix_view = CorrectnessMatrixView()
        self.heaven_view = HeavenDashboardView()
        self.eviction_view = EvictionView()
        self.overlay_view = OverlayView()
        self.overlay_view.tasks = tasks  # a ticked run's series is read off the GUI thread
        self.timeline_view = TimelineView(tasks)
        self.views: tuple[ResultsView, ...] = (self.summary_view, self.quality_view, self.resources_view,
                                               self.matrix_view, self.heaven_view, self.eviction_view,
                                               self.overlay_view)
        self.tabs = QTabWidget()
        self.tabs.setObjectName("resultsTabs")
        for view, name in zip(self.views, ("Summary", "Quality", "Resources", "Correctness", "Latency × memory",
                                            "Eviction", "Overlay")):
            self.tabs.addTab(view, name)
            view.submit = self._submit
        # the timeline's own minimum width (its field rows) must not widen the window past 1024 px
        # its width is what the tab gives it
        policy = self.timeline_view.sizePolicy()
        policy.setHorizontalPolicy(QSizePolicy.Policy.Ignored)
        self.timeline_view.setSizePolicy(policy)
        self.tabs.addTab(self.timeline_view, "Timeline")
        from rsp_workbench.gui.results.compare import CompareView

        self.compare_view = CompareView(tasks)  # bundle A is the open one: it gets set_data as every view
        self.views = (*self.views, self.compare_view)
        self.tabs.addTab(self.compare_view, "Compare")
        self.matrix_view.divergenceRequested.connect(self.show_divergence)
        self.summary_view.runRequested.connect(self.show_run)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.title)
        layout.addWidget(self.open_error)
        layout.addWidget(self.problems)
        layout.addWidget(self.tabs, 1)
        self._refresh_recent()

    @property
    def timeline(self) -> Any:
        """The inner WindowTimeline (closed with the browser, `closeEvent`)."""
        return self.timeline_view.timeline

    def closeEvent(self, event: Any) -> None:  # noqa: N802
        """The timeline lets go of its tasks (the main window closes the browser on quit)."""
        self.timeline.close()
        super().closeEvent(event)

    # ------------------------------------------------------------------ opening
    @Slot()
    def open_dialog(self) -> None:
        start = str(self.folder.parent) if self.folder else str(Path.cwd())
        path = QFileDialog.getExistingDirectory(self, "Open result bundle", start)
        if path:
            self.open_bundle(path)

    @Slot()
    def export_report(self) -> Any:
        """Write the open bundle's HTML report where the user says (off the GUI thread when there are tasks)."""
        if self.data is None:
            return None
        bundle = self.data.bundle
        target = self.ask_report_path(bundle.folder / f"{bundle.folder.name}-report.html")
        if not target:
            return None
        from rsp_workbench.results.html_report import write_report

        def write(state: Any = None) -> str:
            write_report(bundle, target)
            return str(target)

        if self.tasks is None:
            try:
                self._report_written(write())
            except (UserError, OSError) as error:
                self._report_failed(error, "")
            return None
        self.statusMessage.emit(f"writing the report {target} …")
        task = self.tasks.start(f"report of {bundle.folder.name}", write)
        task.finished.connect(self._report_written)
        task.failed.connect(self._report_failed)
        self.report_task = task
        return task

    @Slot()
    def copy_python(self) -> str | None:
        """Put the lines that load the open bundle with the public API on the clipboard."""
        if self.data is None:
            return None
        text = load_bundle_python(self.data.bundle.folder)
        QApplication.clipboard().setText(text)
        self.statusMessage.emit("copied: Python that loads this bundle (paste it into a notebook)")
        return text

    @Slot()
    def compare_with(self) -> Any:
        """"Compare with…": the Compare tab, asking for bundle B."""
        self.tabs.setCurrentWidget(self.compare_view)
        return self.compare_view.choose()

    @Slot()
    def _request_rerun(self) -> None:
        if self.data is not None:
            self.rerunRequested.emit(str(self.data.bundle.folder))

    @Slot(object)
    def _report_written(self, path: object) -> None:
        self.statusMessage.emit(f"report written: {path}")

    @Slot(object, str)
    def _report_failed(self, error: object, trace: str) -> None:
        self.statusMessage.emit(f"the report was not written: {error}")

    @Slot()
    def reload(self) -> None:
        if self.folder is not None:
            self.open_bundle(self.folder)

    def open_bundle(self, path: str | os.PathLike[str]) -> Any:
        """Read the bundle (on a task when it is big and a TaskRegistry was given); returns the task or None.

        A folder that is no bundle at all is refused with a message; the bundle shown stays."""
        folder = Path(path).expanduser()
        refused = not_a_bundle(folder)
        if refused is not None:
            self._show_failure(refused, folder)
            return None
        self.folder = folder
        self.reload_button.setEnabled(True)
        if self.load_task is not None and self.load_task.is_running():
            self.load_task.cancel()
        runs = folder / RUNS_DIR
        count = sum(1 for _ in runs.iterdir()) if runs.is_dir() else 0
        self.background = self.tasks is not None and (count > self.inline_runs
                                                      or _bytes_to_read(folder) > self.inline_bytes)
        if not self.background:
            try:
                data = bundle_data(open_bundle(folder, partial=True))
            except Exception as error:  # noqa: BLE001 - shown, never a crash
                self._show_failure(error)
                return None
            self.show_data(data)
            return None
        self.title.show_line("reading ", folder, f" ({count} runs) …")

        def read(state: Any) -> BundleData:
            return bundle_data(open_bundle(folder, partial=True), lambda: state.cancelled, state.report_progress)

        task = self.tasks.start(f"read bundle {folder.name}", read, user_work=False)
        task.finished.connect(self.show_data)
        task.failed.connect(self._on_load_failed)
        task.progress.connect(self._on_load_progress)
        self.load_task = task
        return task

    @Slot(object)
    def show_data(self, data: BundleData) -> None:
        if self.folder is not None and data.bundle.folder != self.folder:
            return  # a superseded read
        self.data = data
        self.report_button.setEnabled(True)
        self.copy_python_button.setEnabled(True)
        self.compare_button.setEnabled(True)
        self.rerun_button.setEnabled(True)
        self.open_error.setVisible(False)
        self.timeline_view.reset()  # the run of the bundle shown before must not stay on the timeline
        bundle = data.bundle
        colour = STATUS_COLOURS.get(bundle.status, "#333")
        counts: dict[str, int] = {}
        for row in bundle.rows:
            key = verdict_text(row.get("verdict"), row.get("recall")).split(" · ")[0] or str(row.get("status"))
            counts[key] = counts.get(key, 0) + 1
        counted = ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "none"
        started = bundle.manifest.get("started")  # a published folder does not say when it ran
        self.title.show_line(
            f"<b>{escape_html(bundle.name)}</b> — <span style='color:{colour}'><b>{escape_html(bundle.status)}</b></span>; "
            f"{len(bundle.rows)} runs ({escape_html(counted)}); "
            + (f"started {escape_html(str(started))}; " if started else ""), bundle.folder)
        lines = [f"<span style='color:#c62828'>{escape_html(str(p))}</span>" for p in data.problems]
        lines += [f"<span style='color:#ef6c00'>{escape_html(n)}</span>" for n in bundle.notes]
        shown = lines if len(lines) <= SHOWN_PROBLEMS else lines[:SHOWN_PROBLEMS - 1] + [
            f"<span style='color:#555'>… and {len(lines) - SHOWN_PROBLEMS + 1} more (hover to see all)</span>"]
        self.problems.setText("<br>".join(shown))
        self.problems.setToolTip("<br>".join(lines) if len(shown) < len(lines) else "")
        self.problems.setVisible(bool(lines))
        for view in self.views:
            view.export_dir = bundle.folder
            try:
                view.set_data(data)  # type: ignore[attr-defined]
            except Exception as error:  # noqa: BLE001 - one broken view must not hide the others
                view.show_message(f"Cannot show this view: {escape_html(type(error).__name__)}: {escape_html(str(error))}")
        if bundle.rows or bundle.manifest:
            self._remember(str(bundle.folder))
        self.bundleLoaded.emit(str(bundle.folder))

    def problem_texts(self) -> list[str]:
        """What is wrong with the open bundle, as ``file:line: message`` lines (and notes)."""
        if self.data is None:
            return [self.problems.text()] if self.problems.text() else []
        return [str(p) for p in self.data.problems] + list(self.data.bundle.notes)

    @Slot(object, str)
    def _on_load_failed(self, error: object, trace: str) -> None:
        if self.sender() is not None and self.sender() is not self.load_task:
            return  # a superseded (cancelled) read
        self._show_failure(error)

    @Slot(object, str)
    def _on_read_failed(self, error: object, trace: str) -> None:
        """A view's per-run read failed (a bug, not bad content: that is reported by the view)."""
        text = self.problems.text()
        line = f"<span style='color:#c62828'>{escape_html(type(error).__name__)}: {escape_html(str(error))}</span>"
        self.problems.setText(f"{text}<br>{line}" if text else line)
        self.problems.setVisible(True)

    @Slot(float, str)
    def _on_load_progress(self, fraction: float, message: str) -> None:
        self.title.show_line("reading ", self.folder or "", f": {escape_html(message)} …")

    def _show_failure(self, error: object, folder: Path | None = None) -> None:
        """Say why a folder could not be read, naming it once; a bundle already shown stays (and stays current)."""
        kind = "" if isinstance(error, UserError) else f"{type(error).__name__}: "
        names_folder = (isinstance(error, UserError) and folder is not None and error.file is not None
                        and Path(error.file) == folder and error.line is None and not error.field)
        if self.data is not None:
            self.folder = self.data.bundle.folder
            # the error names the folder already: "Not opened: FOLDER: why", else "Not opened FOLDER: why"
            where = "" if names_folder else f" <code>{shown_path(self.open_error, folder or self.folder)}</code>"
            self.open_error.setText(f"<b>Not opened</b>{where}: {escape_html(kind + str(error))} "
                                    f"— still showing <code>{shown_path(self.open_error, self.folder)}</code>")
            self.open_error.setToolTip(f"not opened: {folder or self.folder}\nstill showing: {self.folder}")
            self.open_error.setVisible(True)
            return
        if folder is not None:
            self.folder = folder
        why = error.message if names_folder and isinstance(error, UserError) else kind + str(error)
        self.title.show_line("<b>Cannot read</b> ", self.folder or "")
        self.problems.setText(f"<span style='color:#c62828'>{escape_html(why)}</span>")
        self.problems.setVisible(True)

    def _submit(self, name: str, read: Callable[[], Any], deliver: Callable[[Any], None]) -> None:
        """How views read per-run files: on a task for big bundles, else at once."""
        if not self.background or self.tasks is None:
            deliver(read())
            return
        task = self.tasks.start(name, lambda state: read(), user_work=False)
        task.finished.connect(deliver)
        task.failed.connect(self._on_read_failed)

    # ------------------------------------------------------------------ recent bundles
    def recent_bundles(self) -> list[str]:
        if self.settings is None:
            return list(self._recent_memory)
        value = self.settings.value(RECENT_KEY, [])
        if isinstance(value, str):
            value = [value]
        return [str(v) for v in value] if isinstance(value, (list, tuple)) else []

    def _remember(self, path: str) -> None:
        recent = [path] + [p for p in self.recent_bundles() if p != path]
        recent = recent[:recent_size(self.settings) if self.settings is not None else RECENT_LIMIT]
        if self.settings is None:
            self._recent_memory = recent
        else:
            self.settings.setValue(RECENT_KEY, recent)
        self._refresh_recent()

    def _refresh_recent(self) -> None:
        self.recent_combo.blockSignals(True)
        self.recent_combo.clear()
        self.recent_combo.addItem(RECENT_PROMPT)
        for path in self.recent_bundles():
            self.recent_combo.addItem(path)
        self.recent_combo.setCurrentIndex(0)
        self.recent_combo.blockSignals(False)

    @Slot(int)
    def _on_recent_activated(self, index: int) -> None:
        if index > 0:
            self.open_bundle(self.recent_combo.itemText(index))

    # ------------------------------------------------------------------ the window timeline
    @Slot(str, int)
    def show_divergence(self, run_id: str, t_ms: int) -> None:
        self.show_run(run_id, t_ms)

    @Slot(str)
    def show_run(self, run_id: str, t_ms: int = UNKNOWN_TIME) -> bool:
        """Open a run of the bundle on the window timeline (at ``t_ms`` if known); False if no bundle is open."""
        self.tabs.setCurrentWidget(self.timeline_view)
        view = self.timeline_view
        if self.folder is None:
            return False
        if self.data is not None and self.data.bundle.published:
            view.status.setText("A published YABench folder holds per-window measurements only (no stream, "
                                "no engine answers): its runs cannot be shown on the window timeline.")
            return False
        view.load_bundle_run(str(self.folder), run_id)
        if t_ms != UNKNOWN_TIME:
            view.jump_to(t_ms)
        return True
