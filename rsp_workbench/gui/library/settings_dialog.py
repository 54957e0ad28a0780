"""Settings…: the Spark master, the results folder and the recent-list size, validated before
they are stored (Cancel stores nothing); the rules and the storage are in the library model."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from PySide6.QtCore import Slot
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from rsp_workbench.errors import UserError
from rsp_workbench.gui.library.model import (
    MAX_RECENT,
    RECENT_SIZE_RANGE,
    Settings,
    UserSettings,
    check_settings,
    master_override,
    read_settings,
    write_settings,
)
from rsp_workbench.gui.runs.model import RESULTS_DIR_ENV, default_results_dir
from rsp_workbench.gui.text import escape_html
from rsp_workbench.experiment.spark_master import MASTER_ENV


class SettingsDialog(QDialog):
    """Edit the user settings; ``saved`` holds what OK stored (None until then)."""

    def __init__(self, settings: Settings, settings_file: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("settingsDialog")
        self.setWindowTitle("Settings")
        self.settings, self.settings_file = settings, settings_file
        self.saved: UserSettings | None = None
        self.ask_folder: Callable[[str], str | None] = lambda start: QFileDialog.getExistingDirectory(
            self, "Results folder", start) or None
        try:
            current = read_settings(settings, settings_file)
            load_error = ""
        except UserError as error:  # a broken settings file: say so, start from the defaults
            current, load_error = UserSettings("", "", MAX_RECENT), str(error)

        self.master_edit = QLineEdit(current.spark_master)
        self.master_edit.setObjectName("sparkMaster")
        self.master_edit.setPlaceholderText("local[*]")
        override = master_override()
        master_note = (f"The environment variable <code>{MASTER_ENV}</code> overrides this"
                       + (f" — it is set now, to <code>{escape_html(override)}</code>." if override else "."))
        self.results_edit = QLineEdit(current.results_dir)
        self.results_edit.setObjectName("resultsDir")
        self.results_edit.setPlaceholderText(str(default_results_dir()))
        browse = QPushButton("Browse…")
        browse.clicked.connect(self.browse_results_dir)
        results_row = QHBoxLayout()
        results_row.addWidget(self.results_edit, 1)
        results_row.addWidget(browse)
        self.recent_spin = QSpinBox()
        self.recent_spin.setObjectName("recentSize")
        self.recent_spin.setRange(0, 999)  # out-of-range values reach the check, which names the field
        self.recent_spin.setValue(current.recent_size)

        form = QFormLayout()
        form.addRow("Spark master:", self.master_edit)
        form.addRow("", _note(master_note + " Empty: local[*]. Stored as <code>spark.master</code> in "
                              f"{escape_html(str(settings_file))}."))
        form.addRow("Results folder:", results_row)
        form.addRow("", _note(f"Where new runs' bundles go. Empty: the default. <code>{RESULTS_DIR_ENV}</code> "
                              "overrides it."))
        form.addRow("Recent-list size:", self.recent_spin)
        form.addRow("", _note(f"How many recent experiments and bundles are remembered ({RECENT_SIZE_RANGE[0]}"
                              f"–{RECENT_SIZE_RANGE[1]})."))
        self.error = QLabel(escape_html(load_error))
        self.error.setObjectName("settingsError")
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #c62828")
        self.error.setVisible(bool(load_error))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addStretch(1)
        layout.addWidget(buttons)
        self.resize(640, self.sizeHint().height())

    @Slot()
    def browse_results_dir(self) -> None:
        folder = self.ask_folder(self.results_edit.text() or str(default_results_dir()))
        if folder:
            self.results_edit.setText(folder)

    def accept(self) -> None:
        """Store the settings if every field is valid; else name the wrong field and stay open."""
        values, message = check_settings(self.master_edit.text(), self.results_edit.text(),
                                         str(self.recent_spin.value()))
        if values is not None:
            try:
                write_settings(self.settings, self.settings_file, values)
            except (OSError, UserError) as error:
                values, message = None, f"Cannot store the settings: {error}"
        if values is None:
            self.error.setText(escape_html(message))
            self.error.setVisible(True)
            return
        self.saved = values
        super().accept()


def _note(html: str) -> QLabel:
    label = QLabel(f"<small style='color:#666'>{html}</small>")
    label.setWordWrap(True)
    return label
