"""`rsp-workbench`: the desktop application.

Until the GUI issue lands this opens a plain main window showing the app name and
version (no features that do not exist yet). Import order: PySide6 before pyqtgraph.
"""

from __future__ import annotations

import sys
from typing import Sequence

from workbench import APP_NAME, __version__


def build_main_window() -> "object":
    """The main window (created only after a QApplication exists)."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QLabel, QMainWindow

    window = QMainWindow()
    window.setObjectName("mainWindow")
    window.setWindowTitle(f"{APP_NAME} {__version__}")
    label = QLabel(f"<h1>{APP_NAME}</h1><p>version {__version__}</p>")
    label.setObjectName("appTitle")
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    window.setCentralWidget(label)
    window.resize(900, 600)
    return window


def main(argv: Sequence[str] | None = None) -> int:
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(list(argv) if argv is not None else sys.argv)
    app.setApplicationName(APP_NAME)
    app.setApplicationVersion(__version__)
    window = build_main_window()
    window.show()  # type: ignore[attr-defined]
    return app.exec()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
