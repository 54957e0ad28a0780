"""The Results browser's Timeline tab: window controls, loading a stream or a bundle run, overlays.

The core results view. :class:`TimelineView` is the controls and the work around
the plot: the window spec and report policy fields, reading a stream file or a result
bundle's run off the GUI thread (`rsp_workbench.results.run_timeline`), overlaying other runs on the same
stream, the selected window's expected vs actual bindings, and export. The plot itself —
lanes, windows, markers, the side panel and the frame budget — is
:class:`rsp_workbench.gui.results.timeline.plot.WindowTimeline`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from PySide6.QtCore import Qt, QTimer, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from rsp_workbench.core.semantics import BorderConvention, ReportPolicy
from rsp_workbench.core.windows import WindowInstance, WindowSpec
from rsp_workbench.errors import UserError
from rsp_workbench.gui.results.timeline.export import export_to
from rsp_workbench.gui.results.timeline.model import (
    BindingsResult,
    LoadedRun,
    bindings_computer,
    bindings_note,
    bundle_run_reader,
    error_text,
    runs_status,
    spec_summary,
    stream_reader,
)
from rsp_workbench.gui.results.timeline.plot import WindowTimeline
from rsp_workbench.gui.text import escape_html
from rsp_workbench.results.stream_lanes import StreamLanes


EXPORT_NOTE_MS = 6000  # how long "exported FILE" follows the run's caption
NO_RUN_SHOWN = ("No run shown. Choose a run in Summary (double-click) or a ✗ in Correctness, "
                "or open a stream file.")


class TimelineView(QWidget):
    """Results: a stream file + window spec on the timeline, or a run of a result bundle."""

    def __init__(self, tasks: Any = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        from rsp_workbench.results.run_timeline import StreamCache

        self.setObjectName("timelineView")
        self.tasks = tasks
        self.timeline = WindowTimeline()
        self.stream_cache = StreamCache()
        self.runs: list[Any] = []  # BundleRun: the shown run first, then overlays
        self.bundle: str | None = None
        self.load_task: Any = None
        self._generation = 0
        self._delivered = 0  # the last load generation whose outcome reached the GUI thread
        self._pending_jump: int | None = None
        self._stream_path = ""
        self._loading_run = ""
        self._labels: dict[str, str] = {}  # run id → its marker row
        self._bindings_cache: dict[tuple[Any, ...], Any] = {}
        self.open_button = QPushButton("Open stream…")
        self.open_button.clicked.connect(self.open_dialog)
        self.size_edit = QLineEdit("10s")
        self.slide_edit = QLineEdit("10s")
        self.t0_edit = QLineEdit("0s")
        for edit in (self.size_edit, self.slide_edit, self.t0_edit):
            # wide enough for "100000ms" whatever the window width (never cut to "0ms")
            edit.setMinimumWidth(edit.fontMetrics().horizontalAdvance("100000ms") + 14)
            edit.setMaximumWidth(edit.minimumWidth() + 20)
            edit.editingFinished.connect(self.apply_spec)
        self.border_combo = QComboBox()
        self.border_combo.addItems([b.value for b in BorderConvention])
        self.border_combo.activated.connect(self._on_spec_control)
        self.partial_box = QCheckBox("leading partial")
        self.partial_box.clicked.connect(self._on_spec_control)
        self.policy_combo = QComboBox()
        self.policy_combo.setEditable(True)
        self.policy_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.policy_combo.setMinimumContentsLength(22)
        self.policy_combo.addItems(["window-close", "window-close & non-empty", "periodic(5s)", "(none)"])
        self.policy_combo.activated.connect(self._on_spec_control)
        self.fit_button = QPushButton("Fit")
        self.fit_button.clicked.connect(self.timeline.show_all)
        export_png = QPushButton("PNG…")
        export_png.clicked.connect(lambda: self._export("png"))
        export_svg = QPushButton("SVG…")
        export_svg.clicked.connect(lambda: self._export("svg"))
        export_csv = QPushButton("CSV…")
        export_csv.clicked.connect(lambda: self._export("csv"))
        self.status = QLabel("No stream loaded. Open a stream file (YABench text, N-Quads, Parquet, CSRBench folder) "
                             "or a run from a result bundle.")
        self.status.setObjectName("timelineStatus")
        self.status.setTextFormat(Qt.TextFormat.RichText)  # texts are escaped with escape_html
        self.status.setWordWrap(True)
        self.overlay_combo = QComboBox()
        self.overlay_combo.setObjectName("overlayRun")
        self.overlay_combo.setToolTip("Overlay another run of this bundle on the same stream (its emissions on their own row)")
        self.overlay_combo.activated.connect(self._on_overlay_chosen)
        self.bindings_combo = QComboBox()
        self.bindings_combo.setObjectName("bindingsRun")
        self.bindings_combo.setToolTip("Whose bindings the side panel compares with the oracle's")
        self.bindings_combo.activated.connect(self._on_bindings_run_chosen)
        self.divergence_button = QPushButton("First divergence")
        self.divergence_button.clicked.connect(self._on_first_divergence)
        self.run_bar = QWidget()
        run_layout = QHBoxLayout(self.run_bar)
        run_layout.setContentsMargins(0, 0, 0, 0)
        run_layout.addWidget(QLabel("overlay"))
        run_layout.addWidget(self.overlay_combo, 1)
        run_layout.addWidget(QLabel("bindings of"))
        run_layout.addWidget(self.bindings_combo, 1)
        run_layout.addWidget(self.divergence_button)
        self.run_bar.setVisible(False)
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
        # second row: the bundle run's choices, then view and export (two rows fit 1024 px)
        actions = QHBoxLayout()
        actions.addWidget(self.run_bar, 1)
        actions.addStretch(0)
        for button in (self.fit_button, export_png, export_svg, export_csv):
            actions.addWidget(button)
        layout = QVBoxLayout(self)
        layout.addLayout(controls)
        layout.addLayout(actions)
        layout.addWidget(self.status)
        layout.addWidget(self.timeline, 1)
        self.ask_save_path = lambda kind: ask_export_path(self, kind, self.bundle)
        self.timeline.windowSelected.connect(self._on_window_selected)
        self.apply_spec()

    def spec(self) -> WindowSpec:
        return window_spec(self.size_edit.text(), self.slide_edit.text(), self.t0_edit.text(),
                           self.border_combo.currentText(), self.partial_box.isChecked())

    @Slot()
    def _on_spec_control(self) -> None:
        self.apply_spec()

    @Slot()
    def apply_spec(self) -> None:
        try:
            spec = self.spec()
        except UserError as error:
            self.status.setText(f"<span style='color:#c62828'>{escape_html(str(error))}</span>")
            return
        self.timeline.set_window_spec(spec)
        text = self.policy_combo.currentText().strip()
        if text and text != "(none)":
            try:
                count = self.timeline.compute_expected_evaluations(ReportPolicy.parse(text))
            except UserError as error:
                self.status.setText(f"<span style='color:#c62828'>report: {escape_html(str(error))}</span>")
                return
        else:
            self.timeline.set_evaluations([])
            count = 0
        if self.timeline.lanes.count:
            self.status.setText(spec_summary(self.timeline.lanes, spec, count))

    def show_lanes(self, lanes: StreamLanes, source: str = "") -> None:
        self._forget_runs()
        self.timeline.load(lanes)
        self.apply_spec()
        if source:
            self.status.setText(f"{escape_html(source)}: " + self.status.text())

    @Slot()
    def open_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open stream", str(Path.cwd()),
                                              "Streams (*.stream *.nq *.nquads *.parquet *.txt);;All files (*)")
        if path:
            self.open_stream(path)

    def open_stream(self, path: str, fmt: str | None = None) -> Any:
        """Read the file in the background (TaskRegistry) or inline when no registry is given."""
        function = stream_reader(path, fmt)
        if self.tasks is None:
            from rsp_workbench.gui.tasks import TaskState

            self.show_lanes(function(TaskState()), path)
            return None
        self.status.setText(f"reading {escape_html(path)} …")
        self._stream_path = path
        task = self.tasks.start(f"read {Path(path).name}", function)
        task.finished.connect(self._on_stream_read)
        task.failed.connect(self._on_task_failed)
        task.progress.connect(self._on_task_progress)
        return task

    @Slot(object)
    def _on_stream_read(self, lanes: StreamLanes) -> None:
        self.show_lanes(lanes, self._stream_path)

    @Slot(object, str)
    def _on_task_failed(self, error: BaseException, trace: str) -> None:
        self.status.setText(f"<span style='color:#c62828'>{escape_html(error_text(error))}</span>")

    @Slot(float, str)
    def _on_task_progress(self, fraction: float, message: str) -> None:
        self.status.setText(escape_html(message))

    # ------------------------------------------------------------------ result-bundle runs
    def load_bundle_run(self, bundle_path: str | Path, run_id: str, *, overlay: bool = False) -> Any:
        """Show run ``run_id`` of the bundle (``overlay``: add its emissions to the run shown, same stream).

        Reads off the GUI thread when the view has a TaskRegistry (returns the Task), else inline.
        A corrupt bundle or run shows a message naming the file (and line or field).
        """
        bundle = str(bundle_path)
        if self.load_task is not None and self.load_task.is_running():
            self.load_task.cancel()
        self._generation += 1
        if not overlay:
            self._pending_jump = None
        function = bundle_run_reader(bundle, run_id, overlay, self._generation, self.stream_cache)
        verb = "overlaying" if overlay else "loading"
        if self.tasks is None:
            from rsp_workbench.gui.tasks import TaskState

            try:
                self._on_bundle_loaded(function(TaskState()))
            except Exception as error:  # noqa: BLE001 - shown (file and line for bad input), never a crash
                self._show_load_error(run_id, error)
            return None
        self.status.setText(f"{verb} run {escape_html(run_id)} of {escape_html(bundle)} …")
        self._loading_run = run_id
        task = self.tasks.start(f"timeline: {run_id}", function, user_work=False)
        task.finished.connect(self._on_bundle_loaded)
        task.failed.connect(self._on_bundle_failed)
        task.progress.connect(self._on_task_progress)
        self.load_task = task
        return task

    def _show_load_error(self, run_id: str, error: BaseException) -> None:
        self.status.setText(f"<span style='color:#c62828'>cannot show run {escape_html(run_id)}: {escape_html(error_text(error))}</span>")

    @Slot(object, str)
    def _on_bundle_failed(self, error: BaseException, trace: str) -> None:
        from rsp_workbench.results.run_timeline import LoadCancelled

        if self.sender() is not self.load_task or isinstance(error, LoadCancelled):
            return  # a load that was replaced by a newer one
        self._delivered, self._pending_jump = self._generation, None
        self._show_load_error(self._loading_run, error)

    @Slot(object)
    def _on_bundle_loaded(self, loaded: LoadedRun) -> None:
        if loaded.generation != self._generation:
            return
        self._delivered = loaded.generation
        run = loaded.run
        if loaded.overlay and self.runs:
            shown = self.runs[0]
            if run.stream.path != shown.stream.path:
                self.status.setText(f"<span style='color:#c62828'>run {escape_html(run.run_id)} reads another stream "
                                    f"({escape_html(str(run.stream.path))}); it cannot be overlaid on {escape_html(shown.run_id)}</span>")
                return
            self.runs = [r for r in self.runs if r.run_id != run.run_id] + [run]
            self._add_run_overlays(run)
        else:
            self._show_run(run)
            self._fill_overlay_combo(loaded.same_stream_runs)
        self.bindings_combo.clear()
        self.bindings_combo.addItems([self._run_label(r) for r in self.runs])
        self.run_bar.setVisible(True)
        self._update_status()
        if self._pending_jump is not None:
            t_ms, self._pending_jump = self._pending_jump, None
            self.jump_to(t_ms)

    def _run_label(self, run: Any) -> str:
        return marker_label(self._labels, self.runs, run)

    def _show_run(self, run: Any) -> None:
        previous = self.runs[0] if self.runs else None
        self.runs = [run]
        self._labels = {}
        self.bundle = str(run.bundle)
        self._bindings_cache.clear()
        self.timeline.clear_overlays()
        if previous is None or previous.stream.lanes is not run.stream.lanes or self.timeline.lanes is not run.stream.lanes:
            self.timeline.load(run.stream.lanes)
        spec = run.spec
        self.size_edit.setText(f"{spec.size}ms")
        self.slide_edit.setText(f"{spec.slide}ms")
        self.t0_edit.setText(f"{spec.t0}ms")
        self.border_combo.setCurrentText(spec.border.value)
        self.partial_box.setChecked(spec.leading_partial)
        self.policy_combo.setCurrentText(str(run.semantics.report))
        self.timeline.set_window_spec(spec)
        self.timeline.set_evaluations(run.evaluation_instants, run.evaluation_windows)  # made in the loader thread
        self._add_run_overlays(run)
        self.timeline.set_diverging_windows(run.diverging)
        self.timeline.show_all()
        self.timeline.panel.set_note("Click a window: its expected bindings are recomputed by the oracle "
                                        "for that window and compared with the engine's responses.")

    def _add_run_overlays(self, run: Any) -> None:
        label = self._run_label(run)
        self.timeline.add_engine_emissions(label, run.emission_times.tolist())
        if run.reconstructed:
            self.timeline.set_reconstructed_borders(label, list(run.reconstructed), run.reconstructed_shift,
                                                    run.reconstructed_label)

    def _fill_overlay_combo(self, run_ids: Sequence[str]) -> None:
        self.overlay_combo.clear()
        self.overlay_combo.addItem("(add a run on this stream)" if run_ids else "(no other run on this stream)")
        self.overlay_combo.addItems(list(run_ids))

    def _update_status(self) -> None:
        if self.runs:
            self.status.setText(runs_status(self.runs))

    def reset(self) -> None:
        """Another bundle was opened: nothing of the run shown before stays; a load running is dropped."""
        if self.load_task is not None and self.load_task.is_running():
            self.load_task.cancel()
        self._generation += 1
        self._delivered, self._pending_jump = self._generation, None
        self._forget_runs()
        self.bundle = None
        for widget, default in ((self.size_edit, "10s"), (self.slide_edit, "10s"), (self.t0_edit, "0s")):
            widget.setText(default)
        self.overlay_combo.clear()
        self.bindings_combo.clear()
        self.timeline.load(StreamLanes([], []))
        self.timeline.set_window_spec(None)  # no windows of the old run's spec over nothing
        self.status.setText(NO_RUN_SHOWN)

    def _forget_runs(self) -> None:
        if self.runs:  # the run's policy may walk every element (content-change): back to the cheap default
            self.policy_combo.setCurrentText("window-close")
        self.runs = []
        self._bindings_cache.clear()
        self.timeline.clear_overlays()
        self.run_bar.setVisible(False)

    @Slot(int)
    def _on_overlay_chosen(self, index: int) -> None:
        if index > 0 and self.bundle is not None:
            self.load_bundle_run(self.bundle, self.overlay_combo.itemText(index), overlay=True)
            self.overlay_combo.setCurrentIndex(0)

    @Slot(int)
    def _on_bindings_run_chosen(self, index: int) -> None:
        self.timeline.panel.forget_bindings()
        if self.timeline.selected is not None:
            self.timeline.select_window(self.timeline.selected)

    @Slot()
    def _on_first_divergence(self) -> None:
        run = self._bindings_run()
        if run is not None and run.first_divergence_ms is not None:
            self.jump_to(run.first_divergence_ms)
        elif run is not None:
            self.timeline.panel.set_note(f"{escape_html(run.run_id)}: no divergence (verdict {run.verdict}).")

    def jump_to(self, t_ms: int) -> Any:
        """Centre on ``t_ms`` (e.g. the first divergence) a few windows wide and select the window there;
        while a run is still loading, done when it is shown."""
        if self._loading():
            self._pending_jump = int(t_ms)
            return None
        return self.timeline.jump_to(int(t_ms))

    def _loading(self) -> bool:
        """A load was started whose run is not shown yet. Not the thread's state: a thread that has
        just ended has its result still queued to the GUI thread (jumps then went to the old run)."""
        return self.tasks is not None and self._delivered != self._generation

    def _bindings_run(self) -> Any:
        if not self.runs:
            return None
        index = self.bindings_combo.currentIndex()
        return self.runs[index] if 0 <= index < len(self.runs) else self.runs[0]

    @Slot(object)
    def _on_window_selected(self, window: WindowInstance) -> None:
        """Compute the clicked window's expected vs actual bindings (off the GUI thread when possible)."""
        run = self._bindings_run()
        if run is None:
            return
        key = (run.key, window.open, window.close)
        if key in self._bindings_cache:
            self._show_window_bindings(run, self._bindings_cache[key])
            return
        self.timeline.panel.set_note(f"{escape_html(run.engine)}: computing the oracle's bindings for {window} …")
        function = bindings_computer(run, window)
        if self.tasks is None:
            from rsp_workbench.gui.tasks import TaskState

            try:
                self._on_bindings_ready(function(TaskState()))
            except UserError as error:
                self.timeline.panel.set_note(f"<span style='color:#c62828'>{escape_html(str(error))}</span>")
            return
        task = self.tasks.start(f"bindings {window}", function, user_work=False)
        task.finished.connect(self._on_bindings_ready)
        task.failed.connect(self._on_bindings_failed)

    @Slot(object)
    def _on_bindings_ready(self, result: BindingsResult) -> None:
        run = next((r for r in self.runs if r.key == result.run_key), None)
        if run is None:
            return
        found = result.bindings
        self._bindings_cache[(run.key, *found.window)] = found
        if self._bindings_run() is run:
            self._show_window_bindings(run, found)

    @Slot(object, str)
    def _on_bindings_failed(self, error: BaseException, trace: str) -> None:
        self.timeline.panel.set_note(f"<span style='color:#c62828'>{escape_html(error_text(error))}</span>")

    def _show_window_bindings(self, run: Any, found: Any) -> None:
        self.timeline.panel.add_window_bindings(found.window, found.expected, found.actual, bindings_note(run.engine, found))

    # ------------------------------------------------------------------ export
    def _export(self, kind: str) -> None:
        path = self.ask_save_path(kind)
        if not path:
            return
        export_to(self.timeline, kind, path, self.runs)
        show_passing_note(self.status, f"exported {escape_html(path)}", EXPORT_NOTE_MS)

    def closeEvent(self, event: Any) -> None:  # noqa: N802
        if self.load_task is not None and self.load_task.is_running():
            self.load_task.cancel()
        super().closeEvent(event)


def export_start(kind: str, bundle: str | None) -> Path:
    """Where an export is offered: in the shown run's bundle folder, not the program's folder."""
    return Path(bundle) / f"timeline.{kind}" if bundle else Path.cwd() / f"timeline.{kind}"


def ask_export_path(parent: QWidget, kind: str, bundle: str | None) -> str | None:
    path, _ = QFileDialog.getSaveFileName(parent, f"Export {kind.upper()}", str(export_start(kind, bundle)), f"*.{kind}")
    return path or None


def window_spec(size: str, slide: str, t0: str, border: str, leading_partial: bool) -> WindowSpec:
    """The spec the fields say (a UserError names the field that is no duration)."""
    from rsp_workbench.core.time import parse_duration

    return WindowSpec(parse_duration(size, field="size"), parse_duration(slide, field="slide"),
                      parse_duration(t0, field="t0"), BorderConvention(border), leading_partial)


def marker_label(labels: dict[str, str], shown: Sequence[Any], run: Any) -> str:
    """A run's marker row name, kept in ``labels``: the engine, or "engine (run id)" when a run of
    that engine is shown already."""
    if run.run_id not in labels:
        taken = {labels[r.run_id] for r in shown if r.run_id in labels}
        labels[run.run_id] = run.engine if run.engine not in taken else f"{run.engine} ({run.run_id})"
    return labels[run.run_id]


def show_passing_note(label: QLabel, note: str, ms: int) -> None:
    """``note`` after the label's caption for ``ms`` (an export must not replace the run's caption)."""
    caption = label.text()
    label.setText(f"{caption} — <i>{note}</i>")

    def drop() -> None:
        if label.text().startswith(caption):  # unless another message came meanwhile
            label.setText(caption)

    QTimer.singleShot(ms, label, drop)
