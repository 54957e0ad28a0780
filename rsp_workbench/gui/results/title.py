"""The Results header's one line: the bundle's name, status and counts, then its folder elided to fit.

At 1024 px the header wrapped onto a second line and pushed the sub-tabs down (and back up at
the next bundle); now the path gives up what the rest needs, and the tooltip has it in full.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase, QFontMetrics, QTextDocument
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from rsp_workbench.gui.text import escape_html

MIN_PATH_PX = 80  # a folder is never elided below this (the line is clipped at the right instead)


class BundleTitle(QLabel):
    """A rich-text label that never wraps: ``show_line(prefix, path, suffix)`` elides ``path`` in the
    middle to the room the rest leaves, again at every resize."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setWordWrap(False)
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)  # never widens the window
        self._line: tuple[str, str, str] | None = None

    def show_line(self, prefix: str, path: str | Path, suffix: str = "") -> None:
        """``prefix`` and ``suffix`` are rich text; ``path`` is plain and shown as code."""
        self._line = (prefix, str(path), suffix)
        self.setToolTip(str(path))
        self._fit()

    def setText(self, text: str) -> None:  # noqa: N802 - a plain message replaces the fitted line
        self._line = None
        super().setText(text)

    def resizeEvent(self, event: Any) -> None:  # noqa: N802
        super().resizeEvent(event)
        if self._line is not None:
            self._fit()

    def _fit(self) -> None:
        assert self._line is not None
        prefix, path, suffix = self._line
        code = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        code.setPointSizeF(self.font().pointSizeF())
        room = self.contentsRect().width() - self._html_width(prefix + suffix) - 8
        shown = QFontMetrics(code).elidedText(path, Qt.TextElideMode.ElideMiddle, int(max(MIN_PATH_PX, room)))
        super().setText(f"{prefix}<code>{escape_html(shown)}</code>{suffix}")

    def _html_width(self, html: str) -> float:
        document = QTextDocument()
        document.setDefaultFont(self.font())
        document.setDocumentMargin(0)
        document.setHtml(html)
        return document.idealWidth()
