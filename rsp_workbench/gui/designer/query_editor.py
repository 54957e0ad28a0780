"""The query editor's tools under the template: the parser's verdict as it is typed (the broken line
marked), translation into another engine's dialect, and Save for a query that lives in a file.

A query file's text is edited here and kept (per file) until Save writes it; the experiment
keeps reading the file as saved, so it stays valid while the query is being typed. A file of
the shipped samples (or of an experiment opened as a template) is never overwritten: Save
asks for a new place and points the query at it. The logic is in
:mod:`rsp_workbench.gui.designer.query_files`.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Callable

from PySide6.QtCore import QTimer, Signal, Slot
from PySide6.QtWidgets import QComboBox, QFileDialog, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from rsp_workbench.errors import UserError
from rsp_workbench.gui.designer.fields import html
from rsp_workbench.gui.designer.model import DesignerModel, write_text_file
from rsp_workbench.gui.designer.query_files import (
    check_query_text,
    first_values,
    query_file_path,
    relative_file,
    translate_query_text,
)
from rsp_workbench.gui.highlight import CodeEditor
from rsp_workbench.query.writer import DIALECTS

CHECK_DELAY_MS = 300


class QueryTools(QWidget):
    """Check, Translate and Save for the query shown in ``editor`` (query ``index()`` of the model)."""

    statusMessage = Signal(str)
    filesEdited = Signal()  # a query file's unsaved edit began or was saved

    def __init__(self, model: DesignerModel, editor: CodeEditor, index: Callable[[], int],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.editor = editor
        self.index = index
        self.file_edits: dict[Path, str] = {}  # unsaved texts of query files
        self.file_syntax: dict[Path, str] = {}  # the syntax a translation will need once saved
        self.ask_save_path: Callable[[Path], str | None] = self._ask_save_path
        self.show_error: Callable[[str, str], None] = self._show_error
        self.check_label = QLabel()
        self.check_label.setObjectName("queryCheck")
        self.check_label.setWordWrap(True)
        self.dialect_combo = QComboBox()
        self.dialect_combo.setObjectName("translateDialect")
        self.dialect_combo.addItems(list(DIALECTS))
        self.translate_button = QPushButton("Translate")
        self.translate_button.setObjectName("translateQuery")
        self.translate_button.setToolTip("Write the query in the dialect chosen (as rspwb query translate); "
                                         "the query's syntax follows")
        self.translate_button.clicked.connect(self.translate)
        self.save_button = QPushButton("Save query file")
        self.save_button.setObjectName("saveQueryFile")
        self.save_button.setToolTip("Write the edited text to the query file (a sample's file: to a new place)")
        self.save_button.clicked.connect(self.save)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(CHECK_DELAY_MS)
        self._timer.timeout.connect(self.check)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(QLabel("translate to"))
        row.addWidget(self.dialect_combo)
        row.addWidget(self.translate_button)
        row.addStretch(1)
        row.addWidget(self.save_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.check_label)
        layout.addLayout(row)

    # ------------------------------------------------------------------ which query
    def query_file(self) -> Path | None:
        """The file the shown query is read from (None: an inline ``text``)."""
        query = self.model.get(("queries", self.index()))
        if not isinstance(query, dict) or isinstance(query.get("text"), str) or not isinstance(query.get("file"), str):
            return None
        return query_file_path(query["file"], self.model.base_dir)

    def syntax(self) -> str | None:
        file = self.query_file()
        if file is not None and file in self.file_syntax:
            return self.file_syntax[file]
        syntax = self.model.get(("queries", self.index(), "syntax"))
        return syntax if isinstance(syntax, str) else None

    def shown_text(self, saved: str) -> str:
        """What the editor shows for a file query: the unsaved edit, else the file as saved."""
        file = self.query_file()
        return self.file_edits.get(file, saved) if file is not None else saved

    def unsaved_files(self) -> list[Path]:
        return list(self.file_edits)

    def forget(self) -> None:
        """Another experiment was opened (after the user agreed to discard)."""
        self.file_edits.clear()
        self.file_syntax.clear()
        self.filesEdited.emit()

    # ------------------------------------------------------------------ typing
    def typed(self) -> None:
        """The editor's text changed by the user: keep a file's edit, check it shortly."""
        file = self.query_file()
        if file is not None:
            was_edited = file in self.file_edits
            text = self.editor.toPlainText()
            if text == self.model.query_template(self.index())[0]:  # typed back to the file as saved
                self.file_edits.pop(file, None)
            else:
                self.file_edits[file] = text
            if was_edited != (file in self.file_edits):
                self.filesEdited.emit()
        self.refresh_buttons()
        self._timer.start()

    def refresh_buttons(self) -> None:
        file = self.query_file()
        self.save_button.setVisible(file is not None)
        self.save_button.setEnabled(file is not None and file in self.file_edits)

    def flush(self) -> None:
        if self._timer.isActive():
            self._timer.stop()
            self.check()

    def stop_timers(self) -> None:
        self._timer.stop()

    @Slot()
    def check(self) -> bool:
        """Parse the editor's text: ✔ what it reads, or the parser's message with its line marked."""
        self._timer.stop()
        text = self.editor.toPlainText()
        if not text.strip():
            self.check_label.clear()
            self.editor.mark_line(None)
            return False
        source = str(self.query_file() or f"queries[{self.index()}]")
        result = check_query_text(text, self.syntax(), first_values(self.model.raw), source)
        colour = "#2e7d32" if result.ok else "#c62828"
        self.check_label.setText(f"<span style='color:{colour}'>{html(result.message)}</span>")
        self.editor.mark_line(result.line)
        return result.ok

    # ------------------------------------------------------------------ translate
    @Slot()
    def translate(self) -> bool:
        """The editor's query in the chosen dialect; an inline query's text and syntax change in one
        undo step, a file's text waits for Save (its syntax with it)."""
        dialect = self.dialect_combo.currentText()
        file = self.query_file()
        source = str(file or f"queries[{self.index()}]")
        try:
            result = translate_query_text(self.editor.toPlainText(), self.syntax(), dialect,
                                          first_values(self.model.raw), source)
        except UserError as error:
            self.check_label.setText(f"<span style='color:#c62828'>cannot translate to {html(dialect)}: "
                                     f"{html(error.message)}</span>")
            return False
        if file is None:
            query = dict(self.model.get(("queries", self.index())))
            query.update(text=result.text, syntax=result.syntax)
            self.model.set(("queries", self.index()), query)
        else:
            self.file_syntax[file] = result.syntax
            self.editor.setPlainText(result.text)  # typed(): kept as the file's unsaved edit
        self.check()
        self.statusMessage.emit(result.note + ("; Save query file writes it" if file is not None else ""))
        return True

    # ------------------------------------------------------------------ save
    def protected(self, file: Path) -> bool:
        """A shipped sample's file, or one of an experiment opened as a template."""
        from rsp_workbench.gui.library.model import default_samples_dir

        return self.model.template or file.resolve().is_relative_to(default_samples_dir().resolve())

    @Slot()
    def save(self) -> bool:
        """Write the edited query file (a protected one to a place the user chooses, which the query
        then names); a file that cannot be written is said, the edit stays."""
        file = self.query_file()
        if file is None or file not in self.file_edits:
            return True
        target = file
        if self.protected(file):
            chosen = self.ask_save_path(file)
            if not chosen:
                return False
            target = Path(chosen)
        try:
            write_text_file(target, self.file_edits[file])
        except UserError as error:
            self.show_error("Query file not saved", str(error))
            return False
        del self.file_edits[file]
        syntax = self.file_syntax.pop(file, None)
        if target != file:
            self.model.set(("queries", self.index(), "file"), relative_file(target, self.model.base_dir))
        if syntax is not None and self.model.get(("queries", self.index(), "syntax")) != syntax:
            self.model.set(("queries", self.index(), "syntax"), syntax)
        self.model.revalidate()  # the experiment reads the file as saved now
        self.statusMessage.emit(f"saved the query file {target}")
        self.filesEdited.emit()
        self.refresh_buttons()
        return True

    def save_all(self) -> bool:
        """Save every edited query file (Ctrl+S saves the experiment's query files first)."""
        shown = self.index
        queries = self.model.get(("queries",), [])
        for position in range(len(queries) if isinstance(queries, list) else 0):
            self.index = functools.partial(int, position)  # save() acts on query `position` meanwhile
            try:
                if self.query_file() in self.file_edits and not self.save():
                    return False
            finally:
                self.index = shown
        return True

    def _ask_save_path(self, file: Path) -> str | None:
        path, _ = QFileDialog.getSaveFileName(self, "Save the query file as", str(Path.cwd() / file.name),
                                              "Queries (*.rq *.sparql *.txt);;All files (*)")
        return path or None

    def _show_error(self, title: str, text: str) -> None:
        from PySide6.QtWidgets import QMessageBox

        QMessageBox.warning(self, title, text)
