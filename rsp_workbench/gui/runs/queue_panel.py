"""The Runs tab's queue: one line per queued, running or finished run (status and ETA), and the
Cancel, Remove and Open results buttons."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QHBoxLayout, QLabel, QListWidget, QListWidgetItem, QPushButton, QVBoxLayout, QWidget

from rsp_workbench.gui.runs.model import FINISHED, QUEUED, STATUS_COLOURS, ExperimentRun, queue_item_text

ID_ROLE = Qt.ItemDataRole.UserRole


class QueuePanel(QWidget):
    """The list of runs (one item per :class:`ExperimentRun`, by its ident) and its buttons."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel("<b>Queue</b> (one run at a time)"))
        self.queue_list = QListWidget()
        self.queue_list.setObjectName("runQueue")
        layout.addWidget(self.queue_list, 1)
        buttons = QHBoxLayout()
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("cancelRun")
        self.cancel_button.setToolTip("stop the running experiment: its engine process and Spark jobs")
        self.remove_button = QPushButton("Remove")
        self.remove_button.setToolTip("take a queued (or finished) run off the list")
        self.open_button = QPushButton("Open results")
        self.open_button.setToolTip("show the bundle in the Results tab")
        for button in (self.cancel_button, self.remove_button, self.open_button):
            buttons.addWidget(button)
        layout.addLayout(buttons)

    def add(self, entry: ExperimentRun, now: float) -> None:
        """List a newly queued run and select it."""
        item = QListWidgetItem()
        item.setData(ID_ROLE, entry.ident)
        self.queue_list.addItem(item)
        self.update_item(entry, now)
        self.queue_list.setCurrentItem(item)

    def remove(self, ident: int) -> None:
        row = self._row_of(ident)
        if row is not None:
            self.queue_list.takeItem(row)

    def selected_ident(self) -> int | None:
        item = self.queue_list.currentItem()
        return None if item is None else int(item.data(ID_ROLE))

    def _row_of(self, ident: int) -> int | None:
        for row in range(self.queue_list.count()):
            if self.queue_list.item(row).data(ID_ROLE) == ident:
                return row
        return None

    def update_item(self, entry: ExperimentRun, now: float) -> None:
        """The run's line: name, size, status (with ETA while it runs), coloured by status."""
        row = self._row_of(entry.ident)
        if row is None:
            return
        item = self.queue_list.item(row)
        item.setText(queue_item_text(entry, now))
        item.setForeground(QBrush(QColor(STATUS_COLOURS.get(entry.status, "#000"))))
        item.setToolTip(f"{entry.request.source or 'experiment'} → {entry.request.out_dir}")

    def enable_buttons(self, running: bool, entry: ExperimentRun | None) -> None:
        """Cancel while a run runs; Remove a queued or finished run; Open results once it has a bundle."""
        self.cancel_button.setEnabled(running)
        self.remove_button.setEnabled(entry is not None and entry.status in (QUEUED, *FINISHED))
        self.open_button.setEnabled(entry is not None and entry.bundle is not None)
