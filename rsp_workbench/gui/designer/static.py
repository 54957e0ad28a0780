"""Static data and ontologies loaded before the stream (Heaven's T): ``static`` — a list of
files, each a path or ``{file, graph, format}``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QVBoxLayout,
    QWidget,
)

from rsp_workbench.experiment.model import STATIC_FORMATS
from rsp_workbench.gui.designer.fields import DesignerSection, Shown, refill_rows, table_height, table_item, yaml_value
from rsp_workbench.gui.designer.model import MISSING, DesignerModel


class StaticSection(DesignerSection):
    """One row per static file: path, named graph, format."""

    def __init__(self, model: DesignerModel, parent: QWidget | None = None) -> None:
        super().__init__(model, parent)
        layout = QVBoxLayout(self)
        note = QLabel("Static data and ontologies loaded before the stream (Heaven's T). "
                      "Paths are relative to the experiment file; the format defaults from the extension.")
        note.setWordWrap(True)
        layout.addWidget(note)
        self.static_table = QTableWidget(0, 3)
        self.static_table.setObjectName("staticTable")
        self.static_table.setHorizontalHeaderLabels(["file", "named graph (optional)", "format (optional)"])
        self.static_table.horizontalHeaderItem(2).setToolTip(f"one of {', '.join(STATIC_FORMATS)}; default from the extension")
        self.static_table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.static_table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.static_table.horizontalHeader().setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        self.static_table.verticalHeader().setVisible(False)
        self.static_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table_height(self.static_table, 4)
        self.static_table.itemChanged.connect(self._on_static_edited)
        self.bind(self.static_table, lambda: ("static",), self._show_static)
        layout.addWidget(self.static_table)
        buttons = QHBoxLayout()
        add, remove = QPushButton("Add file…"), QPushButton("Remove")
        add.clicked.connect(self._add_static)
        remove.clicked.connect(self._remove_static)
        buttons.addWidget(add)
        buttons.addWidget(remove)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        layout.addStretch(1)

    def _show_static(self, value: Any) -> None:
        entries = value if isinstance(value, list) else []
        refill_rows(self.static_table, len(entries))
        for row, item in enumerate(entries):
            entry = item if isinstance(item, dict) else {"file": item}
            for column, key in enumerate(("file", "graph", "format")):
                shown = yaml_value(entry.get(key, MISSING))
                cell = table_item(shown, item if column == 0 else MISSING)
                self.static_table.setItem(row, column, cell)


    @Slot()
    def _on_static_edited(self) -> None:
        entries: list[Any] = []
        for row in range(self.static_table.rowCount()):
            items = [self.static_table.item(row, c) for c in range(3)]
            cells = [item.text().strip() if item else "" for item in items]
            if not any(cells):
                continue
            shown = [item.data(Qt.ItemDataRole.UserRole) if item else None for item in items]
            if all(isinstance(s, Shown) and s.text == cell for s, cell in zip(shown, cells)) and shown[0].value is not MISSING:
                entries.append(shown[0].value)  # an untouched row keeps its form (short or mapping)
            elif not cells[1] and not cells[2]:
                entries.append(cells[0])
            else:
                entry = {"file": cells[0]}
                if cells[1]:
                    entry["graph"] = cells[1]
                if cells[2]:
                    entry["format"] = cells[2]
                entries.append(entry)
        self.commit(("static",), entries or MISSING)


    @Slot()
    def _add_static(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Static data", str(self.model.base_dir or Path.cwd()),
                                              "RDF (*.ttl *.nt *.n3 *.rdf *.owl *.jsonld *.trig *.nq);;All files (*)")
        if path:
            self.model.append(("static",), self.relative_path(path))

    @Slot()
    def _remove_static(self) -> None:
        self.model.remove_item(("static",), max(0, self.static_table.currentRow()))
