"""The designer tab: a toolbar, the validation line, one form per section of the experiment file
and the YAML pane, all over one shared :class:`~rsp_workbench.gui.designer.model.DesignerModel`.

The view only lays the sections out and relays: a model change refreshes every section and
the pane; the loader's error (a field path such as ``engines[0].semantics.report``) marks the
widget bound to that path, whichever section holds it, and colours that section's tab.
Which module holds which fields of docs/experiment-format.md:

==========================================================  ======================
fields                                                      module
==========================================================  ======================
name, description, seed, repetitions, sizes                 ``general`` (General)
variables, sweep, cases                                     ``general`` (Variables)
stream, streams (generator, params, file, format, flow)     ``streams``
queries (id, syntax, text, file; windows)                   ``queries``
engines (type, preset, semantics, faults, parameters)       ``engines``
static                                                      ``static``
kpis, oracle, stand, spark                                  ``oracle``
the text itself                                             ``yaml_pane``
==========================================================  ======================
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QFileDialog,
    QLabel,
    QMessageBox,
    QSplitter,
    QTabWidget,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from rsp_workbench.errors import UserError
from rsp_workbench.gui.designer.engines import EnginesSection
from rsp_workbench.gui.designer.file_watch import FileWatch
from rsp_workbench.gui.designer.fields import INVALID_STYLE, DesignerSection, html, scroll_area
from rsp_workbench.gui.designer.general import GeneralSection, VariablesSection
from rsp_workbench.gui.designer.oracle import OracleSection
from rsp_workbench.gui.designer.queries import QueriesSection
from rsp_workbench.gui.designer.static import StaticSection
from rsp_workbench.gui.designer.streams import StreamSection
from rsp_workbench.gui.designer.yaml_pane import YamlPane
from rsp_workbench.gui.designer.model import Change, DesignerModel, path_text

FILE_LABEL_WIDTH = 420  # pixels of the file path in the toolbar


class DesignerView(QWidget):
    """Forms + YAML pane over a :class:`DesignerModel`."""

    fileChanged = Signal(str)
    statusMessage = Signal(str)
    titleChanged = Signal(str)  # "file.yaml *": the window title's part

    SECTIONS = ("general", "variables", "stream", "queries", "engines", "static", "run")
    # top-level field → section, to colour the tab of an invalid field
    SECTION_OF = {
        "name": "general", "description": "general", "seed": "general", "repetitions": "general", "sizes": "general",
        "variables": "variables", "sweep": "variables", "cases": "variables", "stream": "stream", "streams": "stream",
        "queries": "queries", "engines": "engines", "static": "static",
        "kpis": "run", "oracle": "run", "stand": "run", "spark": "run",
    }

    def __init__(self, model: DesignerModel | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("designer")
        self.model = model or DesignerModel()
        # dialogs are attributes so that tests (and scripts) can replace them
        self.ask_open_path: Callable[[], str | None] = lambda: ask_open_path(self, self.model)
        self.ask_save_path: Callable[[], str | None] = lambda: ask_save_path(self, self.model)
        self.save_message = ""  # the last save's report (also sent as statusMessage)
        self.show_error: Callable[[str, str], object] = lambda title, text: QMessageBox.warning(self, title, text)
        self._disk_text: str | None = None  # the open file's text as last read or written here
        self.file_watch = FileWatch(lambda: self._disk_text, self._on_changed_on_disk, self)

        self._build_actions()
        self.general = GeneralSection(self.model)
        self.variables = VariablesSection(self.model)
        self.streams = StreamSection(self.model)
        self.queries = QueriesSection(self.model)
        self.engines = EnginesSection(self.model)
        self.static = StaticSection(self.model)
        self.oracle = OracleSection(self.model)
        self.section_widgets: tuple[DesignerSection, ...] = (
            self.general, self.variables, self.streams, self.queries, self.engines, self.static, self.oracle)
        titles = ("General", "Variables", "Stream", "Queries", "Engines", "Static data", "KPIs, oracle, stand")
        self.sections = QTabWidget()
        self.sections.setObjectName("designerSections")
        for section, title in zip(self.section_widgets, titles):
            self.sections.addTab(scroll_area(section), title)
            section.statusMessage.connect(self.statusMessage)
            section.pendingEditsWanted.connect(self.flush_pending_edits)
            section.selectionChanged.connect(self._show_validation)

        self.queries.tools.filesEdited.connect(self.show_file_name)
        self.yaml_pane = YamlPane(self.model)
        self.yaml_edit = self.yaml_pane.editor
        self.error_label = QLabel()
        self.error_label.setObjectName("validationMessage")
        self.error_label.setWordWrap(True)
        self.error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # at most two lines (a long error moved the forms down at every keystroke); all of it in the tooltip
        self.error_label.setMaximumHeight(2 * self.error_label.fontMetrics().lineSpacing() + 4)

        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.sections)
        self.splitter.addWidget(self.yaml_pane)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setSizes([700, 320])  # scaled to the width: at 1024 px the forms fit without scrolling sideways
        layout = QVBoxLayout(self)
        layout.addWidget(self.toolbar)
        layout.addWidget(self.error_label)
        layout.addWidget(self.splitter, 1)

        self.model.subscribe(self._on_model_changed)
        self._on_model_changed(Change((), "load"))

    def show_section(self, name: str) -> None:
        """Bring a form section to the front: general, variables, stream, queries, engines, static, run."""
        self.sections.setCurrentIndex(self.SECTIONS.index(name))

    # ------------------------------------------------------------------ actions
    def _build_actions(self) -> None:
        self.toolbar = QToolBar()
        self.new_action = QAction("New", self)
        self.new_action.triggered.connect(self.new_document)
        self.open_action = QAction("Open…", self)
        self.open_action.triggered.connect(self.open_dialog)
        self.save_action = QAction("Save", self)
        self.save_action.triggered.connect(self.save)
        self.save_as_action = QAction("Save as…", self)
        self.save_as_action.triggered.connect(self.save_as)
        self.undo_action = QAction("Undo", self)
        self.undo_action.setShortcut(QKeySequence("Ctrl+Z"))
        self.undo_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.undo_action.triggered.connect(self.undo)
        self.redo_action = QAction("Redo", self)
        self.redo_action.setShortcuts([QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")])
        self.redo_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.redo_action.triggered.connect(self.redo)
        self.addAction(self.undo_action)
        self.addAction(self.redo_action)
        for action in (self.new_action, self.open_action, self.save_action, self.save_as_action):
            self.toolbar.addAction(action)
        self.toolbar.addSeparator()
        self.toolbar.addAction(self.undo_action)
        self.toolbar.addAction(self.redo_action)
        self.file_label = QLabel()
        self.toolbar.addSeparator()
        self.toolbar.addWidget(self.file_label)

    # ------------------------------------------------------------------ model → view
    @Slot()
    def _on_model_changed(self, change: Change) -> None:
        self.refresh(update_yaml=change.origin not in ("yaml", "yaml-error", "yaml-validated"))

    def refresh(self, *, update_yaml: bool = True) -> None:
        """Show the model: every section, the YAML pane and the validation."""
        model = self.model
        for section in self.section_widgets:
            section.refresh()
        if update_yaml:
            self.yaml_pane.show_text(model.shown_text())
        self._show_validation()
        self.undo_action.setEnabled(model.can_undo)
        self.redo_action.setEnabled(model.can_redo)
        self.undo_action.setToolTip(model.undo_text())
        self.redo_action.setToolTip(model.redo_text())
        self.show_file_name()

    @Slot()
    def show_file_name(self) -> None:
        """The file in the toolbar, • when it (or a query file) has unsaved edits; titleChanged follows."""
        model = self.model
        name = str(model.file) if model.file else "unsaved experiment"
        # a long path is elided in the middle (full path in the tooltip): it must not widen the window
        shown = self.file_label.fontMetrics().elidedText(name, Qt.TextElideMode.ElideMiddle, FILE_LABEL_WIDTH)
        sample = " (a sample: Save asks for a new place)" if model.template else ""
        unsaved = self.has_unsaved_edits()
        self.file_label.setText(f"  {shown}{' •' if unsaved else ''}{sample}")
        self.file_label.setToolTip(name)
        self.titleChanged.emit(f"{model.file.name if model.file else 'unsaved experiment'}{' *' if unsaved else ''}")

    @Slot()
    def _show_validation(self) -> None:
        validation = self.model.validation
        bindings = [binding for section in self.section_widgets for binding in section.bindings]
        for binding in bindings:
            if binding.widget.property("invalid"):
                binding.widget.setStyleSheet("")
                binding.widget.setProperty("invalid", False)
        for index in range(self.sections.count()):
            self.sections.tabBar().setTabTextColor(index, self.palette().text().color())
        self.yaml_edit.mark_line(None)
        for section in self.section_widgets:
            section.show_validation(validation)
        if validation.ok:
            from rsp_workbench.experiment.runs import count_runs

            experiment = validation.experiment
            runs = count_runs(experiment) if experiment is not None else 0
            self.error_label.setText(f"<span style='color:#2e7d32'>✔ valid — {runs} run(s)</span>")
            self.error_label.setToolTip("")
            return
        error = validation.error
        assert error is not None
        self.error_label.setText(f"<span style='color:#c62828'>✖ {html(str(error))}</span>")
        self.error_label.setToolTip(str(error))
        self.yaml_pane.mark_line(error.line)
        widget = self.widget_for_field(error.field or "")
        if widget is not None:
            name = widget.objectName()
            # a selector keeps the red frame off the children of container widgets
            widget.setStyleSheet(f"#{name} {{ {INVALID_STYLE} }}" if name else INVALID_STYLE)
            widget.setProperty("invalid", True)
            widget.setToolTip(str(error.message))
        top = (error.field or "").split(".")[0].split("[")[0]
        if top in self.SECTION_OF:
            self.sections.tabBar().setTabTextColor(self.SECTIONS.index(self.SECTION_OF[top]), Qt.GlobalColor.red)

    def widget_for_field(self, field: str) -> QWidget | None:
        """The bound widget that shows ``field`` (the loader's path) or its nearest parent."""
        if not field:
            return None
        best: tuple[int, QWidget] | None = None
        for section in self.section_widgets:
            for binding in section.bindings:
                text = path_text(binding.path())
                if field == text or field.startswith(text + ".") or field.startswith(text + "["):
                    if best is None or len(text) > best[0]:
                        best = (len(text), binding.widget)
        return best[1] if best else None

    def invalid_widgets(self) -> list[QWidget]:
        return [b.widget for section in self.section_widgets for b in section.bindings if b.widget.property("invalid")]

    # ------------------------------------------------------------------ view → model
    def flush_pending_edits(self) -> None:
        """Apply edits still waiting on a debounce timer (before save, undo, close)."""
        self.yaml_pane.flush()
        for section in self.section_widgets:
            section.flush()

    # ------------------------------------------------------------------ commands
    @Slot()
    def undo(self) -> None:
        self.flush_pending_edits()
        self.model.undo()

    @Slot()
    def redo(self) -> None:
        self.flush_pending_edits()
        self.model.redo()

    @Slot()
    def new_document(self) -> None:
        if self.confirm_discard():
            self.model.new()

    def open_file(self, path: str | Path, *, template: bool = False) -> UserError | None:
        """Load a file; a YAML error is shown in the pane (the form stays empty). A file that is no
        experiment is refused (the experiment shown stays): the error is returned and said."""
        try:
            error = self.model.load(path, template=template)
        except UserError as error_:
            self.statusMessage.emit(str(error_))
            self.show_error("Cannot open", str(error_))
            return error_
        for section in self.section_widgets:
            section.forget_forms()
        self.refresh()
        if error is not None:
            self.yaml_edit.set_text_keep_view(Path(path).read_text(encoding="utf-8", errors="replace"))
            self.yaml_edit.mark_line(error.line)
        self._watch(Path(path))
        self.fileChanged.emit(str(path))
        return error

    def _watch(self, path: Path) -> None:
        """Remember the file's text as read or written, and watch it for other programs' changes."""
        try:
            self._disk_text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            self._disk_text = None
        self.file_watch.watch(path)

    def _on_changed_on_disk(self, path: Path) -> None:
        """Another program changed the open file: reload it, unless edits here would be lost."""
        if not self.has_unsaved_edits():
            self.open_file(path, template=self.model.template)
            self.statusMessage.emit(f"reloaded {path}: it changed on disk")
            return
        self._watch(path)  # said once per change
        self.statusMessage.emit(f"{path} changed on disk; your unsaved edits are kept "
                                "(Save overwrites the file, Open reloads it)")

    @Slot()
    def open_dialog(self) -> None:
        if not self.confirm_discard():
            return
        path = self.ask_open_path()
        if path:
            self.open_file(path)

    @Slot()
    def save(self) -> bool:
        """Save to the file; a new document or a sample (a template) asks where."""
        self.flush_pending_edits()
        if not self.queries.tools.save_all():  # the edited query files first: the experiment reads them
            return False
        if self.model.file is None or self.model.template:
            return self.save_as()
        return self._write(None)

    @Slot()
    def save_as(self) -> bool:
        self.flush_pending_edits()
        path = self.ask_save_path()
        if not path:
            return False
        return self._write(Path(path))

    def _write(self, path: Path | None) -> bool:
        """Save; a file that cannot be written is said in a message box, the edits stay unsaved."""
        try:
            saved = self.model.save(path)
        except UserError as error:
            self.save_message = str(error)
            self.statusMessage.emit(self.save_message)
            self.show_error("Not saved", self.save_message)
            return False
        self._saved(saved)
        return True


    def _saved(self, path: Path | None) -> None:
        """Say where the file went, and which relative paths were rewritten to follow it."""
        moved = self.model.moved_paths
        self.save_message = f"saved {path}"
        if moved:
            examples = ", ".join(f"{item.old} → {item.new}" for item in moved[:2])
            self.save_message += (f"; rewrote {len(moved)} relative path(s) so that they still name the same files "
                                  f"({examples}{', …' if len(moved) > 2 else ''}; Undo reverts)")
        self.statusMessage.emit(self.save_message)
        if path is not None:
            self._watch(path)
        self.fileChanged.emit(str(path))

    def has_unsaved_edits(self) -> bool:
        """The experiment or one of its query files is edited and not saved."""
        return self.model.dirty or bool(self.queries.tools.unsaved_files())

    def confirm_discard(self) -> bool:
        """Ask before throwing away unsaved changes (True: go ahead)."""
        self.flush_pending_edits()
        if not self.has_unsaved_edits():
            return True
        answer = QMessageBox.question(
            self, "Unsaved changes", "The experiment (or a query file it reads) has unsaved changes. Save them first?",
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel,
        )
        if answer == QMessageBox.StandardButton.Save:
            return self.save()
        return answer == QMessageBox.StandardButton.Discard

    def closeEvent(self, event: Any) -> None:  # noqa: N802
        self.file_watch.stop()
        self.yaml_pane.stop_timers()
        for section in self.section_widgets:
            section.stop_timers()
        super().closeEvent(event)


def ask_open_path(parent: QWidget, model: DesignerModel) -> str | None:
    path, _ = QFileDialog.getOpenFileName(parent, "Open experiment", str(model.base_dir or Path.cwd()),
                                          "Experiments (*.yaml *.yml);;All files (*)")
    return path or None


def ask_save_path(parent: QWidget, model: DesignerModel) -> str | None:
    """Where to save; a sample (a template) is offered the current folder, not its own place."""
    suggested = Path.cwd() / model.file.name if model.template and model.file else model.file
    path, _ = QFileDialog.getSaveFileName(parent, "Save experiment", str(suggested or "experiment.yaml"),
                                          "Experiments (*.yaml *.yml)")
    return path or None
