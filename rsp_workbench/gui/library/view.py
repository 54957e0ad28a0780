"""The Library tab: sample experiments and recent files on the left, the selected one's summary
(:func:`~rsp_workbench.gui.library.model.describe_experiment`) on the right; opening sends it to the designer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QSettings, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from rsp_workbench import APP_NAME, __version__
from rsp_workbench.gui.library.model import default_samples_dir, describe_experiment, escape_html, recent_files

PATH_ROLE = Qt.ItemDataRole.UserRole


class LibraryView(QWidget):
    """Samples + recent files on the left, the selected file's summary on the right."""

    openRequested = Signal(str)
    importRequested = Signal()  # "Import YABench folder…" (the window writes the experiment and opens it)

    def __init__(self, settings: QSettings, samples_dir: Path | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("library")
        self.settings = settings
        self.samples_dir = samples_dir or default_samples_dir()
        title = QLabel(f"<h1>{APP_NAME}</h1><p>version {__version__} — design, run and judge RDF Stream Processing experiments</p>")
        title.setObjectName("appTitle")
        self.tree = QTreeWidget()
        self.tree.setObjectName("libraryTree")
        self.tree.setHeaderLabels(["Experiment", "Folder"])
        self.tree.setColumnWidth(0, 280)
        self.tree.currentItemChanged.connect(self._on_current)
        self.tree.itemActivated.connect(self._on_activated)
        self.details = QLabel("Select an experiment to see what it contains.")
        self.details.setObjectName("libraryDetails")
        self.details.setWordWrap(True)
        self.details.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.open_button = QPushButton("Open in designer")
        self.open_button.clicked.connect(self._open_current)
        self.refresh_button = QPushButton("Rescan")
        self.refresh_button.clicked.connect(self.refresh)
        self.import_button = QPushButton("Import YABench folder…")
        self.import_button.setObjectName("importYabench")
        self.import_button.setToolTip("A published YABench test folder (config.json, engine.query) as an experiment "
                                      "file (rspwb import yabench-config), opened in the designer")
        self.import_button.clicked.connect(self.importRequested)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.addWidget(self.details, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.open_button)
        buttons.addWidget(self.refresh_button)
        buttons.addWidget(self.import_button)
        buttons.addStretch(1)
        right_layout.addLayout(buttons)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.tree)
        splitter.addWidget(right)
        splitter.setSizes([520, 480])
        layout = QVBoxLayout(self)
        layout.addWidget(title)
        layout.addWidget(splitter, 1)
        self.refresh()

    def set_samples_dir(self, folder: Path) -> None:
        self.samples_dir = folder
        self.refresh()

    @Slot()
    def refresh(self) -> None:
        self.tree.clear()
        samples = QTreeWidgetItem([f"Sample experiments ({self.samples_dir.name}/)", ""])
        recent = QTreeWidgetItem(["Recent files", ""])
        files = sorted(self.samples_dir.glob("**/*.yaml")) if self.samples_dir.is_dir() else []
        for path in files:
            item = QTreeWidgetItem([path.name, str(path.parent.relative_to(self.samples_dir)) if path.parent != self.samples_dir else ""])
            item.setData(0, PATH_ROLE, str(path))
            item.setToolTip(0, str(path))
            samples.addChild(item)
        if not files:
            samples.addChild(QTreeWidgetItem(["(no sample experiments found)", str(self.samples_dir)]))
        for text in recent_files(self.settings):
            path = Path(text)
            item = QTreeWidgetItem([path.name, str(path.parent)])
            item.setData(0, PATH_ROLE, text)
            if not path.exists():
                item.setForeground(0, Qt.GlobalColor.gray)
                item.setToolTip(0, "file no longer exists")
            recent.addChild(item)
        if not recent.childCount():
            recent.addChild(QTreeWidgetItem(["(none yet)", ""]))
        self.tree.addTopLevelItems([samples, recent])
        for group in (samples, recent):
            group.setFirstColumnSpanned(True)  # a group's title is never cut at the first column's width
        samples.setExpanded(True)
        recent.setExpanded(True)

    def entries(self) -> list[str]:
        """Paths listed (samples then recent)."""
        paths = []
        for top in range(self.tree.topLevelItemCount()):
            parent = self.tree.topLevelItem(top)
            for index in range(parent.childCount()):
                value = parent.child(index).data(0, PATH_ROLE)
                if value:
                    paths.append(str(value))
        return paths

    def select_path(self, path: str | Path) -> bool:
        for top in range(self.tree.topLevelItemCount()):
            parent = self.tree.topLevelItem(top)
            for index in range(parent.childCount()):
                child = parent.child(index)
                if child is not None and child.data(0, PATH_ROLE) == str(path):
                    self.tree.setCurrentItem(child)
                    return True
        return False

    def show_file(self, path: str | Path) -> bool:
        """Validate and summarise a file in the details pane; returns whether it is valid."""
        path = Path(path)
        if not path.exists():
            self.details.setText(f"<span style='color:#c62828'>{escape_html(str(path))}: file not found</span>")
            return False
        valid, text = describe_experiment(path)
        self.details.setText(text)
        return valid

    @Slot(object, object)
    def _on_current(self, current: QTreeWidgetItem | None, _: Any) -> None:
        path = current.data(0, PATH_ROLE) if current is not None else None
        if path:
            self.show_file(path)

    @Slot(object, int)
    def _on_activated(self, item: QTreeWidgetItem, _: int) -> None:
        path = item.data(0, PATH_ROLE)
        if path:
            self.openRequested.emit(str(path))

    @Slot()
    def _open_current(self) -> None:
        item = self.tree.currentItem()
        if item is not None and item.data(0, PATH_ROLE):
            self.openRequested.emit(str(item.data(0, PATH_ROLE)))
