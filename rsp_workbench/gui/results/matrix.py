"""Correctness matrix: engines × queries, ✓/✗ aggregated over cases and repetitions (CSRBench Table 2).

A cell's tooltip summarises the first divergence; clicking a ✗ cell asks the browser to
open that run on the window timeline at the divergence (``divergenceRequested``).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

from rsp_workbench.gui.results.common import ResultsView
from rsp_workbench.results.view_data import BundleData, CorrectnessMatrix, MatrixCell

STATE_COLOURS = {
    "correct": "#c8e6c9",
    "complete": "#c8e6c9",  # a bounded-memory join that found every answer
    "partial": "#fff9c4",
    "incorrect": "#ffcdd2",
    "error": "#ffe0b2",
    "failed": "#ffe0b2",
    "timeout": "#ffe0b2",
    "unreadable": "#ffe0b2",
    "cancelled": "#e0e0e0",
    "not-run": "#eeeeee",
    "mixed": "#fff9c4",
}
UNKNOWN_TIME = -1


class CorrectnessMatrixView(ResultsView):
    """Engines (rows) × queries (columns)."""

    title = "Correctness"
    divergenceRequested = Signal(str, int)  # run id, application ms of the divergence (-1: unknown)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("resultsMatrix")
        self.matrix: CorrectnessMatrix | None = None
        self.add_export_buttons()
        self.table = QTableWidget(0, 0)
        self.table.setObjectName("correctnessMatrix")
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.table.verticalHeader().setDefaultSectionSize(30)
        self.table.setStyleSheet("QTableWidget { font-size: 13px; }")
        self.table.cellClicked.connect(self._on_cell_clicked)
        layout = QVBoxLayout(self.body)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.table)

    def set_data(self, data: BundleData) -> None:
        self.set_matrix(data.matrix)

    def set_matrix(self, matrix: CorrectnessMatrix) -> None:
        self.matrix = matrix
        if not matrix.cells:
            self.show_message("This bundle has no runs.")
            return
        self.table.clear()
        self.table.setRowCount(len(matrix.engines))
        self.table.setColumnCount(len(matrix.queries))
        self.table.setVerticalHeaderLabels(list(matrix.engines))
        self.table.setHorizontalHeaderLabels(list(matrix.queries))
        for r, engine in enumerate(matrix.engines):
            for c, query in enumerate(matrix.queries):
                cell = matrix.cell(engine, query)
                item = QTableWidgetItem(cell.text if cell else "")
                item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                if cell is not None:
                    item.setBackground(QBrush(QColor(STATE_COLOURS.get(cell.state, "#e3f2fd"))))
                    item.setToolTip(self._tooltip(cell))
                self.table.setItem(r, c, item)
        self.show_content()
        counts: dict[str, int] = {}
        for cell in matrix.cells.values():
            counts[cell.state] = counts.get(cell.state, 0) + 1
        judged = any(cell.state in ("correct", "incorrect", "mixed") for cell in matrix.cells.values())
        # only a judged bundle has ✗ cells to click (a published folder holds measurements, no verdicts)
        hint = "; click a ✗ cell to open the run on the window timeline" if judged else "; no run was judged (no verdicts)"
        self.status.setText(", ".join(f"{n} {state}" for state, n in sorted(counts.items())) + " (engine × query cells)" + hint)

    @staticmethod
    def _tooltip(cell: MatrixCell) -> str:
        lines = [f"{cell.engine} × {cell.query}: " + ", ".join(f"{r} {v}" for r, v in zip(cell.run_ids, cell.verdicts))]
        if cell.divergence:
            lines.append(cell.divergence)
        return "\n".join(lines)

    @Slot(int, int)
    def _on_cell_clicked(self, row: int, column: int) -> None:
        self.click_cell(row, column)

    def click_cell(self, row: int, column: int) -> bool:
        """Emit ``divergenceRequested`` for an incorrect cell; True if it did."""
        if self.matrix is None or not (0 <= row < len(self.matrix.engines) and 0 <= column < len(self.matrix.queries)):
            return False
        cell = self.matrix.cell(self.matrix.engines[row], self.matrix.queries[column])
        if cell is None or cell.divergence_run is None:
            return False
        t_ms = UNKNOWN_TIME if cell.divergence_t_ms is None else int(cell.divergence_t_ms)
        self.divergenceRequested.emit(cell.divergence_run, t_ms)
        return True

    def chart_widget(self) -> QWidget:
        return self.table

    def csv_table(self) -> tuple[list[str], list[list[Any]]]:
        header = ["engine", "query", "cell", "state", "runs", "verdicts", "first_divergence_run", "divergence_ms",
                  "first_divergence"]
        rows: list[list[Any]] = []
        if self.matrix is not None:
            for engine in self.matrix.engines:
                for query in self.matrix.queries:
                    cell = self.matrix.cell(engine, query)
                    if cell is None:
                        continue
                    rows.append([engine, query, cell.text, cell.state, " ".join(cell.run_ids), " ".join(cell.verdicts),
                                 cell.divergence_run, cell.divergence_t_ms, cell.divergence])
        return header, rows
