"""The open experiment file watched on disk: changed by another program (an editor, ``git
checkout``), it is reloaded when the designer holds no unsaved edit, and said otherwise (the
edits are kept: Save overwrites the file, Open takes the file's version).

A save writes a new file and renames it over the old one, which ends the watch on the old
one; the watch is renewed after each change and each load or save. The designer's own saves
are recognised by their text and ignored.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Slot

SETTLE_MS = 200  # an editor may write a file in several steps: read it once they are done


class FileWatch(QObject):
    """Watch one file; ``changed(path)`` is called when its text differs from ``known_text()``."""

    def __init__(self, known_text: Callable[[], str | None], changed: Callable[[Path], None],
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.known_text = known_text
        self.changed = changed
        self.path: Path | None = None
        self.watcher = QFileSystemWatcher(self)
        self.watcher.fileChanged.connect(self._on_event)
        self.watcher.directoryChanged.connect(self._on_event)  # a rename over the file ends the file's watch
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(SETTLE_MS)
        self._timer.timeout.connect(self.check)

    def watch(self, path: Path | None) -> None:
        """Watch ``path`` (None: nothing) and its folder."""
        for watched in self.watcher.files() + self.watcher.directories():
            self.watcher.removePath(watched)
        self.path = path
        if path is not None and path.exists():
            self.watcher.addPath(str(path))
            self.watcher.addPath(str(path.parent))

    @Slot(str)
    def _on_event(self, _: str) -> None:
        self._timer.start()

    @Slot()
    def check(self) -> bool:
        """Compare the file with what the designer knows; True if it changed (and was reported)."""
        self._timer.stop()
        path = self.path
        if path is None:
            return False
        if str(path) not in self.watcher.files() and path.exists():
            self.watcher.addPath(str(path))  # renamed over: watch the new file
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return False  # deleted or being written: the next event tells
        if text == self.known_text():
            return False
        self.changed(path)
        return True

    def stop(self) -> None:
        self._timer.stop()
        self.watch(None)
