"""The window timeline's side panel: the clicked window's content and its expected vs actual bindings."""

from __future__ import annotations

from collections import Counter
from typing import Hashable, Mapping

from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QHeaderView, QLabel, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

from rsp_workbench.core.windows import WindowInstance
from rsp_workbench.gui.results.timeline.model import binding_status_rows, compact_term, mapping_text
from rsp_workbench.results.stream_lanes import StreamLanes

MISSING_BRUSH = QColor("#ffcdd2")
EXTRA_BRUSH = QColor("#ffe0b2")
STATUS_BRUSHES = {"missing": MISSING_BRUSH, "extra": EXTRA_BRUSH}
CONTENT_ROWS = 1000  # elements listed at most
NO_WINDOW = "Click a window to list its content."


class WindowPanel(QWidget):
    """Title, content table (up to CONTENT_ROWS elements) and bindings table of the selected window;
    holds the bindings known per window, keyed by (open, close) in ms."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.bindings: dict[tuple[int, int], tuple[Counter[Hashable], Counter[Hashable]]] = {}
        self.notes: dict[tuple[int, int], str] = {}
        self.shown_window: tuple[int, int] | None = None  # the (open, close) shown
        self.panel_title = QLabel(NO_WINDOW)
        self.panel_title.setWordWrap(True)
        self.content_table = QTableWidget(0, 4)
        self.content_table.setObjectName("windowContent")
        self.content_table.setHorizontalHeaderLabels(["t (ms)", "subject", "predicate", "object"])
        self.content_table.horizontalHeader().setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        self.content_table.verticalHeader().setVisible(False)
        self.bindings_note = QLabel("")
        self.bindings_note.setObjectName("bindingsNote")
        self.bindings_note.setWordWrap(True)
        self.bindings_table = QTableWidget(0, 2)
        self.bindings_table.setObjectName("windowBindings")
        self.bindings_table.setHorizontalHeaderLabels(["status", "binding"])
        self.bindings_table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.bindings_table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.bindings_table.verticalHeader().setVisible(False)
        self.bindings_table.setWordWrap(False)  # one line per binding; the full text is the tooltip
        self.content_table.setWordWrap(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.panel_title)
        layout.addWidget(QLabel("<b>Content</b>"))
        layout.addWidget(self.content_table, 2)
        layout.addWidget(QLabel("<b>Expected vs actual bindings</b>"))
        layout.addWidget(self.bindings_note)
        layout.addWidget(self.bindings_table, 1)

    def clear(self) -> None:
        """No window selected (a new stream is shown)."""
        self.shown_window = None
        self.panel_title.setText(NO_WINDOW)
        self.content_table.setRowCount(0)
        self.bindings_table.setRowCount(0)
        self.bindings_note.setText("")

    def show_window(self, window: WindowInstance, lanes: StreamLanes, diverging: bool) -> None:
        """The window's title, its elements (times only when the lanes have no elements) and bindings."""
        self.shown_window = (window.open, window.close)
        lo, hi = lanes.window_positions(window)
        marked = " — <span style='color:#c62828'>diverging</span>" if diverging else ""
        self.panel_title.setText(f"<b>Window {window.index}</b> {window} — {hi - lo} element(s){marked}")
        elements = lanes.elements
        rows = min(hi - lo, CONTENT_ROWS)
        self.content_table.setRowCount(rows)
        for row in range(rows):
            if elements is not None and lo + row < len(elements):
                element = elements[lo + row]
                values = (str(element.t), element.subject, element.predicate, element.object)
            else:
                values = (str(int(lanes.all_times[lo + row])), "", "", "")
            for column, value in enumerate(values):
                cell = QTableWidgetItem(compact_term(value) if column else value)
                cell.setToolTip(value)
                self.content_table.setItem(row, column, cell)
        self._show_bindings(self.shown_window)

    def set_window_bindings(self, bindings: Mapping[tuple[int, int], tuple[Counter[Hashable], Counter[Hashable]]]) -> None:
        """Expected and actual bags per window, keyed by (open, close) in ms."""
        self.bindings = dict(bindings)
        if self.shown_window is not None:
            self._show_bindings(self.shown_window)

    def add_window_bindings(self, window: tuple[int, int], expected: Counter[Hashable], actual: Counter[Hashable],
                            note: str = "") -> None:
        """One window's expected and actual bags (computed when it was clicked), with a note on how."""
        self.bindings[window] = (expected, actual)
        self.notes[window] = note
        if self.shown_window == window:
            self._show_bindings(window)

    def forget_bindings(self) -> None:
        """Another run is shown: no window's bindings are known."""
        self.bindings.clear()
        self.notes.clear()

    def set_note(self, text: str) -> None:
        self.bindings_note.setText(text)

    def _show_bindings(self, window: tuple[int, int]) -> None:
        """Missing and extra bindings first (coloured), then the matching ones, and the note on how they were found."""
        expected, actual = self.bindings.get(window, (Counter(), Counter()))
        if window in self.notes:
            self.bindings_note.setText(self.notes[window])
        rows = binding_status_rows(expected, actual)
        self.bindings_table.setRowCount(len(rows))
        for row, (status, mapping) in enumerate(rows):
            full = mapping_text(mapping)
            colour = STATUS_BRUSHES.get(status)
            for column, value in enumerate((status, mapping_text(mapping, compact=True))):
                cell = QTableWidgetItem(value)
                cell.setToolTip(full)
                if colour is not None:
                    cell.setBackground(QBrush(colour))
                self.bindings_table.setItem(row, column, cell)

    def binding_rows(self) -> list[tuple[str, str]]:
        """(status, the binding's full text) per row of the bindings table."""
        return [(self.bindings_table.item(r, 0).text(), self.bindings_table.item(r, 1).toolTip())
                for r in range(self.bindings_table.rowCount())]
