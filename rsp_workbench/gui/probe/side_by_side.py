"""The probe dialog's side-by-side SECRET table: one row per engine (or parameter combination)
probed in the dialog, with export to CSV, PNG and SVG.

A thin view over :func:`rsp_workbench.gui.probe.model.secret_row`: the rows are computed
there; this widget only draws them (an override of the named preset in dark red, a row that
no preset explains in red) and writes them out. PNG and SVG draw the whole table, every row
and column at its natural size, not the scrolled part on screen.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from rsp_workbench.gui.probe.model import (
    PARTIAL_COLOUR,
    SECRET_COLUMNS,
    UNEXPLAINED_COLOUR,
    SecretRow,
    secret_row,
    write_secret_csv,
)
from rsp_workbench.gui.results.common import export_png, export_svg
from rsp_workbench.probe.infer import ProbeInference


class SideBySide(QWidget):
    """Every engine probed in the dialog, side by side as SECRET parameters."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows: list[SecretRow] = []
        self.table = _secret_table()
        self.table.setObjectName("probeSecretTable")
        self.export_buttons: dict[str, QPushButton] = {}
        buttons = QHBoxLayout()
        self.hint = QLabel("Each probe adds a row; choose “every combination” to probe all of an engine type's.")
        self.hint.setWordWrap(True)
        buttons.addWidget(self.hint, 1)
        for kind in ("csv", "png", "svg"):
            button = QPushButton(f"Export {kind.upper()}…")
            button.setObjectName(f"probeExport{kind.upper()}")
            button.setEnabled(False)
            button.clicked.connect(lambda _=False, kind=kind: self._export(kind))
            self.export_buttons[kind] = button
            buttons.addWidget(button)
        self.clear_button = QPushButton("Clear")
        self.clear_button.setEnabled(False)
        self.clear_button.clicked.connect(self.clear)
        buttons.addWidget(self.clear_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.table, 1)
        layout.addLayout(buttons)
        self.ask_save_path: Callable[[str], str | None] = self._ask_save_path
        self.export_dir: Path | None = None

    def add(self, inference: ProbeInference) -> SecretRow:
        row = secret_row(inference)
        self.rows.append(row)
        _fill_row(self.table, len(self.rows) - 1, row)
        self.table.resizeRowsToContents()
        for button in (*self.export_buttons.values(), self.clear_button):
            button.setEnabled(True)
        return row

    @Slot()
    def clear(self) -> None:
        self.rows.clear()
        self.table.setRowCount(0)
        for button in (*self.export_buttons.values(), self.clear_button):
            button.setEnabled(False)

    # ------------------------------------------------------------------ export
    def export_csv(self, path: str | Path) -> Path:
        return write_secret_csv(path, self.rows)

    def export_png(self, path: str | Path) -> Path:
        return export_png(self._whole_table(), path)

    def export_svg(self, path: str | Path) -> Path:
        return export_svg(self._whole_table(), path, "RSP Workbench: probed engines side by side")

    def _whole_table(self) -> QTableWidget:
        """The table with every row and column at its natural size (not scrolled)."""
        table = _secret_table()
        for index, row in enumerate(self.rows):
            _fill_row(table, index, row)
        table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        table.resizeColumnsToContents()
        table.resizeRowsToContents()
        width = table.horizontalHeader().length() + 2 * table.frameWidth()
        height = table.horizontalHeader().height() + table.verticalHeader().length() + 2 * table.frameWidth()
        table.resize(width, height)
        return table

    def _export(self, kind: str) -> None:
        path = self.ask_save_path(kind)
        if not path:
            return
        {"csv": self.export_csv, "png": self.export_png, "svg": self.export_svg}[kind](path)
        self.hint.setText(f"exported {path}")

    def _ask_save_path(self, kind: str) -> str | None:
        start = (self.export_dir or Path.cwd()) / f"probed-engines.{kind}"
        path, _ = QFileDialog.getSaveFileName(self, f"Export {kind.upper()}", str(start), f"*.{kind}")
        return path or None


def _secret_table() -> QTableWidget:
    table = QTableWidget(0, len(SECRET_COLUMNS))
    table.setHorizontalHeaderLabels(SECRET_COLUMNS)
    table.verticalHeader().setVisible(False)
    table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
    table.setWordWrap(True)
    table.setSizeAdjustPolicy(QAbstractScrollArea.SizeAdjustPolicy.AdjustIgnored)
    header = table.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    # the long cells wrap so that "explained by" keeps its room at 1024 px: the engine (label,
    # combination, fault) in a column of its own width, the last one stretched
    header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
    header.resizeSection(0, 170)
    header.setStretchLastSection(True)
    return table


def _fill_row(table: QTableWidget, index: int, row: SecretRow) -> None:
    table.setRowCount(max(table.rowCount(), index + 1))
    for column, text in enumerate(row.cells):
        item = QTableWidgetItem(text)
        name = SECRET_COLUMNS[column]
        if name in row.overridden:
            item.setForeground(Qt.GlobalColor.darkRed)
            item.setToolTip("an override of the named preset")
        if name == "explained by" and not row.explained:
            item.setForeground(QColor(UNEXPLAINED_COLOUR))
        elif name == "explained by" and row.partial:
            item.setForeground(QColor(PARTIAL_COLOUR))
        table.setItem(index, column, item)
