"""Summary: one row per engine run (the rows of summary.json / ``rspwb report``)."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

from rsp_workbench.results.bundle import TABLE_COLUMNS
from rsp_workbench.gui.results.common import ResultsView
from rsp_workbench.gui.results.matrix import STATE_COLOURS
from rsp_workbench.gui.results.model import cell_text
from rsp_workbench.results.view_data import BundleData, case_variables

# The report's columns (rsp_workbench.results.bundle.TABLE_COLUMNS) plus where the run sits and what it cost.
SUMMARY_COLUMNS: tuple[tuple[str, str], ...] = (
    TABLE_COLUMNS[0][:2], ("case", "case"), ("case variables", "variables"), ("rep", "repetition"),
    *(c[:2] for c in TABLE_COLUMNS[1:3]),
    ("status", "status"), *(c[:2] for c in TABLE_COLUMNS[3:]), ("windows", "windows"),
    ("latency ms", "latency_ms_mean"), ("wall s", "wall_s"), ("error", "error"),
)
VARIABLES_WIDTH = 240  # px: the widest "case variables" column (the verdict stays in view at 1024 px)


def variables_text(variables: Any, names: Sequence[str]) -> str | None:
    """``STIM=10, WINDOW=1s``: a run's values of the variables that vary across the bundle."""
    if not isinstance(variables, Mapping) or not names:
        return None
    return ", ".join(f"{name}={variables[name]}" for name in names if name in variables) or None


class SummaryView(ResultsView):
    """The run table; double-click a run to open it on the window timeline."""

    title = "Summary"
    runRequested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("resultsSummary")
        self.rows: Sequence[Mapping[str, Any]] = ()
        self.varying: list[str] = []  # the variables that tell the cases apart (a sweep's "case 0…7" alone did not)
        self.add_export_buttons()
        self.table = QTableWidget(0, len(SUMMARY_COLUMNS))
        self.table.setObjectName("summaryTable")
        self.table.setHorizontalHeaderLabels([header for header, _ in SUMMARY_COLUMNS])
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.cellDoubleClicked.connect(self._on_double_click)
        layout = QVBoxLayout(self.body)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.table)

    def set_data(self, data: BundleData) -> None:
        self.rows = data.bundle.rows
        self.varying = case_variables(self.rows)
        self.table.setColumnHidden([key for _, key in SUMMARY_COLUMNS].index("variables"), not self.varying)
        # a published YABench folder's runs are named by test (a load: stations, interval), not by query
        query = [key for _, key in SUMMARY_COLUMNS].index("query")
        self.table.setHorizontalHeaderItem(query, QTableWidgetItem("test (load)" if data.bundle.published else "query"))
        self.table.setSortingEnabled(False)
        self.table.setRowCount(len(self.rows))
        for r, row in enumerate(self.rows):
            for c, (_, key) in enumerate(SUMMARY_COLUMNS):
                value = row.get(key)
                if key == "variables":
                    value = variables_text(value, self.varying)
                item = QTableWidgetItem(cell_text(key, value, row))
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                state = item.text().split(" · ")[0] if key == "verdict" else None
                if state in STATE_COLOURS:
                    item.setBackground(QBrush(QColor(STATE_COLOURS[str(state)])))
                if key in ("error", "variables") and value:
                    item.setToolTip(str(value))
                self.table.setItem(r, c, item)
        variables = [key for _, key in SUMMARY_COLUMNS].index("variables")
        if self.table.columnWidth(variables) > VARIABLES_WIDTH:  # a sweep's many variables: elided, whole in the tooltip
            self.table.horizontalHeader().setSectionResizeMode(variables, QHeaderView.ResizeMode.Interactive)
            self.table.setColumnWidth(variables, VARIABLES_WIDTH)
        if not self.rows:
            self.show_message("This bundle lists no runs (yet).")
            return
        self.show_content()
        self.status.setText(f"{len(self.rows)} run(s); double-click a run to open it on the window timeline")

    def cell(self, row: int, header: str) -> str:
        column = [h for h, _ in SUMMARY_COLUMNS].index(header)
        return self.table.item(row, column).text()

    @Slot(int, int)
    def _on_double_click(self, row: int, column: int) -> None:
        if 0 <= row < len(self.rows):
            self.runRequested.emit(str(self.rows[row].get("run_id")))

    def chart_widget(self) -> QWidget:
        return self.table

    def csv_table(self) -> tuple[list[str], list[list[Any]]]:
        """The table's columns, each varying variable in a column of its own (in place of their text)."""
        keys = [key for _, key in SUMMARY_COLUMNS]
        at = keys.index("variables")
        header = keys[:at] + self.varying + keys[at + 1:]
        return header, [[row.get(key) for key in keys[:at]] + [(row.get("variables") or {}).get(name) for name in self.varying]
                        + [row.get(key) for key in keys[at + 1:]] for row in self.rows]
