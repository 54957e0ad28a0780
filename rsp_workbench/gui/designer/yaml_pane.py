"""The experiment file as text, in sync with the forms both ways.

Typing is debounced (400 ms), then the whole text goes to the model, which keeps the
document unchanged while the YAML does not parse (the error is shown and its line marked).
"""

from __future__ import annotations

from PySide6.QtCore import QTimer, Slot
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from rsp_workbench.gui.designer.model import DesignerModel
from rsp_workbench.gui.highlight import CodeEditor


class YamlPane(QWidget):
    """A YAML editor whose text is applied to the model after a pause in typing."""

    def __init__(self, model: DesignerModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.editor = CodeEditor(language="yaml")
        self.editor.setObjectName("yamlPane")
        self.editor.textChanged.connect(self._on_typed)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(400)
        self._timer.timeout.connect(self._apply)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel("<b>YAML</b> (edits apply after validation)"))
        layout.addWidget(self.editor, 1)

    def show_text(self, text: str) -> None:
        """Show ``text`` keeping the scroll position and cursor (the model changed elsewhere)."""
        self.editor.set_text_keep_view(text)

    def mark_line(self, line: int | None) -> None:
        self.editor.mark_line(line, scroll=not self.editor.hasFocus())

    def flush(self) -> None:
        """Apply typing still waiting on the debounce timer."""
        if self._timer.isActive():
            self._timer.stop()
            self._apply()

    def stop_timers(self) -> None:
        self._timer.stop()

    @Slot()
    def _on_typed(self) -> None:
        self._timer.start()

    @Slot()
    def _apply(self) -> None:
        self.model.set_yaml_text(self.editor.toPlainText())
